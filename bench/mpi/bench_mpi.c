/* SPDX-License-Identifier: MIT */
/*
 * The cost of an MPI call: a ping-pong between ranks 0 and 1 (MPI_Send,
 * MPI_Recv of 8 bytes) and an MPI_Allreduce of one double on all ranks, each
 * timed over ITERS calls after a warm-up. Rank 0 prints, on stdout:
 *   bench_mpi: ranks N pingpong_ns P allreduce_ns A
 * P: a round trip's time; A: one allreduce's. run-bench.sh runs it bare and
 * under gputool and compares.
 *
 *   bench_mpi [ITERS]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20000;
	double x = 1.0, y = 0.0, buf = 0.0;
	uint64_t t0, pp = 0, ar;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int pass = 0; pass < 2; pass++) { /* warm-up, then measured */
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now_ns();
		for (int i = 0; i < iters && size > 1; i++) {
			if (rank == 0) {
				MPI_Send(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == 1) {
				MPI_Recv(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
			}
		}
		pp = now_ns() - t0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_ns();
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	ar = now_ns() - t0;
	if (rank == 0)
		printf("bench_mpi: ranks %d pingpong_ns %.1f allreduce_ns %.1f\n", size, (double)pp / iters,
		       (double)ar / iters);
	MPI_Finalize();
	return 0;
}
