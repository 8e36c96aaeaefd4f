/* SPDX-License-Identifier: MIT */
/*
 * Blame shifting with OpenMP target offload: launch() starts a target region
 * that runs BUSY_S seconds with nowait, wait_all() waits for it with
 * taskwait at once, then cpu_only() computes CPU_S seconds of CPU time with nothing
 * offloaded. A profile must show the wait (CPU_IDLE ~ BUSY_S) at the
 * taskwait, blamed on the target region's kernel (CPU_IDLE_CAUSE), and the
 * device idle while cpu_only() runs (GPU_IDLE_CAUSE ~ CPU_S there).
 * A first, empty target region takes the device's start-up out of the way.
 *
 * With SAMPLE_TIMES=1 in the environment it also prints on stderr what it
 * measured itself: the wall time of the wait, the part of it the kernel was
 * still running, and the wall time of cpu_only(), so that a tool's numbers
 * can be checked against them on a machine of any load.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BUSY_S 0.3
#define CPU_S 0.4

__attribute__((noinline)) static void warm_up(void)
{
#pragma omp target
	{
	}
	__asm__ volatile("" ::: "memory");
}

/* When the kernel began and ended, by omp_get_wtime (host offload: the
 * device shares the host's clock). */
static double kernel_span[2];

__attribute__((noinline)) static void launch(double secs)
{
	double *span = kernel_span;

#pragma omp target nowait firstprivate(secs) map(from : span[0 : 2])
	{
		double t0 = omp_get_wtime(), t;

		while ((t = omp_get_wtime()) - t0 < secs)
			;
		span[0] = t0;
		span[1] = t;
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void wait_all(void)
{
#pragma omp taskwait
	__asm__ volatile("" ::: "memory");
}

/* CPU seconds of this thread, so that a busy machine does not shorten it. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The clock is read about once a millisecond: a thread that reads its
 * CPU-time clock every few microseconds can lose its CPU-time timer's
 * signals on a loaded machine (seen on Linux 6.18), and with them the
 * samples this sample is checked by. */
__attribute__((noinline)) static double cpu_only(double secs)
{
	double t0 = cpu_seconds(), x = 0.0;

	while (cpu_seconds() - t0 < secs)
		for (int i = 0; i < 1000000; i++)
			x = x * 0.999 + 1.0;
	return x;
}

int main(void)
{
	double w0, w1, c1, overlap;
	int done;

	warm_up();
	launch(BUSY_S);
	w0 = omp_get_wtime();
	wait_all();
	w1 = omp_get_wtime();
	done = cpu_only(CPU_S) > 0.0;
	c1 = omp_get_wtime();
	printf("blame: %s\n", done ? "done" : "?");
	overlap = kernel_span[1] - (kernel_span[0] > w0 ? kernel_span[0] : w0);
	if (getenv("SAMPLE_TIMES"))
		fprintf(stderr, "blame times: wait wall_ns %.0f busy_ns %.0f cpu_only wall_ns %.0f\n", (w1 - w0) * 1e9,
			(overlap > 0 ? overlap : 0) * 1e9, (c1 - w1) * 1e9);
	return 0;
}
