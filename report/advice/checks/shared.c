/* SPDX-License-Identifier: MIT */
/*
 * Shared memory a loop waits on (gpu-shared; GPA's (CGO'21) code reorder):
 * the waits that the instruction blamer moved to shared-memory loads in a
 * kernel's loops (GPB_SHARED at lines under a "loop at" node). A loop
 * that reads and writes back a shared-memory value every iteration waits
 * for each load in turn, and the loop's other loads behind it; kept in a
 * register, the value's loads and stores go and the operands' loads,
 * independent of it, are issued ahead and wait together. Estimated with
 * the first model (model.h): f the share of the samples those waits are,
 * c = 0.
 */
#include <stdio.h>
#include <string.h>

#include "report/advice/check.h"

static int is_loop(const struct gt_profile *p, uint32_t i)
{
	const char *s = p->nodes[i].kind == GT_PNODE_NAME ? gt_profile__str(p, p->nodes[i].name) : NULL;

	return s && !strncmp(s, GT_GPU_NODE_LOOP, strlen(GT_GPU_NODE_LOOP));
}

/* Whether node i, under kernel context k, is in one of k's loops. */
static int in_loop(const struct gt_profile *p, uint32_t k, uint32_t i)
{
	for (uint32_t a = p->nodes[i].parent; a != GT_NONE && a != k; a = p->nodes[a].parent)
		if (is_loop(p, a))
			return 1;
	return 0;
}

static void kernel(struct gt_advice_ctx *c, const struct gt_advice_kernel *x)
{
	const struct gt_profile *p = c->p;
	const uint64_t *sh = c->excl[GT_M_GPB_SHARED];
	uint32_t k = x->k, hot = GT_NONE;
	double w = 0, ratio;
	struct gt_next *n;

	if (!x->sampled)
		return;
	for (uint32_t i = k + 1; i < p->n_nodes; i++) {
		if (c->kern[i] != k || !sh[i] || !in_loop(p, k, i))
			continue;
		w += (double)sh[i];
		if (hot == GT_NONE || sh[i] > sh[hot])
			hot = i;
	}
	if (w / x->S < GT_ADVICE_MIN_SHARE)
		return;
	ratio = gt_advice_model__stall(x->wr, x->waiting, w / x->S, 0);
	if (ratio > 1.0 / GT_ADVICE_MIN_SPEEDUP ||
	    !(n = gt_advice__kernel_item(c, GT_NEXT_GPU_SHARED, k, hot, (uint64_t)w, x->S, ratio)))
		return;
	snprintf(n->why, sizeof(n->why),
		 "%.1f%% of the kernel's PC samples wait, in its loops, for results of shared-memory loads",
		 100.0 * w / x->S);
}

static const enum gt_metric triggers[] = { GT_M_GPC_SAMPLES, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GPB_SHARED, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_shared = {
	.name = "shared",
	.triggers = triggers,
	.needs = needs,
	.kernel = kernel,
};
