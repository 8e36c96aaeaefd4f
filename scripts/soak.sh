#!/usr/bin/env bash
# Runs scripts/test.sh N times in a row while K busy loops compete for the
# CPUs, and says which runs passed: the suite must hold on a loaded machine.
#
#   scripts/soak.sh [N [K]]        default: 5 runs, 4 busy loops
#
# Run it in a clone of your own: scripts/test.sh uses build/ and build-asan/.
# Each run's output goes to soak-logs/run-I.log.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
busy=${2:-4}
pids=()
stop_busy() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap stop_busy EXIT
trap 'exit 130' INT TERM
for ((k = 0; k < busy; k++)); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
mkdir -p soak-logs
failed=0
for ((i = 1; i <= runs; i++)); do
	start=$(date +%s)
	# In the background, so that an interrupt stops the busy loops at once.
	scripts/test.sh >"soak-logs/run-$i.log" 2>&1 &
	if wait $!; then
		result=pass
	else
		result=FAIL
		failed=$((failed + 1))
	fi
	echo "soak: run $i of $runs: $result ($(($(date +%s) - start)) s, $busy busy loops)" \
		"$(grep -E '^[0-9]+% tests passed' "soak-logs/run-$i.log" | tr '\n' ' ')"
	[ "$result" = pass ] || grep -E '\((Failed|Timeout|SEGFAULT|Subprocess aborted)\)|^FAIL' "soak-logs/run-$i.log" | sed 's/^/  /'
done
echo "soak: $((runs - failed)) of $runs runs passed"
[ "$failed" -eq 0 ]
