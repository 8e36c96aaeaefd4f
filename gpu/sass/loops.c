/* SPDX-License-Identifier: MIT */
/*
 * Loops from each function's control flow: basic blocks from the branches,
 * dominators by the iterative algorithm of Cooper, Harvey and Kennedy ("A
 * Simple, Fast Dominance Algorithm"), and a natural loop for each header
 * that a back edge (an edge to a block that dominates its source) enters.
 * Loops that share a header are one loop; a loop's parent is the innermost
 * loop that holds its header. Irreducible cycles (entered at more than one
 * block) are not loops here. Indirect branches (BRX) have no known
 * successors, so their targets' blocks may look unreachable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/sass/sass-internal.h"

struct cfg {
	uint32_t n;	      /* blocks */
	uint32_t *first;      /* per block: its first instruction */
	uint32_t *block_of;   /* per instruction of the function */
	uint32_t *succ;	      /* per block: up to two successors */
	uint32_t *pred_start; /* predecessors, CSR */
	uint32_t *pred;
	uint32_t *rpo;	    /* blocks in reverse postorder */
	uint32_t *order;    /* per block: its place in rpo, GT_SASS_NONE if unreachable */
	uint32_t *idom;
	uint32_t n_rpo;
};

static void cfg__fini(struct cfg *g)
{
	free(g->first);
	free(g->block_of);
	free(g->succ);
	free(g->pred_start);
	free(g->pred);
	free(g->rpo);
	free(g->order);
	free(g->idom);
}

static int in_function(const struct gt_sass_function *f, uint32_t i)
{
	return i != GT_SASS_NONE && i >= f->first && i < f->end;
}

static int cfg__build(struct cfg *g, const struct gt_sass *s, const struct gt_sass_function *f)
{
	uint32_t n = f->end - f->first, nb = 0;
	uint8_t *leader = calloc(n + 1, 1);

	memset(g, 0, sizeof(*g));
	if (!leader)
		return -ENOMEM;
	leader[0] = 1;
	for (uint32_t i = f->first; i < f->end; i++) {
		const struct gt_sass_insn *in = &s->insns[i];

		if ((in->flags & GT_SASS_F_BRANCH) && in_function(f, in->target))
			leader[in->target - f->first] = 1;
		if (in->flags & (GT_SASS_F_BRANCH | GT_SASS_F_END | GT_SASS_F_INDIRECT))
			leader[i - f->first + 1] = 1;
	}
	for (uint32_t i = 0; i < n; i++)
		nb += leader[i];
	g->n = nb;
	g->first = malloc(nb * sizeof(*g->first));
	g->block_of = malloc(n * sizeof(*g->block_of));
	g->succ = malloc(2 * nb * sizeof(*g->succ));
	g->pred_start = calloc(nb + 1, sizeof(*g->pred_start));
	g->pred = malloc(2 * nb * sizeof(*g->pred));
	g->rpo = malloc(nb * sizeof(*g->rpo));
	g->order = malloc(nb * sizeof(*g->order));
	g->idom = malloc(nb * sizeof(*g->idom));
	if (!g->first || !g->block_of || !g->succ || !g->pred_start || !g->pred || !g->rpo || !g->order || !g->idom) {
		free(leader);
		return -ENOMEM;
	}
	for (uint32_t i = 0, b = 0; i < n; i++) {
		if (leader[i])
			g->first[b++] = f->first + i;
		g->block_of[i] = b - 1;
	}
	free(leader);
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t last = (b + 1 < nb ? g->first[b + 1] : f->end) - 1;
		const struct gt_sass_insn *in = &s->insns[last];
		uint32_t *sc = &g->succ[2 * b];
		int falls = 1;

		sc[0] = sc[1] = GT_SASS_NONE;
		if (in->flags & (GT_SASS_F_BRANCH | GT_SASS_F_END | GT_SASS_F_INDIRECT))
			falls = (in->flags & GT_SASS_F_PRED) != 0;
		if ((in->flags & GT_SASS_F_BRANCH) && in_function(f, in->target))
			sc[0] = g->block_of[in->target - f->first];
		if (falls && b + 1 < nb && sc[0] != b + 1)
			sc[1] = b + 1;
		for (int k = 0; k < 2; k++)
			if (sc[k] != GT_SASS_NONE)
				g->pred_start[sc[k] + 1]++;
	}
	for (uint32_t b = 0; b < nb; b++)
		g->pred_start[b + 1] += g->pred_start[b];
	{
		uint32_t *fill = calloc(nb, sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		for (uint32_t b = 0; b < nb; b++)
			for (int k = 0; k < 2; k++) {
				uint32_t t = g->succ[2 * b + k];

				if (t != GT_SASS_NONE)
					g->pred[g->pred_start[t] + fill[t]++] = b;
			}
		free(fill);
	}
	return 0;
}

/* Reverse postorder from block 0, without recursion. */
static int cfg__order(struct cfg *g)
{
	uint32_t *stack = malloc(g->n * sizeof(*stack)), *next = calloc(g->n, sizeof(*next)), sp = 0, post = 0;
	uint8_t *seen = calloc(g->n, 1);

	if (!stack || !next || !seen) {
		free(stack);
		free(next);
		free(seen);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	seen[0] = 1;
	while (sp) {
		uint32_t b = stack[sp - 1];

		if (next[b] < 2) {
			uint32_t t = g->succ[2 * b + next[b]++];

			if (t != GT_SASS_NONE && !seen[t]) {
				seen[t] = 1;
				stack[sp++] = t;
			}
			continue;
		}
		sp--;
		g->rpo[post++] = b; /* postorder, reversed below */
	}
	g->n_rpo = post;
	for (uint32_t i = 0; i < post / 2; i++) {
		uint32_t t = g->rpo[i];

		g->rpo[i] = g->rpo[post - 1 - i];
		g->rpo[post - 1 - i] = t;
	}
	for (uint32_t b = 0; b < g->n; b++)
		g->order[b] = GT_SASS_NONE;
	for (uint32_t i = 0; i < post; i++)
		g->order[g->rpo[i]] = i;
	free(stack);
	free(next);
	free(seen);
	return 0;
}

static void cfg__dominators(struct cfg *g)
{
	int changed = 1;

	for (uint32_t b = 0; b < g->n; b++)
		g->idom[b] = GT_SASS_NONE;
	g->idom[0] = 0;
	while (changed) {
		changed = 0;
		for (uint32_t i = 1; i < g->n_rpo; i++) {
			uint32_t b = g->rpo[i], nd = GT_SASS_NONE;

			for (uint32_t k = g->pred_start[b]; k < g->pred_start[b + 1]; k++) {
				uint32_t p = g->pred[k], a;

				if (g->idom[p] == GT_SASS_NONE)
					continue;
				if (nd == GT_SASS_NONE) {
					nd = p;
					continue;
				}
				a = p;
				while (a != nd) { /* intersect */
					while (g->order[a] > g->order[nd])
						a = g->idom[a];
					while (g->order[nd] > g->order[a])
						nd = g->idom[nd];
				}
			}
			if (nd != GT_SASS_NONE && g->idom[b] != nd) {
				g->idom[b] = nd;
				changed = 1;
			}
		}
	}
}

static int dominates(const struct cfg *g, uint32_t h, uint32_t b)
{
	if (g->order[b] == GT_SASS_NONE)
		return 0;
	for (;;) {
		if (b == h)
			return 1;
		if (b == 0)
			return 0;
		b = g->idom[b];
	}
}

struct nloop {
	uint32_t header; /* block */
	uint32_t size;	 /* blocks in it */
	uint8_t *in;	 /* per block */
};

static int by_size_down(const void *a, const void *b)
{
	const struct nloop *x = a, *y = b;

	return x->size != y->size ? (x->size < y->size ? 1 : -1) : (x->header > y->header) - (x->header < y->header);
}

static int function__loops(struct gt_sass *s, uint32_t fi, uint32_t *cap_loops)
{
	const struct gt_sass_function *f = &s->functions[fi];
	struct cfg g;
	struct nloop *loops = NULL;
	uint32_t n_loops = 0, *stack = NULL, *inner = NULL;
	int err;

	if (f->end <= f->first)
		return 0;
	err = cfg__build(&g, s, f);
	if (!err)
		err = cfg__order(&g);
	if (err)
		goto out;
	cfg__dominators(&g);
	err = -ENOMEM;
	if (!(stack = malloc(g.n * sizeof(*stack))) || !(inner = malloc(g.n * sizeof(*inner))))
		goto out;
	for (uint32_t b = 0; b < g.n; b++) {
		for (int k = 0; k < 2; k++) {
			uint32_t h = g.succ[2 * b + k], sp = 0, li;
			struct nloop *l;

			if (h == GT_SASS_NONE || !dominates(&g, h, b))
				continue;
			for (li = 0; li < n_loops && loops[li].header != h; li++)
				;
			if (li == n_loops) {
				struct nloop *grown = realloc(loops, (n_loops + 1) * sizeof(*grown));

				if (!grown)
					goto out;
				loops = grown;
				loops[n_loops].header = h;
				loops[n_loops].size = 1;
				if (!(loops[n_loops].in = calloc(g.n, 1)))
					goto out;
				loops[n_loops].in[h] = 1;
				n_loops++;
			}
			l = &loops[li];
			/* The blocks that reach the back edge's source without
			 * passing the header. */
			if (!l->in[b]) {
				l->in[b] = 1;
				l->size++;
				stack[sp++] = b;
			}
			while (sp) {
				uint32_t x = stack[--sp];

				for (uint32_t q = g.pred_start[x]; q < g.pred_start[x + 1]; q++) {
					uint32_t p = g.pred[q];

					if (!l->in[p] && g.order[p] != GT_SASS_NONE) {
						l->in[p] = 1;
						l->size++;
						stack[sp++] = p;
					}
				}
			}
		}
	}
	if (n_loops)
		qsort(loops, n_loops, sizeof(*loops), by_size_down);
	for (uint32_t b = 0; b < g.n; b++)
		inner[b] = GT_SASS_NONE;
	for (uint32_t li = 0; li < n_loops; li++) {
		struct gt_sass_loop *sl;

		if (s->n_loops == *cap_loops) {
			uint32_t cap = *cap_loops ? *cap_loops * 2 : 16;
			struct gt_sass_loop *grown = realloc(s->loops, cap * sizeof(*grown));

			if (!grown)
				goto out;
			s->loops = grown;
			*cap_loops = cap;
		}
		sl = &s->loops[s->n_loops];
		sl->header = g.first[loops[li].header];
		sl->parent = inner[loops[li].header];
		sl->function = fi;
		for (uint32_t b = 0; b < g.n; b++)
			if (loops[li].in[b])
				inner[b] = s->n_loops;
		s->n_loops++;
	}
	for (uint32_t i = f->first; i < f->end; i++)
		s->insns[i].loop = inner[g.block_of[i - f->first]];
	err = 0;
out:
	for (uint32_t li = 0; li < n_loops; li++)
		free(loops[li].in);
	free(loops);
	free(stack);
	free(inner);
	cfg__fini(&g);
	return err;
}

int gt_sass__loops(struct gt_sass *s)
{
	uint32_t cap = 0;

	for (uint32_t f = 0; f < s->n_functions; f++) {
		int err = function__loops(s, f, &cap);

		if (err)
			return err;
	}
	return 0;
}
