// SPDX-License-Identifier: MIT
//
// CUDA operations whose numbers are known, each from a function of its own,
// for checking what gputool measures (tests/gpu/check_cuda.py):
//
//   upload        4 copies host to device of 1 MiB
//   download      3 copies device to host of 512 KiB
//   shuffle       2 copies device to device of 256 KiB
//   clear         5 memsets of 64 KiB
//   many_short    SHORT launches of an empty kernel (argument 1, default 2000)
//   streams       4 streams: 50 launches of scale and one 128 KiB copy
//                 device to host each, then a stream synchronization each
//   workers       4 OpenMP threads: 100 launches of axpy each on a stream
//                 of their own, and a stream synchronization each
//   stencil_run   20 launches of stencil with 1 KiB of dynamic shared memory
//   graph         a captured graph of scale, axpy and stencil, launched 10 times
//   driver_calls  3 driver-API memsets (cuMemsetD32) of 32 KiB
//
// and cudaMalloc/cudaFree, cudaDeviceSynchronize and cudaEventSynchronize
// calls counted in the constants below. Prints a checksum and "ok".
//
// Build: nvcc -arch=sm_90 -O2 -g -ccbin clang-19 -Xcompiler -fopenmp ops.cu
//        -lcuda -L/usr/lib/llvm-19/lib -lomp -lstdc++
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <omp.h>

#include "check.h"

enum {
	N = 1 << 18, // floats in a working array (1 MiB)
	STREAMS = 4,
	STREAM_LAUNCHES = 50,
	WORKERS = 4,
	WORKER_LAUNCHES = 100,
	STENCIL_LAUNCHES = 20,
	GRAPH_LAUNCHES = 10,
};

__global__ void empty_kernel() {}

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

__global__ void axpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

__global__ void stencil(float *y, const float *x, int n)
{
	extern __shared__ float tile[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = i < n ? x[i] : 0.f;
	__syncthreads();
	if (i < n)
		y[i] = 0.5f * tile[threadIdx.x] +
		       0.25f * (tile[(threadIdx.x + 1) % blockDim.x] + tile[(threadIdx.x + 255) % blockDim.x]);
}

NOINLINE static void upload(float *d, const float *h)
{
	for (int i = 0; i < 4; i++)
		CHECK(cudaMemcpy(d, h, 1 << 20, cudaMemcpyHostToDevice));
}

NOINLINE static void download(float *h, const float *d)
{
	for (int i = 0; i < 3; i++)
		CHECK(cudaMemcpy(h, d, 512 << 10, cudaMemcpyDeviceToHost));
}

NOINLINE static void shuffle(float *b, const float *a)
{
	for (int i = 0; i < 2; i++)
		CHECK(cudaMemcpy(b, a, 256 << 10, cudaMemcpyDeviceToDevice));
}

NOINLINE static void clear(float *d)
{
	for (int i = 0; i < 5; i++)
		CHECK(cudaMemset(d, 0, 64 << 10));
}

NOINLINE static void many_short(int n)
{
	for (int i = 0; i < n; i++)
		empty_kernel<<<1, 32>>>();
	CHECK(cudaDeviceSynchronize());
}

NOINLINE static void streams(float *d, float *pinned)
{
	cudaStream_t s[STREAMS];

	for (int k = 0; k < STREAMS; k++)
		CHECK(cudaStreamCreate(&s[k]));
	for (int k = 0; k < STREAMS; k++) {
		float *part = d + k * (N / STREAMS);

		for (int i = 0; i < STREAM_LAUNCHES; i++)
			scale<<<64, 256, 0, s[k]>>>(part, 1.0f, N / STREAMS);
		CHECK(cudaMemcpyAsync(pinned + k * (N / STREAMS), part, 128 << 10,
				      cudaMemcpyDeviceToHost, s[k]));
	}
	for (int k = 0; k < STREAMS; k++) {
		CHECK(cudaStreamSynchronize(s[k]));
		CHECK(cudaStreamDestroy(s[k]));
	}
}

NOINLINE static void workers(float *y, const float *x)
{
#pragma omp parallel num_threads(WORKERS)
	{
		cudaStream_t s;
		int t = omp_get_thread_num();

		CHECK(cudaStreamCreate(&s));
		for (int i = 0; i < WORKER_LAUNCHES; i++)
			axpy<<<(N / WORKERS + 255) / 256, 256, 0, s>>>(y + t * (N / WORKERS),
								       x + t * (N / WORKERS), 0.0f,
								       N / WORKERS);
		CHECK(cudaStreamSynchronize(s));
		CHECK(cudaStreamDestroy(s));
	}
}

NOINLINE static void stencil_run(float *y, const float *x)
{
	for (int i = 0; i < STENCIL_LAUNCHES; i++)
		stencil<<<N / 256, 256, 256 * sizeof(float)>>>(y, x, N);
	CHECK(cudaDeviceSynchronize());
}

NOINLINE static void graph(float *y, float *x)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t exec;

	CHECK(cudaStreamCreate(&s));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	scale<<<N / 256, 256, 0, s>>>(x, 1.0f, N);
	axpy<<<N / 256, 256, 0, s>>>(y, x, 0.0f, N);
	stencil<<<N / 256, 256, 256 * sizeof(float), s>>>(y, x, N);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&exec, g, 0));
	for (int i = 0; i < GRAPH_LAUNCHES; i++)
		CHECK(cudaGraphLaunch(exec, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamDestroy(s));
}

NOINLINE static void driver_calls(float *d)
{
	for (int i = 0; i < 3; i++)
		if (cuMemsetD32((CUdeviceptr)d, 0, 8 << 10) != CUDA_SUCCESS) {
			fprintf(stderr, "cuMemsetD32 failed\n");
			exit(1);
		}
	CHECK(cudaDeviceSynchronize());
}

NOINLINE static void event_wait(void)
{
	cudaEvent_t e;

	CHECK(cudaEventCreate(&e));
	empty_kernel<<<1, 32>>>();
	CHECK(cudaEventRecord(e, 0));
	CHECK(cudaEventSynchronize(e));
	CHECK(cudaEventDestroy(e));
}

int main(int argc, char **argv)
{
	int short_launches = argc > 1 ? atoi(argv[1]) : 2000;
	float *h = (float *)malloc(N * sizeof(float)), *pinned, *a, *b, *c;
	double sum = 0;

	for (int i = 0; i < N; i++)
		h[i] = (float)(i % 7);
	CHECK(cudaMalloc(&a, N * sizeof(float))); // 3 cudaMalloc of 1 MiB
	CHECK(cudaMalloc(&b, N * sizeof(float)));
	CHECK(cudaMalloc(&c, N * sizeof(float)));
	CHECK(cudaMallocHost(&pinned, N * sizeof(float))); // 1 pinned of 1 MiB
	upload(a, h);
	shuffle(b, a);
	clear(c);
	many_short(short_launches);
	streams(b, pinned);
	workers(c, a);
	stencil_run(c, a);
	graph(c, b);
	driver_calls(c);
	event_wait();
	download(h, b);
	for (int i = 0; i < N; i++)
		sum += h[i];
	CHECK(cudaFreeHost(pinned));
	CHECK(cudaFree(c));
	CHECK(cudaFree(b));
	CHECK(cudaFree(a));
	free(h);
	printf("checksum %.1f\nok\n", sum);
	return 0;
}
