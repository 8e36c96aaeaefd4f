// SPDX-License-Identifier: MIT
// Kernels launched inside NVTX ranges, with known counts per range:
//   "init"       2 launches of fill()
//   "iterate"   20 ranges, each with 3 launches of axpy(), 1 of them in the
//               nested range "half" (so "iterate" holds 40 of its own, "half" 20)
//   model:"store" a domain range with 1 launch of fill()
// The kernels of each range must hang under the range's node
// (tests/gpu/check_nvtx.py). stdout: a checksum line.
#include <cstdio>
#include <nvtx3/nvToolsExt.h>

#include "check.h"

__global__ void fill(float *x, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = v;
}

__global__ void axpy(float *y, const float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

static void half(float *y, const float *x, int n)
{
	nvtxRangePushA("half");
	axpy<<<(n + 255) / 256, 256>>>(y, x, n, 0.5f);
	nvtxRangePop();
}

static void iterate(float *y, const float *x, int n)
{
	nvtxRangePushA("iterate");
	axpy<<<(n + 255) / 256, 256>>>(y, x, n, 1.0f);
	axpy<<<(n + 255) / 256, 256>>>(y, x, n, 1.0f);
	half(y, x, n);
	CHECK(cudaDeviceSynchronize());
	nvtxRangePop();
}

int main()
{
	const int n = 1 << 20;
	float *x, *y, h = 0;
	nvtxDomainHandle_t dom = nvtxDomainCreateA("model");
	nvtxEventAttributes_t ea = {};

	CHECK(cudaMalloc(&x, n * sizeof(float)));
	CHECK(cudaMalloc(&y, n * sizeof(float)));
	nvtxRangePushA("init");
	fill<<<(n + 255) / 256, 256>>>(x, n, 1.0f);
	fill<<<(n + 255) / 256, 256>>>(y, n, 0.0f);
	nvtxRangePop();
	for (int i = 0; i < 20; i++)
		iterate(y, x, n);
	ea.version = NVTX_VERSION;
	ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	ea.messageType = NVTX_MESSAGE_TYPE_ASCII;
	ea.message.ascii = "store";
	nvtxDomainRangePushEx(dom, &ea);
	fill<<<(n + 255) / 256, 256>>>(x, n, 2.0f);
	nvtxDomainRangePop(dom);
	CHECK(cudaMemcpy(&h, y, sizeof(float), cudaMemcpyDeviceToHost));
	printf("nvtx: y[0] = %.1f\n", h);
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	return 0;
}
