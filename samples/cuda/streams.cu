// SPDX-License-Identifier: MIT
//
// Two independent kernels of a few blocks each on two streams, first with
// the host waiting for each stream before it feeds the other, then with
// both fed before any wait (docs/ADVICE.md, serializing-sync;
// tests/gpu/check_streams.py). STEPS steps per round, ROUNDS rounds:
//
//   serial()    busy on s1; wait_first() (cudaStreamSynchronize s1);
//               busy on s2; wait_second() (cudaStreamSynchronize s2)
//   together()  busy on s1; busy on s2; wait_both()
//
// Each kernel is BLOCKS blocks of a loop of known length: far from filling
// the GPU, so the two can run side by side. The program times both sides
// itself (host clock) and prints
//   pair overlap slow_ms S fast_ms F speedup X
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 streams.cu -lstdc++
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>

#include "check.h"

enum { STEPS = 20, ROUNDS = 3, BLOCKS = 4, THREADS = 128, ITER = 1 << 18 };

__global__ void busy(float *out, int n)
{
	float v = threadIdx.x;

	for (int k = 0; k < n; k++)
		v = v * 0.999f + 1.0f;
	out[blockIdx.x * blockDim.x + threadIdx.x] += v;
}

struct env {
	cudaStream_t s[2];
	float *out[2];
};

static double now_ms()
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void feed(env *e, int i)
{
	busy<<<BLOCKS, THREADS, 0, e->s[i]>>>(e->out[i], ITER);
}

static NOINLINE void wait_first(env *e)
{
	CHECK(cudaStreamSynchronize(e->s[0])); // WAIT_FIRST
}

static NOINLINE void wait_second(env *e)
{
	CHECK(cudaStreamSynchronize(e->s[1])); // WAIT_SECOND
}

static NOINLINE void wait_both(env *e)
{
	CHECK(cudaStreamSynchronize(e->s[0]));
	CHECK(cudaStreamSynchronize(e->s[1]));
}

static NOINLINE void serial(env *e)
{
	for (int s = 0; s < STEPS; s++) {
		feed(e, 0);
		wait_first(e);
		feed(e, 1);
		wait_second(e);
	}
}

static NOINLINE void together(env *e)
{
	for (int s = 0; s < STEPS; s++) {
		feed(e, 0);
		feed(e, 1);
		wait_both(e);
	}
}

int main()
{
	env e;
	double ms[2] = { 0, 0 };

	for (int i = 0; i < 2; i++) {
		CHECK(cudaStreamCreateWithFlags(&e.s[i], cudaStreamNonBlocking));
		CHECK(cudaMalloc(&e.out[i], BLOCKS * THREADS * sizeof(float)));
		CHECK(cudaMemset(e.out[i], 0, BLOCKS * THREADS * sizeof(float)));
	}
	CHECK(cudaDeviceSynchronize());
	for (int side = 0; side < 2; side++)
		for (int r = 0; r < ROUNDS; r++) {
			double t0 = now_ms();

			if (side)
				together(&e);
			else
				serial(&e);
			ms[side] += now_ms() - t0;
		}
	printf("pair overlap slow_ms %.4f fast_ms %.4f speedup %.3f\n", ms[0] / ROUNDS, ms[1] / ROUNDS, ms[0] / ms[1]);
	for (int i = 0; i < 2; i++) {
		CHECK(cudaFree(e.out[i]));
		CHECK(cudaStreamDestroy(e.s[i]));
	}
	return 0;
}
