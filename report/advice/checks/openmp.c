/* SPDX-License-Identifier: MIT */
/*
 * What the OpenMP host measurements show (docs/ADVICE.md, "OpenMP"): per
 * parallel region, the threads' waits at its barriers (imbalance), a cost
 * of starting and joining its team larger than its work (fork/join), the
 * team's time around its explicit tasks (tasks too fine); and the serial
 * CPU time between the regions (Amdahl).
 *
 * A region is an "<omp parallel>" node, its metrics summed over its
 * instances and threads (report/sections.c reads them alike, and its
 * regions table shows the same work and wait). Regions that implement a
 * host kernel (under "<omp kernel>") are the kernel's, not the program's
 * constructs, and get no advice here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/advice/check.h"
#include "report/ptree.h"

/* A region, a serial part or tasks acting on less than this share of the
 * run's wall time (per process) gets no line. */
#define OMP_MIN_WALL 0.01
/* A region is too short for its team when its mean work per thread is
 * under this share of an instance's wall time: most of the instance is
 * the team's start, barriers and join. */
#define OMP_SHORT_SHARE 0.5
/* ... and that work under this (ns): starting and joining a team costs
 * microseconds (tens under the tool's callbacks), so a region of longer
 * work whose threads wait most of its time waits for a slow or preempted
 * thread, which the imbalance check prices. */
#define OMP_SHORT_WORK 50000.0
/* Tasks are too fine when the team's time around them is this share or
 * more of its time in them. */
#define OMP_TASK_SHARE 0.5
/* Serial places listed, at most. */
#define OMP_SERIAL_MAX 3

static int named(const struct gt_profile *p, uint32_t i, const char *name)
{
	const char *s = gt_profile__str(p, p->nodes[i].name);

	return p->nodes[i].kind == GT_PNODE_PLACEHOLDER && s && !strcmp(s, name);
}

/* Per node: the region it is in or is (GT_NONE: none); *nested set for a
 * region inside another region; kernel[i] whether it is under a host
 * kernel's "<omp kernel>", idle[i] under "<omp idle>" (a worker between
 * regions). Parents come before their children (core/profile.h). */
struct omp_tree {
	uint32_t *region;
	unsigned char *kernel, *idle, *nested;
};

static int omp_tree__build(const struct gt_profile *p, struct omp_tree *t)
{
	size_t n = p->n_nodes ? p->n_nodes : 1;

	t->region = malloc(n * sizeof(*t->region));
	t->kernel = calloc(n, 1);
	t->idle = calloc(n, 1);
	t->nested = calloc(n, 1);
	if (!t->region || !t->kernel || !t->idle || !t->nested)
		return -1;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint32_t up = p->nodes[i].parent;
		int par = named(p, i, "<omp parallel>");

		t->region[i] = GT_NONE;
		if (i && up != GT_NONE) {
			t->region[i] = t->region[up];
			t->kernel[i] = t->kernel[up] || named(p, i, "<omp kernel>");
			t->idle[i] = t->idle[up] || named(p, i, "<omp idle>");
		}
		if (par) {
			t->nested[i] = t->region[i] != GT_NONE;
			t->region[i] = i;
		}
	}
	return 0;
}

static void omp_tree__fini(struct omp_tree *t)
{
	free(t->region);
	free(t->kernel);
	free(t->idle);
	free(t->nested);
}

/* Per region node: its waits, those of the nodes in it but not in a region
 * nested in it (report/sections.c's regions table folds them alike), and
 * its explicit tasks' count and time. */
struct omp_sums {
	uint64_t *wait, *tasks, *task_ns;
};

static int omp_sums__build(const struct gt_advice_ctx *c, const struct omp_tree *t, struct omp_sums *s)
{
	const struct gt_profile *p = c->p;
	size_t n = p->n_nodes ? p->n_nodes : 1;

	s->wait = calloc(n, sizeof(*s->wait));
	s->tasks = calloc(n, sizeof(*s->tasks));
	s->task_ns = calloc(n, sizeof(*s->task_ns));
	if (!s->wait || !s->tasks || !s->task_ns)
		return -1;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint32_t r = t->region[i];

		if (r == GT_NONE)
			continue;
		s->wait[r] += c->excl[GT_M_OMP_WAIT][i];
		s->tasks[r] += c->excl[GT_M_OMP_EXPLICIT_TASKS][i];
		s->task_ns[r] += c->excl[GT_M_OMP_EXPLICIT_TASK_TIME][i];
	}
	return 0;
}

static void omp_sums__fini(struct omp_sums *s)
{
	free(s->wait);
	free(s->tasks);
	free(s->task_ns);
}

/* A region's change saving saved of its wall time par (summed over
 * processes): the region's speedup, and the program's gain. A nested
 * region's time is its encountering threads', which run side by side: its
 * saving is then an upper bound on the program's. */
static void region_gain(const struct gt_advice_ctx *c, struct gt_next *x, uint64_t par, uint64_t saved, int nested)
{
	x->time_ns = par;
	if (saved < par)
		x->speedup = (double)par / (double)(par - saved);
	gt_advice__saves(c, x, saved, nested);
}

static int worth(const struct gt_advice_ctx *c, uint64_t saved)
{
	uint32_t procs = c->run->processes ? c->run->processes : 1;

	return c->run->wall_ns && (double)saved / procs >= OMP_MIN_WALL * (double)c->run->wall_ns;
}

/* Says in x's why that the team's times it rests on are estimates: the
 * region's teams were timed as samples (OMP_PAR_TIME_SAMPLES). */
static void sampled_why(struct gt_next *x, uint64_t samples)
{
	size_t len = strlen(x->why);

	if (samples && len < sizeof(x->why))
		snprintf(x->why + len, sizeof(x->why) - len,
			 " (work and waits estimated from the %" PRIu64 " instances whose team was timed)", samples);
}

/*
 * Each region: too short for its team (fork/join), else imbalanced, and
 * tasks too fine in it. A region short enough for the first has waits
 * that are its barriers' own latency more than imbalance: it gets the
 * first only.
 */
static void regions(struct gt_advice_ctx *c, const struct omp_tree *t, const struct omp_sums *s)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl;

	for (uint32_t i = 0; i < p->n_nodes && !c->oom; i++) {
		uint64_t n = v[GT_M_OMP_PAR_COUNT][i], thr = v[GT_M_OMP_PAR_THREADS][i];
		uint64_t par = v[GT_M_OMP_PAR_TIME][i], work = v[GT_M_OMP_WORK][i], saved;
		uint64_t samples = v[GT_M_OMP_PAR_TIME_SAMPLES][i];
		double team, mean_work;
		struct gt_next *x;

		if (t->region[i] != i || t->kernel[i] || !n || !thr || !par)
			continue;
		team = (double)thr / (double)n;
		mean_work = (double)work / (double)thr;
		if (mean_work < OMP_SHORT_WORK && mean_work < OMP_SHORT_SHARE * (double)par / (double)n) {
			saved = (uint64_t)gt_advice_model__fork_join((double)par, (double)work, team);
			if (worth(c, saved) && (x = gt_advice__add(c, GT_NEXT_OMP_FORK_JOIN, i))) {
				region_gain(c, x, par, saved, 1);
				snprintf(x->why, sizeof(x->why),
					 "%" PRIu64 " instances of %.3f us each on %.1f threads, whose mean work is %.3f us: "
					 "the rest, %.3f us an instance, is the team's start, barriers and join",
					 n, (double)par / (double)n / 1e3, team, mean_work / 1e3,
					 ((double)par / (double)n - mean_work) / 1e3);
				sampled_why(x, samples);
			}
		} else if (team > 1) {
			saved = (uint64_t)gt_advice_model__imbalance((double)s->wait[i], team);
			if (saved < par && worth(c, saved) && (x = gt_advice__add(c, GT_NEXT_OMP_IMBALANCE, i))) {
				region_gain(c, x, par, saved, t->nested[i]);
				snprintf(x->why, sizeof(x->why),
					 "over %" PRIu64 " instances on %.1f threads the threads waited %.3f s at the "
					 "region's barriers, %.1f %% of their time in it: the slowest thread worked "
					 "%.3f ms an instance longer than their mean",
					 n, team, (double)s->wait[i] / 1e9,
					 100.0 * (double)s->wait[i] / (double)(work + s->wait[i]),
					 (double)saved / (double)n / 1e6);
				sampled_why(x, samples);
			}
		}
		if (s->tasks[i] && work > s->task_ns[i] &&
		    (double)(work - s->task_ns[i]) >= OMP_TASK_SHARE * (double)s->task_ns[i]) {
			saved = (uint64_t)gt_advice_model__tasks((double)work, (double)s->task_ns[i], team);
			if (worth(c, saved) && (x = gt_advice__add(c, GT_NEXT_OMP_TASKS, i))) {
				region_gain(c, x, par, saved, 1);
				snprintf(x->why, sizeof(x->why),
					 "%" PRIu64 " explicit tasks of %.3f us each on average; the team worked %.3f us "
					 "a task outside them (creating and scheduling them)",
					 s->tasks[i], (double)s->task_ns[i] / (double)s->tasks[i] / 1e3,
					 (double)(work - s->task_ns[i]) / (double)s->tasks[i] / 1e3);
				sampled_why(x, samples);
			}
		}
	}
}

/* A function's serial CPU time: its frame nodes of one parent and one
 * name (its lines) summed, named at the hottest. */
struct serial_row {
	uint32_t parent, name, at;
	uint64_t ns;
};

static int by_place(const void *a, const void *b)
{
	const struct serial_row *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int by_ns(const void *a, const void *b)
{
	const struct serial_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * The CPU time outside every parallel region, but a worker's between
 * regions ("<omp idle>") and the tool's own, by function context: run on
 * the team the program's longest region used, it would take 1 / team of
 * its time (Amdahl). The largest places, each worth a line.
 */
static int serial(struct gt_advice_ctx *c, const struct omp_tree *t)
{
	const struct gt_profile *p = c->p;
	const uint64_t *cpu = c->excl[GT_M_CPUTIME];
	struct serial_row *rows;
	uint32_t n = 0, m = 0, longest = GT_NONE;
	double team;

	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (t->region[i] == i && !t->kernel[i] && !t->nested[i] && c->excl[GT_M_OMP_PAR_COUNT][i] &&
		    (longest == GT_NONE || c->excl[GT_M_OMP_PAR_TIME][i] > c->excl[GT_M_OMP_PAR_TIME][longest]))
			longest = i;
	if (longest == GT_NONE)
		return 0;
	team = (double)c->excl[GT_M_OMP_PAR_THREADS][longest] / (double)c->excl[GT_M_OMP_PAR_COUNT][longest];
	if (team < 2)
		return 0;
	rows = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*rows));
	if (!rows)
		return -1;
	for (uint32_t i = 1; i < p->n_nodes; i++)
		if (cpu[i] && t->region[i] == GT_NONE && !t->idle[i] && !t->kernel[i] &&
		    gt_pnode__is_frame(p->nodes[i].kind) && !gt_ptree__tool_time(p, i))
			rows[n++] = (struct serial_row){ p->nodes[i].parent, p->nodes[i].name, i, cpu[i] };
	qsort(rows, n, sizeof(*rows), by_place);
	for (uint32_t k = 0; k < n; k++) {
		if (m && rows[m - 1].parent == rows[k].parent && rows[m - 1].name == rows[k].name) {
			/* Named at the hottest line known: code without one (a
			 * sanitizer's checks, line 0) says nothing to look at. */
			int known = p->nodes[rows[k].at].line != 0, had = p->nodes[rows[m - 1].at].line != 0;

			if (known > had || (known == had && rows[k].ns > cpu[rows[m - 1].at]))
				rows[m - 1].at = rows[k].at;
			rows[m - 1].ns += rows[k].ns;
		} else {
			rows[m++] = rows[k];
		}
	}
	qsort(rows, m, sizeof(*rows), by_ns);
	for (uint32_t k = 0; k < m && k < OMP_SERIAL_MAX && !c->oom; k++) {
		uint64_t saved = (uint64_t)gt_advice_model__amdahl((double)rows[k].ns, team);
		struct gt_next *x;

		if (!worth(c, saved) || !(x = gt_advice__add(c, GT_NEXT_OMP_SERIAL, rows[k].at)))
			continue;
		x->time_ns = rows[k].ns;
		x->speedup = team;
		gt_advice__saves(c, x, saved, 1);
		snprintf(x->why, sizeof(x->why),
			 "%.3f s of CPU time outside the parallel regions; the longest region ran on %.1f threads",
			 (double)rows[k].ns / 1e9, team);
	}
	free(rows);
	return 0;
}

static int check_openmp(struct gt_advice_ctx *c)
{
	struct omp_tree t = { 0 };
	struct omp_sums s = { 0 };
	int err = -ENOMEM;

	if (omp_tree__build(c->p, &t) || omp_sums__build(c, &t, &s))
		goto out;
	regions(c, &t, &s);
	if (!c->oom && serial(c, &t))
		goto out;
	err = 0;
out:
	if (err)
		c->oom = 1;
	omp_sums__fini(&s);
	omp_tree__fini(&t);
	return err;
}

static const enum gt_metric omp_triggers[] = { GT_M_OMP_PAR_COUNT, GT_ADVICE_END };
static const struct gt_advice_need omp_needs[] = {
	{ GT_M_OMP_PAR_TIME, GT_ADVICE_EXCL },
	{ GT_M_OMP_PAR_TIME_SAMPLES, GT_ADVICE_EXCL },
	{ GT_M_OMP_PAR_COUNT, GT_ADVICE_EXCL },
	{ GT_M_OMP_PAR_THREADS, GT_ADVICE_EXCL },
	{ GT_M_OMP_WORK, GT_ADVICE_EXCL },
	{ GT_M_OMP_WAIT, GT_ADVICE_EXCL },
	{ GT_M_OMP_EXPLICIT_TASKS, GT_ADVICE_EXCL },
	{ GT_M_OMP_EXPLICIT_TASK_TIME, GT_ADVICE_EXCL },
	{ GT_M_CPUTIME, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_openmp = {
	.name = "openmp",
	.triggers = omp_triggers,
	.needs = omp_needs,
	.run = check_openmp,
};
