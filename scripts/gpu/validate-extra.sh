#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, from the repository root, with out/gpu-cuda,
# out/gpu-acc and build-tgt/gpurun prepared as docs/GPU-VALIDATION.md says:
# blame shifting with CUDA, OpenMP target offload and OpenACC measured with
# CUDA at once. OUT: where the reports go.
set -u

R=$PWD
echo "== CUDA blame"
( export LD_LIBRARY_PATH=$R/out/gpu-cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
  python3 tests/gpu/check_blame.py out/gpu-cuda/libgputool.so out/gpu-cuda/gputool out/gpu-cuda/blame
  mkdir -p /tmp/bl && CUDA_INJECTION64_PATH=$R/out/gpu-cuda/libgputool.so GPUTOOL_OUTPUT=/tmp/bl out/gpu-cuda/blame >/dev/null 2>&1; cp /tmp/bl/*.txt $OUT/blame-report.txt )
echo "== OpenMP target + CUDA"
G=build-tgt/gpurun; mkdir -p /tmp/llvm && tar -C /tmp/llvm -xJf $G/llvmrt.tar.xz
export GT_RUN_LD_LIBRARY_PATH=/tmp/llvm:$R/$G/lib:$R/out/gpu-cuda/lib GT_RUN_LD_PRELOAD=/tmp/llvm/libnvptx-jit.so
for s in transfer nowait threads; do echo "-- $s"
	LD_LIBRARY_PATH=$R/$G/lib:$R/out/gpu-cuda/lib python3 tests/gpu/check_omp_cupti.py $G/libgputool.so $G/gputool $G/bin/$s
done
mkdir -p /tmp/oc && LD_LIBRARY_PATH=$GT_RUN_LD_LIBRARY_PATH LD_PRELOAD=$GT_RUN_LD_PRELOAD OMP_TOOL_LIBRARIES=$R/$G/libgputool.so CUDA_INJECTION64_PATH=$R/$G/libgputool.so GPUTOOL_OUTPUT=/tmp/oc $G/bin/transfer > /dev/null 2>&1; cp /tmp/oc/*.txt $OUT/omp-cupti-report.txt
echo "== OpenACC + CUDA (ACC_PROFLIB and CUDA injection)"
( cd out/gpu-acc && export LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-} && mkdir -p /tmp/ac && ACC_PROFLIB=$PWD/libgputool.so CUDA_INJECTION64_PATH=$PWD/libgputool.so GPUTOOL_OUTPUT=/tmp/ac ./sites-nvptx && ./gputool report /tmp/ac/*.gtprof --format json > $OUT/acc-cuda.json; python3 ../../tests/gpu-machine/check_acc.py libgputool.so gputool sites-nvptx )
true
