/* SPDX-License-Identifier: MIT */
/*
 * A merged run in an order that does not depend on the order its profiles
 * were merged in (gt_run__canonicalize).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "report/merge-internal.h"
#include "report/report.h"

/* ---- a canonical order ---- */

/*
 * The numbering of nodes, metrics and modules follows the order profiles
 * were merged in, which differs between one process and an MPI team.
 * Canonical order makes every output independent of it: metrics in the
 * order of the tool's table (core/metrics.h), others after by name;
 * modules by path; nodes depth first, siblings by kind, name, file, line,
 * module path and offset.
 */
static const struct gt_run *canon_run; /* qsort has no context argument */

static int str_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b ? 0 : !a ? -1 : 1;
	return strcmp(a, b);
}

static int metric_rank(const struct gt_profile *t, uint32_t m)
{
	const char *name = gt_profile__str(t, t->metrics[m].name);

	for (int k = 0; k < GT_M__COUNT; k++)
		if (name && !strcmp(name, gt_metric_descs[k].name))
			return k;
	return GT_M__COUNT;
}

static int canon_metric_cmp(const void *x, const void *y)
{
	const struct gt_profile *t = &canon_run->t;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int ra = metric_rank(t, a), rb = metric_rank(t, b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return str_cmp(gt_profile__str(t, t->metrics[a].name), gt_profile__str(t, t->metrics[b].name));
}

static int canon_module_cmp(const void *x, const void *y)
{
	const struct gt_profile *t = &canon_run->t;

	return str_cmp(gt_profile__str(t, t->modules[*(const uint32_t *)x]),
		       gt_profile__str(t, t->modules[*(const uint32_t *)y]));
}

static int canon_node_cmp(const void *x, const void *y)
{
	const struct gt_profile *t = &canon_run->t;
	const struct gt_prof_node *a = &t->nodes[*(const uint32_t *)x], *b = &t->nodes[*(const uint32_t *)y];
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((c = str_cmp(gt_profile__str(t, a->name), gt_profile__str(t, b->name))) ||
	    (c = str_cmp(gt_profile__str(t, a->file), gt_profile__str(t, b->file))))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if ((c = str_cmp(a->module == GT_NONE ? NULL : gt_profile__str(t, t->modules[a->module]),
			 b->module == GT_NONE ? NULL : gt_profile__str(t, t->modules[b->module]))))
		return c;
	if (gt_run__node_koff(a) != gt_run__node_koff(b))
		return gt_run__node_koff(a) < gt_run__node_koff(b) ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static int cell_metric_cmp(const void *x, const void *y)
{
	const struct gt_cell *a = x, *b = y;

	return a->metric < b->metric ? -1 : a->metric > b->metric;
}

static int total_cmp(const void *x, const void *y)
{
	const struct gt_metric_total *a = x, *b = y;

	return a->metric < b->metric ? -1 : a->metric > b->metric;
}

int gt_run__canonicalize(struct gt_run *r)
{
	const struct gt_profile *t = &r->t;
	uint32_t n = t->n_nodes, nm = t->n_metrics, nmod = t->n_modules;
	uint32_t *morder, *mnew, *modorder, *modnew, *order, *nnew, *kids, *first, *stack, sp = 0, done = 0;
	struct gt_profile t2;
	struct gt_cell *cells = NULL;
	uint32_t *head = NULL, *hashes = NULL, nc = 0;
	int err = -ENOMEM;

	morder = malloc((nm + 1) * sizeof(*morder));
	mnew = malloc((nm + 1) * sizeof(*mnew));
	modorder = malloc((nmod + 1) * sizeof(*modorder));
	modnew = malloc((nmod + 1) * sizeof(*modnew));
	order = malloc((n + 1) * sizeof(*order));
	nnew = malloc((n + 1) * sizeof(*nnew));
	kids = malloc((n + 1) * sizeof(*kids));
	first = malloc((n + 1) * sizeof(*first));
	stack = malloc((n + 1) * sizeof(*stack));
	gt_profile__init(&t2);
	if (!morder || !mnew || !modorder || !modnew || !order || !nnew || !kids || !first || !stack || !n)
		goto out_free;
	canon_run = r;
	for (uint32_t i = 0; i < nm; i++)
		morder[i] = i;
	qsort(morder, nm, sizeof(*morder), canon_metric_cmp);
	for (uint32_t i = 0; i < nmod; i++)
		modorder[i] = i;
	qsort(modorder, nmod, sizeof(*modorder), canon_module_cmp);
	/* Children of each node, sorted, as runs in kids[]; first[i] their start. */
	{
		uint32_t *cnt = calloc(n + 1, sizeof(*cnt));

		if (!cnt)
			goto out_free;
		for (uint32_t i = 1; i < n; i++)
			cnt[t->nodes[i].parent + 1]++;
		for (uint32_t i = 0; i < n; i++)
			cnt[i + 1] += cnt[i];
		memcpy(first, cnt, (n + 1) * sizeof(*first));
		for (uint32_t i = 1; i < n; i++)
			kids[cnt[t->nodes[i].parent]++] = i;
		free(cnt);
		for (uint32_t i = 0; i < n; i++)
			qsort(kids + first[i], first[i + 1] - first[i], sizeof(*kids), canon_node_cmp);
	}
	/* Depth first: push children in reverse so the first comes out first. */
	stack[sp++] = 0;
	while (sp) {
		uint32_t u = stack[--sp];

		order[done++] = u;
		for (uint32_t k = first[u + 1]; k-- > first[u];)
			stack[sp++] = kids[k];
	}
	canon_run = NULL;
	for (uint32_t i = 0; i < nm; i++) {
		mnew[morder[i]] = gt_run__metric_copy(&t2, t, morder[i]);
		if (mnew[morder[i]] == GT_NONE)
			goto out_free;
	}
	for (uint32_t i = 0; i < nmod; i++)
		if ((modnew[modorder[i]] = gt_profile__module(&t2, gt_profile__str(t, t->modules[modorder[i]]))) ==
		    GT_NONE)
			goto out_free;
	for (uint32_t k = 0; k < done; k++) {
		const struct gt_prof_node *o = &t->nodes[order[k]];
		struct gt_prof_node nn = {
			.parent = k ? nnew[o->parent] : GT_NONE,
			.kind = o->kind,
			.name = gt_profile__string(&t2, gt_profile__str(t, o->name)),
			.file = gt_profile__string(&t2, gt_profile__str(t, o->file)),
			.line = o->line,
			.module = o->module == GT_NONE ? GT_NONE : modnew[o->module],
			.offset = o->offset,
		};

		gt_run__linkage_copy(&t2, nn.name, t, o->name);
		if ((o->name != GT_NONE && nn.name == GT_NONE) || (o->file != GT_NONE && nn.file == GT_NONE) ||
		    (nnew[order[k]] = gt_profile__node(&t2, &nn)) != k)
			goto out_free;
	}
	cells = malloc((r->n_cells ? r->n_cells : 1) * sizeof(*cells));
	head = malloc((size_t)n * sizeof(*head));
	hashes = malloc((size_t)n * sizeof(*hashes));
	if (!cells || !head || !hashes)
		goto out_free;
	for (uint32_t k = 0; k < done; k++) {
		uint32_t start = nc;

		head[k] = GT_NONE;
		for (uint32_t c = r->head[order[k]]; c != GT_NONE; c = r->cells[c].next) {
			cells[nc] = r->cells[c];
			cells[nc++].metric = mnew[r->cells[c].metric];
		}
		qsort(cells + start, nc - start, sizeof(*cells), cell_metric_cmp);
		for (uint32_t c = start; c < nc; c++)
			cells[c].next = c + 1 < nc ? c + 1 : GT_NONE;
		if (nc > start)
			head[k] = start;
	}
	for (uint32_t i = 0; i < r->n_procs; i++) {
		struct gt_proc *p = &r->procs[i];

		for (uint32_t k = 0; k < p->n_totals; k++)
			p->totals[k].metric = mnew[p->totals[k].metric];
		if (p->n_totals)
			qsort(p->totals, p->n_totals, sizeof(*p->totals), total_cmp);
	}
	/* In with the new; the node hash is rebuilt for the new numbering. */
	gt_profile__fini(&r->t);
	r->t = t2;
	gt_profile__init(&t2);
	free(r->cells);
	r->cells = cells;
	r->cap_cells = r->n_cells ? r->n_cells : 1;
	cells = NULL;
	free(r->head);
	r->head = head;
	head = NULL;
	free(r->hashes);
	r->hashes = hashes;
	hashes = NULL;
	r->cap_head = n;
	for (uint32_t i = 0; i < n; i++)
		r->hashes[i] = gt_run__node_hash(&r->t.nodes[i]);
	free(r->slots);
	r->slots = NULL;
	r->slot_cap = r->slot_used = 0;
	r->s->n_prev = 0;
	err = 0;
	for (uint32_t i = 1; i < n && !err; i++) {
		uint32_t h;

		if ((uint64_t)(r->slot_used + 1) * 2 > r->slot_cap && gt_run__slots_grow(r)) {
			err = -ENOMEM;
			break;
		}
		for (h = r->hashes[i] & (r->slot_cap - 1); r->slots[h] != GT_NONE; h = (h + 1) & (r->slot_cap - 1))
			;
		r->slots[h] = i;
		r->slot_used++;
	}
out_free:
	gt_profile__fini(&t2);
	free(cells);
	free(head);
	free(hashes);
	free(morder);
	free(mnew);
	free(modorder);
	free(modnew);
	free(order);
	free(nnew);
	free(kids);
	free(first);
	free(stack);
	return err;
}
