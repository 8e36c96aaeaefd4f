/* SPDX-License-Identifier: MIT */
/*
 * Blame shifting with OpenMP target offload: launch() starts a target region
 * that runs BUSY_S seconds with nowait, wait_all() waits for it with
 * taskwait at once, then cpu_only() computes CPU_S seconds of CPU time with nothing
 * offloaded. A profile must show the wait (CPU_IDLE ~ BUSY_S) at the
 * taskwait, blamed on the target region's kernel (CPU_IDLE_CAUSE), and the
 * device idle while cpu_only() runs (GPU_IDLE_CAUSE ~ CPU_S there).
 * A first, empty target region takes the device's start-up out of the way.
 */
#include <omp.h>
#include <stdio.h>
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

__attribute__((noinline)) static void launch(double secs)
{
#pragma omp target nowait firstprivate(secs)
	{
		double t0 = omp_get_wtime();

		while (omp_get_wtime() - t0 < secs)
			;
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

__attribute__((noinline)) static double cpu_only(double secs)
{
	double t0 = cpu_seconds(), x = 0.0;

	while (cpu_seconds() - t0 < secs)
		x += 1.0;
	return x;
}

int main(void)
{
	warm_up();
	launch(BUSY_S);
	wait_all();
	printf("blame: %s\n", cpu_only(CPU_S) > 0.0 ? "done" : "?");
	return 0;
}
