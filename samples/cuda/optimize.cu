// SPDX-License-Identifier: MIT
//
// Pairs of kernels for the code optimizers (docs/ADVICE.md): each pair does
// the same work, the first in a way a compiler leaves slow, the second with
// the change the advice suggests. The program times each side itself (CUDA
// events, the mean of 5 runs: the runs the tool measures) and prints
//   pair NAME slow_ms S fast_ms F speedup X
// (tests/gpu/check_optimize.py compares the advice's estimates with them).
//
//   unroll   a loop of independent loads summed, kept rolled (#pragma
//            unroll 1): each load waits for the last; then unrolled 4 times,
//            as the advice suggests
//   inline   a short chain of multiply-adds in a device function that is
//            not inlined (__noinline__), called in a loop; then inlined
//   divide   a 64-bit modulo by a value known only at run time, in a
//            loop: a call to the compiler's 64-bit division; then the same
//            values with 32-bit operands
//
// Every kernel runs 4 warps a block, 4 blocks an SM (of 132): few warps,
// so that what hides latency is the warp's own instructions.
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -ccbin clang-19 optimize.cu
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

enum { M = 1 << 20, BLOCK = 128, GRID = 132 * 4, ROUNDS = 5 };

// ---- unroll ----
__global__ void sum_rolled(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0;

#pragma unroll 1
	for (int k = 0; k < n; k++)
		acc += in[(i + k * 4099) & (M - 1)]; // ROLLED
	out[i] = acc;
}

__global__ void sum_unrolled(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0;

#pragma unroll 4
	for (int k = 0; k < n; k++)
		acc += in[(i + k * 4099) & (M - 1)];
	out[i] = acc;
}

// ---- inline ----
__device__ __noinline__ float step_called(float v, float x)
{
	for (int j = 0; j < 8; j++) // STEP
		v = v * x + 0.25f;
	return v;
}

__device__ __forceinline__ float step_inlined(float v, float x)
{
	for (int j = 0; j < 8; j++)
		v = v * x + 0.25f;
	return v;
}

__global__ void steps_called(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = in[i & (M - 1)] * 0.5f, acc = 0;

	for (int k = 0; k < n; k++)
		acc += step_called(k * 1e-3f, x); // CALLED
	out[i] = acc;
}

__global__ void steps_inlined(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = in[i & (M - 1)] * 0.5f, acc = 0;

	for (int k = 0; k < n; k++)
		acc += step_inlined(k * 1e-3f, x);
	out[i] = acc;
}

// ---- divide ----
__global__ void gather_mod64(const float *in, float *out, uint64_t m, int n)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	float acc = 0;

	for (int k = 0; k < n; k++)
		acc += in[(i * 7 + (uint64_t)k * 13) % m]; // MOD64
	out[i] = acc;
}

__global__ void gather_mod32(const float *in, float *out, uint32_t m, int n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0;

	for (int k = 0; k < n; k++)
		acc += in[(i * 7 + (uint32_t)k * 13) % m];
	out[i] = acc;
}

struct bufs {
	float *in, *out;
	uint64_t m; // the modulus, from the command line: unknown to the compiler
};

static void run_rolled(void *p) { sum_rolled<<<GRID, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 8192); }
static void run_unrolled(void *p) { sum_unrolled<<<GRID, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 8192); }
static void run_called(void *p) { steps_called<<<GRID, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 16384); }
static void run_inlined(void *p) { steps_inlined<<<GRID, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 16384); }
static void run_mod64(void *p)
{
	gather_mod64<<<GRID, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, ((bufs *)p)->m, 4096);
}
static void run_mod32(void *p)
{
	gather_mod32<<<GRID, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, (uint32_t)((bufs *)p)->m, 4096);
}

static void pair(const char *name, void (*slow)(void *), void (*fast)(void *), bufs *b)
{
	float s = mean_event_ms(slow, b, ROUNDS), f = mean_event_ms(fast, b, ROUNDS);

	printf("pair %s slow_ms %.4f fast_ms %.4f speedup %.3f\n", name, s, f, s / f);
}

int main(int argc, char **argv)
{
	bufs b;

	/* Every module loaded at the start, so that the first launch of a
	 * kernel times the kernel alone. */
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);
	b.m = argc > 1 ? strtoull(argv[1], NULL, 0) : M - 3;
	if (!b.m || b.m > M)
		return 2;
	CHECK(cudaMalloc(&b.in, M * sizeof(float)));
	CHECK(cudaMalloc(&b.out, GRID * BLOCK * sizeof(float)));
	CHECK(cudaMemset(b.in, 0, M * sizeof(float)));
	pair("unroll", run_rolled, run_unrolled, &b);
	pair("inline", run_called, run_inlined, &b);
	pair("divide", run_mod64, run_mod32, &b);
	CHECK(cudaDeviceSynchronize());
	printf("ok\n");
	CHECK(cudaFree(b.in));
	CHECK(cudaFree(b.out));
	return 0;
}
