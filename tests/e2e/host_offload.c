/* SPDX-License-Identifier: MIT */
/*
 * One target region offloaded to the host device (clang
 * -fopenmp-targets=x86_64-pc-linux-gnu), a known amount of work, called
 * from two functions: from_one CALLS_ONE times, from_two CALLS_TWO times.
 * Prints on stderr the wall time of each call path ("offload times: ...").
 * Usage: host_offload [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4096
#define CALLS_ONE 3
#define CALLS_TWO 2

static double a[N];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

__attribute__((noinline)) static double work(long reps)
{
	double sum = 0;

#pragma omp target teams distribute parallel for map(tofrom : a[0 : N]) reduction(+ : sum) // KERNEL
	for (int i = 0; i < N; i++) {
		double x = a[i];

		for (long r = 0; r < reps; r++)
			x = x * 0.999999 + 1e-6;
		a[i] = x;
		sum += x;
	}
	return sum;
}

__attribute__((noinline)) static double from_one(long reps)
{
	double s = 0;

	for (int c = 0; c < CALLS_ONE; c++)
		s += work(reps);
	return s;
}

__attribute__((noinline)) static double from_two(long reps)
{
	double s = 0;

	for (int c = 0; c < CALLS_TWO; c++)
		s += work(reps);
	return s;
}

int main(int argc, char **argv)
{
	long reps = argc > 1 ? atol(argv[1]) : 20000;
	long long t0 = now_ns(), t1, t2;
	double s = from_one(reps);

	t1 = now_ns();
	s += from_two(reps);
	t2 = now_ns();
	fprintf(stderr, "offload times: from_one wall_ns %lld from_two wall_ns %lld\n", t1 - t0, t2 - t1);
	printf("sum %s\n", s > 0 ? "positive" : "zero");
	return 0;
}
