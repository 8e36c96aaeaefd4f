/* SPDX-License-Identifier: MIT */
/*
 * Several threads offloading at once: a parallel region of THREADS threads
 * in which every thread runs REPS target regions on its own slice of SLICE
 * doubles (tofrom: one allocation, one copy each way, one delete, one
 * kernel per region). The regions belong under offload_team's parallel
 * region, whichever thread ran them.
 */
#include <omp.h>
#include <stdio.h>

#define THREADS 4
#define REPS 10
#define SLICE 256

static double y[THREADS * SLICE];

__attribute__((noinline)) static double offload_team(void)
{
#pragma omp parallel num_threads(THREADS)
	{
		double *p = y + omp_get_thread_num() * SLICE;

		for (int r = 0; r < REPS; r++) {
#pragma omp target map(tofrom : p[0:SLICE])
			for (int i = 0; i < SLICE; i++)
				p[i] += 1.0;
		}
	}
	return y[0]; /* used by the caller: the fork is no tail call */
}

int main(void)
{
	double sum = 0;

	sum += offload_team();
	for (int i = 0; i < THREADS * SLICE; i++)
		sum += y[i];
	printf("threads: checksum %.1f\n", sum);
	return 0;
}
