/* SPDX-License-Identifier: MIT */
/*
 * MPI + OpenMP with a known imbalance: rank r does r + 1 units of work, each
 * an OpenMP parallel loop, so in a merged report the work context of rank
 * r holds (r + 1) / (P (P + 1) / 2) of the total and its imbalance across
 * P ranks (max / mean) is 2P / (P + 1): 1.6 for 4 ranks. Ranks that are
 * done wait without spinning, so that their waiting takes no CPU from the
 * ranks still working.
 *
 *   imbalance [ITERS_PER_UNIT] [--exit N] [--signal] [--kill]
 *
 * --exit N ends every rank with status N after MPI_Finalize; --signal has
 * the last rank kill itself with SIGTERM before it, --kill with SIGKILL (for
 * tests of exit status propagation and of the profiles a job that loses a
 * rank keeps).
 *
 * With SAMPLE_TIMES=1 in the environment every rank also prints on stderr
 * what it measured itself, so that a sampler's CPU time in work() can be
 * checked against it on a machine of any load:
 *   imbalance times: rank R cpu_ns C out_ns O units U threads T
 * C is the CPU time of the main thread in work() and of the other threads
 * in their parts of the parallel loops; O the CPU time of the threads in
 * work() outside those parts (the main thread's fork and join, the others'
 * start-up and wake-ups). Each stretch measured (work() on the main thread,
 * a thread's part of one loop on the others) ends just after
 * an expiration of a CPU-time timer of the thread's own (align()): the
 * kernel checks all CPU-time timers of a thread at once, so a sampler's
 * timer on that thread has then fired too, and its samples have carried
 * all but at most one sampling period of the stretch's CPU time.
 */
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../cpu-timer.h"

static long unit_iters = 100000000;
static int sample_times;
/* ns of CPU time (see the top): inside the measured stretches, and in
 * work() outside the threads' parts of the loops; main_parts_ns is the main
 * thread's own parts, to tell its fork and join from the rest of work(). */
static _Atomic uint64_t cpu_ns, out_ns, main_parts_ns;

/* CPU time of the thread when its last stretch ended (0: thread start). */
static _Thread_local uint64_t last_end;

/* One unit: deterministic floating-point work in a parallel loop. The sum
 * is printed so that it is computed, and so that runs with and without a
 * tool can be compared. */
__attribute__((noinline)) static double unit(void)
{
	double sum = 0.0;

	/* Blocks split by hand as schedule(static) would: no worksharing
	 * construct, so no tool callback, inside a thread's stretch. */
#pragma omp parallel reduction(+ : sum)
	{
		long nth = omp_get_num_threads(), me = omp_get_thread_num();
		long lo = unit_iters * me / nth, hi = unit_iters * (me + 1) / nth;
		uint64_t c0 = 0;

		if (sample_times) {
			timer__start();
			c0 = thread_cpu_ns();
			if (me)
				atomic_fetch_add_explicit(&out_ns, c0 - last_end, memory_order_relaxed);
		}
		for (long i = lo; i < hi; i++)
			sum += (double)(i % 7) * 0.5;
		if (sample_times) {
			align();
			last_end = thread_cpu_ns();
			atomic_fetch_add_explicit(me ? &cpu_ns : &main_parts_ns, last_end - c0,
						  memory_order_relaxed);
		}
	}
	return sum;
}

__attribute__((noinline)) static double work(int units)
{
	double sum = 0.0;
	uint64_t c0 = sample_times ? thread_cpu_ns() : 0;

	for (int u = 0; u < units; u++) {
		sum += unit();
		__asm__ volatile("" ::: "memory"); /* keeps the caller's frame: no tail call */
	}
	if (sample_times) {
		/* The main thread's stretch is all of work(), its parts of the
		 * loops and the fork and join around them. */
		uint64_t cpu;

		align();
		cpu = thread_cpu_ns() - c0;
		atomic_fetch_add_explicit(&cpu_ns, cpu, memory_order_relaxed);
		atomic_fetch_add_explicit(&out_ns, cpu - atomic_load(&main_parts_ns), memory_order_relaxed);
	}
	return sum;
}

/* A barrier that sleeps while it waits. */
static void wait_for_all(void)
{
	struct timespec ms = { 0, 1000000 };
	MPI_Request req;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	for (;;) {
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (done)
			break;
		nanosleep(&ms, NULL);
	}
}

int main(int argc, char **argv)
{
	int rank, size, status = 0, sig = 0;
	double local, total = 0.0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			status = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--signal"))
			sig = SIGTERM;
		else if (!strcmp(argv[i], "--kill"))
			sig = SIGKILL;
		else
			unit_iters = atol(argv[i]);
	}
	sample_times = getenv("SAMPLE_TIMES") != NULL;
	if (sample_times) {
		if (timer__init())
			return 1;
		timer__start();
		align();
	}
	local = work(rank + 1);
	if (sample_times)
		fprintf(stderr, "imbalance times: rank %d cpu_ns %llu out_ns %llu units %d threads %d\n", rank,
			(unsigned long long)atomic_load(&cpu_ns), (unsigned long long)atomic_load(&out_ns), rank + 1,
			omp_get_max_threads());
	wait_for_all();
	MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("imbalance: %d ranks, %d threads each, checksum %.1f\n", size, omp_get_max_threads(), total);
	if (sig && rank == size - 1)
		raise(sig);
	MPI_Finalize();
	return status;
}
