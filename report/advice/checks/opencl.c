/* SPDX-License-Identifier: MIT */
/*
 * OpenCL's best-practice checks (gpu/opencl/advice.c counts them), one
 * piece of advice per context that showed one. Two have a time to save: a
 * run-time build (its host time, GJIT, at its <gpu jit> node: an
 * ahead-of-time binary loads in a part of it, so the whole is an upper
 * bound) and data sent back unchanged (the upload's time at its <gpu copy
 * h2d> node, saved whole if the data stays on the device). The others are
 * given without an estimate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "report/advice/check.h"

static const struct {
	enum gt_next_kind kind;
	enum gt_metric count; /* the OpenCL layer's count, at the context it is about */
	enum gt_metric time;  /* the time the change saves (GT_ADVICE_END: none) */
	const char *what;     /* what count counts */
} rows[] = {
	{ GT_NEXT_OCL_AOT, GT_M_SINGLE_DEVICE_USE_AOT_COMPILATION, GT_M_GJIT,
	  "run-time builds of source or IL with one device in use" },
	{ GT_NEXT_OCL_RESEND, GT_M_OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL, GT_M_GXCOPY_H2D,
	  "uploads of bytes read back from a device, unchanged" },
	{ GT_NEXT_OCL_RESTRICT, GT_M_KERNEL_PARAMS_NOT_ALIASED, GT_ADVICE_END,
	  "launches with buffer arguments that do not overlap" },
	{ GT_NEXT_OCL_CONTEXTS, GT_M_KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS, GT_ADVICE_END,
	  "first launches in a context other than the kernel's first" },
	{ GT_NEXT_OCL_INORDER, GT_M_INORDER_QUEUE, GT_ADVICE_END, "in-order queues created" },
	{ GT_NEXT_OCL_DEVICES, GT_M_ALL_DEVICES_NOT_USED, GT_ADVICE_END,
	  "contexts leaving a device of a platform unused" },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

static int run(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;

	for (size_t r = 0; r < N_ROWS; r++) {
		const uint64_t *v = c->excl[rows[r].count];

		for (uint32_t i = 0; i < p->n_nodes; i++) {
			uint64_t t = rows[r].time != GT_ADVICE_END ? c->excl[rows[r].time][i] : 0;
			struct gt_next *n;

			if (!v[i])
				continue;
			if (!(n = gt_advice__add(c, rows[r].kind, i)))
				return -ENOMEM;
			snprintf(n->why, sizeof(n->why), "%s: %" PRIu64, rows[r].what, v[i]);
			if (!t)
				continue;
			n->time_ns = t;
			gt_advice__saves(c, n, t, 1);
		}
	}
	return 0;
}

static const enum gt_metric triggers[] = {
	GT_M_SINGLE_DEVICE_USE_AOT_COMPILATION, GT_M_OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL,
	GT_M_KERNEL_PARAMS_NOT_ALIASED,	      GT_M_KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS,
	GT_M_INORDER_QUEUE,		      GT_M_ALL_DEVICES_NOT_USED,
	GT_ADVICE_END,
};
static const struct gt_advice_need needs[] = {
	{ GT_M_SINGLE_DEVICE_USE_AOT_COMPILATION, GT_ADVICE_EXCL },
	{ GT_M_OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL, GT_ADVICE_EXCL },
	{ GT_M_KERNEL_PARAMS_NOT_ALIASED, GT_ADVICE_EXCL },
	{ GT_M_KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS, GT_ADVICE_EXCL },
	{ GT_M_INORDER_QUEUE, GT_ADVICE_EXCL },
	{ GT_M_ALL_DEVICES_NOT_USED, GT_ADVICE_EXCL },
	{ GT_M_GJIT, GT_ADVICE_EXCL },
	{ GT_M_GXCOPY_H2D, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_opencl = {
	.name = "opencl",
	.triggers = triggers,
	.needs = needs,
	.run = run,
};
