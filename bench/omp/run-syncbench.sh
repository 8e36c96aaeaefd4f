#!/usr/bin/env bash
# run-syncbench.sh LIBGPUTOOL_SO [threads]
#
# Runs the syncbench OpenMP construct benchmark three ways -- no tool, the
# null OMPT tool (libgtnulltool.so), and gputool -- interleaved over several
# rounds, and prints the median overhead per construct for each plus the
# ratios to the no-tool run.  Builds nothing.
#
# Binaries are looked up in this order:
#   syncbench:        $SYNCBENCH, then <script dir>/syncbench
#   null tool:        $GTNULLTOOL, then <script dir>/libgtnulltool.so
# (the CMake build copies this script next to both, in <build>/bench/omp/).
#
# Environment knobs:
#   SYNCBENCH_ROUNDS  rounds; each round runs all three configurations (default 9)
#   SYNCBENCH_ARGS    extra syncbench arguments (default: "-o 30"), e.g.
#                     "-o 50 -t 2000 PARALLEL BARRIER"
#   SYNCBENCH_KEEP=1  keep the raw per-run outputs and gputool output
#   OMP_PROC_BIND / OMP_PLACES: if unset, close / cores are used (see below).
#
# Thread placement: with libomp's defaults (no binding) the kernel sometimes
# puts both threads of a 2-thread team on one core for a whole run; PARALLEL
# then costs 20-35 us instead of ~0.4 us, which swamps everything measured
# here.  Binding threads to distinct cores removes that mode, so this script
# sets OMP_PROC_BIND=close OMP_PLACES=cores unless they are already set.
# OMP_WAIT_POLICY is left to the runtime default (passive with a 200 ms
# spin-wait blocktime, so workers still spin between back-to-back regions).
#
# Virtual machines: the cost of cross-core synchronisation depends on where
# the host places the vCPUs and can change by ~3x between runs (e.g. PARALLEL
# 0.4 us vs 1.2 us).  syncbench warms all threads up for 500 ms before timing,
# the three configurations run back to back within each round, and the ratios
# are taken per round, so such shifts mostly cancel; a note is printed when
# the no-tool PARALLEL figure varied by more than 1.5x across rounds.
#
# gputool runs with GPUTOOL_OUTPUT set to a fresh temporary directory per run
# and otherwise its defaults (CPU sampling on); other GPUTOOL_* variables in
# the environment are passed through.
#
# Budget: gputool's PARALLEL overhead <= 1.25x the no-tool overhead with
# 2 threads.  Reported as PASS/OVER; the exit status does not depend on it.

set -u

usage() {
    echo "usage: $0 LIBGPUTOOL_SO [threads]" >&2
    exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
GPUTOOL_SO=$1
THREADS=${2:-2}
BUDGET=1.25

script_dir=$(cd "$(dirname "$0")" && pwd)
SYNCBENCH=${SYNCBENCH:-$script_dir/syncbench}
GTNULLTOOL=${GTNULLTOOL:-$script_dir/libgtnulltool.so}
ROUNDS=${SYNCBENCH_ROUNDS:-9}
ARGS=${SYNCBENCH_ARGS:--o 30}
read -r -a args <<<"$ARGS"

abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); }

for f in "$SYNCBENCH" "$GTNULLTOOL" "$GPUTOOL_SO"; do
    if [ ! -f "$f" ]; then
        echo "run-syncbench: not found: $f" >&2
        [ "$f" = "$SYNCBENCH" ] && echo "  (set SYNCBENCH=/path/to/syncbench)" >&2
        [ "$f" = "$GTNULLTOOL" ] && echo "  (set GTNULLTOOL=/path/to/libgtnulltool.so)" >&2
        exit 2
    fi
done
SYNCBENCH=$(abspath "$SYNCBENCH")
GTNULLTOOL=$(abspath "$GTNULLTOOL")
GPUTOOL_SO=$(abspath "$GPUTOOL_SO")
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "run-syncbench: bad SYNCBENCH_ROUNDS" >&2; exit 2 ;; esac
case "$THREADS" in '' | *[!0-9]* | 0) usage ;; esac

export OMP_NUM_THREADS=$THREADS
export OMP_PROC_BIND=${OMP_PROC_BIND:-close}
export OMP_PLACES=${OMP_PLACES:-cores}
unset OMP_TOOL_LIBRARIES

work=$(mktemp -d "${TMPDIR:-/tmp}/syncbench.XXXXXX") || exit 1
if [ "${SYNCBENCH_KEEP:-0}" = 1 ]; then
    trap 'echo "raw results kept in $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi

configs=(none null gputool)

# run_one CONFIG ROUND: one syncbench run; appends "CONFIG ROUND NAME MEAN" rows.
run_one() {
    local cfg=$1 round=$2 out=$work/$1.$2.out err=$work/$1.$2.err want rc
    case $cfg in
    none)
        want=none
        "$SYNCBENCH" "${args[@]}" >"$out" 2>"$err"
        ;;
    null)
        want=attached
        OMP_TOOL_LIBRARIES=$GTNULLTOOL "$SYNCBENCH" "${args[@]}" >"$out" 2>"$err"
        ;;
    gputool)
        want=attached
        mkdir -p "$work/gputool-out.$round"
        GPUTOOL_OUTPUT=$work/gputool-out.$round OMP_TOOL_LIBRARIES=$GPUTOOL_SO \
            "$SYNCBENCH" "${args[@]}" >"$out" 2>"$err"
        ;;
    esac
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "run-syncbench: $cfg run $round failed (exit $rc); stderr:" >&2
        sed 's/^/  /' "$err" >&2
        exit 1
    fi
    if ! grep -q "^# ompt-tool $want\$" "$out"; then
        echo "run-syncbench: $cfg run $round: expected OMPT tool '$want'," \
            "syncbench saw '$(sed -n 's/^# ompt-tool //p' "$out")'" >&2
        [ -s "$err" ] && sed 's/^/  /' "$err" >&2
        echo "  (OMP_TOOL_VERBOSE_INIT=stderr shows why libomp did not load a tool)" >&2
        exit 1
    fi
    awk -v c="$cfg" -v r="$round" '!/^#/ && $3 == "us" { print c, r, $1, $2 }' "$out" >>"$work/rows"
}

: >"$work/rows"
start=$(date +%s)
echo "syncbench: $THREADS threads, $ROUNDS rounds x {no tool, null tool, gputool}," \
    "OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=$OMP_PLACES" \
    "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-default}, syncbench args: $ARGS"
echo "  syncbench  $SYNCBENCH"
echo "  null tool  $GTNULLTOOL"
echo "  gputool    $GPUTOOL_SO"
# Other work on the machine competes with the benchmark threads for cores:
# sample how busy the CPUs are for half a second before starting.
cpu_busy() { # prints "busy total" jiffies from the aggregate cpu line
    awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat
}
if [ -r /proc/stat ]; then
    read -r b0 t0 < <(cpu_busy)
    sleep 0.5
    read -r b1 t1 < <(cpu_busy)
    busy=$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.0f", (t > 0) ? 100 * b / t : 0 }')
    echo "  machine    $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs, ${busy}% busy before the start"
    if [ "$busy" -gt 20 ]; then
        echo "  note: other work is running on this machine; expect noisy figures"
    fi
fi
for ((r = 0; r < ROUNDS; r++)); do
    # Rotate the order each round so no configuration always runs first.
    for ((k = 0; k < 3; k++)); do
        run_one "${configs[$(((r + k) % 3))]}" "$r"
    done
    printf '  round %d/%d done\n' $((r + 1)) "$ROUNDS"
done
sed -n 's/^# syncbench //p' "$work/none.0.out" | sed 's/^/  syncbench settings: /'
# Show that gputool did its work: what it wrote, and anything it said.
nfiles=$(find "$work"/gputool-out.* -type f 2>/dev/null | wc -l)
kib=$(find "$work"/gputool-out.* -type f -printf '%s\n' 2>/dev/null | awk '{s += $1} END {printf "%.0f", s / 1024}')
echo "  gputool output: $nfiles files, $kib KiB over $ROUNDS runs (GPUTOOL_OUTPUT=$work/gputool-out.N; SYNCBENCH_KEEP=1 keeps it)"
if [ -s "$work/gputool.0.err" ]; then
    echo "  gputool stderr (first run, first 5 lines):"
    head -n 5 "$work/gputool.0.err" | sed 's/^/    /'
fi

# Per (config, construct): median over rounds of the overhead.  Ratios and the
# gputool-null difference: median over rounds of the per-round value (the three
# runs of a round are adjacent in time, so a change of machine speed between
# rounds cancels out); they can differ slightly from the quotient or difference
# of the medians shown in the other columns.
awk -v budget="$BUDGET" -v threads="$THREADS" -v rounds="$ROUNDS" '
function median(arr, n,   i, j, t, a) {
    for (i = 1; i <= n; i++) a[i] = arr[i]
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function med_val(cfg, c,   r, n, a) {
    n = 0
    for (r = 0; r < rounds; r++) if ((cfg, c, r) in val) a[++n] = val[cfg, c, r]
    return n ? median(a, n) : -1
}
function med_ratio(cfg, c,   r, n, a) {
    n = 0
    for (r = 0; r < rounds; r++)
        if ((cfg, c, r) in val && ("none", c, r) in val && val["none", c, r] > 0)
            a[++n] = val[cfg, c, r] / val["none", c, r]
    return n ? median(a, n) : -1
}
function med_diff(c,   r, n, a) {
    n = 0
    for (r = 0; r < rounds; r++)
        if (("gputool", c, r) in val && ("null", c, r) in val)
            a[++n] = val["gputool", c, r] - val["null", c, r]
    return n ? median(a, n) : 0
}
function fmt_ratio(x) { return (x >= 0) ? sprintf("%.2f", x) : "n/a" }
{
    val[$1, $3, $2] = $4
    if (!($3 in seen)) { seen[$3] = 1; order[++nc] = $3 }
}
END {
    printf "\nOverhead per construct, us (median of %d rounds, OMP_NUM_THREADS=%d; ratios: median of per-round ratios)\n", rounds, threads
    printf "%-10s %10s %10s %10s %10s %10s %12s\n", "construct", "no-tool", "null", "gputool", "null/no",
        "gputool/no", "gputool-null"
    for (i = 1; i <= nc; i++) {
        c = order[i]
        printf "%-10s %10.3f %10.3f %10.3f %10s %10s %12.3f\n", c, med_val("none", c), med_val("null", c),
            med_val("gputool", c), fmt_ratio(med_ratio("null", c)), fmt_ratio(med_ratio("gputool", c)),
            med_diff(c)
    }
    printf "(gputool-null: median of per-round differences, us: the cost of gputool'"'"'s own work)\n"
    printf "\n"
    if (!("PARALLEL" in seen)) { print "budget: PARALLEL not measured"; exit }
    # Machine-speed check: spread of the no-tool PARALLEL overhead over rounds.
    lo = hi = -1
    for (r = 0; r < rounds; r++) if (("none", "PARALLEL", r) in val) {
        v = val["none", "PARALLEL", r]
        if (lo < 0 || v < lo) lo = v
        if (hi < 0 || v > hi) hi = v
    }
    if (lo > 0 && hi / lo > 1.5)
        printf "note: no-tool PARALLEL ranged %.3f..%.3f us over the rounds: the machine changed speed during the run; ratios are per round, but consider re-running\n", lo, hi
    rp = med_ratio("gputool", "PARALLEL")
    printf "budget: gputool PARALLEL <= %.2fx no-tool with 2 threads: %sx (%.3f vs %.3f us) %s%s\n",
        budget, fmt_ratio(rp), med_val("gputool", "PARALLEL"), med_val("none", "PARALLEL"),
        (rp >= 0 && rp <= budget) ? "PASS" : "OVER",
        (threads == 2) ? "" : " (note: measured with OMP_NUM_THREADS=" threads ")"
}' "$work/rows"

echo "elapsed: $(($(date +%s) - start)) s"
