#!/usr/bin/env bash
# run-dense.sh [--repeat N] LIBGPUTOOL_SO [threads]
#
# Runs the region- and task-dense OpenMP benchmarks three ways -- no tool,
# the null OMPT tool (libgtnulltool.so of bench/omp) and gputool --
# interleaved over several rounds, and prints per measurement the medians,
# the ratios to the no-tool and to the null-tool runs, gputool's full
# unwinds per context lookup and the share of its CPU samples that fell
# inside the tool.  Builds nothing.
#
#   dense     region-dense LULESH-like time-step loop (dense.c): elapsed s
#   taskloop  taskloop grainsize(1), EPCC schedbench method: us per taskloop
#   tasktree  BRANCH and LEAF task trees, EPCC taskbench method: us per tree
#   syncbench PARALLEL of bench/omp/syncbench.c: overhead us per region
#
# --repeat N runs only the taskloop program, N times under gputool, each
# with the per-run timeout, and reports how many runs hung or failed.
#
# Binaries are looked up as $VAR, then next to this script, then in ../omp/:
#   DENSE TASKLOOP TASKTREE (dense, taskloop, tasktree), SYNCBENCH,
#   GTNULLTOOL (libgtnulltool.so).
#
# Environment knobs:
#   DENSE_ROUNDS     rounds, each runs every configuration once (default 5)
#   DENSE_TIMEOUT    per-run limit in seconds; a run past it is killed and
#                    reported as HANG (default 120; 60 with --repeat), after
#                    its threads' states (and stacks, when gdb is installed)
#                    were written next to its output, which is then kept
#   DENSE_PROGRAMS   which programs (default "dense taskloop tasktree syncbench")
#   DENSE_ARGS TASKLOOP_ARGS TASKTREE_ARGS SYNCBENCH_ARGS
#                    arguments of each program (defaults below; with
#                    --repeat, TASKLOOP_ARGS defaults to "-r 4 -o 3")
#   DENSE_KEEP=1     keep raw outputs and gputool's output directories
#   OMP_PROC_BIND / OMP_PLACES: close / cores unless set (see run-syncbench.sh)
#
# gputool runs with GPUTOOL_VERBOSE=2 and GPUTOOL_OUTPUT set to a fresh
# directory per run.  At exit the library then prints one stderr line
#   gputool[exit]: overhead: <L> context lookups, <U> full unwinds; <S> samples, <K> inside the tool; heap <H> KiB; <P> lookups predicted, <I> imports
# from which the unwinds per lookup (U/L) and the share of samples inside
# the tool (K/S) are taken, summed over the rounds; "n/a" when the library
# does not print it.
#
# Budgets (PASS/OVER; the exit status does not depend on them; it is 1 only
# when a run failed, hung or a checksum differed between configurations).
# Time budgets are stated against the null tool (gt/null), whose own cost
# (its callbacks registered, the runtime's OMPT paths on) is no part of the
# tool's and differs between machines:
#   DENSE              gputool <= 1.15x null tool, <= 1% of samples in the tool
#   after warm-up      no full unwinds: dense (-i), tasktree, taskloop and
#                      syncbench (-o) run once more under gputool with that
#                      count doubled, and must make no more full unwinds
#   TASKLOOP, *_TREE   gputool <= 1.3x null tool, no hang
#   PARALLEL           gputool overhead <= 1.25x the null tool's

set -u

usage() {
    echo "usage: $0 [--repeat N] LIBGPUTOOL_SO [threads]" >&2
    exit 2
}

REPEAT=0
if [ "${1:-}" = --repeat ]; then
    REPEAT=${2:-}
    case "$REPEAT" in '' | *[!0-9]* | 0) usage ;; esac
    shift 2
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
GPUTOOL_SO=$1
THREADS=${2:-2}
case "$THREADS" in '' | *[!0-9]* | 0) usage ;; esac

script_dir=$(cd "$(dirname "$0")" && pwd)
abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); }
# find VAR NAME: $VAR, else NAME next to this script, else in ../omp/.
find_bin() {
    local v=${!1:-}
    if [ -n "$v" ]; then
        printf '%s\n' "$v"
    elif [ -e "$script_dir/$2" ]; then
        printf '%s\n' "$script_dir/$2"
    else
        printf '%s\n' "$script_dir/../omp/$2"
    fi
}
DENSE=$(find_bin DENSE dense)
TASKLOOP=$(find_bin TASKLOOP taskloop)
TASKTREE=$(find_bin TASKTREE tasktree)
SYNCBENCH=$(find_bin SYNCBENCH syncbench)
GTNULLTOOL=$(find_bin GTNULLTOOL libgtnulltool.so)

ROUNDS=${DENSE_ROUNDS:-5}
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "run-dense: bad DENSE_ROUNDS" >&2; exit 2 ;; esac
if [ "$REPEAT" -gt 0 ]; then TIMEOUT=${DENSE_TIMEOUT:-60}; else TIMEOUT=${DENSE_TIMEOUT:-120}; fi
PROGRAMS=${DENSE_PROGRAMS:-dense taskloop tasktree syncbench}
[ "$REPEAT" -gt 0 ] && PROGRAMS=taskloop
read -r -a a_dense <<<"${DENSE_ARGS:--i 200}"
if [ "$REPEAT" -gt 0 ]; then
    read -r -a a_taskloop <<<"${TASKLOOP_ARGS:--r 4 -o 3}"
else
    read -r -a a_taskloop <<<"${TASKLOOP_ARGS:--o 10}"
fi
read -r -a a_tasktree <<<"${TASKTREE_ARGS:--D 6 -t 8 -o 10}"
read -r -a a_syncbench <<<"${SYNCBENCH_ARGS:--o 20 PARALLEL}"

declare -A bin=([dense]=$DENSE [taskloop]=$TASKLOOP [tasktree]=$TASKTREE [syncbench]=$SYNCBENCH)
for p in $PROGRAMS; do
    case $p in dense | taskloop | tasktree | syncbench) ;; *) echo "run-dense: unknown program $p" >&2; exit 2 ;; esac
    [ -x "${bin[$p]}" ] || { echo "run-dense: not found: ${bin[$p]} (set ${p^^}=...)" >&2; exit 2; }
    bin[$p]=$(abspath "${bin[$p]}")
done
for f in "$GTNULLTOOL" "$GPUTOOL_SO"; do
    [ -f "$f" ] || { echo "run-dense: not found: $f" >&2; exit 2; }
done
GTNULLTOOL=$(abspath "$GTNULLTOOL")
GPUTOOL_SO=$(abspath "$GPUTOOL_SO")

export OMP_NUM_THREADS=$THREADS
export OMP_PROC_BIND=${OMP_PROC_BIND:-close}
export OMP_PLACES=${OMP_PLACES:-cores}
unset OMP_TOOL_LIBRARIES GPUTOOL_OUTPUT

work=$(mktemp -d "${TMPDIR:-/tmp}/run-dense.XXXXXX") || exit 1
keep=${DENSE_KEEP:-0}
trap 'if [ "$keep" = 1 ]; then echo "raw results kept in $work"; else rm -rf "$work"; fi' EXIT
mkfifo "$work/never" || exit 1
: >"$work/rows"
: >"$work/ovh"
: >"$work/status"

# hang_dump PID FILE: what the threads of a process that ran past the
# timeout are doing: their stacks when gdb is installed, else their states
# and CPU times (a thread that burns CPU spins, one that does not waits).
hang_dump() {
    local pid=$1 file=$2 t
    {
        echo "== $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
        echo "== thread: state utime stime (clock ticks) wchan"
        for t in /proc/"$pid"/task/*; do
            echo "${t##*/}: $(awk '{ sub(/^.*\) /, ""); print $1, $12, $13 }' "$t/stat" 2>/dev/null)" \
                "$(cat "$t/wchan" 2>/dev/null)"
        done
        if command -v gdb >/dev/null; then
            timeout 60 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 15" 2>&1 |
                grep -E '^(Thread|#)'
        fi
    } >"$file" 2>&1
}

# run_timed OUT ERR CMD...: runs CMD with stdout/stderr to OUT/ERR; after
# $TIMEOUT seconds it records the threads' state in OUT.hang, kills it and
# returns 124.  The watchdog waits with the read builtin on a FIFO nobody
# writes, so killing it leaves no sleeping child behind.
run_timed() {
    local out=$1 err=$2 pid wd rc
    shift 2
    "$@" >"$out" 2>"$err" &
    pid=$!
    (
        read -r -t "$TIMEOUT" <>"$work/never"
        hang_dump "$pid" "$out.hang"
        kill -KILL "$pid"
    ) 2>/dev/null &
    wd=$!
    { wait "$pid"; } 2>/dev/null # no "Killed" notice from the shell
    rc=$?
    if kill "$wd" 2>/dev/null; then
        wait "$wd" 2>/dev/null
        return $rc
    fi
    wait "$wd" 2>/dev/null
    return 124
}

# run_one PROG CONFIG ROUND: one run under the timeout.  Appends
#   rows:   PROG CONFIG ROUND TEST VALUE UNIT OVH CHECKSUM
#   ovh:    PROG ROUND L U S K            (gputool runs that printed it)
#   status: PROG CONFIG ROUND ok|HANG|FAIL
# and returns 0 for ok, 1 otherwise.
run_one() {
    local prog=$1 cfg=$2 round=$3 tag=$1.$2.$3 rc want
    local out=$work/$tag.out err=$work/$tag.err
    local -n pargs=a_$prog
    local -a env=()
    case $cfg in
    none) want=none ;;
    null) want=attached; env=(OMP_TOOL_LIBRARIES="$GTNULLTOOL") ;;
    gputool)
        want=attached
        mkdir -p "$work/out.$tag"
        env=(OMP_TOOL_LIBRARIES="$GPUTOOL_SO" GPUTOOL_OUTPUT="$work/out.$tag" GPUTOOL_VERBOSE=2)
        ;;
    esac
    run_timed "$out" "$err" env "${env[@]}" "${bin[$prog]}" "${pargs[@]}"
    rc=$?
    [ "$keep" = 1 ] || rm -rf "$work/out.$tag"
    if [ $rc -eq 124 ]; then
        keep=1
        echo "  $prog $cfg round $round: HANG (killed after ${TIMEOUT} s); threads: $out.hang"
        grep -v '^==' "$out.hang" | head -n 24 | sed 's/^/    /'
        echo "$prog $cfg $round HANG" >>"$work/status"
        return 1
    fi
    if [ $rc -ne 0 ] || ! grep -q "^# ompt-tool $want\$" "$out"; then
        echo "  $prog $cfg round $round: FAIL (exit $rc, ompt-tool '$(sed -n 's/^# ompt-tool //p' "$out")'," \
            "wanted '$want'); stderr:"
        tail -n 5 "$err" | sed 's/^/    /'
        echo "$prog $cfg $round FAIL" >>"$work/status"
        return 1
    fi
    echo "$prog $cfg $round ok" >>"$work/status"
    if [ "$prog" = syncbench ]; then
        awk -v p="$prog" -v c="$cfg" -v r="$round" \
            '!/^#/ && $3 == "us" { print p, c, r, $1, $2, "us", $2, "-" }' "$out" >>"$work/rows"
    else
        awk -v p="$prog" -v c="$cfg" -v r="$round" '$1 == "result" {
                ovh = "-"; ck = "-"
                for (i = 5; i < NF; i++) {
                    if ($i == "ovh_us") ovh = $(i + 1)
                    if ($i == "checksum") ck = $(i + 1)
                }
                print p, c, r, $2, $3, $4, ovh, ck
            }' "$out" >>"$work/rows"
    fi
    if [ "$cfg" = gputool ]; then
        sed -n 's/^gputool[^:]*: overhead: \([0-9]*\) context lookups, \([0-9]*\) full unwinds; \([0-9]*\) samples, \([0-9]*\) inside the tool.*/\1 \2 \3 \4/p' \
            "$err" | tail -n 1 | awk -v p="$prog" -v r="$round" 'NF == 4 { print p, r, $0 }' >>"$work/ovh"
    fi
    return 0
}

echo "run-dense: $THREADS threads, OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=$OMP_PLACES" \
    "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-default}, per-run timeout ${TIMEOUT} s"
echo "  gputool    $GPUTOOL_SO"
echo "  null tool  $GTNULLTOOL"
echo "  machine    $(uname -n), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
# Other work on the machine competes with the benchmark threads for cores:
# how busy the CPUs were over half a second, printed before and after.
busy_note() {
    local b0 t0 b1 t1
    [ -r /proc/stat ] || return 0
    read -r b0 t0 < <(awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat)
    sleep 0.5
    read -r b1 t1 < <(awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat)
    awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v w="$1" -v l="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
        p = (t > 0) ? 100 * b / t : 0
        printf "  cpu        %.0f%% busy %s, load average %s%s\n", p, w, l,
            (p > 20) ? " (other work is running: expect noisy figures)" : "" }'
}
start=$(date +%s)
busy_note "before the start"

# ---- --repeat: the taskloop program N times under gputool -----------------
if [ "$REPEAT" -gt 0 ]; then
    echo "  taskloop   ${bin[taskloop]} ${a_taskloop[*]}"
    ok=0
    for ((r = 0; r < REPEAT; r++)); do
        if run_one taskloop gputool "$r"; then
            ok=$((ok + 1))
            rm -f "$work/taskloop.gputool.$r".*
        fi
        if (((r + 1) % 20 == 0)); then printf '  %d/%d runs done\n' $((r + 1)) "$REPEAT"; fi
    done
    hangs=$(grep -c ' HANG$' "$work/status")
    fails=$(grep -c ' FAIL$' "$work/status")
    echo "taskloop under gputool: $REPEAT runs, $ok ok, $hangs HANG, $fails failed"
    printf 'budget: no hang or failure in %d runs: %s\n' "$REPEAT" \
        "$([ "$hangs" -eq 0 ] && [ "$fails" -eq 0 ] && echo PASS || echo OVER)"
    busy_note "at the end"
    echo "elapsed: $(($(date +%s) - start)) s"
    [ "$hangs" -eq 0 ] && [ "$fails" -eq 0 ]
    exit
fi

configs=(none null gputool)
for p in $PROGRAMS; do
    pa=a_$p[*]
    echo "  $p: ${bin[$p]} ${!pa-}"
done
for ((r = 0; r < ROUNDS; r++)); do
    for p in $PROGRAMS; do
        # Rotate the order each round so no configuration always runs first.
        for ((k = 0; k < 3; k++)); do
            run_one "$p" "${configs[$(((r + k) % 3))]}" "$r"
        done
    done
    printf '  round %d/%d done (%d s)\n' $((r + 1)) "$ROUNDS" $(($(date +%s) - start))
done
first_err=$(ls "$work"/*.gputool.0.err 2>/dev/null | head -n 1)
if [ -n "$first_err" ] && [ -s "$first_err" ]; then
    echo "  gputool stderr ($(basename "$first_err" .err), last 3 lines):"
    tail -n 3 "$first_err" | sed 's/^/    /'
fi

# Ratios are medians of per-round ratios (the three runs of a round are
# adjacent in time, so a change of machine speed between rounds cancels).
awk -v rounds="$ROUNDS" -v threads="$THREADS" '
function median(arr, n,   i, j, t, a) {
    for (i = 1; i <= n; i++) a[i] = arr[i]
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function med(arr, t, cfg,   r, n, a) {
    n = 0
    for (r = 0; r < rounds; r++) if ((t, cfg, r) in arr) a[++n] = arr[t, cfg, r]
    return n ? median(a, n) : "n/a"
}
function med_ratio(arr, t, num, den,   r, n, a) {
    n = 0
    for (r = 0; r < rounds; r++)
        if ((t, num, r) in arr && (t, den, r) in arr && arr[t, den, r] > 0)
            a[++n] = arr[t, num, r] / arr[t, den, r]
    return n ? median(a, n) : "n/a"
}
function f(x, fmt) { return (x == "n/a") ? x : sprintf(fmt, x) }
function verdict(x, budget) { return (x == "n/a") ? "n/a" : (x <= budget) ? "PASS" : "OVER" }
FILENAME ~ /rows$/ {
    t = $4; prog[t] = $1; unit[t] = $6
    val[t, $2, $3] = $5
    if ($7 != "-") ovh[t, $2, $3] = $7
    if ($8 != "-") { if ((t in ck) && ck[t] != $8 && !(t in bad_ck)) { bad_ck[t] = 1; nbad_ck++ } ck[t] = $8 }
    if (!(t in seen)) { seen[t] = 1; order[++nt] = t }
    next
}
FILENAME ~ /ovh$/ { L[$1] += $3; U[$1] += $4; S[$1] += $5; K[$1] += $6; has[$1] = 1; next }
FILENAME ~ /status$/ { if ($4 != "ok") { bad[$1, $2, $4]++; any_bad = 1 } next }
END {
    printf "\nMedians of %d rounds, OMP_NUM_THREADS=%d; ratios: medians of per-round ratios\n", rounds, threads
    printf "%-17s %4s %10s %10s %10s %7s %7s %7s %8s %9s %8s\n", "measurement", "unit", "no-tool", "null",
        "gputool", "null/no", "gt/no", "gt/null", "ovh gt/no", "unw/lookup", "in-tool"
    for (i = 1; i <= nt; i++) {
        t = order[i]; p = prog[t]
        uw[t] = has[p] && L[p] > 0 ? U[p] / L[p] : "n/a"
        it[t] = has[p] && S[p] > 0 ? K[p] / S[p] : "n/a"
        r_gt[t] = med_ratio(val, t, "gputool", "none")
        r_gn[t] = med_ratio(val, t, "gputool", "null")
        r_ovh[t] = med_ratio(ovh, t, "gputool", "none")
        printf "%-17s %4s %10s %10s %10s %7s %7s %7s %8s %9s %8s\n", t, unit[t],
            f(med(val, t, "none"), "%.4g"), f(med(val, t, "null"), "%.4g"), f(med(val, t, "gputool"), "%.4g"),
            f(med_ratio(val, t, "null", "none"), "%.2f"), f(r_gt[t], "%.2f"),
            f(r_gn[t], "%.2f"), f(r_ovh[t], "%.2f"),
            f(uw[t], "%.4f"), (it[t] == "n/a") ? it[t] : sprintf("%.1f%%", 100 * it[t])
    }
    for (p in has) if (has[p]) printf "  %s: %d lookups, %d full unwinds; %d samples, %d inside the tool (sum over rounds)\n", p, L[p], U[p], S[p], K[p]
    printf "(ovh gt/no: ratio of the construct overhead, EPCC (time - reference); the budgets use gt/null, for PARALLEL the overhead itself)\n\n"
    for (i = 1; i <= nt; i++) {
        t = order[i]; p = prog[t]
        hang = ((p, "gputool", "HANG") in bad) ? bad[p, "gputool", "HANG"] : 0
        if (t == "DENSE") {
            printf "budget: DENSE gputool <= 1.15x null tool: %s %s (%s no tool); samples in tool <= 1%%: %s %s\n",
                f(r_gn[t], "%.2fx"), verdict(r_gn[t], 1.15), f(r_gt[t], "%.2fx"),
                (it[t] == "n/a") ? it[t] : sprintf("%.1f%%", 100 * it[t]), verdict(it[t], 0.01)
        } else if (t == "PARALLEL") {
            printf "budget: PARALLEL gputool overhead <= 1.25x null tool: %s %s (%s no tool)\n", f(r_gn[t], "%.2fx"),
                verdict(r_gn[t], 1.25), f(r_gt[t], "%.2fx")
        } else if (p == "taskloop" || p == "tasktree") {
            printf "budget: %s gputool <= 1.3x null tool: %s %s (%s no tool); hangs: %d %s\n", t, f(r_gn[t], "%.2fx"),
                verdict(r_gn[t], 1.3), f(r_gt[t], "%.2fx"), hang, hang ? "OVER" : "PASS"
        }
        if (t in bad_ck) printf "CHECKSUM: %s printed different checksums across runs\n", t
    }
    for (k in bad) { split(k, kk, SUBSEP); printf "%s: %d %s run(s) %s\n", kk[1], bad[k], kk[2], kk[3] }
    if (threads != 2) printf "(budgets are stated for 2 threads on a 2-core machine and 16 threads on 16 cores; measured with %d)\n", threads
    exit (any_bad || nbad_ck > 0) ? 1 : 0
}' "$work/rows" "$work/ovh" "$work/status"
rc=$?

# unwinds_of PROG ARGS...: the full unwinds of one run under gputool.
unwinds_of() {
    local prog=$1 d
    shift
    d=$(mktemp -d "$work/warm.XXXXXX")
    env OMP_TOOL_LIBRARIES="$GPUTOOL_SO" GPUTOOL_OUTPUT="$d" GPUTOOL_VERBOSE=2 \
        "${bin[$prog]}" "$@" 2>&1 >/dev/null |
        sed -n 's/^gputool[^:]*: overhead: [0-9]* context lookups, \([0-9]*\) full unwinds.*/\1/p' | tail -n 1
    rm -rf "$d"
}

# warm_check PROG FLAG: a thread unwinds in full only for a context it
# meets for the first time, so after warm-up there are none: the program
# run with FLAG's count doubled must make no more full unwinds than with
# its arguments (programs whose arguments lack FLAG are left out).
warm_check() {
    local prog=$1 flag=$2 i n= u1 u2
    local -n wargs=a_$prog
    local -a longer=("${wargs[@]}")

    for i in "${!longer[@]}"; do
        if [ "${longer[$i]}" = "$flag" ] && [ $((i + 1)) -lt ${#longer[@]} ]; then
            n=${longer[$((i + 1))]}
            longer[$((i + 1))]=$((2 * n))
            break
        fi
    done
    [ -n "$n" ] || return 0
    u1=$(unwinds_of "$prog" "${wargs[@]}")
    u2=$(unwinds_of "$prog" "${longer[@]}")
    if [ -z "$u1" ] || [ -z "$u2" ]; then
        echo "budget: $prog full unwinds after warm-up = 0: n/a (no overhead line)"
    else
        echo "budget: $prog full unwinds after warm-up = 0: $((u2 > u1 ? u2 - u1 : 0))" \
            "($u1 with $flag $n, $u2 with $flag $((2 * n))) $([ "$u2" -le "$u1" ] && echo PASS || echo OVER)"
    fi
}
if [ "$REPEAT" -eq 0 ]; then
    for p in $PROGRAMS; do
        case $p in dense) warm_check dense -i ;; tasktree) warm_check tasktree -o ;; taskloop) warm_check taskloop -o ;; syncbench) warm_check syncbench -o ;; esac
    done
fi
busy_note "at the end"
echo "elapsed: $(($(date +%s) - start)) s"
exit $rc
