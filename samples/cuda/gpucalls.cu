// SPDX-License-Identifier: MIT
//
// GPU functions that are really called (not inlined), for the GPU calling
// contexts that GPUTOOL_PC_SAMPLING reconstructs (tests/gpu/check_cuda.py
// gpucalls):
//
//   two_sites   calls work() from two call sites, SITE_A in 3 warps of
//               every 4, SITE_B in the fourth, the same number of calls
//               of the same work per warp: 3/4 of work()'s samples belong
//               under SITE_A
//   nested      calls pair(), which calls work() twice (PAIR_1, PAIR_2):
//               work() appears at depth 2, under pair()
//   recursive   rec() calls itself (RECURSE) down to depth 6, then work():
//               a cycle in the call graph
//
// work() holds a loop (WORK, on one line so that the loop's header is on
// it), its trip count an argument so that it stays a loop, with nearly all
// of its samples.
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 gpucalls.cu -lstdc++
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.h"

// The call counts come from the samples of the call instructions: many
// short calls, so that those samples are many, and the two sites' loops
// alike, so that their calls are alike.
enum { WORK = 200, REPS = 20000, BLOCKS = 264, THREADS = 256 };

__device__ __noinline__ float work(float v, int k, int n)
{
	for (int i = 0; i < n; i++) v = v * 0.9999f + (float)((k + i) & 3); // WORK
	return v;
}

__device__ __noinline__ float pair(float v, int k, int n)
{
	v = work(v, k, n); // PAIR_1
	return work(v, k + 1, n); // PAIR_2
}

__device__ __noinline__ float rec(float v, int depth, int n)
{
	if (depth == 0)
		return work(v, depth, n); // REC_WORK
	return rec(v * 0.5f + 1.0f, depth - 1, n) + 1.0f; // RECURSE
}

__global__ void two_sites(float *out, int reps, int n)
{
	float v = (float)threadIdx.x;
	int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;

	if (warp % 4 != 3) {
		for (int r = 0; r < reps; r++)
			v = work(v, r, n); // SITE_A
	} else {
		for (int r = 0; r < reps; r++)
			v = work(v, r + 1, n); // SITE_B
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void nested(float *out, int reps, int n)
{
	float v = (float)threadIdx.x;

	for (int r = 0; r < reps; r++)
		v = pair(v, r, n); // NESTED
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void recursive(float *out, int reps, int n)
{
	float v = (float)threadIdx.x;

	for (int r = 0; r < reps; r++)
		v = rec(v, 6, n); // ROOT
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : REPS;
	float *out, host[3];

	CHECK(cudaMalloc(&out, BLOCKS * THREADS * sizeof(float)));
	two_sites<<<BLOCKS, THREADS>>>(out, 1, WORK); // warm-up
	CHECK(cudaDeviceSynchronize());
	two_sites<<<BLOCKS, THREADS>>>(out, reps, WORK);
	CHECK(cudaMemcpy(&host[0], out, sizeof(float), cudaMemcpyDeviceToHost));
	nested<<<BLOCKS, THREADS>>>(out, reps, WORK);
	CHECK(cudaMemcpy(&host[1], out, sizeof(float), cudaMemcpyDeviceToHost));
	recursive<<<BLOCKS, THREADS>>>(out, reps, WORK);
	CHECK(cudaMemcpy(&host[2], out, sizeof(float), cudaMemcpyDeviceToHost));
	printf("checksums %.3f %.3f %.3f\nok\n", host[0], host[1], host[2]);
	CHECK(cudaFree(out));
	return 0;
}
