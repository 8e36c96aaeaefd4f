// SPDX-License-Identifier: MIT
//
// A launch-bound time loop, and its fix (tests/gpu/check_advice.py): each
// of STEPS steps runs a chain of CHAIN tiny kernels on one stream, each
// kernel too short to cover the next one's launch. The fix captures one
// step's chain in a CUDA graph once and launches the graph at every step.
// Both sides compute the same values (checked). The program times each
// side itself with CUDA events, ROUNDS times, and prints
//   pair graph slow_ms S fast_ms F speedup X build_ms B
// with S and F the means over the rounds of the STEPS steps and B the
// graph's capture and instantiation, once (not in F).
//
//   launches [chain] [steps]
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 launches.cu -lstdc++
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#include "check.h"

enum { WIDTH = 128, ROUNDS = 5 };

// One link of the chain: a block's worth of y = a x + y.
__global__ void link_axpy(const float *x, float *y, float a)
{
	int i = threadIdx.x;

	y[i] = a * x[i] + y[i];
}

static NOINLINE void step(cudaStream_t st, const float *x, float *y, int chain)
{
	for (int k = 0; k < chain; k++)
		link_axpy<<<1, WIDTH, 0, st>>>(x, y, 1.0f / (k + 1)); // LAUNCH
}

static double now_ms()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static float timed(cudaStream_t st, cudaGraphExec_t g, const float *x, float *y, int chain, int steps)
{
	cudaEvent_t a, b;
	float ms;

	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	CHECK(cudaEventRecord(a, st));
	for (int s = 0; s < steps; s++) {
		if (g)
			CHECK(cudaGraphLaunch(g, st)); // GRAPH
		else
			step(st, x, y, chain);
	}
	CHECK(cudaEventRecord(b, st));
	CHECK(cudaEventSynchronize(b));
	CHECK(cudaEventElapsedTime(&ms, a, b));
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
	return ms;
}

int main(int argc, char **argv)
{
	int chain = argc > 1 ? atoi(argv[1]) : 1000;
	int steps = argc > 2 ? atoi(argv[2]) : 20;
	float *x, *y, host[2][WIDTH], slow = 0, fast = 0;
	cudaStream_t st;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	double t0, build;

	CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, WIDTH * sizeof(float)));
	CHECK(cudaMalloc(&y, WIDTH * sizeof(float)));
	for (int i = 0; i < WIDTH; i++)
		host[0][i] = (float)i / WIDTH;
	CHECK(cudaMemcpy(x, host[0], sizeof(host[0]), cudaMemcpyHostToDevice));

	t0 = now_ms();
	CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
	step(st, x, y, chain);
	CHECK(cudaStreamEndCapture(st, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	build = now_ms() - t0;

	for (int r = 0; r < ROUNDS; r++) {
		for (int side = 0; side < 2; side++) {
			CHECK(cudaMemsetAsync(y, 0, WIDTH * sizeof(float), st));
			if (side == 0)
				slow += timed(st, NULL, x, y, chain, steps);
			else
				fast += timed(st, exec, x, y, chain, steps);
			CHECK(cudaMemcpy(host[side], y, sizeof(host[side]), cudaMemcpyDeviceToHost));
		}
		for (int i = 0; i < WIDTH; i++)
			if (host[0][i] != host[1][i]) {
				fprintf(stderr, "launches: the graph computed y[%d] = %g, the loop %g\n", i,
					host[1][i], host[0][i]);
				return 1;
			}
	}
	printf("launches %d steps of %d kernels, y[%d] = %g\n", steps, chain, WIDTH - 1, host[0][WIDTH - 1]);
	printf("pair graph slow_ms %.4f fast_ms %.4f speedup %.3f build_ms %.3f\n", slow / ROUNDS, fast / ROUNDS,
	       slow / fast, build);
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(graph));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaStreamDestroy(st));
	return 0;
}
