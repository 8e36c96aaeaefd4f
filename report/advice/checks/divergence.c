/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "report/advice/check.h"

/*
 * Divergence, from instruction counts (GPUTOOL_SASS_COUNTS): a kernel
 * context's warps executed W instructions, its threads Th. Full warps
 * would have needed Th / 32: the share c = 1 - Th / (32 W) of the warp
 * instructions ran for idle threads. With the issue cycles' share W_R
 * from PC samples (a profile that has both), only those shrink:
 *   T' / T = W_R (1 - c) + (1 - W_R)
 * without them the kernel is taken as issue-bound, T' / T = 1 - c, an
 * upper bound. The line named is the one with the most warp
 * instructions run for idle threads.
 */
static int check_divergence(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl, *const *in = c->incl;
	uint32_t *hot = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*hot));
	double *lost = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*lost));

	if (!hot || !lost) {
		c->oom = 1;
		goto out;
	}
	for (uint32_t i = 0; i < p->n_nodes; i++)
		hot[i] = GT_NONE;
	/* Each kernel context's line with the most instructions for idle threads. */
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint32_t k = c->kern[i];
		double l = (double)v[GT_M_GSC_INST][i] - (double)v[GT_M_GSC_THREAD_INST][i] / 32.0;

		if (k == GT_NONE || !v[GT_M_GSC_INST][i] || l <= 0)
			continue;
		if (hot[k] == GT_NONE || l > lost[k]) {
			hot[k] = i;
			lost[k] = l;
		}
	}
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		double w = (double)gt_advice__under(c, k, GT_M_GSC_INST, NULL);
		double th = (double)gt_advice__under(c, k, GT_M_GSC_THREAD_INST, NULL);
		double cut, ratio, S = (double)in[GT_M_GPC_SAMPLES][k];
		struct gt_next *n;

		if (c->kern[k] != k || w <= 0 || hot[k] == GT_NONE)
			continue;
		cut = 1.0 - th / (32.0 * w);
		if (cut < GT_ADVICE_MIN_SHARE || !(n = gt_advice__add(c, GT_NEXT_GPU_DIVERGENCE, k)))
			continue;
		ratio = S >= GT_ADVICE_MIN_SAMPLES
				? gt_advice_model__divergence(1, (S - (double)in[GT_M_GPC_LATENCY][k]) / S, cut)
				: gt_advice_model__divergence(0, 0, cut);
		n->line = hot[k];
		gt_advice__kernel_gain(c, n, k, ratio);
		snprintf(n->why, sizeof(n->why),
			 "its warps ran %.1f %% of their instructions for threads left idle (%.0f of %.0f warp "
			 "instructions at full warps); the most at the line named, %.1f %% of its own",
			 100.0 * cut, th / 32.0, w,
			 100.0 * lost[k] / (double)v[GT_M_GSC_INST][hot[k]]);
	}
out:
	free(hot);
	free(lost);
	return 0;
}


static const enum gt_metric triggers[] = { GT_M_GSC_INST, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GSC_INST, GT_ADVICE_PER_KERNEL },
	{ GT_M_GSC_THREAD_INST, GT_ADVICE_PER_KERNEL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_divergence = {
	.name = "divergence",
	.triggers = triggers,
	.needs = needs,
	.run = check_divergence,
};
