#!/usr/bin/env bash
# run-bench.sh LIBGPUTOOL_SO [ROUNDS]
#
# Runs bench_enqueue (a tiny kernel enqueued in a loop on the machine's
# OpenCL platform, PoCL in CI) three ways, interleaved over ROUNDS rounds
# (default 7), and prints the median time per launch of each and the ratios:
#
#   none           no layer
#   runtime-work   no layer; the program asks the runtime itself for what
#                  gputool asks for (profiling, an event and a completion
#                  callback per launch): the runtime's share of the overhead
#   gputool        OPENCL_LAYERS=LIBGPUTOOL_SO
#
# Budget: gputool / none <= 1.10, reported as PASS/OVER; the exit status does
# not depend on it. Knobs: BENCH_OPS (20000), BENCH_BATCH (32, launches per
# clFinish), BENCH_ITEMS (64, work-items per launch), BENCH_ENQUEUE (the
# binary; default next to this script, then in the build tree).
set -u
[ $# -ge 1 ] || { echo "usage: $0 LIBGPUTOOL_SO [ROUNDS]" >&2; exit 2; }
lib=$(readlink -f "$1")
rounds=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_ENQUEUE:-$here/bench_enqueue}
[ -x "$bin" ] || { echo "bench_enqueue not found at $bin (set BENCH_ENQUEUE)" >&2; exit 2; }
ops=${BENCH_OPS:-20000} batch=${BENCH_BATCH:-32} items=${BENCH_ITEMS:-64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

one() { # config -> ns per launch
	local v
	case $1 in
	none) v=$(env -u OPENCL_LAYERS "$bin" "$ops" "$batch" "$items") ;;
	runtime-work) v=$(env -u OPENCL_LAYERS "$bin" "$ops" "$batch" "$items" runtime-work) ;;
	gputool) v=$(OPENCL_LAYERS=$lib GPUTOOL_OUTPUT=$out/gt "$bin" "$ops" "$batch" "$items" 2>/dev/null) ;;
	esac || { echo "bench_enqueue failed ($1)" >&2; exit 1; }
	echo "$v" | sed -n 's/.*ns\/launch \([0-9.]*\).*/\1/p'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

for r in $(seq "$rounds"); do
	for c in none runtime-work gputool; do
		one $c >>"$out/$c"
	done
done
n=$(median <"$out/none") w=$(median <"$out/runtime-work") g=$(median <"$out/gputool")
printf "bench_enqueue: %s launches of %s work-items, clFinish every %s, median of %s rounds\n" \
	"$ops" "$items" "$batch" "$rounds"
printf "  %-14s %10.1f ns/launch\n" none "$n" runtime-work "$w" gputool "$g"
awk -v n="$n" -v w="$w" -v g="$g" 'BEGIN {
	printf "  gputool / none          %.3f  (budget 1.10: %s)\n", g / n, g / n <= 1.10 ? "PASS" : "OVER"
	printf "  runtime-work / none     %.3f  (what the runtime spends on profiling, events, callbacks)\n", w / n
	printf "  gputool / runtime-work  %.3f  (what gputool itself adds)\n", g / w
}'
