// SPDX-License-Identifier: MIT
//
// A pair of kernels where the fix is known, for instruction counts
// (GPUTOOL_SASS_COUNTS; tests/gpu/check_divergence.py): both run the same
// two loops, each thread one of them. branch_lanes picks the loop by the
// thread's lowest bit, so every warp runs both loops with half its
// threads idle in each; branch_warps picks it by the warp's index, so
// every warp runs one loop with all its threads. The program times each
// side itself (CUDA events, the mean of ROUNDS runs) and prints
//   pair divergence slow_ms S fast_ms F speedup X
// Under the tool the kernels run patched (many times slower): compare
// with the times of a run without it.
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 diverge.cu -lstdc++
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

enum { BLOCKS = 528, BLOCK = 256, STEPS = 20000, ROUNDS = 5 };

__device__ __forceinline__ float path_a(float v, int n)
{
	for (int k = 0; k < n; k++)
		v = v * 1.0001f + 0.5f; // DIVERGENT
	return v;
}

__device__ __forceinline__ float path_b(float v, int n)
{
	for (int k = 0; k < n; k++)
		v = v * 0.9999f - 0.25f; // DIVERGENT
	return v;
}

__global__ void branch_lanes(float *out, int n)
{
	float v = threadIdx.x;

	v = threadIdx.x & 1 ? path_a(v, n) : path_b(v, n); // DIVERGENT: both loops inlined here
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void branch_warps(float *out, int n)
{
	float v = threadIdx.x;

	v = (threadIdx.x >> 5) & 1 ? path_a(v, n) : path_b(v, n);
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

static void run_lanes(void *out) { branch_lanes<<<BLOCKS, BLOCK>>>((float *)out, STEPS); }
static void run_warps(void *out) { branch_warps<<<BLOCKS, BLOCK>>>((float *)out, STEPS); }

int main()
{
	float *out, s, f;

	CHECK(cudaMalloc(&out, BLOCKS * BLOCK * sizeof(float)));
	s = mean_event_ms(run_lanes, out, ROUNDS);
	f = mean_event_ms(run_warps, out, ROUNDS);
	printf("pair divergence slow_ms %.4f fast_ms %.4f speedup %.3f\n", s, f, s / f);
	CHECK(cudaFree(out));
	return 0;
}
