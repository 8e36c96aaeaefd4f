/* SPDX-License-Identifier: MIT */
/*
 * Smaller blocks, the same threads (GPA's block increase): a grid of fewer
 * blocks than SMs leaves the others idle; blocks of fewer warps spread the
 * same warps over more SMs, each scheduler with fewer of them
 * (docs/ADVICE.md, "Kernels").
 */
#include <stdio.h>

#include "report/advice/check.h"
#include "report/advice/checks/warps.h"

static void kernel(struct gt_advice_ctx *c, const struct gt_advice_kernel *x)
{
	uint64_t *const *ex = c->excl;
	uint32_t k = x->k;
	double count = ex[GT_M_GKER_COUNT][k] ? (double)ex[GT_M_GKER_COUNT][k] : 1;
	double occ, warps2, n, nn, ratio;
	struct gt_advice_launch l, l2;
	struct gt_next *a;

	if (!x->sampled || !ex[GT_M_GKER_OCC_THR][k])
		return;
	gt_advice__launch(c, k, &l);
	if (!(l.blocks > 0 && l.warps > 1 && l.slots > 0 && l.sms > 0 && l.blocks < l.sms))
		return;
	occ = (double)ex[GT_M_GKER_OCC_THR][k] / count;
	/* As many warps per block as spread the grid's warps over all the
	 * SMs, but not under one per scheduler: there each warp has a
	 * scheduler of its own already, and a block keeps its threads
	 * together (shared memory, barriers) at no cost. */
	warps2 = floor(l.blocks * l.warps / l.sms);
	if (warps2 < l.sched)
		warps2 = l.sched;
	if (warps2 >= l.warps)
		return;
	l2 = l;
	l2.warps = warps2;
	l2.threads = 32 * warps2;
	l2.blocks = ceil(l.blocks * l.warps / warps2);
	n = gt_advice__per_sched(&l, occ);
	nn = gt_advice__per_sched(&l2, occ);
	ratio = gt_advice_model__blocks(l.blocks, l2.blocks < l.sms ? l2.blocks : l.sms, 1.0 - x->waiting, n, nn);
	if (ratio > 1.0 / GT_ADVICE_MIN_SPEEDUP ||
	    !(a = gt_advice__kernel_item(c, GT_NEXT_GPU_BLOCKS, k, GT_NONE, (uint64_t)x->S, x->S, ratio)))
		return;
	snprintf(a->why, sizeof(a->why),
		 "the grid's %.0f blocks of %.0f threads keep %.0f of the %.0f SMs busy, %.1f warps per "
		 "scheduler, which issue in %.1f%% of their cycles (warps ready %.1f%% of theirs); blocks of "
		 "%.0f threads would keep %.0f busy, %.1f warps per scheduler",
		 l.blocks, l.threads, l.blocks, l.sms, n, 100.0 * x->wr, 100.0 * (1.0 - x->waiting), l2.threads,
		 l2.blocks < l.sms ? l2.blocks : l.sms, nn);
	snprintf(a->todo, sizeof(a->todo),
		 "blocks of %.0f threads (now %.0f), %.0f of them for the same threads: a block-wide "
		 "reduction then needs a second step across the blocks",
		 l2.threads, l.threads, l2.blocks);
}

static const enum gt_metric triggers[] = { GT_M_GPC_SAMPLES, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GKER_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GKER_BLKS, GT_ADVICE_EXCL },
	{ GT_M_GKER_BLK_THR, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_THR, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_blocks = {
	.name = "blocks",
	.triggers = triggers,
	.needs = needs,
	.kernel = kernel,
};
