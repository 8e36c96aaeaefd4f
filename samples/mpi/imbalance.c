/* SPDX-License-Identifier: MIT */
/*
 * MPI + OpenMP with a known imbalance: rank r does r + 1 units of work, each
 * an OpenMP parallel loop, so in a merged report the work context of rank
 * r holds (r + 1) / (P (P + 1) / 2) of the total and its imbalance across
 * P ranks (max / mean) is 2P / (P + 1): 1.6 for 4 ranks. Ranks that are
 * done wait without spinning, so that their waiting takes no CPU from the
 * ranks still working.
 *
 *   imbalance [ITERS_PER_UNIT] [--exit N] [--signal]
 *
 * --exit N ends every rank with status N after MPI_Finalize; --signal has
 * the last rank kill itself with SIGTERM before it (for tests of exit
 * status propagation).
 */
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long unit_iters = 100000000;

/* One unit: deterministic floating-point work in a parallel loop. The sum
 * is printed so that it is computed, and so that runs with and without a
 * tool can be compared. */
__attribute__((noinline)) static double unit(void)
{
	double sum = 0.0;

#pragma omp parallel for reduction(+ : sum) schedule(static)
	for (long i = 0; i < unit_iters; i++)
		sum += (double)(i % 7) * 0.5;
	return sum;
}

__attribute__((noinline)) static double work(int units)
{
	double sum = 0.0;

	for (int u = 0; u < units; u++) {
		sum += unit();
		__asm__ volatile("" ::: "memory"); /* keeps the caller's frame: no tail call */
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
			sig = 1;
		else
			unit_iters = atol(argv[i]);
	}
	local = work(rank + 1);
	wait_for_all();
	MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("imbalance: %d ranks, %d threads each, checksum %.1f\n", size, omp_get_max_threads(), total);
	if (sig && rank == size - 1)
		raise(SIGTERM);
	MPI_Finalize();
	return status;
}
