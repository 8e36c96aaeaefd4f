#!/usr/bin/env bash
# callgrind-tasks.sh LIBGPUTOOL_SO [BEFORE_SO]
#
# Instructions per repetition of taskinstr's loops (taskwait, conditional,
# tree), one thread, under no tool, the null OMPT tool, gputool and, if
# given, another build of it: callgrind counts the instructions inside the
# loop's function at N and 2N repetitions, and their difference over N is
# one repetition's, the runtime's and the tool's, without start-up, the
# first contexts or the exit. Exact and repeatable (no timing): a change of
# a few instructions a task shows. Prints each configuration's count and
# the tool's own, gputool's minus the null tool's.
#
# Binaries: $TASKINSTR (taskinstr), $GTNULLTOOL (libgtnulltool.so), else
# next to this script and in ../omp/. Needs valgrind and objcopy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=${1:?usage: callgrind-tasks.sh LIBGPUTOOL_SO [BEFORE_SO]}
before=${2:-}
exe=${TASKINSTR:-$here/taskinstr}
null=${GTNULLTOOL:-$here/../omp/libgtnulltool.so}
n=${TASKINSTR_REPS:-20000}
command -v valgrind >/dev/null || { echo "callgrind-tasks: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The instructions callgrind counted inside rep_MODE.
count() {
	local mode=$1 reps=$2 tool=$3 out=$tmp/cg.out
	env OMP_NUM_THREADS=1 GPUTOOL_OUTPUT="$tmp/gt" ${tool:+OMP_TOOL_LIBRARIES="$tool"} \
		valgrind --tool=callgrind --toggle-collect="rep_$mode" --callgrind-out-file=$out \
		"$exe" "$mode" "$reps" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	awk '/^summary:/ { print $2 }' "$out"
}

# Copies without debug information: valgrind 3.19 cannot read DWARF 5, and
# counting needs none.
strip_copy() {
	objcopy --strip-debug "$1" "$tmp/$2.so"
	echo "$tmp/$2.so"
}
configs=("none:" "null:$(strip_copy "$null" null)" "gputool:$(strip_copy "$lib" gputool)")
[ -n "$before" ] && configs+=("before:$(strip_copy "$before" before)")
printf '%-12s' "per rep"
for c in "${configs[@]}"; do printf ' %10s' "${c%%:*}"; done
printf ' %10s\n' "tool"
for mode in taskwait conditional tree; do
	printf '%-12s' "$mode"
	declare -A per=()
	for c in "${configs[@]}"; do
		name=${c%%:*} tool=${c#*:}
		a=$(count "$mode" "$n" "$tool")
		b=$(count "$mode" $((2 * n)) "$tool")
		per[$name]=$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')
		printf ' %10s' "${per[$name]}"
	done
	awk -v g="${per[gputool]}" -v z="${per[null]}" 'BEGIN { printf " %10.1f\n", g - z }'
	unset per
done
echo "(instructions a repetition executes inside rep_MODE, 1 thread; tool: gputool's minus the null tool's)"
