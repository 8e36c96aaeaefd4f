#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What PC sampling costs a whole program: ROUNDS (default 5) interleaved
# rounds of the program alone, under gputool, with GPUTOOL_PC_SAMPLING=1
# and an empty cache (its first run), again with the cache that run
# filled, and optionally under another build of the library (BEFORE);
# each run's wall time, its lines matching MATCH (the program's own
# figures), and the tool's own timings (GPUTOOL_VERBOSE=2); then the
# medians of the per-round ratios to the program alone.
#
# Usage: bench/cuda/pc-cost.sh LIB [BEFORE_LIB|-] MATCH PROGRAM [ARGS...]
#   e.g. bench/cuda/pc-cost.sh libgputool.so - 'Triad' ./cuda-stream -n 100 -s 33554432
set -u
[ $# -ge 4 ] || { echo "usage: $0 LIB [BEFORE_LIB|-] MATCH PROGRAM [ARGS...]" >&2; exit 2; }
LIB=$(readlink -f "$1"); BEFORE=$2; MATCH=$3; shift 3
[ "$BEFORE" = - ] && BEFORE= || BEFORE=$(readlink -f "$BEFORE")
R=${ROUNDS:-5}
W=$(mktemp -d /tmp/gputool-pccost.XXXXXX)
now() { date +%s.%N; }
run() { # config env...
	local c=$1 t0 t1 rc; shift
	t0=$(now); env "$@" >"$W/out" 2>"$W/err"; rc=$?; t1=$(now)
	echo "$c $(echo "$t1 $t0" | awk '{ printf "%.3f", $1 - $2 }') $rc" >>"$W/times"
	printf "%-8s %s s rc=%s | %s | %s\n" "$c" "$(tail -1 "$W/times" | cut -d' ' -f2)" "$rc" \
		"$(grep -E "$MATCH" "$W/out" | tr -s ' ' | tr '\n' ';' | cut -c1-120)" \
		"$(grep -E 'PC sampling on|samples taken|cubin |modules load' "$W/err" | sed 's/gputool.cupti.: //' | tr '\n' ';' | cut -c1-300)"
}
for r in $(seq "$R"); do
	rm -rf "$W/cache" "$W/o"
	run alone "$@"
	run gputool CUDA_INJECTION64_PATH="$LIB" GPUTOOL_OUTPUT="$W/o" "$@"
	run first XDG_CACHE_HOME="$W/cache" GPUTOOL_VERBOSE=2 CUDA_INJECTION64_PATH="$LIB" GPUTOOL_PC_SAMPLING=1 GPUTOOL_OUTPUT="$W/o" "$@"
	run again XDG_CACHE_HOME="$W/cache" GPUTOOL_VERBOSE=2 CUDA_INJECTION64_PATH="$LIB" GPUTOOL_PC_SAMPLING=1 GPUTOOL_OUTPUT="$W/o" "$@"
	[ -n "$BEFORE" ] && run before XDG_CACHE_HOME="$W/cache" GPUTOOL_VERBOSE=2 CUDA_INJECTION64_PATH="$BEFORE" GPUTOOL_PC_SAMPLING=1 GPUTOOL_OUTPUT="$W/o" "$@"
done
# Medians of the per-round ratios: the i-th run of each configuration
# against the i-th run alone.
awk '{ t[$1, n[$1]++] = $2 } END {
	for (c in n) if (c != "alone") {
		k = 0; for (i = 0; i < n[c]; i++) r[k++] = t[c, i] / t["alone", i]
		for (i = 0; i < k; i++) for (j = i + 1; j < k; j++) if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
		printf "%-8s median ratio to alone %.3f (of %d rounds)\n", c, (k % 2) ? r[int(k / 2)] : (r[k / 2 - 1] + r[k / 2]) / 2, k
	} }' "$W/times" | sort
rm -rf "$W"
