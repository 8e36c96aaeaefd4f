/* SPDX-License-Identifier: MIT */
/*
 * Cost of an OpenMP target region: a loop of empty target regions, and of
 * target regions that map one scalar (one allocation, two copies, one
 * delete). Prints microseconds per region, the best of REPEATS timed loops
 * of REGIONS regions each, after a warm-up that initializes the device.
 *
 *   empty [REGIONS [REPEATS]]       (defaults 20000 and 5)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double empty_loop(long n)
{
	double t0 = omp_get_wtime();

	for (long i = 0; i < n; i++) {
#pragma omp target
		{
		}
	}
	return omp_get_wtime() - t0;
}

static double mapped_loop(long n, double *x)
{
	double t0 = omp_get_wtime();

	for (long i = 0; i < n; i++) {
#pragma omp target map(tofrom : x[0:1])
		x[0] += 1.0;
	}
	return omp_get_wtime() - t0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	double best_empty = 1e30, best_mapped = 1e30, x = 0;

	if (n <= 0 || reps <= 0)
		return 2;
	empty_loop(n / 10 + 1);
	mapped_loop(n / 10 + 1, &x);
	for (int r = 0; r < reps; r++) {
		double e = empty_loop(n), m = mapped_loop(n, &x);

		best_empty = e < best_empty ? e : best_empty;
		best_mapped = m < best_mapped ? m : best_mapped;
	}
	printf("empty %.3f us\nmapped %.3f us\n", best_empty / (double)n * 1e6,
	       best_mapped / (double)n * 1e6);
	return x > 0 ? 0 : 1;
}
