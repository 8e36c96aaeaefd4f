/* SPDX-License-Identifier: MIT */
/*
 * Deferred target regions: async_site() starts CHUNKS target regions with
 * nowait, each on its own CHUNK doubles (tofrom: one allocation, one copy
 * each way, one delete, one kernel), and waits for them with taskwait. The
 * regions run as target tasks, possibly on other threads than the one that
 * reached the construct; they belong under async_site all the same.
 */
#include <stdio.h>

#define CHUNKS 4
#define CHUNK 512
#define ROUNDS 3

static double x[CHUNKS * CHUNK];

__attribute__((noinline)) static double async_site(void)
{
	for (int k = 0; k < CHUNKS; k++) {
		double *p = x + k * CHUNK;

#pragma omp target nowait map(tofrom : p[0:CHUNK]) firstprivate(k)
		for (int i = 0; i < CHUNK; i++)
			p[i] += k + 1;
	}
#pragma omp taskwait
	return x[0]; /* used by the caller: the taskwait is no tail call */
}

int main(void)
{
	double sum = 0;

	for (int r = 0; r < ROUNDS; r++)
		sum += async_site();
	for (int i = 0; i < CHUNKS * CHUNK; i++)
		sum += x[i];
	printf("nowait: checksum %.1f\n", sum);
	return 0;
}
