/* SPDX-License-Identifier: MIT */
/*
 * MPI + OpenMP target offload, one GPU per rank: rank r sets its default
 * device to r % devices and runs r + 1 target regions from offload(). Each
 * rank prints what it used:
 *   ranks: rank R device D regions K
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define SLICE 4096

static double y[SLICE];

__attribute__((noinline)) static double offload(int regions)
{
	for (int r = 0; r < regions; r++) {
#pragma omp target map(tofrom : y[0:SLICE])
		for (int i = 0; i < SLICE; i++)
			y[i] += 1.0;
	}
	return y[0]; /* used by the caller: the loop is no tail call */
}

int main(int argc, char **argv)
{
	int rank, devices;
	double v;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	devices = omp_get_num_devices();
	if (devices > 0)
		omp_set_default_device(rank % devices);
	v = offload(rank + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("ranks: rank %d device %d regions %d (%.0f)\n", rank, devices > 0 ? rank % devices : -1, rank + 1, v);
	MPI_Finalize();
	return 0;
}
