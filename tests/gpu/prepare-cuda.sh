#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# On the build machine: collects what tests/gpu/run.sh needs on a GPU
# machine (Ubuntu 24.04 with the NVIDIA driver and CUDA, but no LLVM and no
# elfutils): the library, the gputool command, the CUDA sample and
# benchmark, the replay test, and the shared libraries they need that the
# GPU machine lacks.
#
# Usage: tests/gpu/prepare-cuda.sh BUILD_DIR DEST
set -eu
B=$1
D=$2
ninja -C "$B" gputool_lib gputool_cli cuda_ops cuda_threads cuda_pcsamp cuda_gpucalls cuda_advice cuda_launches cuda_nvtx cuda_diverge cuda_streams cuda_optimize cuda_blame cuda_multigpu bench_cuda_launch gtcuptionly \
	test_cupti test_sass >/dev/null
mkdir -p "$D/lib"
cp "$B/libgputool.so" "$B/gputool" "$B/samples/cuda/ops" "$B/samples/cuda/threads" "$B/samples/cuda/pcsamp" "$B/samples/cuda/gpucalls" "$B/samples/cuda/advice" "$B/samples/cuda/launches" "$B/samples/cuda/nvtx" "$B/samples/cuda/diverge" "$B/samples/cuda/streams" "$B/samples/cuda/optimize" "$B/bench/cuda/launch" \
	"$B/bench/cuda/libgtcuptionly.so" "$B/tests/cupti/test_cupti" "$B/tests/unit/test_sass" "$B/samples/cuda/blame" "$B/samples/cuda/multigpu" "$D/"
for l in libunwind.so.8 libdw.so.1 libelf.so.1 liblzma.so.5 libbz2.so.1.0; do
	cp -L "/lib/x86_64-linux-gnu/$l" "$D/lib/"
done
# LLVM's OpenMP runtime (OMPT), which the sample is linked with.
cp -L /usr/lib/llvm-19/lib/libomp.so.5 "$D/lib/"
du -sh "$D"
