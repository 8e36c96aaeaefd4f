/* SPDX-License-Identifier: MIT */
/*
 * Barrier-heavy regions with a known split, for where a profiler puts the
 * CPU time the OpenMP runtime spends waiting. Teams of two threads; in each
 * phase one thread computes three units and the other one:
 *
 *   explicit_wait   thread 0 three units, thread 1 one, then both meet at
 *                   `#pragma omp barrier`, each timing its own wait;
 *   implicit_wait   thread 1 three units, thread 0 (the encountering
 *                   thread) one, then the region ends: thread 0 waits in
 *                   the region's implicit barrier and times it, from the
 *                   end of its work to its return from the region;
 *   gaps            both one unit, then thread 0 computes two units alone
 *                   between regions while the other waits for the next;
 *   forks           500 empty regions per region of the others: the time
 *                   is the runtime's (forks, joins, their barriers).
 *
 * It prints on stderr what it measured itself, per phase, summed over
 * threads: CPU time (CLOCK_THREAD_CPUTIME_ID) and wall time (omp_get_wtime)
 * of the waits, CPU time of the work inside the regions and, for gaps, CPU
 * time of the other thread between regions (from its return from one region
 * body to its entry into the next). A spinning wait is CPU time: libomp
 * spins for KMP_BLOCKTIME (200 ms by default) before it sleeps, longer than
 * any wait here.
 *
 * Usage: barrier_split [REGIONS [UNIT_ITERS]]
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { EXPLICIT, IMPLICIT, GAPS, PHASES };

static const char *const phase_names[PHASES] = { "explicit_wait", "implicit_wait", "gaps" };

/* Per phase, summed over threads; written by one thread at a time (inside
 * a region under `omp critical`, or by the encountering thread). */
static struct {
	uint64_t wait_cpu_ns, wait_wall_ns, work_cpu_ns, between_cpu_ns;
} own[PHASES];

static long unit_iters = 4000000;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Deterministic work, printed so that it is computed. */
__attribute__((noinline)) static double work(int units)
{
	double s = 0;

	for (long i = 0; i < units * unit_iters; i++)
		s += (double)(i % 7) * 0.5;
	return s;
}

__attribute__((noinline)) static double explicit_wait(int regions)
{
	double total = 0;

	for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2) reduction(+ : total)
		{
			uint64_t c0 = cpu_ns(), c1, c2;
			double t1, t2;

			total += work(omp_get_thread_num() == 0 ? 3 : 1);
			c1 = cpu_ns();
			t1 = omp_get_wtime();
#pragma omp barrier
			c2 = cpu_ns();
			t2 = omp_get_wtime();
#pragma omp critical
			{
				own[EXPLICIT].work_cpu_ns += c1 - c0;
				own[EXPLICIT].wait_cpu_ns += c2 - c1;
				own[EXPLICIT].wait_wall_ns += (uint64_t)((t2 - t1) * 1e9);
			}
		}
	}
	return total;
}

__attribute__((noinline)) static double implicit_wait(int regions)
{
	double total = 0;

	for (int r = 0; r < regions; r++) {
		uint64_t c1 = 0, c2;
		double t1 = 0, t2;

#pragma omp parallel num_threads(2) reduction(+ : total)
		{
			uint64_t c0 = cpu_ns(), c;

			total += work(omp_get_thread_num() == 1 ? 3 : 1);
			c = cpu_ns();
			if (omp_get_thread_num() == 0) {
				c1 = c;
				t1 = omp_get_wtime();
			}
#pragma omp critical
			own[IMPLICIT].work_cpu_ns += c - c0;
		}
		c2 = cpu_ns();
		t2 = omp_get_wtime();
		own[IMPLICIT].wait_cpu_ns += c2 - c1;
		own[IMPLICIT].wait_wall_ns += (uint64_t)((t2 - t1) * 1e9);
	}
	return total;
}

__attribute__((noinline)) static double gaps(int regions)
{
	double total = 0;
	/* The other thread's CPU clock at its return from the last body. */
	uint64_t left = 0;

	for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2) reduction(+ : total)
		{
			uint64_t c0 = cpu_ns(), c1;

			total += work(1);
			c1 = cpu_ns();
#pragma omp critical
			{
				own[GAPS].work_cpu_ns += c1 - c0;
				if (omp_get_thread_num() == 1) {
					if (left)
						own[GAPS].between_cpu_ns += c0 - left;
					left = c1;
				}
			}
		}
		total += work(2);
	}
	return total;
}

__attribute__((noinline)) static long forks(int regions)
{
	long n = 0;

	/* The body touches nothing shared: an atomic on one line would bounce
	 * it between the threads' cores at every region, user time a sample
	 * rightly puts on the body. */
	for (int r = 0; r < 500 * regions; r++) {
#pragma omp parallel num_threads(2)
		{
			__asm__ volatile("" ::: "memory");
		}
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	int regions = argc > 1 ? atoi(argv[1]) : 40;
	double total;

	if (argc > 2)
		unit_iters = atol(argv[2]);
	total = explicit_wait(regions);
	total += implicit_wait(regions);
	total += gaps(regions);
	total += (double)forks(regions);
	printf("barrier_split: %d regions a phase, checksum %.1f\n", regions, total);
	fprintf(stderr, "barrier_split times:");
	for (int p = 0; p < PHASES; p++)
		fprintf(stderr, " %s wait_cpu_ns %llu wait_wall_ns %llu work_cpu_ns %llu between_cpu_ns %llu",
			phase_names[p], (unsigned long long)own[p].wait_cpu_ns,
			(unsigned long long)own[p].wait_wall_ns, (unsigned long long)own[p].work_cpu_ns,
			(unsigned long long)own[p].between_cpu_ns);
	fprintf(stderr, "\n");
	return 0;
}
