/* SPDX-License-Identifier: MIT */
/*
 * gputool-mpi: `gputool report` for the ranks of an MPI job. The plain
 * gputool command hands over to it when it runs under a launcher with
 * more than one rank (`mpirun -np P gputool report DIR`); it is built only
 * where MPI is found, so gputool itself never needs libmpi.
 *
 * The team (report/report.h) over MPI_COMM_WORLD: messages carry a
 * 64-bit length, then the bytes in pieces an int count can hold.
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

#define PIECE (1 << 30)
#define TAG 7

static int mpi_bcast(struct gt_team *t, char **buf, size_t *len)
{
	uint64_t n = t->rank == 0 ? *len : 0;

	if (MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	if (t->rank != 0) {
		*buf = malloc(n ? (size_t)n : 1);
		*len = (size_t)n;
		if (!*buf)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (uint64_t at = 0; at < n; at += PIECE) {
		int k = (int)(n - at < PIECE ? n - at : PIECE);

		if (MPI_Bcast(*buf + at, k, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
			return -1;
	}
	return 0;
}

static int mpi_send(struct gt_team *t, int to, const char *buf, size_t len)
{
	uint64_t n = len;

	(void)t;
	if (MPI_Send(&n, 1, MPI_UINT64_T, to, TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	for (uint64_t at = 0; at < n; at += PIECE) {
		int k = (int)(n - at < PIECE ? n - at : PIECE);

		if (MPI_Send(buf + at, k, MPI_BYTE, to, TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
			return -1;
	}
	return 0;
}

static int mpi_recv(struct gt_team *t, int from, char **buf, size_t *len)
{
	uint64_t n;

	(void)t;
	if (MPI_Recv(&n, 1, MPI_UINT64_T, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return -1;
	*buf = malloc(n ? (size_t)n : 1);
	*len = (size_t)n;
	if (!*buf)
		return -1;
	for (uint64_t at = 0; at < n; at += PIECE) {
		int k = (int)(n - at < PIECE ? n - at : PIECE);

		if (MPI_Recv(*buf + at, k, MPI_BYTE, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct gt_team team = { .bcast = mpi_bcast, .send = mpi_send, .recv = mpi_recv };
	int rc;

	gt_report__tune_malloc();
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &team.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &team.size);
	if (argc < 2 || strcmp(argv[1], "report")) {
		if (team.rank == 0)
			fprintf(stderr, "usage: gputool-mpi report PATH [OPTIONS] (see `gputool help report`)\n");
		MPI_Finalize();
		return 2;
	}
	rc = gt_report__main(argc - 1, argv + 1, &team);
	if (rc == GT_HELP_ASKED) {
		if (team.rank == 0)
			fprintf(stderr, "gputool-mpi: `gputool help report` shows the report's options\n");
		rc = 0;
	}
	MPI_Finalize();
	return rc;
}
