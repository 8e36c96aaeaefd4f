/* SPDX-License-Identifier: MIT */
/*
 * What the checks of "what to do next" share (next.c, next-code.c): the
 * metrics they read, per node, and the list they add to.
 */
#ifndef GT_REPORT_NEXT_INTERNAL_H
#define GT_REPORT_NEXT_INTERNAL_H

#include <stdint.h>

#include "report/next.h"
#include "report/sections.h"

/* The metrics the checks read, each per node (inclusive or exclusive). */
enum col {
	C_SAMPLES,
	C_LATENCY,
	C_ISSUED,
	C_NOT_SELECTED,
	C_MEMORY,
	C_LONG_SB,
	C_BARRIER,
	C_LG_THROTTLE,
	C_B_GLOBAL,
	C_B_LOCAL,
	C_I_GLOBAL,
	C_I_LOCAL,
	C_GKER,
	C_COUNT,
	C_OCC,
	C_OCC_SLOTS,
	C_OCC_REGS,
	C_OCC_SMEM,
	C_REGS,
	C_SMEM_ST,
	C_SMEM_DY,
	C_IDLE_CAUSE,
	C_CPU_IDLE,
	C_GPU_IDLE_CAUSE,
	C_PAGEABLE,
	C_H2D,
	C_H2D_BYTES,
	C_D2H,
	C_D2H_BYTES,
	C_RESENT,
	C_RESENT_COUNT,
	C_OMP_H2D,
	C_OMP_H2D_BYTES,
	C_H2D_COUNT,
	C_OMP_H2D_COUNT,
	C_LAUNCH_GAP,
	C_LAUNCH_GAP_COUNT,
	C_SC_INST,
	C_SC_THREADS,
	C_SERIAL,
	C_SERIAL_COUNT,
	C_SYNC_COUNT,
	C_B_CONVERT,
	C_B_LOOP,
	C_LOOP_ISSUED,
	C_BRANCH,
	C_I_CONTROL,
	C_I_OTHER,
	C_IDIOM_ISSUED,
	C_COLS
};

struct ctx {
	const struct gt_profile *p;
	const struct gt_sections_run *run;
	uint64_t *v[C_COLS];
	uint32_t *kern; /* per node: its kernel context */
	uint64_t *sum[C_COLS]; /* per kernel context, of the per_kernel columns */
	uint32_t *hot[C_COLS];
	int blame;      /* CPU_IDLE_CAUSE was measured */
	int patched;    /* instructions were counted: the kernels ran patched, their times are not theirs */
	int oom;
	struct gt_next_list *out;
	uint32_t cap;
};

/* Per kernel context: the sum over the nodes under it of an exclusive
 * per-kernel column, and the hottest of those nodes in *@hot (if not NULL). */
uint64_t gt_next__under(const struct ctx *c, uint32_t k, enum col col, uint32_t *hot);
/* A new piece of advice of @kind about @node, its "try" text the kind's;
 * NULL when out of memory (c->oom set). */
struct gt_next *gt_next__add(struct ctx *c, enum gt_next_kind kind, uint32_t node);
/* The kernel context @k's change estimated as T'/T = @ratio: its speedup,
 * and the program's gain (next.c says how). */
void gt_next__kernel_gain(const struct ctx *c, struct gt_next *n, uint32_t k, double ratio);
/* T'/T for a change that removes the share @f of the samples, all waiting,
 * and the share @cut of the issued instructions (next.c's first model). */
double gt_next__stall_ratio(double wr, double waiting, double f, double cut);

/* The code optimizers (next-code.c): loop unrolling, inlining, long-latency
 * arithmetic, for every kernel context. */
void gt_next__check_code(struct ctx *c);

#endif
