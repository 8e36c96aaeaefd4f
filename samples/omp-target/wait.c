/* SPDX-License-Identifier: MIT */
/*
 * A host that waits in the OpenMP runtime: run_kernel() offloads a target
 * region whose kernel runs BUSY_S seconds (by the device's clock) and maps
 * its result back, ROUNDS times. The encountering thread blocks inside the
 * construct until the kernel is done: on a GPU, a profile must show that
 * time as CPU_IDLE (the wait, at the construct) and CPU_IDLE_CAUSE (at the
 * kernel's launch), as the program measured it around the construct. On the
 * host device the kernel runs on the host thread itself: no wait.
 *
 * Prints "wait: done". With SAMPLE_TIMES=1 it also prints on stderr
 *   wait times: target wall_ns W busy_ns B
 * the wall time of the ROUNDS constructs and the kernels' own time.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define BUSY_S 0.1
#define ROUNDS 3

__attribute__((noinline)) static void warm_up(void)
{
#pragma omp target
	{
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static double run_kernel(double secs)
{
	double span = 0;

#pragma omp target firstprivate(secs) map(from : span)
	{
		double t0 = omp_get_wtime(), t;

		while ((t = omp_get_wtime()) - t0 < secs)
			;
		span = t - t0;
	}
	__asm__ volatile("" ::: "memory");
	return span;
}

int main(void)
{
	double wall = 0, busy = 0;

	warm_up();
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = omp_get_wtime();

		busy += run_kernel(BUSY_S);
		wall += omp_get_wtime() - t0;
	}
	if (getenv("SAMPLE_TIMES"))
		fprintf(stderr, "wait times: target wall_ns %lld busy_ns %lld\n", (long long)(wall * 1e9),
			(long long)(busy * 1e9));
	printf("wait: %s\n", busy >= ROUNDS * BUSY_S ? "done" : "?");
	return 0;
}
