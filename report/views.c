/* SPDX-License-Identifier: MIT */
/*
 * The flat and bottom-up views of a merged run, for the view's metric.
 * The top-down view is the tree itself (derive.c has its children lists).
 *
 * Flat: one row per function. A frame's function is its name, file and
 * module (a frame is one line of a function, so a function has a node per
 * line and per calling context); placeholders and names stand for
 * themselves. Inclusive values count a recursive function once: a node is
 * added only when no caller of it is the same function.
 *
 * Bottom-up: one root per function with its exclusive value; below it the
 * call sites that led there, innermost first, each with the part of the
 * function's value that came through it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "report/rank.h"
#include "report/report.h"

#define BU_MAX_DEPTH 256 /* callers followed per context */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

/* What makes two nodes one function (with_line: one call site). */
static uint64_t ident_hash(const struct gt_profile *t, uint32_t i, int with_line)
{
	const struct gt_prof_node *n = &t->nodes[i];
	uint64_t h = mix(mix(mix(mix(1, n->kind), n->name), n->file), n->module);

	if (gt_pnode__is_frame(n->kind) && n->name == GT_NONE)
		h = mix(h, n->offset);
	if (with_line)
		h = mix(h, n->line);
	return h * 0xff51afd7ed558ccdull;
}

static int ident_eq(const struct gt_profile *t, uint32_t i, uint32_t j, int with_line)
{
	const struct gt_prof_node *a = &t->nodes[i], *b = &t->nodes[j];

	if (a->kind != b->kind || a->name != b->name || a->file != b->file || a->module != b->module)
		return 0;
	if (gt_pnode__is_frame(a->kind) && a->name == GT_NONE && a->offset != b->offset)
		return 0;
	return !with_line || a->line == b->line;
}

/* Numbers every node by its identity: out[i] is the identity's index, and
 * rep[k] a node of identity k. Returns the number of identities, or -1. */
static int64_t identities(const struct gt_profile *t, int with_line, uint32_t *out, uint32_t *rep)
{
	uint32_t n = t->n_nodes, cap = 16, k = 0, *slots;

	while (cap < 2 * (uint64_t)n)
		cap *= 2;
	slots = malloc((size_t)cap * sizeof(*slots));
	if (!slots)
		return -1;
	memset(slots, 0xff, (size_t)cap * sizeof(*slots));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)ident_hash(t, i, with_line) & (cap - 1);

		for (; slots[h] != GT_NONE; h = (h + 1) & (cap - 1))
			if (ident_eq(t, rep[slots[h]], i, with_line))
				break;
		if (slots[h] == GT_NONE) {
			slots[h] = k;
			rep[k++] = i;
		}
		out[i] = slots[h];
	}
	free(slots);
	return k;
}

static int func_cmp(const void *x, const void *y)
{
	const struct gt_func *a = x, *b = y;

	if (a->excl != b->excl)
		return a->excl > b->excl ? -1 : 1;
	if (a->incl != b->incl)
		return a->incl > b->incl ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

int gt_flat__build(struct gt_flat *fl, const struct gt_analysis *a)
{
	uint32_t n = a->n_nodes, *rep, *active = NULL, *stack = NULL, *iter = NULL, sp = 0;
	int64_t nf;
	int err = -ENOMEM;

	memset(fl, 0, sizeof(*fl));
	fl->of = malloc((n ? n : 1) * sizeof(*fl->of));
	rep = malloc((n ? n : 1) * sizeof(*rep));
	if (!fl->of || !rep)
		goto out_free;
	nf = identities(a->t, 0, fl->of, rep);
	if (nf < 0)
		goto out_free;
	fl->f = calloc(nf ? (size_t)nf : 1, sizeof(*fl->f));
	active = calloc(nf ? (size_t)nf : 1, sizeof(*active));
	stack = malloc((n ? n : 1) * sizeof(*stack));
	iter = malloc((n ? n : 1) * sizeof(*iter));
	if (!fl->f || !active || !stack || !iter)
		goto out_free;
	for (uint32_t k = 0; k < nf; k++)
		fl->f[k].node = rep[k];
	for (uint32_t i = 0; i < n; i++) {
		struct gt_func *f = &fl->f[fl->of[i]];

		f->excl = add_sat(f->excl, a->excl[i]);
		f->contexts += a->incl[i] != 0;
	}
	/* Depth first; a node counts for its function's inclusive value unless
	 * the function is already active above it. */
	memcpy(iter, a->first, (n ? n : 1) * sizeof(*iter));
	if (n) {
		stack[sp++] = 0;
		fl->f[fl->of[0]].incl = a->incl[0];
		active[fl->of[0]]++;
	}
	while (sp) {
		uint32_t u = stack[sp - 1], c = iter[u];

		if (c == GT_NONE) {
			active[fl->of[u]]--;
			sp--;
			continue;
		}
		iter[u] = a->next[c];
		if (!a->incl[c])
			continue;
		if (!active[fl->of[c]])
			fl->f[fl->of[c]].incl = add_sat(fl->f[fl->of[c]].incl, a->incl[c]);
		active[fl->of[c]]++;
		stack[sp++] = c;
	}
	/* Sort, keeping of[] pointing at each function's new place. */
	{
		struct gt_func *sorted = malloc((nf ? (size_t)nf : 1) * sizeof(*sorted));
		uint32_t *idx = malloc((nf ? (size_t)nf : 1) * sizeof(*idx));

		if (!sorted || !idx) {
			free(sorted);
			free(idx);
			goto out_free;
		}
		memcpy(sorted, fl->f, (size_t)nf * sizeof(*sorted));
		qsort(sorted, (size_t)nf, sizeof(*sorted), func_cmp);
		/* A function's representative node is unique to it. */
		for (uint32_t k = 0; k < nf; k++)
			idx[fl->of[sorted[k].node]] = k;
		for (uint32_t i = 0; i < n; i++)
			fl->of[i] = idx[fl->of[i]];
		free(fl->f);
		fl->f = sorted;
		free(idx);
	}
	fl->n = (uint32_t)nf;
	err = 0;
out_free:
	free(rep);
	free(active);
	free(stack);
	free(iter);
	if (err)
		gt_flat__fini(fl);
	return err;
}

void gt_flat__fini(struct gt_flat *fl)
{
	free(fl->f);
	free(fl->of);
	memset(fl, 0, sizeof(*fl));
}

/* ---- bottom-up ---- */

struct bu_build {
	struct gt_bottom_up *bu;
	uint32_t *fn, *site; /* per node: function and call-site identities */
	struct gt_hmap ids;  /* (parent, identity) -> bu node */
	uint32_t *ident;     /* per bu node: its identity */
};

/* The map's key of (parent, identity): never 0, as identities stay below
 * GT_NONE (functions and call sites are node counts, sites with the top bit). */
static uint64_t bu_key(uint32_t parent, uint32_t ident)
{
	return ((uint64_t)parent << 32 | ident) + 1;
}

static uint32_t bu__get(struct bu_build *b, uint32_t parent, uint32_t ident, uint32_t node)
{
	struct gt_bottom_up *bu = b->bu;
	const uint64_t *found = gt_hmap__get(&b->ids, bu_key(parent, ident));
	uint32_t id;

	if (found)
		return (uint32_t)*found;
	if (bu->count >= bu->cap) {
		uint32_t cap = bu->cap ? bu->cap * 2 : 1024;
		struct gt_bu_node *nn;
		uint32_t *ni;

		if (bu->cap >= (1u << 30))
			return GT_NONE;
		nn = realloc(bu->n, (size_t)cap * sizeof(*nn));
		if (!nn)
			return GT_NONE;
		bu->n = nn;
		ni = realloc(b->ident, (size_t)cap * sizeof(*ni));
		if (!ni)
			return GT_NONE;
		b->ident = ni;
		bu->cap = cap;
	}
	id = bu->count;
	if (gt_hmap__put(&b->ids, bu_key(parent, ident), id))
		return GT_NONE;
	bu->count++;
	bu->n[id] = (struct gt_bu_node){ .node = node, .parent = parent, .first = GT_NONE, .next = GT_NONE };
	b->ident[id] = ident;
	if (parent != GT_NONE) {
		bu->n[id].next = bu->n[parent].first;
		bu->n[parent].first = id;
	}
	return id;
}

int gt_bottom_up__build(struct gt_bottom_up *bu, const struct gt_analysis *a)
{
	struct bu_build b = { .bu = bu };
	uint32_t n = a->n_nodes, *rep = NULL;
	struct gt_ranked *k = NULL;
	int err = -ENOMEM;

	memset(bu, 0, sizeof(*bu));
	b.fn = malloc((n ? n : 1) * sizeof(*b.fn));
	b.site = malloc((n ? n : 1) * sizeof(*b.site));
	rep = malloc((n ? n : 1) * sizeof(*rep));
	if (!b.fn || !b.site || !rep || identities(a->t, 0, b.fn, rep) < 0 || identities(a->t, 1, b.site, rep) < 0)
		goto out_free;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id, depth = 0;

		if (!a->excl[i])
			continue;
		/* Functions and call sites are told apart by the top bit. */
		id = bu__get(&b, GT_NONE, b.fn[i], i);
		if (id == GT_NONE)
			goto out_free;
		bu->n[id].value = add_sat(bu->n[id].value, a->excl[i]);
		for (uint32_t up = i ? a->t->nodes[i].parent : GT_NONE; up != GT_NONE && up != 0 && depth < BU_MAX_DEPTH;
		     up = a->t->nodes[up].parent, depth++) {
			id = bu__get(&b, id, b.site[up] | 0x80000000u, up);
			if (id == GT_NONE)
				goto out_free;
			bu->n[id].value = add_sat(bu->n[id].value, a->excl[i]);
		}
	}
	for (uint32_t i = 0; i < bu->count; i++)
		bu->n_roots += bu->n[i].parent == GT_NONE;
	bu->roots = malloc((bu->n_roots ? bu->n_roots : 1) * sizeof(*bu->roots));
	k = malloc((bu->n_roots ? bu->n_roots : 1) * sizeof(*k));
	if (!bu->roots || !k)
		goto out_free;
	bu->n_roots = 0;
	for (uint32_t i = 0; i < bu->count; i++)
		if (bu->n[i].parent == GT_NONE)
			k[bu->n_roots++] = (struct gt_ranked){ bu->n[i].value, i };
	qsort(k, bu->n_roots, sizeof(*k), gt_ranked__cmp);
	for (uint32_t i = 0; i < bu->n_roots; i++)
		bu->roots[i] = k[i].node;
	err = 0;
out_free:
	free(k);
	free(rep);
	free(b.fn);
	free(b.site);
	gt_hmap__fini(&b.ids);
	free(b.ident);
	if (err)
		gt_bottom_up__fini(bu);
	return err;
}

void gt_bottom_up__fini(struct gt_bottom_up *bu)
{
	free(bu->n);
	free(bu->roots);
	memset(bu, 0, sizeof(*bu));
}

int gt_bottom_up__children(const struct gt_bottom_up *bu, uint32_t i, uint32_t **out, uint32_t *n_out)
{
	uint32_t n = 0;
	struct gt_ranked *k;

	for (uint32_t c = bu->n[i].first; c != GT_NONE; c = bu->n[c].next)
		n++;
	k = malloc((n ? n : 1) * sizeof(*k));
	n = 0;
	for (uint32_t c = bu->n[i].first; k && c != GT_NONE; c = bu->n[c].next)
		k[n++] = (struct gt_ranked){ bu->n[c].value, c };
	*n_out = n;
	return gt_ranked__nodes(k, n, out);
}
