/* SPDX-License-Identifier: MIT */
/*
 * The code optimizers of "what to do next" (GPA (CGO'21), section 5): changes
 * to a kernel's code whose samples the instruction blamer and the kernel's
 * structure single out, estimated with the first model (model.h),
 *   T' / T = W_R (1 - c) + (1 - W_R) (w - f) / w,
 * f the share of the samples whose waiting the change removes or hides.
 *
 * - Loop unrolling: the waits a loop's instructions had for results of
 *   the same iteration that no recurrence ties to the last one are
 *   independent from one iteration to the next: unrolled GT_GPO_UNROLL_BY
 *   times, that many iterations' waits overlap, and the waiting shrinks to
 *   1 / GT_GPO_UNROLL_BY of it, or u / GT_GPO_UNROLL_BY in a loop unrolled
 *   u times already. GPO_UNROLL (gpu/sass/blame.c) counts the samples
 *   hidden so: f = M / S, M the loop's GPO_UNROLL samples. (GPA's latency hiding within a scope,
 *   f = min(M, A) / S with A the loop's issued samples, counts only the
 *   waits that other work can fill, not the ones that overlap each other:
 *   a loop of loads at low occupancy would gain nothing by it.)
 * - Inlining: a device function called, not inlined, waits alone, and
 *   its calls and returns wait for their branch targets. Inlined, the
 *   branches go (B_f, the samples under the function's node waiting for a
 *   branch target), and its other waits W_f - B_f overlap: called in a
 *   loop, with the other calls' waits, as the loop's unrolling overlaps
 *   them (the compiler unrolls a loop of inlined code as any other; 1 -
 *   1 / GT_GPO_UNROLL_BY of them hidden), elsewhere as far as the kernel's
 *   issued instructions A fill them: f = (B_f + (1 - 1 / GT_GPO_UNROLL_BY)
 *   (W_f - B_f)) / S in a loop, (B_f + min(W_f - B_f, A)) / S elsewhere,
 *   W_f the waiting samples under the function's node; and the call's own
 *   instructions go, c their share of the kernel's issued samples: the
 *   branches and moves (GPI_CONTROL, GPI_OTHER) at the call's line and in
 *   the function outside its loops. Not for a function with a recursive
 *   call under it (a node "NAME [recursive call]"), which cannot be
 *   inlined.
 * - Long-latency arithmetic (GPA's strength reduction and fast math): the
 *   waits for conversions and the long-latency idioms (GPB_CONVERT: the
 *   F2F of a double constant in float code; an integer division by a
 *   run-time value, a precise sinf or expf inline: gt_sass__blame) and
 *   every sample in the CUDA math library's subroutines (64-bit division
 *   and modulo, precise division's slow paths: functions named __cuda_* or
 *   __internal_*) go: f their waiting samples, c the idioms' and the
 *   subroutines' issued instructions (GPO_IDIOM_ISSUED: an idiom's but the
 *   one or two that stand for its cheaper form), which the cheaper forms
 *   replace by one or two. Matched when those waits are MIN_SHARE of the
 *   samples, or those instructions MIN_SHARE of the issued ones.
 *
 * The nodes under a kernel come from gpu/cupti/pcsamp-place.c: "loop at
 * FILE:LINE", "inlined at FILE:LINE", lines "FILE:LINE" (or "pc 0x..."),
 * and under a call's line the called function's node.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "report/advice/check.h"

#define MIN_SHARE GT_ADVICE_MIN_SHARE
#define MIN_SPEEDUP GT_ADVICE_MIN_SPEEDUP

static const char *name_of(const struct gt_profile *p, uint32_t i)
{
	return p->nodes[i].kind == GT_PNODE_NAME ? gt_profile__str(p, p->nodes[i].name) : NULL;
}

static int is_loop(const char *s)
{
	return s && !strncmp(s, GT_GPU_NODE_LOOP, strlen(GT_GPU_NODE_LOOP));
}

/* A GPU source line's node: "FILE:LINE" or "pc 0x...". */
static int is_line(const char *s)
{
	const char *colon;

	if (!s)
		return 0;
	if (!strncmp(s, GT_GPU_NODE_PC, strlen(GT_GPU_NODE_PC)))
		return 1;
	if (is_loop(s) || !strncmp(s, GT_GPU_NODE_INLINED, strlen(GT_GPU_NODE_INLINED)) || !(colon = strrchr(s, ':')) || !colon[1])
		return 0;
	for (const char *d = colon + 1; *d; d++)
		if (*d < '0' || *d > '9')
			return 0;
	return 1;
}

/* The CUDA math library's own subroutines, which its inlined code calls. */
static int is_math(const char *s)
{
	return s && (!strncmp(s, "__cuda_", 7) || !strncmp(s, "__internal_", 11));
}

/* A call that stays within its function's cycle of the call graph:
 * "NAME [recursive call]" under the call's line. */
static int is_recursion(const char *s)
{
	size_t n = s ? strlen(s) : 0, m = strlen(GT_GPU_NODE_RECURSIVE);

	return n >= m && !strcmp(s + n - m, GT_GPU_NODE_RECURSIVE);
}

/* A device function called at a line of the kernel: its node hangs under
 * the line of its call. */
static int is_callee(const struct gt_profile *p, uint32_t i)
{
	uint32_t up = p->nodes[i].parent;
	const char *s = name_of(p, i);

	return s && !is_line(s) && !is_recursion(s) && up != GT_NONE && is_line(name_of(p, up));
}

struct code {
	struct gt_advice_ctx *c;
	uint64_t *loop_m, *loop_a; /* per loop node: GPO_UNROLL and issued samples of all under it */
	uint32_t *callee;	   /* per node: the outermost called function it is under, or GT_NONE */
	uint8_t *recursive;	   /* per called function's node: a recursive call under it */
};

/* The node under @top with the most of exclusive column @col (GT_NONE if none). */
static uint32_t hottest_under(const struct code *x, uint32_t top, enum gt_metric col)
{
	const struct gt_profile *p = x->c->p;
	uint32_t best = GT_NONE;

	for (uint32_t j = top + 1; j < p->n_nodes; j++) {
		uint32_t a = j;

		if (x->c->kern[j] != x->c->kern[top] || !x->c->excl[col][j])
			continue;
		while (a != GT_NONE && a > top)
			a = p->nodes[a].parent;
		if (a == top && (best == GT_NONE || x->c->excl[col][j] > x->c->excl[col][best]))
			best = j;
	}
	return best;
}

static void check_unroll(struct code *x, uint32_t k, double S, double wr, double waiting)
{
	const struct gt_profile *p = x->c->p;
	uint32_t best = GT_NONE;
	double best_f = 0;
	struct gt_next *n;

	for (uint32_t i = k + 1; i < p->n_nodes; i++) {
		double f = (double)x->loop_m[i] / S;

		/* The innermost of equals: it comes later. */
		if (x->c->kern[i] == k && is_loop(name_of(p, i)) && f >= MIN_SHARE && f >= best_f) {
			best = i;
			best_f = f;
		}
	}
	if (best == GT_NONE)
		return;
	double ratio = gt_advice_model__stall(wr, waiting, best_f, 0);

	if (ratio > 1.0 / MIN_SPEEDUP ||
	    !(n = gt_advice__kernel_item(x->c, GT_NEXT_GPU_UNROLL, k, hottest_under(x, best, GT_M_GPO_UNROLL),
					 x->loop_m[best], S, ratio)))
		return;
	snprintf(n->why, sizeof(n->why),
		 "%.1f%% of the kernel's PC samples are waits, in the %s, for results of the same iteration "
		 "that no recurrence ties to the last one, which unrolling it %d times would hide (its "
		 "instructions issued in %.1f%% of the samples)",
		 100.0 * (double)x->loop_m[best] / S, name_of(p, best), GT_GPO_UNROLL_BY,
		 100.0 * (double)x->loop_a[best] / S);
}

/* The issued samples of a call's own instructions, for the called
 * function's node @f: the branches and moves at the call's line and in
 * the function, outside the function's loops. */
static double call_cost(const struct code *x, uint32_t f)
{
	const struct gt_profile *p = x->c->p;
	uint64_t *const *v = x->c->excl;
	uint32_t line = p->nodes[f].parent;
	double sum = (double)v[GT_M_GPI_CONTROL][line] + (double)v[GT_M_GPI_OTHER][line];

	for (uint32_t j = f; j < p->n_nodes; j++) {
		uint32_t a = j;

		if (x->callee[j] != f)
			continue;
		while (a != f && !is_loop(name_of(p, a)))
			a = p->nodes[a].parent;
		if (a == f)
			sum += (double)v[GT_M_GPI_CONTROL][j] + (double)v[GT_M_GPI_OTHER][j];
	}
	return sum;
}

static void check_inline(struct code *x, uint32_t k, double S, double wr, double waiting, double iss)
{
	const struct gt_profile *p = x->c->p;
	uint64_t *const *in = x->c->incl;

	for (uint32_t i = k + 1; i < p->n_nodes; i++) {
		double w, f, ratio, br;
		struct gt_next *n;
		uint32_t a;
		int in_loop;

		if (x->c->kern[i] != k || x->callee[i] != i || is_math(name_of(p, i)) || x->recursive[i])
			continue;
		w = (double)in[GT_M_GPC_SAMPLES][i] - (double)in[GT_M_GPC_ISSUED][i] - (double)in[GT_M_GPC_NOT_SELECTED][i];
		if (w / S < MIN_SHARE)
			continue;
		br = (double)in[GT_M_GPS_BRANCH][i];
		br = br < w ? br : w;
		for (a = p->nodes[i].parent; a != GT_NONE && a != k && !is_loop(name_of(p, a)); a = p->nodes[a].parent)
			;
		in_loop = a != GT_NONE && a != k;
		f = (br + (in_loop ? (1.0 - 1.0 / GT_GPO_UNROLL_BY) * (w - br) : (w - br < iss ? w - br : iss))) / S;
		ratio = gt_advice_model__stall(wr, waiting, f, iss > 0 ? call_cost(x, i) / iss : 0);
		if (ratio > 1.0 / MIN_SPEEDUP ||
		    !(n = gt_advice__kernel_item(x->c, GT_NEXT_GPU_INLINE, k, p->nodes[i].parent, (uint64_t)w, S, ratio)))
			continue;
		snprintf(n->why, sizeof(n->why),
			 in_loop ? "%.1f%% of the kernel's PC samples wait in %s, called here in a loop and not "
				   "inlined, %.1f%% of them for its calls' and returns' branches; inlined, the branches "
				   "go and the calls' other waits overlap as the loop's iterations do"
				 : "%.1f%% of the kernel's PC samples wait in %s, called here and not inlined, %.1f%% of "
				   "them for its calls' and returns' branches; inlined, the branches go and the "
				   "kernel's issued instructions fill its other waits",
			 100.0 * w / S, name_of(p, i), 100.0 * br / S);
	}
}

static void check_math(struct code *x, uint32_t k, double S, double wr, double waiting, double iss)
{
	const struct gt_profile *p = x->c->p;
	uint64_t *const *in = x->c->incl, *const *ex = x->c->excl;
	double conv = 0, sub = 0, sub_iss = 0, sub_wait = 0, idiom_iss = 0;
	uint32_t hot_conv = GT_NONE, hot_sub = GT_NONE;
	struct gt_next *n;

	for (uint32_t i = k + 1; i < p->n_nodes; i++) {
		uint32_t f = x->callee[i];

		if (x->c->kern[i] != k)
			continue;
		if (f != GT_NONE && is_math(name_of(p, f))) {
			if (f == i) { /* the subroutine's node: all under it */
				sub += (double)in[GT_M_GPC_SAMPLES][i];
				sub_iss += (double)in[GT_M_GPC_ISSUED][i];
				sub_wait += (double)in[GT_M_GPC_SAMPLES][i] - (double)in[GT_M_GPC_ISSUED][i] -
					    (double)in[GT_M_GPC_NOT_SELECTED][i];
				if (in[GT_M_GPC_SAMPLES][i] && (hot_sub == GT_NONE || in[GT_M_GPC_SAMPLES][i] > in[GT_M_GPC_SAMPLES][hot_sub]))
					hot_sub = i;
			}
			continue;
		}
		conv += (double)ex[GT_M_GPB_CONVERT][i];
		idiom_iss += (double)ex[GT_M_GPO_IDIOM_ISSUED][i];
		if (ex[GT_M_GPB_CONVERT][i] && (hot_conv == GT_NONE || ex[GT_M_GPB_CONVERT][i] > ex[GT_M_GPB_CONVERT][hot_conv]))
			hot_conv = i;
	}
	/* Their waits, or the issue slots they take: an idiom in an
	 * issue-bound kernel waits little but fills its schedulers. */
	if ((conv + sub) / S < MIN_SHARE && (iss <= 0 || (sub_iss + idiom_iss) / iss < MIN_SHARE))
		return;
	double ratio = gt_advice_model__stall(wr, waiting, (conv + sub_wait) / S, iss > 0 ? (sub_iss + idiom_iss) / iss : 0);

	if (ratio > 1.0 / MIN_SPEEDUP ||
	    !(n = gt_advice__kernel_item(x->c, GT_NEXT_GPU_MATH, k,
					 sub >= conv && hot_sub != GT_NONE ? p->nodes[hot_sub].parent : hot_conv,
					 (uint64_t)(conv + sub), S, ratio)))
		return;
	if (hot_sub != GT_NONE && sub >= 0.001 * S)
		snprintf(n->why, sizeof(n->why),
			 "%.1f%% of the kernel's PC samples wait on conversions, divisions or precise math "
			 "functions; %.1f%% are in the math library's subroutines (%s the most); those idioms "
			 "issued %.1f%% of its instructions",
			 100.0 * conv / S, 100.0 * sub / S, name_of(p, hot_sub),
			 iss > 0 ? 100.0 * (sub_iss + idiom_iss) / iss : 0.0);
	else
		snprintf(n->why, sizeof(n->why),
			 "%.1f%% of the kernel's PC samples wait on conversions, divisions by a run-time value or "
			 "precise math functions (sinf, expf); they issued %.1f%% of its instructions",
			 100.0 * conv / S, iss > 0 ? 100.0 * idiom_iss / iss : 0.0);
}

static int run(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	size_t nn = p->n_nodes ? p->n_nodes : 1;
	struct code x = { .c = c };

	x.loop_m = calloc(nn, sizeof(*x.loop_m));
	x.loop_a = calloc(nn, sizeof(*x.loop_a));
	x.callee = malloc(nn * sizeof(*x.callee));
	x.recursive = calloc(nn, sizeof(*x.recursive));
	if (!x.loop_m || !x.loop_a || !x.callee || !x.recursive) {
		c->oom = 1;
		goto out;
	}
	/* Parents come first (core/profile.h): one pass sets what a node is
	 * under, and adds its loop samples to every loop around it. */
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint32_t up = p->nodes[i].parent, k = c->kern[i];

		x.callee[i] = GT_NONE;
		if (k == GT_NONE || k == i)
			continue;
		x.callee[i] = up != GT_NONE && x.callee[up] != GT_NONE ? x.callee[up] : is_callee(p, i) ? i : GT_NONE;
		if (x.callee[i] != GT_NONE && is_recursion(name_of(p, i)))
			x.recursive[x.callee[i]] = 1;
		if (!c->excl[GT_M_GPO_UNROLL][i] && !c->excl[GT_M_GPC_ISSUED][i])
			continue;
		for (uint32_t a = i; a != GT_NONE && a != k; a = p->nodes[a].parent)
			if (is_loop(name_of(p, a))) {
				x.loop_m[a] += c->excl[GT_M_GPO_UNROLL][i];
				x.loop_a[a] += c->excl[GT_M_GPC_ISSUED][i];
			}
	}
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		uint64_t *const *in = c->incl, *const *ex = c->excl;
		double S = (double)in[GT_M_GPC_SAMPLES][k], wr, waiting, iss = (double)in[GT_M_GPC_ISSUED][k];

		if (c->kern[k] != k || S < GT_ADVICE_MIN_SAMPLES || !ex[GT_M_GKER][k])
			continue;
		wr = (S - (double)in[GT_M_GPC_LATENCY][k]) / S;
		waiting = 1.0 - (iss + (double)in[GT_M_GPC_NOT_SELECTED][k]) / S;
		check_unroll(&x, k, S, wr, waiting);
		check_inline(&x, k, S, wr, waiting, iss);
		check_math(&x, k, S, wr, waiting, iss);
	}
out:
	free(x.loop_m);
	free(x.loop_a);
	free(x.callee);
	free(x.recursive);
	return 0;
}

static const enum gt_metric triggers[] = { GT_M_GPC_SAMPLES, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GPC_SAMPLES, GT_ADVICE_INCL },
	{ GT_M_GPC_ISSUED, GT_ADVICE_INCL | GT_ADVICE_EXCL },
	{ GT_M_GPC_LATENCY, GT_ADVICE_INCL },
	{ GT_M_GPC_NOT_SELECTED, GT_ADVICE_INCL },
	{ GT_M_GPS_BRANCH, GT_ADVICE_INCL },
	{ GT_M_GPB_CONVERT, GT_ADVICE_EXCL },
	{ GT_M_GPO_UNROLL, GT_ADVICE_EXCL },
	{ GT_M_GPO_IDIOM_ISSUED, GT_ADVICE_EXCL },
	{ GT_M_GPI_CONTROL, GT_ADVICE_EXCL },
	{ GT_M_GPI_OTHER, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

/* Unrolling, inlining and long-latency arithmetic share the kernels'
 * loops and called functions, found in one pass: one check of three kinds. */
const struct gt_advice_check gt_advice_check_code = {
	.name = "code",
	.triggers = triggers,
	.needs = needs,
	.run = run,
};
