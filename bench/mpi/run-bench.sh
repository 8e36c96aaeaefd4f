#!/usr/bin/env bash
# run-bench.sh GPUTOOL [ROUNDS]
#
# The MPI layer's cost per call: bench_mpi (a ping-pong and an allreduce
# loop, 2 ranks) bare and under `gputool run`, interleaved over ROUNDS
# rounds (default 5), and the median ns per call of each and their ratio.
# Knobs: BENCH_ITERS (20000 calls per loop), BENCH_RANKS (2), BENCH_MPI
# (the binary; default next to this script), MPIRUN ("mpirun
# --oversubscribe", plus --allow-run-as-root as root).
set -u
[ $# -ge 1 ] || { echo "usage: $0 GPUTOOL [ROUNDS]" >&2; exit 2; }
gputool=$(readlink -f "$1")
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_MPI:-$here/bench_mpi}
iters=${BENCH_ITERS:-20000} ranks=${BENCH_RANKS:-2}
mpirun=${MPIRUN:-mpirun --oversubscribe}
[ "$(id -u)" = 0 ] && [ -z "${MPIRUN:-}" ] && mpirun="$mpirun --allow-run-as-root"
[ -x "$bin" ] || { echo "bench_mpi not found at $bin (set BENCH_MPI)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for r in $(seq "$rounds"); do
	$mpirun -np "$ranks" "$bin" "$iters" >>"$out/bare" || { echo "bare run failed" >&2; exit 1; }
	$mpirun -np "$ranks" "$gputool" run -o "$out/gt$r" -- "$bin" "$iters" 2>/dev/null >>"$out/tool" ||
		{ echo "run under gputool failed" >&2; exit 1; }
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
col() { sed -n "s/.* $2 \([0-9.]*\).*/\1/p" "$out/$1" | median; }
pb=$(col bare pingpong_ns) pt=$(col tool pingpong_ns) ab=$(col bare allreduce_ns) at=$(col tool allreduce_ns)
printf "bench_mpi: %s ranks, %s calls per loop, median of %s rounds (ns per call)\n" "$ranks" "$iters" "$rounds"
awk -v pb="$pb" -v pt="$pt" -v ab="$ab" -v at="$at" 'BEGIN {
	printf "  %-22s %10s %10s %8s %12s\n", "", "bare", "gputool", "ratio", "added/call"
	printf "  %-22s %10.1f %10.1f %8.3f %12.1f\n", "ping-pong round trip", pb, pt, pt / pb, (pt - pb) / 2
	printf "  %-22s %10.1f %10.1f %8.3f %12.1f\n", "allreduce", ab, at, at / ab, at - ab
}'
