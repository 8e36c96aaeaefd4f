#!/usr/bin/env bash
# The report benchmark: generates the profiles once (into $BENCH_DIR, by
# default /tmp/gputool-bench-report), then times `gputool report` on them
# in one process and under `mpirun -np 2`, best of $REPEAT runs each, and
# checks that both give the same JSON.
#
#   GEN=build/bench/report/bench_report_gen GPUTOOL=build/gputool [MPIRUN=mpirun] \
#     bench/report/run.sh [PROCESSES [CONTEXTS]]
set -euo pipefail
procs=${1:-1024}
contexts=${2:-10000}
dir=${BENCH_DIR:-/tmp/gputool-bench-report}/p${procs}-c${contexts}
repeat=${REPEAT:-3}
: "${GEN:?set GEN to bench_report_gen}" "${GPUTOOL:?set GPUTOOL to the gputool command}"

if [ ! -f "$dir/done" ]; then
  echo "generating $procs profiles of $contexts contexts in $dir"
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  "$GEN" "$dir" "$procs" "$contexts"
  touch "$dir/done"
fi
echo "input: $(ls "$dir"/*.gtprof | wc -l) profiles, $(du -sh "$dir" | cut -f1); $(nproc) CPUs"
cat "$dir"/*.gtprof > /dev/null # in the page cache, as after a run

best() { # best wall time of $repeat runs of "$@", in seconds
  local b=
  for _ in $(seq "$repeat"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    b=$(echo "$t0 $t1 ${b:-1e9}" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
  done
  echo "$b"
}

out=$(mktemp -d)
single=$(best "$GPUTOOL" report "$dir" --format json -o "$out/one.json")
text=$(best "$GPUTOOL" report "$dir" -o "$out/one.txt")
echo "gputool report, one process:  json $single s, text $text s"
peak=$( { /usr/bin/time -f "%M" "$GPUTOOL" report "$dir" --format json -o /dev/null; } 2>&1 | tail -1)
echo "  peak memory $((peak / 1024)) MiB"
if [ -n "${MPIRUN:-}" ]; then
  flags=(--allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1)
  two=$(best "$MPIRUN" "${flags[@]}" -np 2 "$GPUTOOL" report "$dir" --format json -o "$out/two.json")
  echo "gputool report, mpirun -np 2: json $two s"
  cmp -s "$out/one.json" "$out/two.json" && echo "  same JSON as one process" || { echo "  JSON DIFFERS"; exit 1; }
fi
rm -rf "$out"
