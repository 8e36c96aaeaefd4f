/* SPDX-License-Identifier: MIT */
/*
 * A check of "what to do next": one row of the registry (registry.c). A
 * check names the metrics it reads, by enum gt_metric, and the registry
 * loads them once for all checks; a check reads a metric it did not name
 * at its peril (a NULL column), never as a silent column of zeros.
 *
 * A check matches what the measurements show, estimates the change's
 * T'/T with a model of model.h, and explains it (why: the figures, todo:
 * the kind's "try" text or its own). Kernel checks get each kernel
 * context with its PC-sample shares; the others read the whole tree.
 */
#ifndef GT_REPORT_ADVICE_CHECK_H
#define GT_REPORT_ADVICE_CHECK_H

#include <stdint.h>

#include "core/metrics.h"
#include "report/advice/model.h"
#include "report/next.h"
#include "report/sections.h"

/* The thresholds every kernel check shares. */
#define GT_ADVICE_MIN_SAMPLES 1000 /* a kernel context with fewer PC samples gets no sample-based advice */
#define GT_ADVICE_MIN_SHARE 0.10   /* the least share of a kernel's samples (or instructions) an advice explains */
#define GT_ADVICE_MIN_SPEEDUP 1.05 /* the least speedup an advice with a threshold on it must promise */

/* How a check reads a metric: its exclusive or inclusive value per node,
 * or the exclusive one summed over each kernel context's nodes too
 * (gt_advice__under). */
enum gt_advice_read {
	GT_ADVICE_EXCL = 1,
	GT_ADVICE_INCL = 2,
	GT_ADVICE_PER_KERNEL = 4 | GT_ADVICE_EXCL,
};

struct gt_advice_need {
	enum gt_metric m;
	unsigned how; /* enum gt_advice_read, or'ed */
};

/* The end of a list of needs or triggers. */
#define GT_ADVICE_END GT_M__COUNT

struct gt_advice_ctx {
	const struct gt_profile *p;
	const struct gt_sections_run *run;
	uint64_t *excl[GT_M__COUNT]; /* per node, for the metrics some check needs */
	uint64_t *incl[GT_M__COUNT];
	uint64_t *sum[GT_M__COUNT];  /* per kernel context, of the per-kernel ones */
	uint32_t *hot[GT_M__COUNT];  /* per kernel context, its node with the most of it */
	uint32_t *kern;              /* per node: its kernel context (GT_NONE: none) */
	int blame;   /* CPU_IDLE_CAUSE was measured */
	int patched; /* instructions were counted: the kernels ran patched, their times are not theirs */
	int oom;
	struct gt_next_list *out;
	uint32_t cap;
};

/* A kernel context as the kernel checks see it. */
struct gt_advice_kernel {
	uint32_t k;     /* its node */
	int sampled;    /* GT_ADVICE_MIN_SAMPLES PC samples or more, and a kernel time */
	double S;       /* its PC samples */
	double iss;     /* of which issued */
	double wr;      /* W_R: the share of its cycles the schedulers issued in (sampled only) */
	double waiting; /* w: the share of its samples that waited (sampled only) */
};

struct gt_advice_check {
	const char *name;
	/* Run only where the profile has one of these metrics (GT_ADVICE_END ends). */
	const enum gt_metric *triggers;
	/* What it reads (GT_ADVICE_END ends). */
	const struct gt_advice_need *needs;
	/* Called for each kernel context, in node order; or NULL. */
	void (*kernel)(struct gt_advice_ctx *c, const struct gt_advice_kernel *k);
	/* Called once, after kernel; or NULL. 0 or -ENOMEM. */
	int (*run)(struct gt_advice_ctx *c);
};

/* The checks, one per file under report/advice/checks/. */
extern const struct gt_advice_check gt_advice_check_kernel_stalls, gt_advice_check_occupancy,
	gt_advice_check_code, gt_advice_check_divergence, gt_advice_check_pageable, gt_advice_check_resent,
	gt_advice_check_launch_bound, gt_advice_check_serial_sync, gt_advice_check_overlap,
	gt_advice_check_opencl;
/* The parallel checks: larger blocks (threads.c), smaller ones (blocks.c). */
extern const struct gt_advice_check gt_advice_check_threads, gt_advice_check_blocks;
extern const struct gt_advice_check gt_advice_check_shared;
/* OpenMP regions, their tasks and the serial time between them. */
extern const struct gt_advice_check gt_advice_check_openmp;
/* MPI ranks waiting at collectives. */
extern const struct gt_advice_check gt_advice_check_mpi;

/* Per kernel context k: the sum over the nodes under it of per-kernel
 * metric m, and the hottest of those nodes in *hot (the first of equals;
 * GT_NONE: none), if hot is not NULL. */
uint64_t gt_advice__under(const struct gt_advice_ctx *c, uint32_t k, enum gt_metric m, uint32_t *hot);
/* A new piece of advice of kind about node, its "try" text the kind's;
 * NULL when out of memory (c->oom set). */
struct gt_next *gt_advice__add(struct gt_advice_ctx *c, enum gt_next_kind kind, uint32_t node);
/* The time saved, summed over the run's processes, per process, and the
 * program's speedup; upper: the saving assumes all of it was on the
 * critical path. */
void gt_advice__saves(const struct gt_advice_ctx *c, struct gt_next *n, uint64_t saved, int upper);
/* Kernel context k's change estimated as T'/T = ratio: its speedup, and
 * the program's gain (registry.c says how). */
void gt_advice__kernel_gain(const struct gt_advice_ctx *c, struct gt_next *n, uint32_t k, double ratio);
/* A new piece of advice of kind about kernel context k, whose S samples
 * hold the samples it explains, at line (GT_NONE: the launch), its change
 * estimated as T'/T = ratio (gt_advice__kernel_gain); NULL when out of
 * memory. */
struct gt_next *gt_advice__kernel_item(struct gt_advice_ctx *c, enum gt_next_kind kind, uint32_t k, uint32_t line,
				       uint64_t samples, double S, double ratio);

#endif
