/* SPDX-License-Identifier: MIT */
/*
 * Two calling contexts that differ only in the middle: main -> caller_a ->
 * shared_middle_step_with_a_long_name -> leaf_work and the same through
 * caller_b, each with an OpenMP region in the middle function, so that
 * the regions, the CPU contexts and the waits each have two rows that only
 * caller_a or caller_b tell apart (tests/e2e/test_paths.py).
 */
#include <stdio.h>

static volatile double sink;

__attribute__((noinline)) static double leaf_work(long n, double x)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += (double)i * x / (double)(i + 1);
	return s;
}

__attribute__((noinline)) static void shared_middle_step_with_a_long_name_that_fills_the_line(long n, double x)
{
	double total = 0;

#pragma omp parallel reduction(+ : total)
	total += leaf_work(n, x);
	sink = total;
}

__attribute__((noinline)) static void caller_a(long n)
{
	for (int r = 0; r < 10; r++)
		shared_middle_step_with_a_long_name_that_fills_the_line(n, 1.5);
}

__attribute__((noinline)) static void caller_b(long n)
{
	for (int r = 0; r < 10; r++)
		shared_middle_step_with_a_long_name_that_fills_the_line(n, 2.5);
}

int main(void)
{
	caller_a(4000000);
	caller_b(4000000);
	printf("%g\n", sink);
	return 0;
}
