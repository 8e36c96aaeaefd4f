#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, from the repository root, with out/gpu-cuda
# (tests/gpu/prepare-cuda.sh plus samples/cuda/blame), build-tgt/gpurun (the
# OpenMP target bundle, with bin/wait) and out/ext (third-party CUDA programs
# built with nvcc -O3 -g: XSBench, cuda-stream) prepared as
# docs/GPU-VALIDATION.md says: blame at implicit synchronizations (a blocking
# cudaMemcpy; the OpenMP runtime's waits) and the calling contexts of the
# launches in optimized CUDA programs. OUT: where reports and profiles go.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/ext"
export LD_LIBRARY_PATH=$R/out/gpu-cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
echo "== CUDA blame: a sync and a blocking copy"
python3 tests/gpu/check_blame.py out/gpu-cuda/libgputool.so out/gpu-cuda/gputool out/gpu-cuda/blame
rm -rf /tmp/bl && CUDA_INJECTION64_PATH=$R/out/gpu-cuda/libgputool.so GPUTOOL_OUTPUT=/tmp/bl out/gpu-cuda/blame >/dev/null 2>&1
cp /tmp/bl/*.txt "$OUT/blame-report.txt"
echo "== OpenMP target: the host's waits in the runtime"
G=build-tgt/gpurun
mkdir -p /tmp/llvm && tar -C /tmp/llvm -xJf $G/llvmrt.tar.xz
GT_RUN_LD_LIBRARY_PATH=/tmp/llvm:$R/$G/lib:$R/out/gpu-cuda/lib GT_RUN_LD_PRELOAD=/tmp/llvm/libnvptx-jit.so \
	python3 tests/gpu-machine/check_omp_wait.py $G/gputool $G/bin/wait "$OUT"
echo "== optimized CUDA programs: launch contexts, CPU time from the start"
for p in "XSBench -m event -s small -l 2000000" "cuda-stream -s 33554432 -n 20"; do
	set -- $p
	name=$1; shift
	rm -rf "/tmp/ext-$name"
	python3 - "$name" "$@" <<'PY'
import resource, subprocess, sys
name, args = sys.argv[1], sys.argv[2:]
with open("%s/ext/%s.out" % (__import__("os").environ["OUT"], name), "w") as out:
    rc = subprocess.call(["out/gpu-cuda/gputool", "run", "-o", "/tmp/ext-" + name, "--",
                          "out/ext/" + name] + args, stdout=out, stderr=subprocess.STDOUT)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%s: exit %d; process CPU time %.3f s (user %.3f, sys %.3f)"
      % (name, rc, ru.ru_utime + ru.ru_stime, ru.ru_utime, ru.ru_stime))
PY
	out/gpu-cuda/gputool report /tmp/ext-$name/*.gtprof --format json >"$OUT/ext/$name.json" 2>/dev/null
	cp /tmp/ext-$name/*.txt "$OUT/ext/$name.txt"
done
true
