#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Several GPUs (docs/GPU-VALIDATION.md, "Several GPUs"), on a machine with
# two: samples/cuda/multigpu under the tool (tests/gpu/check_multigpu.py),
# samples/cuda/ranks under mpirun (built there with its MPI), and their
# wall times bare and under the tool. Run from the repository root.
#
# Usage: tests/gpu/run-multigpu.sh PREPARED [OUT]
#   PREPARED  what tests/gpu/prepare-cuda.sh made (with samples/cuda/multigpu
#             and samples/cuda/blame); with tgt/devices (samples/omp-target/
#             devices built for the JIT path) and tgt/llvmrt.tar.xz
#             (scripts/gpu/pack-llvm-runtime.sh), OpenMP target on both GPUs
#   OUT       where the reports land
set -u
D=$(cd "$1" && pwd)
OUT=${2:-/tmp/gputool-multigpu}
export LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
sub() { awk "BEGIN { printf \"%.3f\", $1 - $2 }"; }
echo "== machine"; nvidia-smi -L; date -u
echo "== multigpu"
python3 tests/gpu/check_multigpu.py multigpu $D/libgputool.so $D/gputool $D/multigpu; echo "status $?"
echo "== blame (single-device sample, on a two-GPU machine)"
python3 tests/gpu/check_blame.py $D/libgputool.so $D/gputool $D/blame; echo "status $?"
echo "== multigpu wall, bare and under the tool, 5 interleaved rounds"
for r in 1 2 3 4 5; do
  t0=$(date +%s.%N); $D/multigpu >/dev/null; t1=$(date +%s.%N)
  CUDA_INJECTION64_PATH=$D/libgputool.so GPUTOOL_OUTPUT=/tmp/mgo$r $D/multigpu >/dev/null 2>&1; t2=$(date +%s.%N)
  echo "round $r bare $(sub $t1 $t0) tool $(sub $t2 $t1)"
done
echo "== ranks"
nvcc -arch=sm_90 -O2 -g -ccbin mpicxx -o /tmp/ranks samples/cuda/ranks.cu || echo "nvcc failed"
for np in 2 4; do
  rm -rf /tmp/rk$np
  mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -np $np $D/gputool run -o /tmp/rk$np -- /tmp/ranks \
    >/tmp/rk$np.out 2>&1; grep -v "^gputool: report" /tmp/rk$np.out | head -8
  GT_RANKS_OUT=/tmp/rk$np.out python3 tests/gpu/check_multigpu.py ranks $D/gputool /tmp/rk$np $np; echo "status $?"
done
echo "== ranks wall, bare and under gputool run (np 2), 3 rounds"
for r in 1 2 3; do
  t0=$(date +%s.%N); mpirun --allow-run-as-root -x LD_LIBRARY_PATH -np 2 /tmp/ranks >/dev/null 2>&1; t1=$(date +%s.%N)
  mpirun --allow-run-as-root -x LD_LIBRARY_PATH -np 2 $D/gputool run -o /tmp/rkw$r -- /tmp/ranks >/dev/null 2>&1; t2=$(date +%s.%N)
  echo "round $r bare $(sub $t1 $t0) tool $(sub $t2 $t1)"
done
if [ -f $D/tgt/llvmrt.tar.xz ]; then
  echo "== OpenMP target on two devices (LLVM's JIT path, runtime in tgt/)"
  mkdir -p /tmp/llvm && tar -C /tmp/llvm -xJf $D/tgt/llvmrt.tar.xz
  GT_RUN_LD_LIBRARY_PATH=/tmp/llvm:$D/lib GT_RUN_LD_PRELOAD=/tmp/llvm/libnvptx-jit.so \
    python3 tests/gpu/check_multigpu.py omp $D/libgputool.so $D/gputool $D/tgt/devices; echo "status $?"
  echo "== OpenMP target, one GPU per rank (tgt/ranks, built with OpenMPI's mpicc and clang-19)"
  for np in 2 4; do
    rm -rf /tmp/ork$np
    LD_LIBRARY_PATH=/tmp/llvm:$LD_LIBRARY_PATH mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH \
      -x LD_PRELOAD=/tmp/llvm/libnvptx-jit.so -np $np $D/gputool run -o /tmp/ork$np -- $D/tgt/ranks 2>&1 |
      grep -v "^gputool: report" | head -8
    python3 tests/gpu/check_multigpu.py ranks $D/gputool /tmp/ork$np $np omp; echo "status $?"
  done
fi
mkdir -p $OUT && cp -r /tmp/rk2 $OUT/ 2>/dev/null; $D/gputool report /tmp/mgo1 > $OUT/multigpu-report.txt 2>&1
$D/gputool report /tmp/rk4 > $OUT/ranks4-report.txt 2>&1
