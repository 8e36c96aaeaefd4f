// SPDX-License-Identifier: MIT
//
// Pairs of kernels where the fix is known, for what PC samples say of them
// (tests/gpu/check_advice.py): each pair does the same work, the first
// with one inefficiency, the second without it. The program times each
// side itself (CUDA events, the mean of 5 runs: the runs the tool measures)
// and prints
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
//   registers  48 values per thread updated in a loop with at most 32
//              registers (__launch_bounds__ asks for 8 blocks per SM): the
//              values spill to local memory; then with the registers they
//              need
//   occupancy_regs  the chain again, with 56 values per thread kept in
//              registers across it (64 registers: half the warp slots);
//              then with at most 32 registers (__launch_bounds__), which
//              moves the 56 values to local memory outside the chain
//   pinned     a 64 MiB copy to the device from malloc'ed (pageable)
//              memory, then from cudaMallocHost'ed (pinned) memory
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 advice.cu -lstdc++
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// ---- registers ----
enum { VALUES = 48 };

template <int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) rotate(const float *in, float *out, int reps)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float t[VALUES], acc = 0;

#pragma unroll
	for (int k = 0; k < VALUES; k++)
		t[k] = in[(i + k) & (N - 1)];
	for (int r = 0; r < reps; r++) {
#pragma unroll
		for (int k = 0; k < VALUES; k++)
			t[k] = t[k] * 0.999f + t[(k + 7) % VALUES]; // SPILLED
	}
#pragma unroll
	for (int k = 0; k < VALUES; k++)
		acc += t[k];
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

// ---- occupancy by registers ----
enum { KEPT = 56 };

template <int MIN_BLOCKS>
__global__ void __launch_bounds__(128, MIN_BLOCKS) chain_kept(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float kept[KEPT], v = threadIdx.x;

#pragma unroll
	for (int k = 0; k < KEPT; k++)
		kept[k] = in[(i * KEPT + k) & (N - 1)];
	v = chain(v, n); // KEPT
#pragma unroll
	for (int k = 0; k < KEPT; k++)
		v += kept[k];
	out[i] = v;
}

/* The mean time of ROUNDS runs of launch, by CUDA events: the same runs
 * the tool measures, all of them. */
//
// A side's time: CUDA events recorded on the default stream just before
// and just after its launch (or copy), one pair per run, and the mean of
// the ROUNDS runs' elapsed times (check.h's mean_event_ms). These are the
// runs the tool measures: each estimate and the time the program measured
// for it come from the same launches.
//
// The lines below this function keep their numbers: the recording
// tests/cupti/data/advice-h100.rec names the call sites that follow by
// file and line, and its replay test finds them by the marks on them
// (PAGEABLE, STRIDED, ...). Moving them means making the recording again on a
// GPU machine (tests/gpu/run.sh writes it as advice.rec), and the
// numbers in docs/GPU-VALIDATION.md that name those lines change with
// them.
//
static float mean_ms(void (*launch)(void *), void *arg)
{
	return mean_event_ms(launch, arg, ROUNDS);
}

struct bufs {
	float *in, *out;
	float *pageable, *pinned; // host memory, N floats each
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
static void run_kept(void *p) { chain_kept<1><<<132 * 16, 128>>>(((bufs *)p)->in, ((bufs *)p)->out, 65536); }
static void run_kept_capped(void *p) { chain_kept<16><<<132 * 16, 128>>>(((bufs *)p)->in, ((bufs *)p)->out, 65536); }
static void run_spilled(void *p) { rotate<8><<<N / 16 / BLOCK, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 256); }
static void run_unspilled(void *p) { rotate<1><<<N / 16 / BLOCK, BLOCK>>>(((bufs *)p)->in, ((bufs *)p)->out, 256); }
static void copy_pageable(void *p)
{
	CHECK(cudaMemcpy(((bufs *)p)->in, ((bufs *)p)->pageable, N * sizeof(float), cudaMemcpyHostToDevice)); // PAGEABLE
}
static void copy_pinned(void *p)
{
	CHECK(cudaMemcpy(((bufs *)p)->in, ((bufs *)p)->pinned, N * sizeof(float), cudaMemcpyHostToDevice));
}

static void pair(const char *name, void (*slow)(void *), void (*fast)(void *), bufs *b)
{
	float s = mean_ms(slow, b), f = mean_ms(fast, b);

	printf("pair %s slow_ms %.4f fast_ms %.4f speedup %.3f\n", name, s, f, s / f);
}

int main()
{
	bufs b;

	/* Every module loaded at the start, so that the first launch of a
	 * kernel times the kernel alone. */
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);

	CHECK(cudaMalloc(&b.in, N * sizeof(float)));
	CHECK(cudaMalloc(&b.out, N * sizeof(float)));
	CHECK(cudaMallocHost(&b.pinned, N * sizeof(float)));
	b.pageable = (float *)calloc(N, sizeof(float));
	if (!b.pageable)
		return 1;
	memset(b.pageable, 1, N * sizeof(float)); // its pages in place before the copies are timed
	CHECK(cudaMemset(b.in, 0, N * sizeof(float)));
	CHECK(cudaFuncSetAttribute(chain_reserved, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10));
	pair("coalesce", run_strided, run_plain, &b);
	pair("spill", run_local, run_regs, &b);
	pair("balance", run_skewed, run_even, &b);
	pair("fastmath", run_precise, run_fast, &b);
	pair("occupancy", run_reserved, run_open, &b);
	pair("occupancy_regs", run_kept, run_kept_capped, &b);
	pair("registers", run_spilled, run_unspilled, &b);
	pair("pinned", copy_pageable, copy_pinned, &b);
	CHECK(cudaDeviceSynchronize());
	printf("ok\n");
	CHECK(cudaFree(b.in));
	CHECK(cudaFree(b.out));
	CHECK(cudaFreeHost(b.pinned));
	free(b.pageable);
	return 0;
}
