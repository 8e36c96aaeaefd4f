/* SPDX-License-Identifier: MIT */
/*
 * Merging the profiles of a run, one at a time, into one tree with
 * statistics per context (report/report.h, docs/REPORT.md).
 *
 * Adding a profile costs time proportional to its size, whatever the size
 * of the run so far: its nodes are looked up in a hash of the merged nodes,
 * its values summed over threads and up its own tree in dense per-profile
 * arrays (one row per node, one column per metric it measured), and only
 * the nonzero results touch the run's cells. Profiles come from files: the
 * reader has checked their structure, and nothing here trusts more than
 * that (a node may repeat a sibling, a metric name may repeat).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/merge-internal.h"
#include "report/report.h"
#include "core/metrics.h"

#define UNMAPPED (GT_NONE - 1)
/* Dense rows of one profile are processed in column batches of at most
 * this many cells, so that a hostile profile (many nodes, many metrics)
 * cannot ask for their product. */
#define MAX_SLOTS (1u << 22)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Makes *arr hold at least n elements of size bytes; new ones are zero. */
static int ensure(void *arr, size_t *cap, size_t n, size_t size)
{
	void **a = arr;
	size_t c = *cap ? *cap : 64;
	void *q;

	if (n <= *cap)
		return 0;
	while (c < n) {
		if (c > SIZE_MAX / 2 / size)
			return -ENOMEM;
		c *= 2;
	}
	q = realloc(*a, c * size);
	if (!q)
		return -ENOMEM;
	memset((char *)q + *cap * size, 0, (c - *cap) * size);
	*a = q;
	*cap = c;
	return 0;
}

/* ---- statistics ---- */

static void pstat__add(struct gt_pstat *s, uint64_t v, uint32_t proc)
{
	unsigned __int128 sq = (unsigned __int128)v * v;

	if (!v)
		return;
	s->sum = add_sat(s->sum, v);
	s->sumsq = s->sumsq + sq < s->sumsq ? ~(unsigned __int128)0 : s->sumsq + sq;
	if (!s->n || v < s->min || (v == s->min && proc < s->min_at)) {
		s->min = v;
		s->min_at = proc;
	}
	if (!s->n || v > s->max || (v == s->max && proc < s->max_at)) {
		s->max = v;
		s->max_at = proc;
	}
	s->n++;
}

static void pstat__combine(struct gt_pstat *d, const struct gt_pstat *s)
{
	if (!s->n)
		return;
	if (!d->n) {
		*d = *s;
		return;
	}
	d->sum = add_sat(d->sum, s->sum);
	d->sumsq = d->sumsq + s->sumsq < d->sumsq ? ~(unsigned __int128)0 : d->sumsq + s->sumsq;
	if (s->min < d->min || (s->min == d->min && s->min_at < d->min_at)) {
		d->min = s->min;
		d->min_at = s->min_at;
	}
	if (s->max > d->max || (s->max == d->max && s->max_at < d->max_at)) {
		d->max = s->max;
		d->max_at = s->max_at;
	}
	d->n += s->n;
}

static void tstat__combine(struct gt_tstat *d, uint64_t min, uint64_t max, uint64_t n)
{
	if (!n)
		return;
	if (!d->n || min < d->min)
		d->min = min;
	if (!d->n || max > d->max)
		d->max = max;
	d->n += n;
}

/* ---- the run ---- */

int gt_run__init(struct gt_run *r, uint32_t n_procs)
{
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				     .file = GT_NONE, .module = GT_NONE };

	memset(r, 0, sizeof(*r));
	gt_profile__init(&r->t);
	r->n_procs = n_procs;
	r->detail = n_procs <= GT_DETAIL_MAX;
	r->procs = calloc(n_procs ? n_procs : 1, sizeof(*r->procs));
	r->s = calloc(1, sizeof(*r->s));
	r->head = malloc(64 * sizeof(*r->head));
	r->hashes = malloc(64 * sizeof(*r->hashes));
	r->cap_head = 64;
	if (!r->procs || !r->s || !r->head || !r->hashes || gt_profile__node(&r->t, &root) != 0) {
		gt_run__fini(r);
		return -ENOMEM;
	}
	r->head[0] = GT_NONE;
	for (uint32_t i = 0; i < n_procs; i++)
		r->procs[i].rank = -1;
	return 0;
}

static void proc__clear(struct gt_proc *p)
{
	for (uint32_t i = 0; i < p->n_meta; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	free(p->totals);
	p->meta = NULL;
	p->n_meta = 0;
	p->host = p->exe = p->cmdline = NULL;
	p->totals = NULL;
	p->n_totals = 0;
}

/* Copies n meta pairs (key, value) into p; value may be NULL. */
static int proc__set_meta(struct gt_proc *p, uint32_t n, const char *(*get)(const void *src, uint32_t i, int value),
			  const void *src)
{
	p->meta = calloc(n ? n : 1, sizeof(*p->meta));
	if (!p->meta)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const char *k = get(src, i, 0), *v = get(src, i, 1);

		p->n_meta = i + 1;
		if (!(p->meta[i].key = strdup(k ? k : "")) || (v && !(p->meta[i].value = strdup(v))))
			return -ENOMEM;
	}
	return 0;
}

static const char *meta_of_profile(const void *src, uint32_t i, int value)
{
	const struct gt_profile *p = src;

	return gt_profile__str(p, value ? p->meta[i].value : p->meta[i].key);
}

static const char *meta_of_proc(const void *src, uint32_t i, int value)
{
	const struct gt_proc *p = src;

	return value ? p->meta[i].value : p->meta[i].key;
}

void gt_run__fini(struct gt_run *r)
{
	struct gt_run_scratch *s = r->s;

	gt_profile__fini(&r->t);
	free(r->slots);
	free(r->hashes);
	free(r->head);
	for (uint32_t i = 0; r->cells && i < r->n_cells; i++)
		free(r->cells[i].per_proc);
	free(r->cells);
	for (uint32_t i = 0; r->procs && i < r->n_procs; i++) {
		proc__clear(&r->procs[i]);
		free(r->procs[i].file);
	}
	free(r->procs);
	if (s) {
		free(s->smap);
		free(s->modmap);
		free(s->metmap);
		free(s->col);
		free(s->cols);
		free(s->L);
		free(s->lmerged);
		free(s->lparent);
		free(s->stamp);
		free(s->loc);
		free(s->prev);
		free(s->dupl);
		free(s->slots);
		free(s->mv);
		free(s);
	}
	memset(r, 0, sizeof(*r));
}

const struct gt_cell *gt_run__cell(const struct gt_run *r, uint32_t node, uint32_t metric)
{
	if (node >= r->t.n_nodes)
		return NULL;
	for (uint32_t c = r->head[node]; c != GT_NONE; c = r->cells[c].next) {
		if (r->cells[c].metric == metric)
			return &r->cells[c];
		if (r->cells[c].metric > metric)
			break;
	}
	return NULL;
}

/* ---- nodes ---- */

/* What tells two nodes with the same parent apart: an unknown function's
 * offset, nothing else of the offset. */
uint64_t gt_run__node_koff(const struct gt_prof_node *n)
{
	return gt_pnode__is_frame(n->kind) && n->name == GT_NONE ? n->offset : 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

uint32_t gt_run__node_hash(const struct gt_prof_node *n)
{
	uint64_t h = mix(mix(mix(mix(0, n->parent), n->kind), n->name), n->file);

	h = mix(mix(mix(h, n->line), n->module), gt_run__node_koff(n));
	h *= 0xff51afd7ed558ccdull;
	return (uint32_t)(h ^ (h >> 32));
}

static int node_eq(const struct gt_prof_node *a, const struct gt_prof_node *b)
{
	return a->parent == b->parent && a->kind == b->kind && a->name == b->name && a->file == b->file &&
	       a->line == b->line && a->module == b->module && gt_run__node_koff(a) == gt_run__node_koff(b);
}

int gt_run__slots_grow(struct gt_run *r)
{
	uint32_t cap = r->slot_cap ? r->slot_cap * 2 : 1024, *ns;

	if (r->slot_cap >= (1u << 31))
		return -ENOMEM;
	ns = malloc((size_t)cap * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	memset(ns, 0xff, (size_t)cap * sizeof(*ns));
	for (uint32_t i = 0; i < r->slot_cap; i++) {
		uint32_t id = r->slots[i], h;

		if (id == GT_NONE)
			continue;
		for (h = r->hashes[id] & (cap - 1); ns[h] != GT_NONE; h = (h + 1) & (cap - 1))
			;
		ns[h] = id;
	}
	free(r->slots);
	r->slots = ns;
	r->slot_cap = cap;
	return 0;
}

/* Node id has k's path. Its offset stands for all the instructions merged
 * into it: the smallest, so that it does not depend on merge order. */
static uint32_t node__seen(struct gt_run *r, uint32_t id, const struct gt_prof_node *k)
{
	if (k->offset < r->t.nodes[id].offset)
		r->t.nodes[id].offset = k->offset;
	return id;
}

/* The node with k's path, added if new; GT_NONE when out of memory. */
static uint32_t node__get(struct gt_run *r, const struct gt_prof_node *k)
{
	uint32_t h, id, hash = gt_run__node_hash(k);

	if ((uint64_t)(r->slot_used + 1) * 2 > r->slot_cap && gt_run__slots_grow(r))
		return GT_NONE;
	for (h = hash & (r->slot_cap - 1); r->slots[h] != GT_NONE; h = (h + 1) & (r->slot_cap - 1))
		if (r->hashes[r->slots[h]] == hash && node_eq(&r->t.nodes[r->slots[h]], k))
			return node__seen(r, r->slots[h], k);
	if (r->t.n_nodes >= r->cap_head) {
		size_t cap = r->cap_head, hcap = r->cap_head;
		uint32_t old = r->cap_head;

		if (ensure(&r->head, &cap, (size_t)r->t.n_nodes + 1, sizeof(*r->head)) || cap > GT_NONE ||
		    ensure(&r->hashes, &hcap, cap, sizeof(*r->hashes)))
			return GT_NONE;
		r->cap_head = (uint32_t)cap;
		memset(r->head + old, 0xff, (cap - old) * sizeof(*r->head));
	}
	id = gt_profile__node(&r->t, k);
	if (id == GT_NONE)
		return GT_NONE;
	r->head[id] = GT_NONE;
	r->hashes[id] = hash;
	r->slots[h] = id;
	r->slot_used++;
	return id;
}

/* ---- cells ---- */

/*
 * The cell (node, metric), inserted in metric order if new. *prev is the
 * cell to search after (GT_NONE: the node's first); it is set to the cell
 * returned, so calls for one node with increasing metrics walk its list
 * once. GT_NONE when out of memory.
 */
static uint32_t cell__at(struct gt_run *r, uint32_t node, uint32_t metric, uint32_t *prev)
{
	uint32_t cur = *prev == GT_NONE ? r->head[node] : r->cells[*prev].next, c;
	size_t cap = r->cap_cells;

	while (cur != GT_NONE && r->cells[cur].metric < metric) {
		*prev = cur;
		cur = r->cells[cur].next;
	}
	if (cur != GT_NONE && r->cells[cur].metric == metric) {
		*prev = cur;
		return cur;
	}
	if (r->n_cells >= GT_NONE - 1 || ensure(&r->cells, &cap, (size_t)r->n_cells + 1, sizeof(*r->cells)))
		return GT_NONE;
	r->cap_cells = cap > GT_NONE ? GT_NONE : (uint32_t)cap;
	c = r->n_cells;
	memset(&r->cells[c], 0, sizeof(r->cells[c]));
	if (r->detail) {
		r->cells[c].per_proc = calloc(r->n_procs ? r->n_procs : 1, sizeof(uint64_t));
		if (!r->cells[c].per_proc)
			return GT_NONE;
	}
	r->n_cells++;
	r->cells[c].metric = metric;
	r->cells[c].next = cur;
	if (*prev == GT_NONE)
		r->head[node] = c;
	else
		r->cells[*prev].next = c;
	*prev = c;
	return c;
}

/* ---- adding a profile ---- */

/* Metric m of src in dst (interned by name), with its class; GT_NONE when
 * out of memory. */
uint32_t gt_run__metric_copy(struct gt_profile *dst, const struct gt_profile *src, uint32_t m)
{
	const struct gt_prof_metric *pm = &src->metrics[m];
	uint32_t to = gt_profile__metric(dst, gt_profile__str(src, pm->name), gt_profile__str(src, pm->unit),
					 gt_profile__str(src, pm->desc));

	if (to != GT_NONE)
		gt_profile__set_metric_class(dst, to, pm->cls);
	return to;
}

/* A function name's symbol name goes where the name goes: string s of src
 * became string to of dst. */
void gt_run__linkage_copy(struct gt_profile *dst, uint32_t to, const struct gt_profile *src, uint32_t s)
{
	uint32_t l = gt_profile__linkage(src, s);

	if (l != GT_NONE && to != GT_NONE)
		gt_profile__set_linkage(dst, to, gt_profile__string(dst, gt_profile__str(src, l)));
}

static uint32_t map_string(struct gt_run *r, const struct gt_profile *p, uint32_t s)
{
	uint32_t *m;

	if (s == GT_NONE || s >= p->n_strings)
		return GT_NONE;
	m = &r->s->smap[s];
	if (*m == UNMAPPED) {
		*m = gt_profile__string(&r->t, p->strings[s]);
		gt_run__linkage_copy(&r->t, *m, p, s);
	}
	return *m;
}

static uint32_t map_module(struct gt_run *r, const struct gt_profile *p, uint32_t mod)
{
	uint32_t *m;

	if (mod == GT_NONE || mod >= p->n_modules)
		return GT_NONE;
	m = &r->s->modmap[mod];
	if (*m == UNMAPPED) {
		const char *path = gt_profile__str(p, p->modules[mod]);

		*m = path ? gt_profile__module(&r->t, path) : GT_NONE;
	}
	return *m;
}

static int mval_cmp(const void *a, const void *b)
{
	const struct mval *x = a, *y = b;

	if (x->ln != y->ln)
		return x->ln < y->ln ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void slot__thread(struct slot *s, uint64_t v)
{
	s->excl = add_sat(s->excl, v);
	s->incl = add_sat(s->incl, v);
	if (!s->tn || v < s->tmin)
		s->tmin = v;
	if (!s->tn || v > s->tmax)
		s->tmax = v;
	s->tn++;
}

/* Maps p's nodes onto the run: L[i] is node i's local index; local nodes
 * are distinct run nodes, numbered parents first. Sets *dup when two nodes
 * of p have the same path. */
static int map_nodes(struct gt_run *r, const struct gt_profile *p, uint32_t *nl_out, int *dup)
{
	struct gt_run_scratch *s = r->s;
	uint32_t nl = 0;

	if (++s->cur == 0) { /* stamps wrapped: forget them all */
		memset(s->stamp, 0, s->cap_stamp * sizeof(*s->stamp));
		s->cur = 1;
	}
	*dup = 0;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const struct gt_prof_node *n = &p->nodes[i];
		uint32_t g;

		if (i == 0) {
			g = 0;
		} else {
			struct gt_prof_node k = {
				.parent = s->lmerged[s->L[n->parent]],
				.kind = n->kind,
				.name = map_string(r, p, n->name),
				.file = map_string(r, p, n->file),
				.line = n->line,
				.module = map_module(r, p, n->module),
				.offset = n->offset,
			};

			if ((n->name != GT_NONE && k.name == GT_NONE) || (n->file != GT_NONE && k.file == GT_NONE) ||
			    (n->module != GT_NONE && k.module == GT_NONE))
				return -ENOMEM;
			g = i < s->n_prev ? s->prev[i] : GT_NONE;
			if (g != GT_NONE && node_eq(&r->t.nodes[g], &k))
				node__seen(r, g, &k);
			else
				g = node__get(r, &k);
			if (g == GT_NONE)
				return -ENOMEM;
		}
		s->prev[i] = g;
		if (ensure(&s->stamp, &s->cap_stamp, (size_t)g + 1, sizeof(*s->stamp)) ||
		    ensure(&s->loc, &s->cap_loc, (size_t)g + 1, sizeof(*s->loc)))
			return -ENOMEM;
		if (s->stamp[g] == s->cur) {
			s->L[i] = s->loc[g];
			s->dupl[s->loc[g]] = 1;
			*dup = 1;
			continue;
		}
		s->dupl[nl] = 0;
		s->stamp[g] = s->cur;
		s->loc[g] = nl;
		s->lmerged[nl] = g;
		s->lparent[nl] = i ? s->L[n->parent] : GT_NONE;
		s->L[i] = nl++;
	}
	s->n_prev = p->n_nodes;
	*nl_out = nl;
	return 0;
}

/* Columns: the run metrics p has values of, in increasing run order;
 * col[m] is profile metric m's column (GT_NONE if it has no value). */
static int map_metrics(struct gt_run *r, const struct gt_profile *p, uint32_t *k_out, int *dup)
{
	struct gt_run_scratch *s = r->s;
	uint32_t k = 0;

	*dup = 0;
	for (uint32_t m = 0; m < p->n_metrics; m++) {
		s->col[m] = GT_NONE;
		s->metmap[m] = gt_run__metric_copy(&r->t, p, m);
		if (s->metmap[m] == GT_NONE)
			return -ENOMEM;
	}
	for (uint64_t i = 0; i < p->n_values; i++) {
		uint32_t m = p->values[i].metric;

		if (m < p->n_metrics && s->col[m] == GT_NONE && p->values[i].value) {
			s->col[m] = 0;
			s->cols[k++] = s->metmap[m];
		}
	}
	if (k)
		qsort(s->cols, k, sizeof(*s->cols), u32_cmp);
	/* Two metrics of p with one name share a column. */
	for (uint32_t i = 1; i < k; i++)
		if (s->cols[i] == s->cols[i - 1])
			*dup = 1;
	if (*dup) {
		uint32_t j = 0;

		for (uint32_t i = 0; i < k; i++)
			if (!j || s->cols[i] != s->cols[j - 1])
				s->cols[j++] = s->cols[i];
		k = j;
	}
	for (uint32_t m = 0; m < p->n_metrics; m++) {
		if (s->col[m] == GT_NONE)
			continue;
		for (uint32_t c = 0; c < k; c++)
			if (s->cols[c] == s->metmap[m])
				s->col[m] = c;
	}
	*k_out = k;
	return 0;
}

/* Whether p's values are strictly increasing in (node, metric, thread):
 * then every (local node, column, thread) appears at most once. */
static int values_unique(const struct gt_profile *p)
{
	for (uint64_t i = 1; i < p->n_values; i++) {
		const struct gt_prof_value *a = &p->values[i - 1], *b = &p->values[i];

		if (a->node != b->node ? a->node > b->node
				       : a->metric != b->metric ? a->metric > b->metric : a->thread >= b->thread)
			return 0;
	}
	return 1;
}

/*
 * How values reach the slots: every (local node, column, thread) of p once
 * (DIRECT); or so, except on local nodes that two nodes of p share, whose
 * values are sorted aside and summed (SHARED); or everything sorted and
 * summed (SORTED: values out of order, or two metrics of one name).
 */
enum fill { FILL_DIRECT, FILL_SHARED, FILL_SORTED };

/* Sums p's values of columns [c0, c0 + kb) into the slots. */
static void fill_slots(struct gt_run *r, const struct gt_profile *p, uint32_t c0, uint32_t kb, enum fill how,
		       uint64_t n_mv)
{
	struct gt_run_scratch *s = r->s;

	for (uint64_t i = 0; how != FILL_SORTED && i < p->n_values; i++) {
		const struct gt_prof_value *v = &p->values[i];
		uint32_t c = s->col[v->metric], ln = s->L[v->node];

		if (!v->value || c < c0 || c >= c0 + kb || (how == FILL_SHARED && s->dupl[ln]))
			continue;
		slot__thread(&s->slots[(size_t)ln * kb + (c - c0)], v->value);
	}
	/* Sorted (local node, column, thread): sum each run, then count it once. */
	for (uint64_t i = 0, j; i < n_mv; i = j) {
		uint64_t sum = 0;

		for (j = i; j < n_mv && !mval_cmp(&s->mv[i], &s->mv[j]); j++)
			sum = add_sat(sum, s->mv[j].value);
		if (s->mv[i].col >= c0 && s->mv[i].col < c0 + kb)
			slot__thread(&s->slots[(size_t)s->mv[i].ln * kb + (s->mv[i].col - c0)], sum);
	}
}

/* Folds the slots up the local tree and moves them into the run's cells. */
static int emit_slots(struct gt_run *r, uint32_t proc, uint32_t nl, uint32_t c0, uint32_t kb,
		      struct gt_metric_total *totals)
{
	struct gt_run_scratch *s = r->s;

	for (uint32_t ln = nl; ln-- > 1;) {
		struct slot *x = &s->slots[(size_t)ln * kb], *up = &s->slots[(size_t)s->lparent[ln] * kb];

		for (uint32_t c = 0; c < kb; c++)
			up[c].incl = add_sat(up[c].incl, x[c].incl);
	}
	for (uint32_t c = 0; c < kb; c++) {
		totals[c0 + c].metric = s->cols[c0 + c];
		totals[c0 + c].value = s->slots[c].incl;
	}
	for (uint32_t ln = 0; ln < nl; ln++) {
		const struct slot *x = &s->slots[(size_t)ln * kb];
		uint32_t g = s->lmerged[ln], prev = GT_NONE;

		for (uint32_t c = 0; c < kb; c++) {
			struct gt_cell *cell;
			uint32_t ci;

			if (!x[c].incl)
				continue;
			ci = cell__at(r, g, s->cols[c0 + c], &prev);
			if (ci == GT_NONE)
				return -ENOMEM;
			cell = &r->cells[ci];
			pstat__add(&cell->incl, x[c].incl, proc);
			pstat__add(&cell->excl, x[c].excl, proc);
			tstat__combine(&cell->thr, x[c].tmin, x[c].tmax, x[c].tn);
			if (cell->per_proc)
				cell->per_proc[proc] = add_sat(cell->per_proc[proc], x[c].incl);
		}
	}
	return 0;
}

/* Process pr of r now holds p: its meta and threads are the run's. */
static int proc__merged(struct gt_run *r, struct gt_proc *pr, const struct gt_profile *p)
{
	int err;

	if (!pr->totals && !(pr->totals = calloc(1, sizeof(*pr->totals))))
		return -ENOMEM;
	err = proc__set_meta(pr, p->n_meta, meta_of_profile, p);
	if (err)
		return err;
	gt_proc__describe(pr);
	pr->n_threads = p->n_threads;
	pr->state = GT_PROC_MERGED;
	r->n_merged++;
	r->n_threads += p->n_threads;
	return 0;
}

int gt_run__add(struct gt_run *r, uint32_t proc, const struct gt_profile *p)
{
	struct gt_run_scratch *s = r->s;
	struct gt_proc *pr;
	uint32_t nl, k, kb;
	uint64_t n_mv = 0;
	int dup_nodes, dup_metrics, err;
	enum fill how;

	if (proc >= r->n_procs)
		return -EINVAL;
	pr = &r->procs[proc];
	if (!p->n_nodes) { /* a valid file of a process that measured nothing */
		proc__clear(pr);
		return proc__merged(r, pr, p);
	}
	if (ensure(&s->smap, &s->cap_smap, p->n_strings, sizeof(*s->smap)) ||
	    ensure(&s->modmap, &s->cap_modmap, p->n_modules, sizeof(*s->modmap)) ||
	    ensure(&s->metmap, &s->cap_metmap, p->n_metrics, sizeof(*s->metmap)) ||
	    ensure(&s->col, &s->cap_col, p->n_metrics, sizeof(*s->col)) ||
	    ensure(&s->cols, &s->cap_cols, p->n_metrics, sizeof(*s->cols)) ||
	    ensure(&s->L, &s->cap_L, p->n_nodes, sizeof(*s->L)) ||
	    ensure(&s->lmerged, &s->cap_lm, p->n_nodes, sizeof(*s->lmerged)) ||
	    ensure(&s->lparent, &s->cap_lp, p->n_nodes, sizeof(*s->lparent)) ||
	    ensure(&s->prev, &s->cap_prev, p->n_nodes, sizeof(*s->prev)) ||
	    ensure(&s->dupl, &s->cap_dupl, p->n_nodes, sizeof(*s->dupl)))
		return -ENOMEM;
	for (uint32_t i = s->n_prev; i < p->n_nodes; i++)
		s->prev[i] = GT_NONE;
	for (uint32_t i = 0; i < p->n_strings; i++)
		s->smap[i] = UNMAPPED;
	for (uint32_t i = 0; i < p->n_modules; i++)
		s->modmap[i] = UNMAPPED;

	if ((err = map_nodes(r, p, &nl, &dup_nodes)) || (err = map_metrics(r, p, &k, &dup_metrics)))
		return err;
	how = dup_metrics || !values_unique(p) ? FILL_SORTED : dup_nodes ? FILL_SHARED : FILL_DIRECT;
	if (how != FILL_DIRECT) {
		if (ensure(&s->mv, &s->cap_mv, p->n_values, sizeof(*s->mv)))
			return -ENOMEM;
		for (uint64_t i = 0; i < p->n_values; i++) {
			const struct gt_prof_value *v = &p->values[i];
			uint32_t ln = s->L[v->node];

			if (v->value && s->col[v->metric] != GT_NONE && (how == FILL_SORTED || s->dupl[ln]))
				s->mv[n_mv++] = (struct mval){ ln, s->col[v->metric], v->thread, v->value };
		}
		if (n_mv)
			qsort(s->mv, n_mv, sizeof(*s->mv), mval_cmp);
	}

	proc__clear(pr);
	pr->totals = calloc(k ? k : 1, sizeof(*pr->totals));
	if (!pr->totals)
		return -ENOMEM;
	pr->n_totals = k;
	kb = k;
	if (nl && (uint64_t)nl * kb > MAX_SLOTS)
		kb = MAX_SLOTS / nl ? MAX_SLOTS / nl : 1;
	for (uint32_t c0 = 0; c0 < k; c0 += kb) {
		uint32_t width = k - c0 < kb ? k - c0 : kb;

		if (ensure(&s->slots, &s->cap_slots, (size_t)nl * width, sizeof(*s->slots)))
			return -ENOMEM;
		memset(s->slots, 0, (size_t)nl * width * sizeof(*s->slots));
		fill_slots(r, p, c0, width, how, n_mv);
		err = emit_slots(r, proc, nl, c0, width, pr->totals);
		if (err)
			return err;
	}
	return proc__merged(r, pr, p);
}

/* ---- merging runs ---- */

static int proc__copy(struct gt_proc *d, const struct gt_proc *s, const uint32_t *metmap)
{
	proc__clear(d);
	d->state = s->state;
	d->n_threads = s->n_threads;
	if (proc__set_meta(d, s->n_meta, meta_of_proc, s))
		return -ENOMEM;
	gt_proc__describe(d);
	d->totals = calloc(s->n_totals ? s->n_totals : 1, sizeof(*d->totals));
	if (!d->totals)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_totals; i++)
		d->totals[i] = (struct gt_metric_total){ metmap[s->totals[i].metric], s->totals[i].value };
	d->n_totals = s->n_totals;
	return 0;
}

int gt_run__absorb(struct gt_run *dst, const struct gt_run *src)
{
	const struct gt_profile *p = &src->t;
	struct gt_run_scratch *s = dst->s;
	uint32_t *nmap = NULL;
	int err = -ENOMEM;

	if (src->n_procs != dst->n_procs)
		return -EINVAL;
	if (ensure(&s->smap, &s->cap_smap, p->n_strings, sizeof(*s->smap)) ||
	    ensure(&s->modmap, &s->cap_modmap, p->n_modules, sizeof(*s->modmap)) ||
	    ensure(&s->metmap, &s->cap_metmap, p->n_metrics, sizeof(*s->metmap)))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_strings; i++)
		s->smap[i] = UNMAPPED;
	for (uint32_t i = 0; i < p->n_modules; i++)
		s->modmap[i] = UNMAPPED;
	for (uint32_t m = 0; m < p->n_metrics; m++) {
		s->metmap[m] = gt_run__metric_copy(&dst->t, p, m);
		if (s->metmap[m] == GT_NONE)
			return -ENOMEM;
	}
	nmap = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*nmap));
	if (!nmap)
		return -ENOMEM;
	nmap[0] = 0;
	for (uint32_t i = 1; i < p->n_nodes; i++) {
		const struct gt_prof_node *n = &p->nodes[i];
		struct gt_prof_node k = {
			.parent = nmap[n->parent],
			.kind = n->kind,
			.name = map_string(dst, p, n->name),
			.file = map_string(dst, p, n->file),
			.line = n->line,
			.module = map_module(dst, p, n->module),
			.offset = n->offset,
		};

		nmap[i] = node__get(dst, &k);
		if (nmap[i] == GT_NONE)
			goto out_free;
	}
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		for (uint32_t c = src->head[i]; c != GT_NONE; c = src->cells[c].next) {
			const struct gt_cell *sc = &src->cells[c];
			uint32_t prev = GT_NONE, ci = cell__at(dst, nmap[i], s->metmap[sc->metric], &prev);
			struct gt_cell *dc;

			if (ci == GT_NONE)
				goto out_free;
			dc = &dst->cells[ci];
			pstat__combine(&dc->excl, &sc->excl);
			pstat__combine(&dc->incl, &sc->incl);
			tstat__combine(&dc->thr, sc->thr.min, sc->thr.max, sc->thr.n);
			if (dc->per_proc && sc->per_proc)
				for (uint32_t k = 0; k < dst->n_procs; k++)
					dc->per_proc[k] = add_sat(dc->per_proc[k], sc->per_proc[k]);
		}
	}
	for (uint32_t i = 0; i < dst->n_procs; i++)
		if (src->procs[i].state != GT_PROC_PENDING && dst->procs[i].state == GT_PROC_PENDING &&
		    proc__copy(&dst->procs[i], &src->procs[i], s->metmap))
			goto out_free;
	dst->n_merged += src->n_merged;
	dst->n_failed += src->n_failed;
	dst->n_threads += src->n_threads;
	err = 0;
out_free:
	free(nmap);
	return err;
}
