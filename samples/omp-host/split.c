/* SPDX-License-Identifier: MIT */
/*
 * One parallel region reached from two call sites with a 3:1 split of work:
 * heavy() asks for 3 units per call, light() for 1, each called ITERS times.
 * A profile must show the region twice, once under each caller, with
 * instance counts ITERS and ITERS and work in a 3:1 ratio.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 20

static long unit_iters = 12000000;

/* Deterministic floating-point work; the result is printed so that it is
 * computed and so that runs with and without a tool can be compared. */
__attribute__((noinline)) static double compute(int units)
{
	double sum = 0.0;
	long n = units * unit_iters;

#pragma omp parallel for reduction(+ : sum) schedule(static)
	for (long i = 0; i < n; i++)
		sum += (double)(i % 7) * 0.5;
	return sum;
}

/* The empty asm after each call keeps the callers' frames: no tail call. */
__attribute__((noinline)) static double heavy(void)
{
	double r = compute(3);

	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static double light(void)
{
	double r = compute(1);

	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	double total = 0.0;

	if (argc > 1)
		unit_iters = atol(argv[1]);
#pragma clang loop unroll(disable)
	for (int i = 0; i < ITERS; i++) {
		total += heavy();
		total += light();
	}
	printf("split: %d calls each, checksum %.1f\n", ITERS, total);
	return 0;
}
