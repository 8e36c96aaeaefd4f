#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The CUDA backend on a machine with an NVIDIA GPU, in one go: the sample
# with known numbers under the tool (checked by check_cuda.py), a recording
# of CUPTI's buffers replayed at once by the test that CI runs on it, a
# program holding CUPTI itself, and the launch benchmark (bench/cuda). Prints
# a summary; docs/GPU-VALIDATION.md and docs/PERFORMANCE.md have the figures.
#
# Usage: tests/gpu/run.sh PREPARED OUT [ACC]
#   PREPARED  what tests/gpu/prepare-cuda.sh made on the build machine
#             (libgputool.so, gputool, the sample, the benchmark, test_cupti,
#             and the shared libraries the GPU machine lacks, in lib/)
#   OUT       where the summary, the recording and the report land
#   ACC       optional: samples/openacc/sites offloaded by GCC (sites-nvptx)
#             with GCC's libgomp and its nvptx plugin in ACC/lib, as
#             docs/GPU-VALIDATION.md's OpenACC section prepares them
set -u
D=$(cd "$1" && pwd)
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/gputool-cuda.XXXXXX)
LIB=$D/libgputool.so
SHORT=200 # short launches of the recorded run
export LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
status=0

note() { echo "== $*"; }
fail() { echo "FAIL: $*"; status=1; }
under_tool() { # OUTDIR ARGS...: the program under gputool (CUDA injection + OMPT)
	local o=$1; shift
	CUDA_INJECTION64_PATH=$LIB OMP_TOOL_LIBRARIES=$LIB GPUTOOL_OUTPUT=$o "$@"
}

note "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvcc --version 2>/dev/null | tail -1
date -u +%F

note "samples/cuda/ops: bare, then under the tool"
"$D/ops" >"$TMP/bare.out" 2>"$TMP/bare.err" || fail "ops exits $? without the tool"
t0=$(date +%s.%N)
under_tool "$TMP/ops" "$D/ops" >"$TMP/tool.out" 2>"$TMP/tool.err" || fail "ops exits $? under the tool"
t1=$(date +%s.%N)
cmp -s "$TMP/bare.out" "$TMP/tool.out" || fail "stdout changed under the tool"
echo "stdout: $(tr '\n' ' ' <"$TMP/tool.out")"
echo "tool stderr:"; sed 's/^/  /' "$TMP/tool.err"
echo "wall under the tool: $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s"
python3 "$SRC/tests/gpu/check_cuda.py" "$D/gputool" "$TMP/ops" 2000 || fail "check_cuda.py (2000)"
"$D/gputool" report "$TMP"/ops/*.gtprof --format json >"$OUT/ops-profile.json" 2>/dev/null
cp "$TMP"/ops/*.txt "$OUT/ops-report.txt"

note "recording CUPTI's buffers (ops $SHORT), and replaying them"
GPUTOOL_CUPTI_RECORD=$TMP/rec under_tool "$TMP/ops-rec" "$D/ops" $SHORT >"$TMP/rec.out" 2>"$TMP/rec.err" ||
	fail "ops $SHORT exits $? while recording"
sed 's/^/  /' "$TMP/rec.err"
python3 "$SRC/tests/gpu/check_cuda.py" "$D/gputool" "$TMP/ops-rec" $SHORT || fail "check_cuda.py ($SHORT)"
rec=$(ls "$TMP"/rec/cupti-*.rec | head -1)
ls -l "$rec"
cp "$rec" "$OUT/ops-$SHORT.rec"
"$D/test_cupti" replay "$rec" $SHORT || fail "replay of the recording"
"$D/test_cupti" elide "$D/ops" || fail "static runtime ranges"

note "samples/cuda/threads: 2000 threads that launch, copy and end, 8 at a time"
"$D/threads" 2000 >"$TMP/threads-bare.out" 2>&1 || fail "threads exits $? without the tool"
under_tool "$TMP/threads" "$D/threads" 2000 >"$TMP/threads.out" 2>"$TMP/threads.err" || fail "threads exits $? under the tool"
echo "bare:       $(grep resident "$TMP/threads-bare.out")"
echo "under tool: $(grep resident "$TMP/threads.out")"
[ "$(grep -v resident "$TMP/threads-bare.out")" = "$(grep -v resident "$TMP/threads.out")" ] ||
	fail "threads: stdout changed under the tool"
python3 "$SRC/tests/gpu/check_cuda.py" "$D/gputool" "$TMP/threads" threads:2000 || fail "check_cuda.py threads:2000"

note "samples/cuda/pcsamp under GPUTOOL_PC_SAMPLING (the default period, then 2^10)"
for per in 1 10; do
	GPUTOOL_PC_SAMPLING=$per under_tool "$TMP/pcsamp$per" "$D/pcsamp" >"$TMP/pcsamp.out" 2>"$TMP/pcsamp.err" ||
		fail "pcsamp exits $? under the tool"
	python3 "$SRC/tests/gpu/check_cuda.py" "$D/gputool" "$TMP/pcsamp$per" pcsamp || fail "check_cuda.py pcsamp ($per)"
done
sed -n '/^GPU source lines/,/^$/p' "$TMP"/pcsamp1/*.txt | head -12
cp "$TMP"/pcsamp1/*.txt "$OUT/pcsamp-report.txt"

note "samples/cuda/gpucalls under GPUTOOL_PC_SAMPLING: GPU calling contexts and loops (nvdisasm), recorded"
# A sample every 2^9 cycles: the call instructions' samples count the calls.
GPUTOOL_PC_SAMPLING=9 GPUTOOL_CUPTI_RECORD=$TMP/gcrec GPUTOOL_VERBOSE=2 under_tool "$TMP/gpucalls" "$D/gpucalls" \
	>"$TMP/gpucalls.out" 2>"$TMP/gpucalls.err" || fail "gpucalls exits $? under the tool"
grep -E 'cubin|nvdisasm|PC samples' "$TMP/gpucalls.err" | sed 's/^/  /'
python3 "$SRC/tests/gpu/check_cuda.py" "$D/gputool" "$TMP/gpucalls" gpucalls || fail "check_cuda.py gpucalls"
cp "$(ls "$TMP"/gcrec/cupti-*.rec | head -1)" "$OUT/gpucalls.rec"
"$D/test_cupti" replay-pc "$OUT/gpucalls.rec" "$SRC/samples/cuda/gpucalls.cu" || fail "replay of gpucalls.rec"
cp "$TMP"/gpucalls/*.txt "$OUT/gpucalls-report.txt"
sed -n '/^GPU loops/,/^$/p' "$TMP"/gpucalls/*.txt | head -16

note "samples/cuda/advice: pairs of kernels whose fix is known, what the PC samples say of the slow ones"
"$D/advice" >"$TMP/advice-bare.out" 2>&1 || fail "advice exits $? without the tool"
GPUTOOL_CUPTI_RECORD=$TMP/advrec GPUTOOL_PC_SAMPLING=1 under_tool "$TMP/advice" "$D/advice" >"$TMP/advice.out" \
	2>"$TMP/advice.err" || fail "advice exits $? under the tool"
cat "$TMP/advice-bare.out"
python3 "$SRC/tests/gpu/check_advice.py" "$D/gputool" "$TMP/advice" "$TMP/advice-bare.out" \
	"$SRC/samples/cuda/advice.cu" || fail "check_advice.py"
cp "$TMP"/advice/*.txt "$OUT/advice-report.txt"
cp "$TMP"/advice/*.gtprof "$OUT/advice.gtprof"
cp "$TMP/advice-bare.out" "$OUT/advice-bare.out"
cp "$(ls "$TMP"/advrec/cupti-*.rec | head -1)" "$OUT/advice.rec"
GT_REPLAY_PROFILE=$TMP/advice-replay.gtprof "$D/test_cupti" replay-advice "$OUT/advice.rec" 11 || fail "replay of advice.rec"

note "samples/cuda/nvtx: kernels launched inside NVTX ranges hang under the ranges"
python3 "$SRC/tests/gpu/check_nvtx.py" "$LIB" "$D/gputool" "$D/nvtx" || fail "check_nvtx.py"

note "samples/cuda/launches: a chain of tiny kernels launched one by one, then as a CUDA graph"
"$D/launches" >"$TMP/launches-bare.out" 2>&1 || fail "launches exits $? without the tool"
under_tool "$TMP/launches" "$D/launches" >"$TMP/launches.out" 2>"$TMP/launches.err" || fail "launches exits $? under the tool"
echo "bare:       $(grep pair "$TMP/launches-bare.out")"
echo "under tool: $(grep pair "$TMP/launches.out")"
python3 "$SRC/tests/gpu/check_launches.py" "$D/gputool" "$TMP/launches" "$TMP/launches.out" "$TMP/launches-bare.out" \
	"$SRC/samples/cuda/launches.cu" || fail "check_launches.py"
sed -n '/^What to do next/,/^$/p' "$TMP"/launches/*.txt | head -12
# A short run recorded, for the replay test (tests/cupti/data/launches-*.rec).
GPUTOOL_CUPTI_RECORD=$TMP/lrec under_tool "$TMP/launches-rec" "$D/launches" 100 4 >/dev/null 2>&1 ||
	fail "launches 100 4 exits $? while recording"
cp "$(ls "$TMP"/lrec/cupti-*.rec | head -1)" "$OUT/launches.rec"
python3 "$SRC/tests/cupti/check_report_launches.py" "$D/test_cupti" "$D/gputool" "$OUT/launches.rec" \
	"$SRC/samples/cuda/launches.cu" "$TMP/lreplay" || fail "replay of launches.rec"

note "samples/cuda/optimize: the code optimizers (unrolling, inlining, long-latency arithmetic)"
"$D/optimize" >"$TMP/optimize-bare.out" 2>&1 || fail "optimize exits $? without the tool"
GPUTOOL_CUPTI_RECORD=$TMP/optrec GPUTOOL_PC_SAMPLING=1 under_tool "$TMP/optimize" "$D/optimize" \
	>"$TMP/optimize.out" 2>"$TMP/optimize.err" || fail "optimize exits $? under the tool"
echo "bare:       $(tr '\n' ' ' <"$TMP/optimize-bare.out")"
python3 "$SRC/tests/gpu/check_optimize.py" "$D/gputool" "$TMP/optimize" "$TMP/optimize.out" \
	"$SRC/samples/cuda/optimize.cu" || fail "check_optimize.py"
cp "$TMP"/optimize/*.txt "$OUT/optimize-report.txt"
cp "$(ls "$TMP"/optrec/cupti-*.rec | head -1)" "$OUT/optimize.rec"

note "samples/cuda/diverge under GPUTOOL_SASS_COUNTS: warp and thread instruction counts, divergence"
"$D/diverge" >"$TMP/diverge-bare.out" 2>&1 || fail "diverge exits $? without the tool"
GPUTOOL_SASS_COUNTS=1 under_tool "$TMP/diverge" "$D/diverge" >"$TMP/diverge.out" 2>"$TMP/diverge.err" ||
	fail "diverge exits $? under the tool"
echo "bare:       $(cat "$TMP/diverge-bare.out")"
echo "under tool: $(cat "$TMP/diverge.out") (patched)"
sed 's/^/  /' "$TMP/diverge.err"
ncsv=
if command -v ncu >/dev/null; then
	ncu --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum --csv "$D/diverge" >"$TMP/ncu-diverge.csv" 2>/dev/null &&
		ncsv=$TMP/ncu-diverge.csv
fi
python3 "$SRC/tests/gpu/check_divergence.py" "$D/gputool" "$TMP/diverge" "$TMP/diverge-bare.out" \
	"$SRC/samples/cuda/diverge.cu" $ncsv || fail "check_divergence.py"
sed -n '/^What to do next/,/^$/p' "$TMP"/diverge/*.txt | head -10

note "samples/cuda/streams: waits for one stream before feeding the other"
"$D/streams" >"$TMP/streams-bare.out" 2>&1 || fail "streams exits $? without the tool"
under_tool "$TMP/streams" "$D/streams" >"$TMP/streams.out" 2>"$TMP/streams.err" || fail "streams exits $? under the tool"
echo "bare:       $(cat "$TMP/streams-bare.out")"
echo "under tool: $(cat "$TMP/streams.out")"
python3 "$SRC/tests/gpu/check_streams.py" "$D/gputool" "$TMP/streams" "$TMP/streams.out" "$TMP/streams-bare.out" ||
	fail "check_streams.py"

if command -v ncu >/dev/null; then
	note "instructions derived from the samples (equations 10, 11) against Nsight Compute's counts"
	for s in pcsamp:pcsamp1 gpucalls:gpucalls; do
		ncu --metrics smsp__inst_executed.sum,sass__inst_executed_per_opcode --print-metric-instances details \
			--csv "$D/${s%%:*}" >"$TMP/ncu-${s%%:*}.csv" 2>/dev/null || fail "ncu ${s%%:*}"
		python3 "$SRC/tests/gpu/compare_ncu.py" "$D/gputool" "$D/test_sass" "$TMP/ncu-${s%%:*}.csv" "$TMP/${s#*:}"
	done
fi

note "a program that holds CUPTI itself (its own subscriber)"
under_tool "$TMP/sub" "$D/launch" cupti 1000 >"$TMP/sub.out" 2>"$TMP/sub.err"
echo "exit $?: $(tr '\n' ' ' <"$TMP/sub.out")"
sed 's/^/  /' "$TMP/sub.err"
n=$(grep -c '^gputool\[cupti\]' "$TMP/sub.err")
[ "$n" = 1 ] && grep -q 'already has a subscriber' "$TMP/sub.err" ||
	echo "note: the tool did not report another subscriber ($n lines)"

if [ -n "${3:-}" ]; then
	note "OpenACC (GCC, nvptx) under ACC_PROFLIB alone: the CUDA backend starts at device init"
	A=$(cd "$3" && pwd)
	LD_LIBRARY_PATH=$A/lib:$LD_LIBRARY_PATH ACC_PROFLIB=$LIB GPUTOOL_OUTPUT=$TMP/acc \
		"$A/sites-nvptx" >"$TMP/acc.out" 2>"$TMP/acc.err" || fail "sites-nvptx exits $?"
	sed 's/^/  /' "$TMP/acc.err"
	python3 "$SRC/tests/gpu/check_cuda.py" "$D/gputool" "$TMP/acc" acc || fail "check_cuda.py acc"
fi

note "bench/cuda: launch-bound loop, 200000 launches, 5 rounds"
for r in 1 2 3 4 5; do
	"$D/launch" none 200000 | grep ns_per_launch
	"$D/launch" cupti 200000 | grep ns_per_launch
	under_tool "$TMP/bench$r" "$D/launch" plain 200000 2>"$TMP/bench$r.err" | grep ns_per_launch |
		sed 's/mode plain/mode gputool/'
	GPUTOOL_SAMPLE_HZ=0 under_tool "$TMP/bench-ns$r" "$D/launch" plain 200000 2>/dev/null |
		grep ns_per_launch | sed 's/mode plain/mode gputool_nosampling/'
done | tee "$TMP/bench.txt"
python3 - "$TMP/bench.txt" <<'EOF'
import re, statistics, sys
by = {}
for line in open(sys.argv[1]):
    m = re.search(r"mode (\w+) launches \d+ ns_per_launch ([\d.]+)", line)
    if m:
        by.setdefault(m.group(1), []).append(float(m.group(2)))
med = {k: statistics.median(v) for k, v in by.items()}
for k in ("none", "cupti", "gputool", "gputool_nosampling"):
    print("%-8s median %8.1f ns/launch  (rounds: %s)" % (k, med.get(k, 0), ", ".join("%.1f" % x for x in by.get(k, []))))
if med.get("cupti"):
    print("gputool / CUPTI-only: %.3fx   CUPTI-only / none: %.3fx" % (med["gputool"] / med["cupti"], med["cupti"] / med["none"]))
EOF
"$D/gputool" report "$TMP"/bench1/*.gtprof 2>/dev/null | grep -iE "cupti|cuda_|GKER" | head -8

note "bench/cuda: launch and wait loops (cudaStreamSynchronize, cudaDeviceSynchronize), 50000 iterations, 5 rounds"
for r in 1 2 3 4 5; do
	for w in sync devsync; do
		"$D/launch" none 50000 $w | grep ns_per_launch
		"$D/launch" cupti 50000 $w | grep ns_per_launch
		under_tool "$TMP/bench-$w$r" "$D/launch" plain 50000 $w 2>/dev/null | grep ns_per_launch |
			sed 's/mode plain/mode gputool/'
	done
done | tee "$TMP/bench-sync.txt"
python3 - "$TMP/bench-sync.txt" <<'EOF'
import re, statistics, sys
by = {}
for line in open(sys.argv[1]):
    m = re.search(r"mode (\w+) launches \d+ ns_per_launch ([\d.]+)", line)
    if m:
        by.setdefault(m.group(1), []).append(float(m.group(2)))
med = {k: statistics.median(v) for k, v in by.items()}
for w in ("sync", "devsync"):
    for k in ("none", "cupti", "gputool"):
        key = "%s_%s" % (k, w)
        print("%-16s median %8.1f ns/iteration  (rounds: %s)" % (key, med.get(key, 0), ", ".join("%.1f" % x for x in by.get(key, []))))
    if med.get("cupti_" + w):
        print("%s: gputool / CUPTI-only: %.3fx   gputool / none: %.3fx" % (w, med["gputool_" + w] / med["cupti_" + w], med["gputool_" + w] / med["none_" + w]))
EOF

note "memory over 1,000,000 launches under the tool"
under_tool "$TMP/mem" "$D/launch" memory 1000000 2>"$TMP/mem.err" | tee "$TMP/mem.txt"
"$D/gputool" report "$TMP"/mem/*.gtprof 2>/dev/null | grep -iE "cupti_records" | head -3

note "status $status"
exit $status
