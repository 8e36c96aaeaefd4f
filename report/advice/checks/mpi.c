/* SPDX-License-Identifier: MIT */
/*
 * MPI ranks waiting at a collective for the last to arrive (docs/ADVICE.md,
 * "MPI"; docs/MPI.md for how the waits are measured). A collective's node
 * ("<mpi MPI_Allreduce>" at its call site) holds the ranks' waits summed
 * (MPI_IDLE), its time (REGION_TIME), instances (REGION_COUNT) and
 * communicator sizes (MPI_COMM_RANKS).
 *
 * The model is OpenMP's barrier's (gt_advice_model__imbalance): at each
 * instance the waits of a communicator's n ranks add up to n (max - mean)
 * of their arrivals; a balanced decomposition has them arrive at the mean,
 * which saves each rank wait / n. The late ranks' work before the call
 * (MPI_IDLE_CAUSE, the heaviest such context) is what to balance.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/advice/check.h"
#include "core/text.h"
#include "report/paths.h"

/* A collective saving less than this share of the run's wall time (per
 * process) gets no line. */
#define MPI_MIN_WALL 0.01

/* The collectives whose every rank waits for the last (wait at N x N) or
 * for the root: their waits are the ranks' imbalance. */
static int collective(const char *s)
{
	static const char *const names[] = {
		"<mpi MPI_Allreduce>", "<mpi MPI_Barrier>",  "<mpi MPI_Allgather>", "<mpi MPI_Allgatherv>",
		"<mpi MPI_Alltoall>",  "<mpi MPI_Alltoallv>", "<mpi MPI_Reduce_scatter>", "<mpi MPI_Bcast>",
		"<mpi MPI_Reduce>",    "<mpi MPI_Gather>",    "<mpi MPI_Scatter>",
	};

	for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return 1;
	return 0;
}

static int mpi__run(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl;
	uint32_t procs = c->run->processes ? c->run->processes : 1, cause = GT_NONE;
	struct gt_paths_opts po = { .width = 90, .leaf_first = 1, .label_flags = GT_LABEL_ELIDE_ARGS };
	char *late = NULL;

	/* The late ranks' heaviest work, but the causes of late sends that
	 * found no work before them (charged to the sends themselves). */
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const char *s = p->nodes[i].kind == GT_PNODE_NAME ? gt_profile__str(p, p->nodes[i].name) : NULL;

		if (s && !strncmp(s, "<mpi ", 5) && !collective(s))
			continue;
		if (v[GT_M_MPI_IDLE_CAUSE][i] && (cause == GT_NONE || v[GT_M_MPI_IDLE_CAUSE][i] > v[GT_M_MPI_IDLE_CAUSE][cause]))
			cause = i;
	}
	for (uint32_t i = 0; i < p->n_nodes && !c->oom; i++) {
		uint64_t wait = v[GT_M_MPI_IDLE][i], n = v[GT_M_REGION_COUNT][i], time = v[GT_M_REGION_TIME][i];
		double team, saved;
		struct gt_next *x;

		if (!wait || !n || p->nodes[i].kind != GT_PNODE_NAME ||
		    !collective(gt_profile__str(p, p->nodes[i].name)))
			continue;
		team = (double)v[GT_M_MPI_COMM_RANKS][i] / (double)n;
		if (team < 2)
			continue;
		/* Per rank, wait / team; summed over the run's processes. */
		saved = gt_advice_model__imbalance((double)wait, team) * procs;
		if (!c->run->wall_ns || saved / procs < MPI_MIN_WALL * (double)c->run->wall_ns || saved >= (double)time)
			continue;
		if (!(x = gt_advice__add(c, GT_NEXT_MPI_IMBALANCE, i)))
			break;
		x->time_ns = time;
		x->speedup = (double)time / ((double)time - saved);
		gt_advice__saves(c, x, (uint64_t)saved, 0);
		if (!late && cause != GT_NONE)
			late = gt_paths__one(p, cause, &po);
		snprintf(x->why, sizeof(x->why),
			 "over %" PRIu64 " instances on %.1f ranks the ranks waited %.3f s for the last to arrive, "
			 "%.1f %% of their time in it; the late ranks worked at %s",
			 n / procs ? n / procs : n, team, (double)wait / 1e9, 100.0 * (double)wait / (double)time,
			 late ? late : "(no sample between the calls)");
	}
	free(late);
	return c->oom ? -ENOMEM : 0;
}

static const enum gt_metric triggers[] = { GT_M_MPI_IDLE, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_MPI_IDLE, GT_ADVICE_EXCL },	{ GT_M_MPI_IDLE_CAUSE, GT_ADVICE_EXCL },
	{ GT_M_REGION_COUNT, GT_ADVICE_EXCL }, { GT_M_REGION_TIME, GT_ADVICE_EXCL },
	{ GT_M_MPI_COMM_RANKS, GT_ADVICE_EXCL }, { GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_mpi = {
	.name = "mpi-imbalance",
	.triggers = triggers,
	.needs = needs,
	.run = mpi__run,
};
