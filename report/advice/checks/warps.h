/* SPDX-License-Identifier: MIT */
/*
 * What the parallel checks (occupancy, threads, blocks) share: a launch's
 * shape and the warps it keeps resident per scheduler, from the launch's
 * means (GKER_* over GKER_COUNT) and the device's facts (warp slots per SM,
 * SMs, schedulers per SM: the profile's gpu_warps_per_sm, pc_sm_count,
 * pc_schedulers).
 */
#ifndef GT_REPORT_ADVICE_WARPS_H
#define GT_REPORT_ADVICE_WARPS_H

#include <math.h>

#include "report/advice/check.h"

struct gt_advice_launch {
	double blocks;  /* per grid; 0: unknown */
	double threads; /* per block; 0: unknown */
	double warps;   /* per block: ceil(threads / 32) */
	double slots;   /* warp slots per SM; 0: unknown */
	double sms;     /* 0: unknown */
	double sched;   /* warp schedulers per SM (4 where not recorded) */
};

static inline void gt_advice__launch(const struct gt_advice_ctx *c, uint32_t k, struct gt_advice_launch *l)
{
	uint64_t *const *ex = c->excl;
	double count = ex[GT_M_GKER_COUNT][k] ? (double)ex[GT_M_GKER_COUNT][k] : 1;

	l->blocks = (double)ex[GT_M_GKER_BLKS][k] / count;
	l->threads = (double)ex[GT_M_GKER_BLK_THR][k] / count;
	l->warps = ceil(l->threads / 32);
	l->slots = c->run ? (double)c->run->warps_per_sm : 0;
	l->sms = c->run ? (double)c->run->pc_sms : 0;
	l->sched = c->run && c->run->pc_schedulers ? (double)c->run->pc_schedulers : 4;
}

/* The warps resident per scheduler at occupancy occ (1/1000 of the warp
 * slots), no more than the grid's own: each busy SM holds at most
 * ceil(blocks / SMs) of its blocks. Where the grid or the SMs are not
 * known, the occupancy's alone. 0: the warp slots are not known. */
static inline double gt_advice__per_sched(const struct gt_advice_launch *l, double occ)
{
	double w = occ / 1000 * l->slots;

	if (l->blocks > 0 && l->warps > 0 && l->sms > 0 && ceil(l->blocks / l->sms) * l->warps < w)
		w = ceil(l->blocks / l->sms) * l->warps;
	return w / l->sched;
}

#endif
