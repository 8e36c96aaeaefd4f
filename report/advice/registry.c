/* SPDX-License-Identifier: MIT */
/*
 * The checks of "what to do next" (next.h), and what runs them: which
 * metrics the run's checks need, loaded once; each check's kernel pass
 * over the kernel contexts, then its whole-profile pass; then the ranking.
 *
 * The program: the GPU time a change saves shortens the run only where the
 * CPU waited for it; blame shifting measured that wait per kernel
 * (CPU_IDLE_CAUSE, docs/BLAME.md). Without it, the GPU time saved is an
 * upper bound. The program's speedup is wall / (wall - saved), per process.
 */
#include "report/next.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/advice/check.h"
#include "report/ptree.h"

/* The checks, in the order they run; the ranking does not depend on it. A
 * new check is a file under checks/ and a row here. */
static const struct gt_advice_check *const checks[] = {
	&gt_advice_check_kernel_stalls,
	&gt_advice_check_occupancy,
	&gt_advice_check_code,
	&gt_advice_check_divergence,
	&gt_advice_check_pageable,
	&gt_advice_check_resent,
	&gt_advice_check_launch_bound,
	&gt_advice_check_serial_sync,
	&gt_advice_check_overlap,
	&gt_advice_check_opencl,
	&gt_advice_check_threads,
	&gt_advice_check_blocks,
	&gt_advice_check_shared,
	&gt_advice_check_openmp,
	&gt_advice_check_mpi,
};
#define N_CHECKS (sizeof(checks) / sizeof(checks[0]))

/* What the registry itself reads for every check: a kernel's time and the
 * CPU's wait for it (the program's gain), and the samples that say which
 * kernel contexts were sampled. */
static const struct gt_advice_need own_needs[] = {
	{ GT_M_GKER, GT_ADVICE_EXCL },
	{ GT_M_CPU_IDLE_CAUSE, GT_ADVICE_EXCL },
	{ GT_M_GPC_SAMPLES, GT_ADVICE_INCL },
	{ GT_M_GPC_ISSUED, GT_ADVICE_INCL },
	{ GT_M_GPC_LATENCY, GT_ADVICE_INCL },
	{ GT_M_GPC_NOT_SELECTED, GT_ADVICE_INCL },
	{ GT_M_GSC_INST, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

static int has(const struct gt_profile *p, enum gt_metric m)
{
	return gt_profile__find_metric(p, gt_metric_descs[m].name) != GT_NONE;
}

static int triggered(const struct gt_profile *p, const struct gt_advice_check *k)
{
	for (const enum gt_metric *m = k->triggers; *m != GT_ADVICE_END; m++)
		if (has(p, *m))
			return 1;
	return 0;
}

int gt_next__applies(const struct gt_profile *p)
{
	for (size_t i = 0; i < N_CHECKS; i++)
		if (triggered(p, checks[i]))
			return 1;
	return 0;
}

uint64_t gt_advice__under(const struct gt_advice_ctx *c, uint32_t k, enum gt_metric m, uint32_t *hot)
{
	if (hot)
		*hot = c->hot[m][k];
	return c->sum[m][k];
}

/* Loads what needs asks for that is not loaded yet. */
static int load(struct gt_advice_ctx *c, const struct gt_advice_need *needs)
{
	const struct gt_profile *p = c->p;
	size_t n = p->n_nodes ? p->n_nodes : 1;

	for (const struct gt_advice_need *d = needs; d->m != GT_ADVICE_END; d++) {
		enum gt_metric m = d->m;
		const char *name = gt_metric_descs[m].name;

		if ((d->how & GT_ADVICE_EXCL) && !c->excl[m] && !(c->excl[m] = gt_ptree__excl(p, name)))
			return -ENOMEM;
		if ((d->how & GT_ADVICE_INCL) && !c->incl[m] && !(c->incl[m] = gt_ptree__incl(p, name)))
			return -ENOMEM;
		if ((d->how & GT_ADVICE_PER_KERNEL) != GT_ADVICE_PER_KERNEL || c->sum[m])
			continue;
		/* The sums and hottest nodes per kernel context, in one pass. */
		c->sum[m] = calloc(n, sizeof(*c->sum[m]));
		c->hot[m] = malloc(n * sizeof(*c->hot[m]));
		if (!c->sum[m] || !c->hot[m])
			return -ENOMEM;
		for (uint32_t i = 0; i < p->n_nodes; i++)
			c->hot[m][i] = GT_NONE;
		for (uint32_t i = 0; i < p->n_nodes; i++) {
			uint32_t k = c->kern[i];
			uint64_t x = c->excl[m][i];

			if (k == GT_NONE || !x)
				continue;
			c->sum[m][k] += x;
			if (c->hot[m][k] == GT_NONE || x > c->excl[m][c->hot[m][k]])
				c->hot[m][k] = i;
		}
	}
	return 0;
}

struct gt_next *gt_advice__add(struct gt_advice_ctx *c, enum gt_next_kind kind, uint32_t node)
{
	struct gt_next *n;

	if (c->out->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 16;
		struct gt_next *v = realloc(c->out->v, cap * sizeof(*v));

		if (!v) {
			c->oom = 1;
			return NULL;
		}
		c->out->v = v;
		c->cap = cap;
	}
	n = &c->out->v[c->out->n++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->node = node;
	n->line = GT_NONE;
	snprintf(n->todo, sizeof(n->todo), "%s", gt_next__todo(kind));
	return n;
}

void gt_advice__saves(const struct gt_advice_ctx *c, struct gt_next *n, uint64_t saved, int upper)
{
	uint32_t procs = c->run->processes ? c->run->processes : 1;

	n->upper_bound = upper;
	n->saved_ns = saved / procs;
	if (c->run->wall_ns > n->saved_ns)
		n->program = gt_advice_model__program((double)c->run->wall_ns, (double)n->saved_ns);
}

/* A kernel change estimated as T'/T = ratio. Its GPU time saved counts
 * for the program as far as the CPU waited for the kernel, when blame
 * measured it. A run that counted instructions ran its kernels patched:
 * their speedup holds, their times are not theirs, and the program's gain
 * is left unestimated. */
void gt_advice__kernel_gain(const struct gt_advice_ctx *c, struct gt_next *n, uint32_t k, double ratio)
{
	uint64_t t = c->excl[GT_M_GKER][k], gpu_saved, waited;

	if (ratio <= 0 || ratio >= 1)
		ratio = 1;
	n->time_ns = t;
	n->speedup = 1.0 / ratio;
	if (c->patched)
		return;
	gpu_saved = (uint64_t)((double)t * (1.0 - ratio));
	waited = c->excl[GT_M_CPU_IDLE_CAUSE][k];
	if (c->blame)
		gt_advice__saves(c, n, waited < gpu_saved ? waited : gpu_saved, 0);
	else
		gt_advice__saves(c, n, gpu_saved, 1);
}

struct gt_next *gt_advice__kernel_item(struct gt_advice_ctx *c, enum gt_next_kind kind, uint32_t k, uint32_t line,
				       uint64_t samples, double S, double ratio)
{
	struct gt_next *n = gt_advice__add(c, kind, k);

	if (!n)
		return NULL;
	n->line = line;
	n->samples = samples;
	n->kernel_samples = (uint64_t)S;
	gt_advice__kernel_gain(c, n, k, ratio);
	return n;
}

/* An item estimated to speed the program up by less than this is held
 * back: listed after every item estimated higher and after the items with
 * no estimate, whose gain may be larger. */
#define HELD_BACK 1.02

/* The ranking's bands: 0 estimated at HELD_BACK or more; 1 not estimated
 * (program 0); 2 estimated under HELD_BACK. */
static int band(const struct gt_next *n)
{
	return n->program >= HELD_BACK ? 0 : n->program <= 0 ? 1 : 2;
}

/* The ranking: by band, then by the wall time saved per process (an
 * unestimated item may still know it, as an upper bound on a run with no
 * wall time), then by the speedup of what it acts on (changes to one kernel
 * whose savings the CPU's wait for it caps alike: the larger change first),
 * then by the time acted on; node and kind break ties. */
static int by_gain(const void *a, const void *b)
{
	const struct gt_next *x = a, *y = b;

	if (band(x) != band(y))
		return band(x) < band(y) ? -1 : 1;
	if (x->saved_ns != y->saved_ns)
		return x->saved_ns > y->saved_ns ? -1 : 1;
	if (x->speedup != y->speedup)
		return x->speedup > y->speedup ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/* Each kernel context's shares, then the checks' kernel passes. */
static void kernels(struct gt_advice_ctx *c, const struct gt_advice_check *k)
{
	const struct gt_profile *p = c->p;

	for (uint32_t i = 0; i < p->n_nodes && !c->oom; i++) {
		struct gt_advice_kernel x = { .k = i };

		if (c->kern[i] != i)
			continue;
		x.S = (double)c->incl[GT_M_GPC_SAMPLES][i];
		x.iss = (double)c->incl[GT_M_GPC_ISSUED][i];
		x.sampled = x.S >= GT_ADVICE_MIN_SAMPLES && c->excl[GT_M_GKER][i];
		if (x.S > 0) {
			x.wr = (x.S - (double)c->incl[GT_M_GPC_LATENCY][i]) / x.S;
			x.waiting = 1.0 - (x.iss + (double)c->incl[GT_M_GPC_NOT_SELECTED][i]) / x.S;
		}
		k->kernel(c, &x);
	}
}

int gt_next__build(const struct gt_profile *p, const struct gt_sections_run *run, struct gt_next_list *out)
{
	struct gt_advice_ctx *c = calloc(1, sizeof(*c));
	int run_it[N_CHECKS], err = -ENOMEM;

	out->v = NULL;
	out->n = 0;
	if (!gt_next__applies(p))
		goto out_empty;
	if (!c)
		return -ENOMEM;
	c->p = p;
	c->run = run;
	c->out = out;
	if (!(c->kern = gt_ptree__kernels(p)) || load(c, own_needs))
		goto out_free;
	for (size_t i = 0; i < N_CHECKS; i++)
		if ((run_it[i] = triggered(p, checks[i])) && load(c, checks[i]->needs))
			goto out_free;
	c->blame = has(p, GT_M_CPU_IDLE_CAUSE);
	/* Counted, not merely listed: a PC-sampling run's profile names the
	 * count metrics among the sampled ones and leaves them empty. */
	for (uint32_t i = 0; i < p->n_nodes && !c->patched; i++)
		c->patched = c->excl[GT_M_GSC_INST][i] != 0;
	for (size_t i = 0; i < N_CHECKS; i++) {
		if (!run_it[i])
			continue;
		if (checks[i]->kernel)
			kernels(c, checks[i]);
		if (c->oom || (checks[i]->run && checks[i]->run(c)) || c->oom)
			goto out_free;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_gain);
	err = 0;
out_free:
	for (int m = 0; m < GT_M__COUNT; m++) {
		free(c->excl[m]);
		free(c->incl[m]);
		free(c->sum[m]);
		free(c->hot[m]);
	}
	free(c->kern);
	free(c);
	if (err)
		gt_next__fini(out);
	return err;
out_empty:
	free(c);
	return 0;
}

void gt_next__fini(struct gt_next_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
