/* SPDX-License-Identifier: MIT */
/*
 * Tasking: one thread creates tasks at two sites, 3 * N at the first and N
 * at the second, each task doing the same work, then waits for them. A
 * profile must count the tasks exactly per creation site and show the
 * task bodies under their creation sites, in a 3:1 ratio of time.
 */
#include <omp.h>
#include <stdio.h>

#define N 40

static double results[4 * N];

__attribute__((noinline)) static double task_body(int k)
{
	double sum = 0.0;

	for (long i = 0; i < 1500000; i++)
		sum += (double)((i * (k + 1)) % 3);
	return sum;
}

__attribute__((noinline)) static void spawn_many(void)
{
	for (int k = 0; k < 3 * N; k++) {
#pragma omp task firstprivate(k)
		results[k] = task_body(k);
	}
}

__attribute__((noinline)) static void spawn_few(void)
{
	for (int k = 3 * N; k < 4 * N; k++) {
#pragma omp task firstprivate(k)
		results[k] = task_body(k);
	}
}

int main(void)
{
	double total = 0.0;

#pragma omp parallel
#pragma omp single
	{
		spawn_many();
		spawn_few();
#pragma omp taskwait
	}
	for (int k = 0; k < 4 * N; k++)
		total += results[k];
	printf("tasks: %d tasks, checksum %.1f\n", 4 * N, total);
	return 0;
}
