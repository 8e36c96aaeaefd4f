/* SPDX-License-Identifier: MIT */
/*
 * Larger blocks (GPA's thread increase): blocks whose threads fill their
 * warps partly, or so small that the SM's block slots fill before its
 * warp slots, in a grid that fills every SM's slots (docs/ADVICE.md,
 * "Kernels"). A grid that does not fill them gains nothing from larger
 * blocks of the same threads: the lanes gained are SMs lost.
 */
#include <stdio.h>

#include "report/advice/check.h"
#include "report/advice/checks/warps.h"

static void kernel(struct gt_advice_ctx *c, const struct gt_advice_kernel *x)
{
	uint64_t *const *ex = c->excl;
	uint32_t k = x->k;
	double count = ex[GT_M_GKER_COUNT][k] ? (double)ex[GT_M_GKER_COUNT][k] : 1;
	double occ, slots_occ, next = 1000, u, per_sm, max_blk, warps2, n, nn, ratio;
	struct gt_advice_launch l;
	struct gt_next *a;

	if (!x->sampled || !ex[GT_M_GKER_OCC_THR][k])
		return;
	gt_advice__launch(c, k, &l);
	if (!(l.threads > 0 && l.slots > 0 && l.sms > 0 && l.blocks > 0))
		return;
	occ = (double)ex[GT_M_GKER_OCC_THR][k] / count;
	slots_occ = (double)ex[GT_M_GKER_OCC_SLOTS][k] / count;
	/* Blocks resident per SM now; the grid must fill them on every SM. */
	per_sm = occ / 1000 * l.slots / l.warps;
	if (l.blocks < l.sms * per_sm)
		return;
	u = l.threads / (32 * l.warps);
	/* The block slots per SM, where they bind (the block size's own bound
	 * below the warp slots'): blocks of more warps fill the warp slots,
	 * up to the registers' and shared memory's bounds. */
	warps2 = l.warps;
	if (slots_occ > 0 && slots_occ < 1000 && slots_occ <= occ) {
		max_blk = slots_occ / 1000 * l.slots / l.warps;
		warps2 = ceil(l.slots / max_blk);
		/* A bound equal to the slots' is theirs: the same block count
		 * clipped it. */
		for (int m = GT_M_GKER_OCC_REGS; m <= GT_M_GKER_OCC_SMEM; m++)
			if (ex[m][k] && (double)ex[m][k] / count > slots_occ && (double)ex[m][k] / count < next)
				next = (double)ex[m][k] / count;
	} else
		next = occ;
	n = gt_advice__per_sched(&l, occ);
	nn = gt_advice__per_sched(&l, next > occ ? next : occ);
	ratio = gt_advice_model__threads(u, 1.0 - x->waiting, n, nn);
	if (!(u < 1 || nn > n * 1.25) || ratio > 1.0 / GT_ADVICE_MIN_SPEEDUP ||
	    !(a = gt_advice__kernel_item(c, GT_NEXT_GPU_THREADS, k, GT_NONE, (uint64_t)x->S, x->S, ratio)))
		return;
	snprintf(a->why, sizeof(a->why),
		 "blocks of %.0f threads fill %.0f%% of their warps' lanes and keep %.1f warps per scheduler "
		 "(%.1f%% occupancy); blocks of %.0f threads would fill them and keep %.1f; the warps are "
		 "ready %.1f%% of their cycles",
		 l.threads, 100.0 * u, n, occ / 10, 32 * warps2, nn, 100.0 * (1.0 - x->waiting));
	snprintf(a->todo, sizeof(a->todo),
		 "blocks of %.0f threads (now %.0f), each thread's work the same: whole warps, and enough of "
		 "them per block that the SM's block slots do not bind",
		 32 * warps2, l.threads);
}

static const enum gt_metric triggers[] = { GT_M_GPC_SAMPLES, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GKER_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GKER_BLKS, GT_ADVICE_EXCL },
	{ GT_M_GKER_BLK_THR, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_THR, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_SLOTS, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_REGS, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_SMEM, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_threads = {
	.name = "threads",
	.triggers = triggers,
	.needs = needs,
	.kernel = kernel,
};
