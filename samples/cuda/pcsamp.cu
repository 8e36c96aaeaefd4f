// SPDX-License-Identifier: MIT
//
// Kernels whose PC samples are known in kind, for GPUTOOL_PC_SAMPLING
// (tests/gpu/check_cuda.py pcsamp):
//
//   stream_copy  memory-bound: c = a + s * b over 64 Mi floats, 20 launches;
//                its warps wait on loads (memory stalls dominate)
//   fma_chain    compute-bound: a chain of dependent FMAs per thread; its
//                warps wait on the previous result (execution stalls)
//                launched 3 times from site_a and once from site_b, after
//                a first launch that warms it up
//   hot_loop     a loop that holds nearly all of the kernel's time, on the
//                lines marked HOT below
//
// Build: nvcc -arch=sm_90 -O2 -lineinfo -g -ccbin clang-19 pcsamp.cu -lstdc++
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.h"

enum { N = 1 << 26, CHAIN = 20000, LOOP = 4000 };

__global__ void stream_copy(const float *a, const float *b, float *c, float s, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		c[i] = a[i] + s * b[i];
}

__global__ void fma_chain(float *out, float x)
{
	float v = x + threadIdx.x;

	for (int i = 0; i < CHAIN; i++)
		v = v * 0.9999f + 0.5f;
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void hot_loop(float *out, const float *in)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = in[i];

	for (int k = 0; k < LOOP; k++) { // HOT
		acc = acc * 1.0001f + (float)k; // HOT
		acc = acc - 0.25f * (float)(k & 7); // HOT
	}
	out[i] = acc;
}

static NOINLINE void site_a(float *out)
{
	for (int r = 0; r < 3; r++)
		fma_chain<<<264, 256>>>(out, 1.0f + r);
}

static NOINLINE void site_b(float *out)
{
	fma_chain<<<264, 256>>>(out, 2.0f);
}

int main()
{
	float *a, *b, *c;
	float host;

	CHECK(cudaMalloc(&a, N * sizeof(float)));
	CHECK(cudaMalloc(&b, N * sizeof(float)));
	CHECK(cudaMalloc(&c, N * sizeof(float)));
	CHECK(cudaMemset(a, 0, N * sizeof(float)));
	CHECK(cudaMemset(b, 0, N * sizeof(float)));
	for (int r = 0; r < 20; r++)
		stream_copy<<<1056, 256>>>(a, b, c, 2.0f, N);
	fma_chain<<<264, 256>>>(c, 0.0f); // warm: the sites' launches run alike
	CHECK(cudaDeviceSynchronize());
	site_a(c);
	site_b(c);
	hot_loop<<<264, 256>>>(c, a);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(&host, c, sizeof(host), cudaMemcpyDeviceToHost));
	printf("checksum %.3f\nok\n", host);
	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
	CHECK(cudaFree(c));
	return 0;
}
