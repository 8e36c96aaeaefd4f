// SPDX-License-Identifier: MIT
//
// MPI + CUDA, one GPU per rank (tests/gpu/check_multigpu.py ranks): rank r
// takes device r % devices, launches r + 1 kernels of SPIN_MS each from
// launch_on(), waits for them in wait_device(), and meets the others at a
// barrier. Each rank prints what it used, and how long it spent in the
// barrier by its own clock:
//   ranks: rank R device D kernels K barrier_ms MS
// Built on the GPU machine with its MPI: nvcc -ccbin mpicxx (see the
// validation script), as the MPI there is not this machine's.
#include <cstdio>
#include <mpi.h>

#include "check.h"
#include "spin.h"

#define SPIN_MS 50

NOINLINE static void launch_on(int kernels)
{
	for (int i = 0; i < kernels; i++)
		spin<<<1, 1>>>(SPIN_MS * 1000000ull);
	CHECK(cudaGetLastError());
}

NOINLINE static void wait_device()
{
	CHECK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
	int rank, n = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	CHECK(cudaGetDeviceCount(&n));
	CHECK(cudaSetDevice(rank % n));
	CHECK(cudaFree(0));
	launch_on(rank + 1);
	wait_device();
	double t0 = MPI_Wtime();
	MPI_Barrier(MPI_COMM_WORLD);
	double t1 = MPI_Wtime();
	printf("ranks: rank %d device %d kernels %d barrier_ms %.3f\n", rank, rank % n, rank + 1,
	       (t1 - t0) * 1e3);
	MPI_Finalize();
	return 0;
}
