/* SPDX-License-Identifier: MIT */
/*
 * Tasking: one thread creates tasks at two sites, 3 * N at the first and N
 * at the second, each task doing the same work, then waits for them. A
 * profile must count the tasks exactly per creation site and show the
 * task bodies under their creation sites, in a 3:1 ratio of time.
 *
 * With SAMPLE_TIMES=1 in the environment it also prints on stderr the wall
 * time its task bodies took per creation site, measured by itself, so that a
 * tool's task times can be checked against it on a machine of any load.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 40

static double results[4 * N];
/* ns of wall time in task bodies: [0] those created by spawn_many, [1] by
 * spawn_few. */
static _Atomic uint64_t body_ns[2];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static double task_body(int k)
{
	uint64_t t0 = now_ns();
	double sum = 0.0;

	for (long i = 0; i < 1500000; i++)
		sum += (double)((i * (k + 1)) % 3);
	atomic_fetch_add_explicit(&body_ns[k >= 3 * N], now_ns() - t0, memory_order_relaxed);
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
	if (getenv("SAMPLE_TIMES"))
		fprintf(stderr, "tasks times: many body_ns %llu few body_ns %llu\n",
			(unsigned long long)atomic_load(&body_ns[0]), (unsigned long long)atomic_load(&body_ns[1]));
	return 0;
}
