/* SPDX-License-Identifier: MIT */
/*
 * Copies a change makes cheaper or needless: pageable host memory, and
 * uploads of the bytes the device already had (docs/ADVICE.md, "Copies
 * and waits").
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/advice/check.h"

#define GT_ADVICE_MIN_PINNED 1048576u /* bytes of pinned copies a pinned bandwidth is measured from */

/* Pageable copies: at the pinned bandwidth the run measured itself, per direction. */
static int check_pageable(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl;
	static const enum gt_metric dir[2][2] = { { GT_M_GXCOPY_H2D, GT_M_GXCOPY_H2D_BYTES }, { GT_M_GXCOPY_D2H, GT_M_GXCOPY_D2H_BYTES } };
	double pinned[2] = { 0, 0 };

	/* The copies with no pageable bytes, per direction. */
	for (int d = 0; d < 2; d++) {
		uint64_t b = 0, t = 0;

		for (uint32_t i = 0; i < p->n_nodes; i++)
			if (!v[GT_M_GXCOPY_PAGEABLE_BYTES][i] && v[dir[d][1]][i]) {
				b += v[dir[d][1]][i];
				t += v[dir[d][0]][i];
			}
		if (b >= GT_ADVICE_MIN_PINNED && t)
			pinned[d] = (double)b / (double)t; /* bytes per ns */
	}
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t bytes = v[GT_M_GXCOPY_H2D_BYTES][i] + v[GT_M_GXCOPY_D2H_BYTES][i], t = v[GT_M_GXCOPY_H2D][i] + v[GT_M_GXCOPY_D2H][i];
		double after = 0;
		int known = 1;
		struct gt_next *n;

		/* Copies of under 0.1 % of the run's wall time are not worth a line. */
		if (!v[GT_M_GXCOPY_PAGEABLE_BYTES][i] || !bytes || !t || (double)t < 0.001 * (double)c->run->wall_ns)
			continue;
		/* A node holds copies of one direction or both: the pageable
		 * share of each at the pinned rate, the rest as it was. */
		for (int d = 0; d < 2; d++) {
			uint64_t b = v[dir[d][1]][i], td = v[dir[d][0]][i];
			double pb = (double)v[GT_M_GXCOPY_PAGEABLE_BYTES][i] * (double)b / (double)bytes;

			if (!b)
				continue;
			if (!pinned[d]) {
				known = 0;
				continue;
			}
			after += (double)td * (1.0 - pb / (double)b) + pb / pinned[d];
		}
		if (!(n = gt_advice__add(c, GT_NEXT_PAGEABLE, i)))
			return 0;
		n->time_ns = t;
		if (known && after > 0 && after < (double)t) {
			n->speedup = (double)t / after;
			/* A pageable copy blocks the host thread: its time is the wait. */
			gt_advice__saves(c, n, (uint64_t)((double)t - after), 0);
			snprintf(n->why, sizeof(n->why),
				 "%" PRIu64 " bytes copied from or to pageable memory at %.2f GB/s; pinned copies of "
				 "this run moved %.2f GB/s",
				 v[GT_M_GXCOPY_PAGEABLE_BYTES][i], (double)bytes / (double)t,
				 (double)(v[GT_M_GXCOPY_H2D_BYTES][i] ? pinned[0] : pinned[1]));
		} else {
			snprintf(n->why, sizeof(n->why),
				 "%" PRIu64 " bytes copied from or to pageable memory at %.2f GB/s; no pinned copy of "
				 "this run to estimate the gain from",
				 v[GT_M_GXCOPY_PAGEABLE_BYTES][i], (double)bytes / (double)t);
		}
	}
	return 0;
}


/*
 * Uploads of the same host bytes as the buffer's previous upload
 * (GXCOPY_RESENT_BYTES, gpu/resend.h), at the copy's node: kept on the
 * device, they cost nothing. Their time is their share of the node's upload
 * time: OpenMP's transfers (OMP_TGT_H2D_TIME) are host time the thread
 * spent in them; CUDA's (GXCOPY_H2D) device time, which an asynchronous
 * copy may overlap with the host's work (an upper bound).
 */
static int check_resent(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		int omp = v[GT_M_OMP_TGT_H2D_BYTES][i] != 0;
		uint64_t t = omp ? v[GT_M_OMP_TGT_H2D_TIME][i] : v[GT_M_GXCOPY_H2D][i];
		uint64_t b = omp ? v[GT_M_OMP_TGT_H2D_BYTES][i] : v[GT_M_GXCOPY_H2D_BYTES][i];
		uint64_t r = v[GT_M_GXCOPY_RESENT_BYTES][i];
		double share;
		struct gt_next *n;

		/* Under 0.1 % of the run's wall time: not worth a line. */
		if (!r || !b || !t || (double)t < 0.001 * (double)c->run->wall_ns)
			continue;
		share = r < b ? (double)r / (double)b : 1.0;
		if (!(n = gt_advice__add(c, GT_NEXT_RESENT, i)))
			return 0;
		n->time_ns = t;
		gt_advice__saves(c, n, (uint64_t)((double)t * share), !omp);
		snprintf(n->why, sizeof(n->why),
			 "%" PRIu64 " of %" PRIu64 " uploads here (%.1f %% of the %" PRIu64
			 " bytes) sent the bytes the same host buffer held at its previous upload",
			 v[GT_M_GXCOPY_RESENT_COUNT][i],
			 omp ? v[GT_M_OMP_TGT_H2D_COUNT][i] : v[GT_M_GXCOPY_H2D_COUNT][i], 100.0 * share, b);
	}
	return 0;
}


static const enum gt_metric pageable_triggers[] = { GT_M_GXCOPY_PAGEABLE_BYTES, GT_ADVICE_END };
static const struct gt_advice_need pageable_needs[] = {
	{ GT_M_GXCOPY_PAGEABLE_BYTES, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_H2D, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_H2D_BYTES, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_D2H, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_D2H_BYTES, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_pageable = {
	.name = "pageable-copies",
	.triggers = pageable_triggers,
	.needs = pageable_needs,
	.run = check_pageable,
};

static const enum gt_metric resent_triggers[] = { GT_M_GXCOPY_RESENT_BYTES, GT_ADVICE_END };
static const struct gt_advice_need resent_needs[] = {
	{ GT_M_GXCOPY_RESENT_BYTES, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_RESENT_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_H2D, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_H2D_BYTES, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_H2D_COUNT, GT_ADVICE_EXCL },
	{ GT_M_OMP_TGT_H2D_TIME, GT_ADVICE_EXCL },
	{ GT_M_OMP_TGT_H2D_BYTES, GT_ADVICE_EXCL },
	{ GT_M_OMP_TGT_H2D_COUNT, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_resent = {
	.name = "resent-data",
	.triggers = resent_triggers,
	.needs = resent_needs,
	.run = check_resent,
};
