/* SPDX-License-Identifier: MIT */
/*
 * What the views show, derived from a merged run: per-context sums of the
 * chosen metric, the importance metrics of ICS'20 §5.1 and the top-down
 * guidance they give, and the contexts with the most load imbalance.
 *
 * Importance (C_i, G_i inclusive CPU and GPU time of context i, P the
 * whole program, j a GPU operation type):
 *   I_C,i   = max((C_i - G_i) / C_i, 0) * C_i / C_P = max(C_i - G_i, 0) / C_P
 *   I_G,i   = G_i / G_P
 *   I_G,i,j = G_i,j / G_P
 * C is CPUTIME; G the sum of the times the device spent on operations
 * (GKER, GXCOPY_*, GMSET: the metrics of unit ns among them). The host's
 * time in allocations, releases and synchronizations (GMEM, GSYNC) is CPU
 * time, not the device's: a program that waits is not GPU-bound for it.
 * Neither is a program that offloads to a host device (OpenMP's
 * generic-64bit): its kernels are CPU time, sampled as such, so the
 * operations under a host device's node count in no G.
 *
 * I_C,i is capped by its parent's: G_i only says how much device time the
 * context overlaps, not which of its CPU time, and a child that holds the
 * CPU time of a context whose device time covers it (a sibling's kernel) is
 * covered no less. Without the cap a child could read more important than
 * every one of its ancestors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/ptree.h"
#include "report/rank.h"
#include "report/report.h"
#include "core/metrics.h"

#define HOT_SHARE 0.5      /* a hot path goes on while a child holds this share of its parent */
#define IMB_MIN_SHARE 0.05 /* imbalance is looked for in contexts holding this share of the total */
#define IMB_CHAIN 0.9      /* a child with this share of its parent's value continues its chain */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static const char *metric_name(const struct gt_profile *t, uint32_t m)
{
	const char *s = m < t->n_metrics ? gt_profile__str(t, t->metrics[m].name) : NULL;

	return s ? s : "?";
}

static const char *metric_unit(const struct gt_profile *t, uint32_t m)
{
	return m < t->n_metrics ? gt_profile__str(t, t->metrics[m].unit) : NULL;
}

static int unit_is_ns(const struct gt_profile *t, uint32_t m)
{
	const char *u = metric_unit(t, m);

	return u && !strcmp(u, "ns");
}

/* The device's operation time metrics present (class device), in the
 * profile's order. */
static void find_gpu_metrics(struct gt_analysis *a)
{
	const struct gt_profile *t = a->t;

	for (uint32_t m = 0; m < t->n_metrics && a->n_gpu < GT_MAX_GPU_METRICS; m++)
		if (t->metrics[m].cls == GT_MC_DEVICE && unit_is_ns(t, m))
			a->gpu_metric[a->n_gpu++] = m;
}

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * Leaves the operations of host devices out of every Gj (inclusive, per
 * node): each outermost host device node's sums come off its ancestors,
 * and its subtree reads 0. Sets on_host, H_P and host_device. Nodes come
 * parents first (core/profile.c checks it on load).
 */
static int drop_host_devices(struct gt_analysis *a)
{
	const struct gt_profile *t = a->t;
	uint8_t *host = a->on_host = calloc(a->n_nodes ? a->n_nodes : 1, 1);

	if (!host)
		return -ENOMEM;
	for (uint32_t i = 1; i < a->n_nodes; i++) {
		const char *type;

		if (host[t->nodes[i].parent]) {
			host[i] = 1;
			continue;
		}
		if (!(type = gt_ptree__host_device(t, i)))
			continue;
		host[i] = 1;
		for (uint32_t j = 0; j < a->n_gpu; j++) {
			uint64_t v = a->Gj[j][i];

			if (v && !a->host_device)
				a->host_device = type;
			a->H_P = add_sat(a->H_P, v);
			for (uint32_t up = t->nodes[i].parent;; up = t->nodes[up].parent) {
				a->Gj[j][up] = sub_sat(a->Gj[j][up], v);
				if (!up)
					break;
			}
		}
	}
	for (uint32_t i = 0; i < a->n_nodes; i++)
		if (host[i])
			for (uint32_t j = 0; j < a->n_gpu; j++)
				a->Gj[j][i] = 0;
	return 0;
}

static uint64_t metric_total(const struct gt_run *r, uint32_t m)
{
	const struct gt_cell *c = gt_run__cell(r, 0, m);

	return c ? c->incl.sum : 0;
}

/* Per-node sums of metric m (exclusive and inclusive); either may be NULL. */
static void fill_sums(const struct gt_run *r, uint32_t m, uint64_t *excl, uint64_t *incl)
{
	for (uint32_t i = 0; i < r->t.n_nodes; i++) {
		const struct gt_cell *c = gt_run__cell(r, i, m);

		if (excl)
			excl[i] = c ? c->excl.sum : 0;
		if (incl)
			incl[i] = c ? c->incl.sum : 0;
	}
}

static int choose_metric(struct gt_analysis *a, const char *want, char *err, size_t errlen)
{
	const struct gt_profile *t = a->t;
	uint32_t m;

	if (want && !strcmp(want, "GPUOP")) {
		if (!a->n_gpu || !a->G_P) {
			snprintf(err, errlen, "no GPU operations were measured in this run (GPUOP is empty)");
			return -ENOENT;
		}
		a->metric = GT_METRIC_GPUOP;
		return 0;
	}
	if (want) {
		m = gt_profile__find_metric(t, want);
		if (m == GT_NONE) {
			size_t at = (size_t)snprintf(err, errlen, "no metric %s in this run; measured:", want);

			for (uint32_t k = 0; k < t->n_metrics && at < errlen; k++)
				if (metric_total(a->run, k))
					at += (size_t)snprintf(err + at, errlen - at, " %s", metric_name(t, k));
			if (a->G_P && at < errlen)
				snprintf(err + at, errlen - at, " GPUOP");
			return -ENOENT;
		}
		a->metric = m;
		return 0;
	}
	m = gt_profile__find_metric(t, "CPUTIME");
	if (m != GT_NONE && metric_total(a->run, m)) {
		a->metric = m;
		return 0;
	}
	if (a->G_P) {
		a->metric = GT_METRIC_GPUOP;
		return 0;
	}
	for (int pass = 0; pass < 2; pass++)
		for (m = 0; m < t->n_metrics; m++)
			if ((pass || unit_is_ns(t, m)) && metric_total(a->run, m)) {
				a->metric = m;
				return 0;
			}
	a->metric = gt_profile__find_metric(t, "CPUTIME");
	if (a->metric == GT_NONE && t->n_metrics)
		a->metric = 0;
	return 0;
}

/* From the root down, the child with the largest key while it holds at
 * least HOT_SHARE of its parent's; with stop_at_site, ends at a GPU
 * operation. */
static int hot_path(const struct gt_analysis *a, const uint64_t *key, int stop_at_site, uint32_t **out,
		    uint32_t *n_out)
{
	uint32_t *path = malloc((a->n_nodes ? a->n_nodes : 1) * sizeof(*path)), n = 0, cur = 0;

	if (!path)
		return -ENOMEM;
	for (;;) {
		uint32_t best = GT_NONE;

		if (stop_at_site && cur && gt_analysis__is_gpu_placeholder(a, cur))
			break;
		for (uint32_t c = a->first[cur]; c != GT_NONE; c = a->next[c])
			if (key[c] && (best == GT_NONE || key[c] > key[best]))
				best = c;
		if (best == GT_NONE || (double)key[best] < HOT_SHARE * (double)key[cur])
			break;
		path[n++] = best;
		cur = best;
	}
	*out = path;
	*n_out = n;
	return 0;
}

struct scored {
	double score;
	uint32_t node;
};

static int by_score(const void *x, const void *y)
{
	const struct scored *a = x, *b = y;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int site_cmp(const void *x, const void *y)
{
	const struct gt_gpu_site *a = x, *b = y;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->j < b->j ? -1 : a->j > b->j;
}

/* Operation sites: the outermost placeholders with GPU time and no frame
 * with GPU time below them (a call site's <gpu kernel>, <omp target>, …);
 * what is below a site (an <omp target>'s <omp kernel>) is part of it. */
static int find_sites(struct gt_analysis *a, uint8_t *is_site)
{
	const struct gt_profile *t = a->t;
	uint8_t *frame_g = calloc(a->n_nodes ? a->n_nodes : 1, 1);
	uint8_t *in_site = calloc(a->n_nodes ? a->n_nodes : 1, 1);
	uint32_t n = 0, cap = 0;

	if (!frame_g || !in_site) {
		free(frame_g);
		free(in_site);
		return -ENOMEM;
	}
	for (uint32_t i = a->n_nodes; i-- > 0;) {
		if (gt_pnode__is_frame(t->nodes[i].kind) && a->G[i])
			frame_g[i] = 1;
		if (i && frame_g[i])
			frame_g[t->nodes[i].parent] = 1;
	}
	for (uint32_t i = 1; i < a->n_nodes; i++) {
		uint32_t up = t->nodes[i].parent;

		is_site[i] = t->nodes[i].kind == GT_PNODE_PLACEHOLDER && a->G[i] && !frame_g[i] && !in_site[up];
		in_site[i] = is_site[i] || in_site[up];
		if (is_site[i])
			for (uint32_t j = 0; j < a->n_gpu; j++)
				cap += a->Gj[j][i] != 0;
	}
	free(frame_g);
	free(in_site);
	a->sites = malloc((cap ? cap : 1) * sizeof(*a->sites));
	if (!a->sites)
		return -ENOMEM;
	for (uint32_t i = 1; i < a->n_nodes; i++)
		for (uint32_t j = 0; is_site[i] && j < a->n_gpu; j++)
			if (a->Gj[j][i])
				a->sites[n++] = (struct gt_gpu_site){ .node = i, .j = j, .value = a->Gj[j][i] };
	qsort(a->sites, n, sizeof(*a->sites), site_cmp);
	a->n_sites = n;
	return 0;
}

/*
 * Contexts whose processes (or threads) lose the most time to imbalance,
 * n * (max - mean), largest first. Across processes (inclusive values),
 * a chain of contexts that hold the same time is one place: from the root
 * down, a context is taken when none of its children holds IMB_CHAIN of
 * its value, else its children are looked at. Across threads (exclusive
 * values), every context counts on its own.
 */
static int imbalance(struct gt_analysis *a, int threads, uint32_t **out, uint32_t *n_out)
{
	const struct gt_run *r = a->run;
	struct scored *s = malloc((a->n_nodes ? a->n_nodes : 1) * sizeof(*s));
	uint32_t *stack = malloc((a->n_nodes ? a->n_nodes : 1) * sizeof(*stack));
	uint32_t n = 0, sp = 0, *idx = NULL;
	double min = IMB_MIN_SHARE * (double)a->total;

	if (!s || !stack)
		goto out_free;
	if (threads) {
		for (uint32_t i = 0; i < a->n_nodes; i++) {
			const struct gt_cell *c = gt_analysis__cell(a, i);
			double score;

			if (!c || c->thr.n < 2 || (double)c->excl.sum < min)
				continue;
			score = (double)c->thr.max * (double)c->thr.n - (double)c->excl.sum;
			if (score > 0)
				s[n++] = (struct scored){ score, i };
		}
	} else if (r->n_merged >= 2 && a->n_nodes) {
		stack[sp++] = 0;
		while (sp) {
			uint32_t i = stack[--sp], dominant = 0;
			const struct gt_cell *c = gt_analysis__cell(a, i);

			if (!c || (double)c->incl.sum < min)
				continue;
			for (uint32_t k = a->first[i]; k != GT_NONE; k = a->next[k])
				dominant |= (double)a->incl[k] >= IMB_CHAIN * (double)a->incl[i];
			if (i == 0 || dominant) {
				for (uint32_t k = a->first[i]; k != GT_NONE; k = a->next[k])
					stack[sp++] = k;
				continue;
			}
			if ((double)c->incl.max * r->n_merged > (double)c->incl.sum)
				s[n++] = (struct scored){ (double)c->incl.max * r->n_merged - (double)c->incl.sum, i };
		}
	}
	qsort(s, n, sizeof(*s), by_score);
	idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!idx)
		goto out_free;
	for (uint32_t k = 0; k < n; k++)
		idx[k] = s[k].node;
	*out = idx;
	*n_out = n;
out_free:
	free(stack);
	free(s);
	return idx ? 0 : -ENOMEM;
}

static const struct gt_run *sort_run; /* qsort has no context argument */

static int by_rank(const void *x, const void *y)
{
	const struct gt_proc *a = &sort_run->procs[*(const uint32_t *)x], *b = &sort_run->procs[*(const uint32_t *)y];
	uint64_t ra = (uint64_t)a->rank, rb = (uint64_t)b->rank; /* no rank (-1) last */

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

int gt_analysis__init(struct gt_analysis *a, const struct gt_run *r, const char *metric, char *err,
		      size_t errlen)
{
	size_t n;
	uint8_t *is_site = NULL;
	int rc = -ENOMEM;

	memset(a, 0, sizeof(*a));
	a->run = r;
	a->t = &r->t;
	a->n_nodes = r->t.n_nodes;
	a->cpu_metric = gt_profile__find_metric(&r->t, "CPUTIME");
	n = a->n_nodes ? a->n_nodes : 1;
	a->first = malloc(n * sizeof(*a->first));
	a->next = malloc(n * sizeof(*a->next));
	a->excl = calloc(n, sizeof(*a->excl));
	a->incl = calloc(n, sizeof(*a->incl));
	a->C = calloc(n, sizeof(*a->C));
	a->G = calloc(n, sizeof(*a->G));
	a->U = calloc(n, sizeof(*a->U));
	if (!a->first || !a->next || !a->excl || !a->incl || !a->C || !a->G || !a->U)
		goto out_fail;
	memset(a->first, 0xff, n * sizeof(*a->first));
	memset(a->next, 0xff, n * sizeof(*a->next));
	for (uint32_t i = a->n_nodes; i-- > 1;) {
		a->next[i] = a->first[r->t.nodes[i].parent];
		a->first[r->t.nodes[i].parent] = i;
	}

	find_gpu_metrics(a);
	for (uint32_t j = 0; j < a->n_gpu; j++) {
		if (!(a->Gj[j] = calloc(n, sizeof(uint64_t))))
			goto out_fail;
		fill_sums(r, a->gpu_metric[j], NULL, a->Gj[j]);
	}
	if (drop_host_devices(a))
		goto out_fail;
	for (uint32_t j = 0; j < a->n_gpu; j++)
		for (uint32_t i = 0; i < a->n_nodes; i++)
			a->G[i] = add_sat(a->G[i], a->Gj[j][i]);
	if (a->cpu_metric != GT_NONE)
		fill_sums(r, a->cpu_metric, NULL, a->C);
	for (uint32_t i = 0; i < a->n_nodes; i++) {
		uint64_t u = sub_sat(a->C[i], a->G[i]);

		a->U[i] = i && a->U[r->t.nodes[i].parent] < u ? a->U[r->t.nodes[i].parent] : u;
	}
	a->C_P = a->n_nodes ? a->C[0] : 0;
	a->G_P = a->n_nodes ? a->G[0] : 0;
	a->I_C_P = a->C_P ? (a->C_P > a->G_P ? (double)(a->C_P - a->G_P) / (double)a->C_P : 0.0) : 0.0;
	if (!a->C_P && !a->G_P)
		a->bound = GT_BOUND_NOTHING;
	else if (!a->G_P)
		a->bound = GT_BOUND_CPU_ONLY;
	else
		a->bound = a->I_C_P >= 0.5 ? GT_BOUND_CPU : GT_BOUND_GPU;

	rc = choose_metric(a, metric, err, errlen);
	if (rc)
		goto out_fail;
	rc = -ENOMEM;
	if (a->metric == GT_METRIC_GPUOP) {
		a->metric_name = "GPUOP";
		a->metric_unit = "ns";
		for (uint32_t j = 0; j < a->n_gpu; j++) {
			uint64_t *ex = calloc(n, sizeof(*ex));

			if (!ex)
				goto out_fail;
			fill_sums(r, a->gpu_metric[j], ex, NULL);
			for (uint32_t i = 0; i < a->n_nodes; i++)
				if (!a->on_host[i])
					a->excl[i] = add_sat(a->excl[i], ex[i]);
			free(ex);
		}
		memcpy(a->incl, a->G, n * sizeof(*a->incl));
	} else if (a->metric != GT_NONE) {
		a->metric_name = metric_name(&r->t, a->metric);
		a->metric_unit = metric_unit(&r->t, a->metric);
		fill_sums(r, a->metric, a->excl, a->incl);
	} else {
		a->metric_name = "CPUTIME";
		a->metric_unit = "ns";
	}
	a->total = a->n_nodes ? a->incl[0] : 0;

	is_site = calloc(n, 1);
	if (!is_site)
		goto out_fail;
	if (hot_path(a, a->U, 0, &a->cpu_hot, &a->n_cpu_hot) || find_sites(a, is_site) ||
	    hot_path(a, a->G, 1, &a->gpu_hot, &a->n_gpu_hot))
		goto out_fail;
	if (imbalance(a, 0, &a->imb, &a->n_imb) || imbalance(a, 1, &a->timb, &a->n_timb))
		goto out_fail;
	a->proc_order = malloc((r->n_procs ? r->n_procs : 1) * sizeof(*a->proc_order));
	if (!a->proc_order)
		goto out_fail;
	for (uint32_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].state == GT_PROC_MERGED)
			a->proc_order[a->n_proc_order++] = i;
	sort_run = r;
	qsort(a->proc_order, a->n_proc_order, sizeof(*a->proc_order), by_rank);
	sort_run = NULL;
	free(is_site);
	return 0;
out_fail:
	free(is_site);
	gt_analysis__fini(a);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

void gt_analysis__fini(struct gt_analysis *a)
{
	free(a->first);
	free(a->next);
	free(a->excl);
	free(a->incl);
	free(a->C);
	free(a->G);
	free(a->U);
	free(a->on_host);
	for (uint32_t j = 0; j < GT_MAX_GPU_METRICS; j++)
		free(a->Gj[j]);
	free(a->cpu_hot);
	free(a->gpu_hot);
	free(a->sites);
	free(a->imb);
	free(a->timb);
	free(a->proc_order);
	memset(a, 0, sizeof(*a));
}

double gt_analysis__I_C(const struct gt_analysis *a, uint32_t i)
{
	return a->C_P ? (double)a->U[i] / (double)a->C_P : 0.0;
}

double gt_analysis__I_G(const struct gt_analysis *a, uint32_t i)
{
	return a->G_P ? (double)a->G[i] / (double)a->G_P : 0.0;
}

const struct gt_cell *gt_analysis__cell(const struct gt_analysis *a, uint32_t node)
{
	if (a->metric == GT_METRIC_GPUOP || a->metric == GT_NONE)
		return NULL;
	return gt_run__cell(a->run, node, a->metric);
}

int gt_analysis__is_gpu_placeholder(const struct gt_analysis *a, uint32_t node)
{
	for (uint32_t k = 0; k < a->n_sites; k++)
		if (a->sites[k].node == node)
			return 1;
	return 0;
}

int gt_analysis__children(const struct gt_analysis *a, uint32_t node, uint32_t **out, uint32_t *n_out)
{
	uint32_t n = 0;
	struct gt_ranked *k;

	for (uint32_t c = a->first[node]; c != GT_NONE; c = a->next[c])
		n += a->incl[c] != 0;
	k = malloc((n ? n : 1) * sizeof(*k));
	n = 0;
	for (uint32_t c = a->first[node]; k && c != GT_NONE; c = a->next[c])
		if (a->incl[c])
			k[n++] = (struct gt_ranked){ a->incl[c], c };
	*n_out = n;
	return gt_ranked__nodes(k, n, out);
}
