/* SPDX-License-Identifier: MIT */
/*
 * OpenMP inside an NVTX range: REGIONS times a push range "step" around a
 * parallel region whose threads each spin; the parallel region's construct
 * (and its threads' time) belongs under the range. stdout: a fixed line.
 */
#include <nvtx3/nvToolsExt.h>
#include <omp.h>
#include <stdio.h>

#define REGIONS 5

static volatile double sink;

__attribute__((noinline)) static void work(long n)
{
	double x = 0;

	for (long i = 0; i < n; i++)
		x += (double)i * 1e-9;
	sink = x;
}

__attribute__((noinline)) static void step(void)
{
	nvtxRangePushA("step");
#pragma omp parallel num_threads(2)
	work(20000000);
	nvtxRangePop();
}

int main(void)
{
	for (int i = 0; i < REGIONS; i++)
		step();
	printf("nvtx omp: %d regions\n", REGIONS);
	return 0;
}
