/* SPDX-License-Identifier: MIT */
/*
 * Nested parallelism: OUTER instances of a 2-thread region, each of whose
 * threads starts a 2-thread inner region. A profile must show the inner
 * region under the outer one, with 2 * OUTER instances.
 */
#include <omp.h>
#include <stdio.h>

#define OUTER 10

__attribute__((noinline)) static double inner(int who)
{
	double sum = 0.0;

#pragma omp parallel num_threads(2) reduction(+ : sum)
	{
		for (long i = 0; i < 2000000; i++)
			sum += (double)((i + who) % 5);
	}
	return sum;
}

__attribute__((noinline)) static double outer(void)
{
	double sum = 0.0;

#pragma omp parallel num_threads(2) reduction(+ : sum)
	sum += inner(omp_get_thread_num());
	return sum;
}

int main(void)
{
	double total = 0.0;

	omp_set_max_active_levels(2);
	for (int i = 0; i < OUTER; i++)
		total += outer();
	printf("nested: %d outer regions, checksum %.1f\n", OUTER, total);
	return 0;
}
