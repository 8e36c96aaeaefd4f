/* SPDX-License-Identifier: MIT */
/*
 * One parallel region reached from two call sites with a 3:1 split of work:
 * heavy() asks for 3 units per call, light() for 1, each called ITERS times.
 * A profile must show the region twice, once under each caller, with
 * instance counts ITERS and ITERS and work in a 3:1 ratio.
 *
 * With SAMPLE_TIMES=1 in the environment it also prints on stderr what it
 * measured itself, per caller: the wall time around its calls of compute()
 * and the CPU time its threads spent in the loop, so that a tool's times
 * can be checked against the program's own on a machine of any load.
 * Then each thread's part of every loop ends just after an expiration of a
 * 1 kHz CPU-time timer of the thread's own (align()): the kernel checks all
 * CPU-time timers of a thread at once, so a sampler's timer on the thread
 * has then fired too, and its samples have carried all but at most one
 * sampling period of that part's CPU time (counted in cpu_ns).
 */
#include <omp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../cpu-timer.h"

#define ITERS 20

static long unit_iters = 12000000;
/* Per caller (0 heavy, 1 light): ns of wall time around compute(), and of
 * CPU time of every thread in the loop. */
static uint64_t wall_ns[2];
static _Atomic uint64_t cpu_ns[2];
static int sample_times;

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Deterministic floating-point work; the result is printed so that it is
 * computed and so that runs with and without a tool can be compared. */
__attribute__((noinline)) static double compute(int units, int who)
{
	double sum = 0.0;
	long n = units * unit_iters;

#pragma omp parallel reduction(+ : sum)
	{
		long nth = omp_get_num_threads();

		/* One iteration per thread, its block as schedule(static) over
		 * the n iterations gives it: its alignment lies inside the loop
		 * construct, before the tool's callback at the loop's end. */
#pragma omp for schedule(static) nowait
		for (long t = 0; t < nth; t++) {
			uint64_t c0;

			if (sample_times)
				timer__start();
			c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			for (long i = n * t / nth; i < n * (t + 1) / nth; i++)
				sum += (double)(i % 7) * 0.5;
			if (sample_times)
				align();
			atomic_fetch_add_explicit(&cpu_ns[who], now_ns(CLOCK_THREAD_CPUTIME_ID) - c0,
						  memory_order_relaxed);
		}
	}
	return sum;
}

/* The empty asm after each call keeps the callers' frames: no tail call. */
__attribute__((noinline)) static double heavy(void)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	double r = compute(3, 0);

	wall_ns[0] += now_ns(CLOCK_MONOTONIC) - t0;
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static double light(void)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	double r = compute(1, 1);

	wall_ns[1] += now_ns(CLOCK_MONOTONIC) - t0;
	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	double total = 0.0;

	if (argc > 1)
		unit_iters = atol(argv[1]);
	sample_times = getenv("SAMPLE_TIMES") != NULL;
	if (sample_times && timer__init())
		return 1;
#pragma clang loop unroll(disable)
	for (int i = 0; i < ITERS; i++) {
		total += heavy();
		total += light();
	}
	printf("split: %d calls each, checksum %.1f\n", ITERS, total);
	if (sample_times)
		fprintf(stderr, "split times: heavy wall_ns %llu cpu_ns %llu light wall_ns %llu cpu_ns %llu\n",
			(unsigned long long)wall_ns[0], (unsigned long long)atomic_load(&cpu_ns[0]),
			(unsigned long long)wall_ns[1], (unsigned long long)atomic_load(&cpu_ns[1]));
	return 0;
}
