/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the merged run (report/merge.c, run-codec.c) and what is
 * derived from it (derive.c, views.c): statistics over processes and
 * threads, unification by path, profiles that repeat a context or a metric
 * name, merging in any order and across a byte encoding, importance
 * metrics, and the flat and bottom-up views.
 *
 * `test_merge` runs every test in a child process; `test_merge NAME` runs
 * one in place.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "tests/unit/test.h"

#define MS 1000000ull

static uint32_t frame(struct gt_profile *p, uint32_t parent, const char *fn, uint32_t line)
{
	struct gt_prof_node n = { .parent = parent, .kind = GT_PNODE_FRAME, .name = gt_profile__string(p, fn),
				  .file = gt_profile__string(p, "app.c"), .line = line,
				  .module = gt_profile__module(p, "/bin/app") };

	return gt_profile__node(p, &n);
}

static uint32_t ph(struct gt_profile *p, uint32_t parent, const char *name)
{
	struct gt_prof_node n = { .parent = parent, .kind = GT_PNODE_PLACEHOLDER,
				  .name = gt_profile__string(p, name), .file = GT_NONE, .module = GT_NONE };

	return gt_profile__node(p, &n);
}

static void val(struct gt_profile *p, uint32_t node, uint32_t thread, const char *metric, uint64_t v)
{
	uint32_t m = gt_profile__metric(p, metric, !strncmp(metric, "SAMPLES", 7) ? "count" : "ns", NULL);

	CHECK(gt_profile__value(p, node, thread, m, v) == 0);
}

static void root(struct gt_profile *p, int threads)
{
	struct gt_prof_node r = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE, .file = GT_NONE,
				  .module = GT_NONE };

	gt_profile__init(p);
	CHECK(gt_profile__node(p, &r) == 0);
	for (int t = 0; t < threads; t++)
		CHECK(gt_profile__thread(p, (uint32_t)t, 100 + (uint32_t)t, t ? "worker" : "initial") != GT_NONE);
}

/*
 * Process r of a run: main > work holds (r + 1) * 10 ms of CPU on thread 0
 * and 5 ms on thread 1; main > io exists on rank 2 only; main > solve >
 * <gpu kernel> holds GKER (r + 1) * 4 ms, main > copy > <gpu copy h2d>
 * GXCOPY_H2D 2 ms.
 */
static void sample(struct gt_profile *p, int r)
{
	uint32_t main_, work, solve, kern, copy, h2d;
	char rank[8];

	root(p, 2);
	/* Metric order differs between processes: merged by name. */
	if (r % 2)
		gt_profile__metric(p, "GKER", "ns", NULL);
	snprintf(rank, sizeof(rank), "%d", r);
	gt_profile__set_meta(p, "rank", rank);
	gt_profile__set_meta(p, "pid", "4242");
	main_ = frame(p, 0, "main", 10);
	work = frame(p, main_, "work", 20);
	val(p, work, 0, "CPUTIME", (uint64_t)(r + 1) * 10 * MS);
	val(p, work, 1, "CPUTIME", 5 * MS);
	val(p, main_, 0, "CPUTIME", 1 * MS);
	if (r == 2)
		val(p, frame(p, main_, "io", 30), 0, "CPUTIME", 7 * MS);
	solve = frame(p, main_, "solve", 40);
	kern = ph(p, solve, "<gpu kernel>");
	val(p, kern, 0, "GKER", (uint64_t)(r + 1) * 4 * MS);
	copy = frame(p, main_, "copy", 50);
	h2d = ph(p, copy, "<gpu copy h2d>");
	val(p, h2d, 0, "GXCOPY_H2D", 2 * MS);
}

static uint32_t find(const struct gt_run *r, const char *name)
{
	for (uint32_t i = 0; i < r->t.n_nodes; i++) {
		const char *s = gt_profile__str(&r->t, r->t.nodes[i].name);

		if (s && !strcmp(s, name))
			return i;
	}
	return GT_NONE;
}

static const struct gt_cell *cell(const struct gt_run *r, const char *node, const char *metric)
{
	uint32_t n = find(r, node), m = gt_profile__find_metric(&r->t, metric);

	CHECK(n != GT_NONE && m != GT_NONE);
	return gt_run__cell(r, n, m);
}

static void build_run(struct gt_run *r, int n, const int *order)
{
	CHECK(gt_run__init(r, (uint32_t)n) == 0);
	for (int k = 0; k < n; k++) {
		struct gt_profile p;
		int i = order ? order[k] : k;

		sample(&p, i);
		CHECK(gt_run__add(r, (uint32_t)i, &p) == 0);
		gt_profile__fini(&p);
	}
}

static void test_stats(void)
{
	struct gt_run r;
	const struct gt_cell *c;

	build_run(&r, 3, NULL);
	CHECK_EQ_U(r.n_merged, 3);
	CHECK_EQ_U(r.n_threads, 6);
	/* work: per process 15, 25, 35 ms. */
	c = cell(&r, "work", "CPUTIME");
	CHECK(c);
	CHECK_EQ_U(c->incl.sum, 75 * MS);
	CHECK_EQ_U(gt_pstat__min(&c->incl, 3), 15 * MS);
	CHECK_EQ_U(c->incl.max, 35 * MS);
	CHECK_EQ_U(c->incl.min_at, 0);
	CHECK_EQ_U(c->incl.max_at, 2);
	CHECK(fabs(gt_pstat__mean(&c->incl, 3) - 25.0 * MS) < 1);
	CHECK(fabs(gt_pstat__imbalance(&c->incl, 3) - 1.4) < 1e-9);
	CHECK(fabs(gt_pstat__stddev(&c->incl, 3) - sqrt(200.0 / 3) * MS) < 1e3);
	/* threads: 10, 20, 30 ms and three times 5 ms. */
	CHECK_EQ_U(c->thr.n, 6);
	CHECK_EQ_U(c->thr.min, 5 * MS);
	CHECK_EQ_U(c->thr.max, 30 * MS);
	CHECK(c->per_proc && c->per_proc[0] == 15 * MS && c->per_proc[2] == 35 * MS);
	/* io only on rank 2: min over processes is 0. */
	c = cell(&r, "io", "CPUTIME");
	CHECK_EQ_U(c->incl.n, 1);
	CHECK_EQ_U(gt_pstat__min(&c->incl, 3), 0);
	CHECK(fabs(gt_pstat__imbalance(&c->incl, 3) - 3.0) < 1e-9);
	/* main: inclusive over its subtree, exclusive its own. */
	c = cell(&r, "main", "CPUTIME");
	CHECK_EQ_U(c->excl.sum, 3 * MS);
	CHECK_EQ_U(c->incl.sum, 75 * MS + 3 * MS + 7 * MS);
	CHECK_EQ_U(gt_proc__total(&r.procs[2], gt_profile__find_metric(&r.t, "CPUTIME")), 35 * MS + MS + 7 * MS);
	CHECK_EQ_U(r.procs[1].rank, 1);
	gt_run__fini(&r);
}

/* One profile with a context twice under one parent, a metric name twice
 * and values out of order: summed as if written once. */
static void test_repeats(void)
{
	struct gt_profile p;
	struct gt_run r;
	uint32_t a, b, m1, m2;
	const struct gt_cell *c;

	root(&p, 2);
	a = frame(&p, 0, "f", 1);
	b = frame(&p, 0, "f", 1); /* same path as a */
	m1 = gt_profile__metric(&p, "CPUTIME", "ns", NULL);
	m2 = gt_profile__metric(&p, "X", "ns", NULL);
	p.metrics[m2].name = p.metrics[m1].name; /* a second metric named CPUTIME */
	CHECK(gt_profile__value(&p, b, 1, m2, 7) == 0);
	CHECK(gt_profile__value(&p, a, 1, m1, 3) == 0);
	CHECK(gt_profile__value(&p, a, 0, m1, 5) == 0);
	CHECK(gt_run__init(&r, 1) == 0);
	CHECK(gt_run__add(&r, 0, &p) == 0);
	c = cell(&r, "f", "CPUTIME");
	CHECK_EQ_U(r.t.n_nodes, 2);
	CHECK_EQ_U(c->excl.sum, 15);
	CHECK_EQ_U(c->thr.n, 2); /* thread 1's 3 + 7 count once */
	CHECK_EQ_U(c->thr.max, 10);
	CHECK_EQ_U(c->thr.min, 5);
	gt_profile__fini(&p);
	gt_run__fini(&r);
}

/* Unknown functions stay apart by offset; known ones merge whatever it is. */
static void test_unify(void)
{
	struct gt_profile p, q;
	struct gt_run r;
	struct gt_prof_node n = { .parent = 0, .kind = GT_PNODE_FRAME, .name = GT_NONE, .file = GT_NONE };

	root(&p, 1);
	root(&q, 1);
	n.module = gt_profile__module(&p, "/lib/x.so");
	n.offset = 0x10;
	val(&p, gt_profile__node(&p, &n), 0, "CPUTIME", 1);
	n.module = gt_profile__module(&q, "/lib/x.so");
	n.offset = 0x20;
	val(&q, gt_profile__node(&q, &n), 0, "CPUTIME", 1);
	val(&q, frame(&q, 0, "g", 5), 0, "CPUTIME", 1);
	q.nodes[q.n_nodes - 1].offset = 99;
	val(&p, frame(&p, 0, "g", 5), 0, "CPUTIME", 1);
	CHECK(gt_run__init(&r, 2) == 0);
	CHECK(gt_run__add(&r, 0, &p) == 0);
	CHECK(gt_run__add(&r, 1, &q) == 0);
	CHECK_EQ_U(r.t.n_nodes, 4); /* root, x.so+0x10, x.so+0x20, g */
	CHECK_EQ_U(cell(&r, "g", "CPUTIME")->incl.n, 2);
	gt_profile__fini(&p);
	gt_profile__fini(&q);
	gt_run__fini(&r);
}

static int runs_equal(const struct gt_run *a, const struct gt_run *b)
{
	if (a->t.n_nodes != b->t.n_nodes || a->n_cells != b->n_cells || a->n_merged != b->n_merged)
		return 0;
	for (uint32_t i = 0; i < a->t.n_nodes; i++) {
		const char *na = gt_profile__str(&a->t, a->t.nodes[i].name);
		uint32_t j = GT_NONE;

		/* Node numbering follows merge order; match by name (unique here). */
		for (uint32_t k = 0; k < b->t.n_nodes && j == GT_NONE; k++) {
			const char *nb = gt_profile__str(&b->t, b->t.nodes[k].name);

			if ((!na && !nb) || (na && nb && !strcmp(na, nb)))
				j = k;
		}
		if (j == GT_NONE)
			return 0;
		for (uint32_t c = a->head[i]; c != GT_NONE; c = a->cells[c].next) {
			const struct gt_cell *x = &a->cells[c];
			const char *mname = gt_profile__str(&a->t, a->t.metrics[x->metric].name);
			const struct gt_cell *y = gt_run__cell(b, j, gt_profile__find_metric(&b->t, mname));

			if (!y || memcmp(&x->excl, &y->excl, sizeof(x->excl)) ||
			    memcmp(&x->incl, &y->incl, sizeof(x->incl)) || memcmp(&x->thr, &y->thr, sizeof(x->thr)) ||
			    memcmp(x->per_proc, y->per_proc, a->n_procs * sizeof(uint64_t)))
				return 0;
		}
	}
	return 1;
}

/* Any order, and merging halves through the byte encoding, give one run. */
static void test_absorb(void)
{
	static const int rev[] = { 3, 2, 1, 0 };
	struct gt_run all, back, a, b, dec;
	char *buf;
	size_t len;

	build_run(&all, 4, NULL);
	build_run(&back, 4, rev);
	CHECK(runs_equal(&all, &back));
	CHECK(gt_run__init(&a, 4) == 0);
	CHECK(gt_run__init(&b, 4) == 0);
	for (int i = 0; i < 4; i++) {
		struct gt_profile p;

		sample(&p, i);
		CHECK(gt_run__add(i % 2 ? &b : &a, (uint32_t)i, &p) == 0);
		gt_profile__fini(&p);
	}
	CHECK(gt_run__encode(&b, &buf, &len) == 0);
	CHECK(gt_run__decode(&dec, buf, len) == 0);
	CHECK(gt_run__absorb(&a, &dec) == 0);
	CHECK(runs_equal(&all, &a));
	CHECK_EQ_U(a.procs[3].rank, 3);
	/* Damaged bytes are refused, never read out of bounds. */
	for (size_t cut = 0; cut < len; cut += len / 50 + 1) {
		struct gt_run bad;

		if (gt_run__decode(&bad, buf, cut) == 0)
			gt_run__fini(&bad);
	}
	free(buf);
	gt_run__fini(&all);
	gt_run__fini(&back);
	gt_run__fini(&a);
	gt_run__fini(&b);
	gt_run__fini(&dec);
}

static void test_importance(void)
{
	struct gt_run r;
	struct gt_analysis a;
	char why[256];
	uint32_t solve, kern;

	build_run(&r, 3, NULL);
	CHECK(gt_analysis__init(&a, &r, NULL, why, sizeof(why)) == 0);
	CHECK(!strcmp(a.metric_name, "CPUTIME"));
	CHECK_EQ_U(a.C_P, 85 * MS);
	CHECK_EQ_U(a.G_P, 24 * MS + 6 * MS);
	CHECK(fabs(a.I_C_P - 55.0 / 85.0) < 1e-9);
	CHECK(a.bound == GT_BOUND_CPU);
	solve = find(&r, "solve");
	kern = find(&r, "<gpu kernel>");
	CHECK(fabs(gt_analysis__I_G(&a, solve) - 24.0 / 30.0) < 1e-9);
	CHECK(gt_analysis__I_C(&a, solve) == 0); /* no CPU time there */
	/* Sites: the kernel first, then the copy. */
	CHECK_EQ_U(a.n_sites, 2);
	CHECK_EQ_U(a.sites[0].node, kern);
	CHECK_EQ_U(a.sites[0].value, 24 * MS);
	CHECK(a.n_gpu_hot >= 2 && a.gpu_hot[a.n_gpu_hot - 1] == kern);
	CHECK(a.n_cpu_hot >= 2 && a.cpu_hot[1] == find(&r, "work"));
	/* Imbalance: main, where work (88% of it) and io (on rank 2 only) meet. */
	CHECK(a.n_imb >= 1 && a.imb[0] == find(&r, "main"));
	gt_analysis__fini(&a);
	CHECK(gt_analysis__init(&a, &r, "GPUOP", why, sizeof(why)) == 0);
	CHECK_EQ_U(a.total, 30 * MS);
	gt_analysis__fini(&a);
	CHECK(gt_analysis__init(&a, &r, "NOPE", why, sizeof(why)) == -ENOENT);
	CHECK(strstr(why, "CPUTIME") && strstr(why, "GPUOP"));
	gt_run__fini(&r);
}

static void test_views(void)
{
	struct gt_profile p;
	struct gt_run r;
	struct gt_analysis a;
	struct gt_flat fl;
	struct gt_bottom_up bu;
	char why[64];
	uint32_t m, f1, g, f2;
	uint64_t sum = 0;

	/* main > f > g > f (recursion): f's inclusive counts once. */
	root(&p, 1);
	m = frame(&p, 0, "main", 1);
	f1 = frame(&p, m, "f", 2);
	g = frame(&p, f1, "g", 3);
	f2 = frame(&p, g, "f", 2);
	val(&p, f1, 0, "CPUTIME", 10);
	val(&p, f2, 0, "CPUTIME", 20);
	val(&p, g, 0, "CPUTIME", 5);
	CHECK(gt_run__init(&r, 1) == 0);
	CHECK(gt_run__add(&r, 0, &p) == 0);
	CHECK(gt_analysis__init(&a, &r, NULL, why, sizeof(why)) == 0);
	CHECK(gt_flat__build(&fl, &a) == 0);
	CHECK(!strcmp(gt_profile__str(&r.t, r.t.nodes[fl.f[0].node].name), "f"));
	CHECK_EQ_U(fl.f[0].excl, 30);
	CHECK_EQ_U(fl.f[0].incl, 35);
	CHECK_EQ_U(fl.f[0].contexts, 2);
	for (uint32_t k = 0; k < fl.n; k++)
		sum += fl.f[k].excl;
	CHECK_EQ_U(sum, a.total);
	gt_flat__fini(&fl);
	CHECK(gt_bottom_up__build(&bu, &a) == 0);
	CHECK_EQ_U(bu.n_roots, 2);
	CHECK_EQ_U(bu.n[bu.roots[0]].value, 30); /* f */
	CHECK_EQ_U(bu.n[bu.roots[1]].value, 5);  /* g */
	gt_bottom_up__fini(&bu);
	gt_analysis__fini(&a);
	gt_profile__fini(&p);
	gt_run__fini(&r);
}

static const struct test_case cases[] = {
	{ "stats", test_stats },         { "repeats", test_repeats },       { "unify", test_unify },
	{ "absorb", test_absorb },       { "importance", test_importance }, { "views", test_views },
};

int main(int argc, char **argv)
{
	return test__main(cases, (int)(sizeof(cases) / sizeof(cases[0])), argc, argv);
}
