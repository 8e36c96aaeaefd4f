/* SPDX-License-Identifier: MIT */
/*
 * GPU calling contexts from flat PC samples (HPCToolkit ICS'20, algorithm 3):
 *
 *   1. the call graph of a section: a vertex per function, an edge per
 *      call instruction, weighted by the samples in which that instruction
 *      issued (see below), else by all of its samples;
 *   2. cycles (Tarjan's strongly connected components) folded into one
 *      vertex each; the edges inside a cycle dropped;
 *   3. propagation: a vertex with samples none of whose callers' calls was
 *      sampled gets one sampled call from each of them, and so on up;
 *   4. the graph split into a tree from the kernel: a callee's context
 *      gets factor(parent) x w(call) / (the weights of all calls of it).
 *
 * Calls from one function to the same callee on the same source line are
 * one edge (an unrolled loop of calls has one call instruction per copy;
 * they are one call site to the reader).
 *
 * Call counts from issued samples: a sample finds the sampled warp issuing
 * in proportion to how often it issues there, one cycle each time, while
 * its stall samples measure how long it waits there, which depends on the
 * code around each call instruction as much as on the calls. On
 * samples/cuda/gpucalls the stall samples of two identical calls in a row
 * came out 1 : 1.65, their issued samples 1.13 : 1. A callee none of whose
 * calls was sampled issuing gets the calls' samples of any kind instead.
 *
 * A call is counted at its instruction and at its return address (the
 * instruction after it, which runs once per return unless a branch also
 * leads there): twice the evidence of the call instruction alone. A callee
 * called from several sites whose calls have fewer than
 * GT_SASS_MIN_SPLIT_SAMPLES such samples in all (min_split) is split evenly among its
 * sites, and its contexts say so (gt_sass_context.undetermined): on a kernel
 * of 5,184 samples whose callee ran ~10^4 instructions per call, one site's
 * call took the only sample and its split came out 0 : 100.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/sass/sass-internal.h"

/* A tree much larger than this is a graph of many diamonds; past it,
 * deeper contexts are cut (their samples stay with the caller's vertex). */
#define MAX_CONTEXTS 100000
#define MIN_FACTOR 1e-9

struct edge {
	uint32_t from, to;	  /* vertices */
	uint32_t call;		  /* the first call instruction of the site */
	double w;		  /* the call count's estimate */
	double issued;		  /* the calls' issued samples, at the calls and their returns */
	uint8_t undetermined;	  /* too few samples to tell its callee's sites apart */
};

struct graph {
	uint32_t nf, fs; /* functions of the section: [fs, fs + nf) */
	uint32_t nv;
	uint32_t *vertex_of_fn;
	uint32_t *first_fn; /* per vertex: the first function of its cycle */
	double *vw;
	struct edge *e;
	uint32_t ne;
};

/* The cycles of the call graph: Tarjan's components over the section's
 * functions, each function's edges followed in their order in @fe. */
static int tarjan(struct graph *g, const struct edge *fe, uint32_t nfe)
{
	uint32_t nf = g->nf, *start = calloc(nf + 1, sizeof(*start)), *to = malloc((nfe ? nfe : 1) * sizeof(*to));
	uint32_t *fill = calloc(nf ? nf : 1, sizeof(*fill));
	int err = -ENOMEM;

	if (start && to && fill) {
		for (uint32_t k = 0; k < nfe; k++)
			start[fe[k].from + 1]++;
		for (uint32_t v = 0; v < nf; v++)
			start[v + 1] += start[v];
		for (uint32_t k = 0; k < nfe; k++)
			to[start[fe[k].from] + fill[fe[k].from]++] = fe[k].to;
		err = gt_sass__scc(nf, start, to, g->vertex_of_fn, &g->nv);
	}
	free(start);
	free(to);
	free(fill);
	return err;
}

static int graph__build(struct graph *g, const struct gt_sass *s, uint32_t sec, const uint64_t *weight,
			const uint64_t *issued, double min_split)
{
	const struct gt_sass_section *S = &s->sections[sec];
	struct edge *fe = NULL;
	uint8_t *target = NULL; /* per instruction: a branch leads there */
	uint32_t nfe = 0;
	int err = -ENOMEM;

	memset(g, 0, sizeof(*g));
	g->fs = S->first < S->end ? s->insns[S->first].function : 0;
	g->nf = S->first < S->end ? s->insns[S->end - 1].function - g->fs + 1 : 0;
	if (!g->nf)
		return -ENOENT;
	if (!(g->vertex_of_fn = malloc(g->nf * sizeof(*g->vertex_of_fn))) ||
	    !(fe = malloc((S->end - S->first) * sizeof(*fe))))
		goto out;
	if (!(target = calloc(S->end - S->first + 1, 1)))
		goto out;
	for (uint32_t i = S->first; i < S->end; i++) {
		const struct gt_sass_insn *in = &s->insns[i];

		if ((in->flags & GT_SASS_F_BRANCH) && in->target >= S->first && in->target < S->end)
			target[in->target - S->first] = 1;
	}
	/* Function-level edges, one per call site (callee, source line). */
	for (uint32_t i = S->first; i < S->end; i++) {
		const struct gt_sass_insn *in = &s->insns[i];
		uint32_t from = in->function - g->fs, to = in->target - g->fs, k;

		if (!(in->flags & GT_SASS_F_CALL) || in->target == GT_SASS_NONE || in->target < g->fs ||
		    to >= g->nf)
			continue;
		for (k = 0; k < nfe; k++) {
			const struct gt_sass_insn *c = &s->insns[fe[k].call];

			if (fe[k].from == from && fe[k].to == to && c->file == in->file && c->line == in->line)
				break;
		}
		if (k == nfe)
			fe[nfe++] = (struct edge){ from, to, i, 0, 0, 0 };
		fe[k].w += (double)weight[i - S->first];
		fe[k].issued += (double)issued[i - S->first];
		/* The return address: the next instruction of the function, when
		 * only the return leads there and it is no call of its own. */
		if (i + 1 < S->end && s->insns[i + 1].function == in->function && !target[i + 1 - S->first] &&
		    !(s->insns[i + 1].flags & GT_SASS_F_CALL)) {
			fe[k].w += (double)weight[i + 1 - S->first];
			fe[k].issued += (double)issued[i + 1 - S->first];
		}
	}
	if ((err = tarjan(g, fe, nfe)))
		goto out;
	err = -ENOMEM;
	if (!(g->vw = calloc(g->nv, sizeof(*g->vw))) || !(g->first_fn = malloc(g->nv * sizeof(*g->first_fn))) ||
	    !(g->e = malloc((nfe ? nfe : 1) * sizeof(*g->e))))
		goto out;
	for (uint32_t v = 0; v < g->nv; v++)
		g->first_fn[v] = GT_SASS_NONE;
	for (uint32_t f = g->nf; f-- > 0;)
		g->first_fn[g->vertex_of_fn[f]] = f;
	for (uint32_t i = S->first; i < S->end; i++)
		g->vw[g->vertex_of_fn[s->insns[i].function - g->fs]] += (double)weight[i - S->first];
	for (uint32_t k = 0; k < nfe; k++) {
		uint32_t a = g->vertex_of_fn[fe[k].from], b = g->vertex_of_fn[fe[k].to];

		if (a != b)
			g->e[g->ne++] = fe[k], g->e[g->ne - 1].from = a, g->e[g->ne - 1].to = b;
	}
	/* Per callee: its calls' issued samples where they are enough to
	 * split it, else their samples of any kind; with fewer than that
	 * from several sites, no count (graph__propagate gives each site one
	 * call), and the split undetermined. */
	for (uint32_t v = 0; v < g->nv; v++) {
		double sum = 0, all = 0;
		uint32_t sites = 0;

		for (uint32_t k = 0; k < g->ne; k++)
			if (g->e[k].to == v) {
				sum += g->e[k].issued;
				all += g->e[k].w;
				sites++;
			}
		for (uint32_t k = 0; k < g->ne; k++) {
			struct edge *e = &g->e[k];

			if (e->to != v)
				continue;
			if (sum >= min_split || (sum > 0 && sites == 1))
				e->w = e->issued;
			else if (sites > 1 && all < min_split) {
				e->w = 0;
				e->undetermined = 1;
			}
		}
	}
	err = 0;
out:
	free(fe);
	free(target);
	return err;
}

static void graph__fini(struct graph *g)
{
	free(g->vertex_of_fn);
	free(g->first_fn);
	free(g->vw);
	free(g->e);
}

/* Step 3: every vertex with samples gets a sampled call. */
static int graph__propagate(struct graph *g)
{
	uint32_t *q = malloc((g->nv ? g->nv : 1) * sizeof(*q)), head = 0, tail = 0;
	uint8_t *queued = calloc(g->nv ? g->nv : 1, 1);

	if (!q || !queued) {
		free(q);
		free(queued);
		return -ENOMEM;
	}
	for (uint32_t v = 0; v < g->nv; v++)
		if (g->vw[v] > 0) {
			q[tail++] = v;
			queued[v] = 1;
		}
	while (head < tail) {
		uint32_t v = q[head++];
		int called = 0;

		for (uint32_t k = 0; k < g->ne && !called; k++)
			called = g->e[k].to == v && g->e[k].w > 0;
		if (called)
			continue;
		for (uint32_t k = 0; k < g->ne; k++) {
			struct edge *e = &g->e[k];

			if (e->to != v)
				continue;
			if (g->vw[e->from] == 0 && !queued[e->from]) {
				q[tail++] = e->from;
				queued[e->from] = 1;
			}
			e->w = 1;
			g->vw[e->from] += 1;
		}
	}
	free(q);
	free(queued);
	return 0;
}

static int push(struct gt_sass_gcct *out, uint32_t *cap, struct gt_sass_context c)
{
	if (out->n_contexts == *cap) {
		uint32_t n = *cap ? *cap * 2 : 16;
		struct gt_sass_context *grown = realloc(out->contexts, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		out->contexts = grown;
		*cap = n;
	}
	out->contexts[out->n_contexts++] = c;
	return 0;
}

int gt_sass__gcct(const struct gt_sass *s, uint32_t section, const uint64_t *weight, const uint64_t *issued,
		  double min_split, struct gt_sass_gcct *out)
{
	const struct gt_sass_section *S;
	struct graph g;
	double *in_w = NULL;
	uint8_t *reached = NULL;
	uint32_t cap = 0, root;
	int err;

	memset(out, 0, sizeof(*out));
	if (!s || section >= s->n_sections)
		return -EINVAL;
	S = &s->sections[section];
	if ((err = graph__build(&g, s, section, weight, issued, min_split))) {
		graph__fini(&g);
		return err;
	}
	if ((err = graph__propagate(&g)))
		goto out;
	err = -ENOMEM;
	out->n_insns = S->end - S->first;
	out->n_vertices = g.nv;
	if (!(out->vertex = malloc(out->n_insns * sizeof(*out->vertex))) || !(in_w = calloc(g.nv, sizeof(*in_w))) ||
	    !(reached = calloc(g.nv, 1)))
		goto out;
	for (uint32_t i = S->first; i < S->end; i++)
		out->vertex[i - S->first] = g.vertex_of_fn[s->insns[i].function - g.fs];
	for (uint32_t k = 0; k < g.ne; k++)
		in_w[g.e[k].to] += g.e[k].w;
	/* Step 4, depth first with the tree itself as the stack: contexts
	 * are appended, and each is expanded once, in order. */
	root = g.vertex_of_fn[0];
	if (push(out, &cap, (struct gt_sass_context){ GT_SASS_NONE, GT_SASS_NONE, g.fs, root, 1.0, 0 }))
		goto out;
	reached[root] = 1;
	for (uint32_t c = 0; c < out->n_contexts; c++) {
		uint32_t v = out->contexts[c].vertex;
		double factor = out->contexts[c].factor;

		for (uint32_t k = 0; k < g.ne; k++) {
			const struct edge *e = &g.e[k];
			double f;

			if (e->from != v || e->w <= 0 || g.vw[e->to] <= 0 || in_w[e->to] <= 0)
				continue;
			f = factor * e->w / in_w[e->to];
			if (f < MIN_FACTOR || out->n_contexts >= MAX_CONTEXTS)
				continue;
			if (push(out, &cap,
				 (struct gt_sass_context){ c, e->call, s->insns[e->call].target, e->to, f,
							   e->undetermined }))
				goto out;
			reached[e->to] = 1;
		}
	}
	/* Samples in functions that no call from the kernel reaches. */
	for (uint32_t v = 0; v < g.nv; v++) {
		int sampled = 0;

		for (uint32_t i = S->first; i < S->end && !sampled; i++)
			sampled = out->vertex[i - S->first] == v && weight[i - S->first];
		if (!reached[v] && sampled &&
		    push(out, &cap, (struct gt_sass_context){ 0, GT_SASS_NONE, g.fs + g.first_fn[v], v, 1.0, 0 }))
			goto out;
	}
	err = 0;
out:
	free(in_w);
	free(reached);
	graph__fini(&g);
	if (err)
		gt_sass__gcct_fini(out);
	return err;
}

void gt_sass__gcct_fini(struct gt_sass_gcct *g)
{
	free(g->contexts);
	free(g->vertex);
	memset(g, 0, sizeof(*g));
}
