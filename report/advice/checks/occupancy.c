/* SPDX-License-Identifier: MIT */
/*
 * Occupancy, where the kernel is latency-bound: what lifting its tightest
 * bound (block slots, registers, shared memory) gives, up to the next one
 * and to the grid's own warps (docs/ADVICE.md, "Kernels").
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/advice/check.h"
#include "report/advice/checks/warps.h"

#define LATENCY_BOUND 0.20 /* only where this share of the cycles issued nothing */

static void kernel(struct gt_advice_ctx *c, const struct gt_advice_kernel *x)
{
	static const char *const what[] = { "the block size", "the registers per thread",
					    "the shared memory per block" };
	uint64_t *const *ex = c->excl;
	uint32_t k = x->k;
	double S = x->S, wr = x->wr, waiting = x->waiting;
	uint64_t count = ex[GT_M_GKER_COUNT][k] ? ex[GT_M_GKER_COUNT][k] : 1;
	double occ, lim[3], next = 1000, m, ratio, n, nn;
	struct gt_advice_launch l;
	int tight = 0;
	struct gt_next *a;

	if (!x->sampled || !ex[GT_M_GKER_OCC_THR][k] || 1.0 - wr < LATENCY_BOUND)
		return;
	occ = (double)ex[GT_M_GKER_OCC_THR][k] / (double)count;
	lim[0] = (double)ex[GT_M_GKER_OCC_SLOTS][k] / (double)count;
	lim[1] = (double)ex[GT_M_GKER_OCC_REGS][k] / (double)count;
	lim[2] = (double)ex[GT_M_GKER_OCC_SMEM][k] / (double)count;
	for (int i = 1; i < 3; i++)
		if (lim[i] > 0 && lim[i] < lim[tight])
			tight = i;
	for (int i = 0; i < 3; i++)
		if (i != tight && lim[i] > 0 && lim[i] < next)
			next = lim[i];
	/* The warps per scheduler now and at the next bound, no more than the
	 * grid's own: a grid of a few blocks keeps few warps whatever the
	 * occupancy allows. Waits for memory are left as they are: more warps
	 * hide them only up to the memory's bandwidth, which the samples do
	 * not show (a random-access kernel gains nothing). */
	gt_advice__launch(c, k, &l);
	n = gt_advice__per_sched(&l, occ);
	nn = gt_advice__per_sched(&l, next);
	m = waiting > 0 ? (double)c->incl[GT_M_GPC_MEMORY][k] / S / waiting : 0;
	ratio = gt_advice_model__occupancy(m, 1.0 - waiting, n, nn);
	if (!(lim[tight] > 0 && occ < 1000 && next > occ * 1.25 && n > 0 && nn > n * 1.25 &&
	      ratio <= 1.0 / GT_ADVICE_MIN_SPEEDUP) ||
	    !(a = gt_advice__kernel_item(c, GT_NEXT_GPU_OCCUPANCY, k, GT_NONE, c->incl[GT_M_GPC_LATENCY][k], S, ratio)))
		return;
	snprintf(a->why, sizeof(a->why),
		 "%.1f%% of the schedulers' cycles issue nothing; %s bounds the occupancy at "
		 "%.1f%%, the next bound is %.1f%%",
		 100.0 * (1.0 - wr), what[tight], occ / 10, next / 10);
	if (tight == 1)
		snprintf(a->todo, sizeof(a->todo),
			 "fewer registers per thread (now %" PRIu64 "): __launch_bounds__ or "
			 "-maxrregcount, fewer live values",
			 ex[GT_M_GKER_THR_REG][k] / count);
	else if (tight == 2)
		snprintf(a->todo, sizeof(a->todo),
			 "less shared memory per block (now %" PRIu64 " bytes): smaller tiles, or "
			 "fewer threads sharing more of it",
			 (ex[GT_M_GKER_STMEM][k] + ex[GT_M_GKER_DYMEM][k]) / count);
	else
		snprintf(a->todo, sizeof(a->todo), "larger blocks: the SM's block slots fill before its warp slots");
}

static const enum gt_metric triggers[] = { GT_M_GPC_SAMPLES, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GPC_LATENCY, GT_ADVICE_INCL },
	{ GT_M_GPC_MEMORY, GT_ADVICE_INCL },
	{ GT_M_GKER_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GKER_BLKS, GT_ADVICE_EXCL },
	{ GT_M_GKER_BLK_THR, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_THR, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_SLOTS, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_REGS, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_SMEM, GT_ADVICE_EXCL },
	{ GT_M_GKER_THR_REG, GT_ADVICE_EXCL },
	{ GT_M_GKER_STMEM, GT_ADVICE_EXCL },
	{ GT_M_GKER_DYMEM, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_occupancy = {
	.name = "occupancy",
	.triggers = triggers,
	.needs = needs,
	.kernel = kernel,
};
