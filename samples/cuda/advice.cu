// SPDX-License-Identifier: MIT
//
// Pairs of kernels where the fix is known, for what PC samples say of them
// (tests/gpu/check_advice.py): each pair does the same work, the first
// with one inefficiency, the second without it. The program times each
// kernel itself (CUDA events, best of 5 launches) and prints
//   pair NAME slow_ms S fast_ms F speedup X
//
//   coalesce   a copy through a stride of 32 floats, then the plain copy
//   spill      a dynamically indexed local array (local memory), then the
//              same additions indexed statically (registers)
//   balance    one warp of each block works 8 times as long as the others
//              before a barrier, then the work spread over all warps
//   fastmath   expf and sinf, then __expf and __sinf
//   occupancy  a latency-bound chain in blocks that reserve 100 KiB of
//              shared memory each (2 blocks per SM), then without it
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 advice.cu -lstdc++
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.h"

enum { N = 1 << 24, BLOCK = 256, ROUNDS = 5 };

// ---- coalesce ----
__global__ void copy_strided(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int j = (int)(((long long)i * 32) % n + ((long long)i * 32) / n);

	out[i] = in[j]; // STRIDED: 32 floats apart, a sector per thread
}

__global__ void copy_plain(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[i];
}

// ---- spill ----
__global__ void sums_local(const float *in, float *out, int reps)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float t[32];
	float acc = 0;

	for (int k = 0; k < 32; k++)
		t[k] = in[(i + k) & (N - 1)];
	for (int r = 0; r < reps; r++)
		acc += t[(r * 7 + i) & 31]; // LOCAL
	out[i] = acc;
}

__global__ void sums_registers(const float *in, float *out, int reps)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float t[32];
	float acc = 0;

	for (int k = 0; k < 32; k++)
		t[k] = in[(i + k) & (N - 1)];
	// The same additions of the same values, indexed statically: t stays
	// in registers.
	for (int r = 0; r < reps; r += 32) {
#pragma unroll
		for (int k = 0; k < 32; k++)
			acc += t[k];
	}
	out[i] = acc;
}

// ---- balance ----
__device__ float chain(float v, int n)
{
	for (int k = 0; k < n; k++)
		v = v * 0.9999f + 0.5f;
	return v;
}

__global__ void barrier_skewed(float *out, int steps, int n)
{
	float v = threadIdx.x;

	for (int s = 0; s < steps; s++) { // STEPS
		if (threadIdx.x < 32)
			v = chain(v, 8 * n); // SKEWED
		__syncthreads(); // BARRIER
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void barrier_even(float *out, int steps, int n)
{
	float v = threadIdx.x;

	for (int s = 0; s < steps; s++) {
		v = chain(v, n); // EVEN: the same 8 n per block, over its 8 warps
		__syncthreads();
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// ---- fastmath ----
__global__ void math_precise(float *out, int n)
{
	float x = 0.001f * threadIdx.x, acc = 0;

	for (int k = 0; k < n; k++)
		acc += expf(x + k * 1e-4f) * sinf(x * k); // PRECISE
	out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__global__ void math_fast(float *out, int n)
{
	float x = 0.001f * threadIdx.x, acc = 0;

	for (int k = 0; k < n; k++)
		acc += __expf(x + k * 1e-4f) * __sinf(x * k);
	out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ---- occupancy ----
__global__ void chain_reserved(float *out, int n)
{
	extern __shared__ float reserved[];
	float v = threadIdx.x;

	if (n < 0) // never: the reservation is what limits the blocks per SM
		reserved[threadIdx.x] = v;
	v = chain(v, n); // RESERVED
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void chain_open(float *out, int n)
{
	float v = threadIdx.x;

	v = chain(v, n);
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

static float best_ms(void (*launch)(void *), void *arg)
{
	cudaEvent_t a, b;
	float best = 1e30f, ms;

	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	for (int r = 0; r < ROUNDS; r++) {
		CHECK(cudaEventRecord(a));
		launch(arg);
		CHECK(cudaEventRecord(b));
		CHECK(cudaEventSynchronize(b));
		CHECK(cudaEventElapsedTime(&ms, a, b));
		best = ms < best ? ms : best;
	}
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
	return best;
}

struct bufs {
	float *in, *out;
};

static void run_strided(void *p) { copy_strided<<<N / BLOCK, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, N); }
static void run_plain(void *p) { copy_plain<<<N / BLOCK, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, N); }
static void run_local(void *p) { sums_local<<<N / 16 / BLOCK, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 4096); }
static void run_regs(void *p) { sums_registers<<<N / 16 / BLOCK, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 4096); }
static void run_skewed(void *p) { barrier_skewed<<<528, BLOCK>>>(((bufs *)p)->out, 64, 256); }
static void run_even(void *p) { barrier_even<<<528, BLOCK>>>(((bufs *)p)->out, 64, 256); }
static void run_precise(void *p) { math_precise<<<528, BLOCK>>>(((bufs *)p)->out, 4096); }
static void run_fast(void *p) { math_fast<<<528, BLOCK>>>(((bufs *)p)->out, 4096); }
static void run_reserved(void *p) { chain_reserved<<<132 * 16, 128, 100 << 10>>>(((bufs *)p)->out, 65536); }
static void run_open(void *p) { chain_open<<<132 * 16, 128>>>(((bufs *)p)->out, 65536); }

static void pair(const char *name, void (*slow)(void *), void (*fast)(void *), bufs *b)
{
	float s = best_ms(slow, b), f = best_ms(fast, b);

	printf("pair %s slow_ms %.4f fast_ms %.4f speedup %.3f\n", name, s, f, s / f);
}

int main()
{
	bufs b;

	CHECK(cudaMalloc(&b.in, N * sizeof(float)));
	CHECK(cudaMalloc(&b.out, N * sizeof(float)));
	CHECK(cudaMemset(b.in, 0, N * sizeof(float)));
	CHECK(cudaFuncSetAttribute(chain_reserved, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10));
	pair("coalesce", run_strided, run_plain, &b);
	pair("spill", run_local, run_regs, &b);
	pair("balance", run_skewed, run_even, &b);
	pair("fastmath", run_precise, run_fast, &b);
	pair("occupancy", run_reserved, run_open, &b);
	CHECK(cudaDeviceSynchronize());
	printf("ok\n");
	CHECK(cudaFree(b.in));
	CHECK(cudaFree(b.out));
	return 0;
}
