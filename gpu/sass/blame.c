/* SPDX-License-Identifier: MIT */
/*
 * The instruction blamer (sass.h says what it does; seed 004, section 4).
 * What this version leaves out of GPA's: the scoreboard barriers of the
 * control codes (nvdisasm's text does not show them), predicate coverage
 * (the search stops at the first write of a register on a path, guarded
 * or not), and the apportioning by path length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/sass/sass-internal.h"

/* Instructions looked at, at most, for one waiting instruction. */
#define MAX_VISIT 512

struct blamer {
	const struct gt_sass *s;
	uint32_t first, n;   /* the section's instructions */
	uint32_t *to_start;  /* branches into each instruction: CSR over the section */
	uint32_t *to;
	uint32_t *stamp;     /* per instruction: the search that visited it last */
	uint32_t search;
	uint32_t *queue;
	uint32_t *scc;       /* per instruction: its loop's dependence component (recurrences()) */
	uint8_t *self;       /* per instruction: it depends on itself around its loop */
};

/* Whether control reaches @i from the instruction before it. */
static int falls_into(const struct gt_sass *s, uint32_t i, uint32_t first)
{
	const struct gt_sass_insn *b;

	if (i == first || s->insns[i - 1].function != s->insns[i].function)
		return 0;
	b = &s->insns[i - 1];
	if ((b->flags & (GT_SASS_F_BRANCH | GT_SASS_F_END | GT_SASS_F_INDIRECT)) && !(b->flags & GT_SASS_F_PRED))
		return 0;
	return 1;
}

static int blamer__init(struct blamer *b, const struct gt_sass *s, uint32_t section)
{
	const struct gt_sass_section *S = &s->sections[section];

	memset(b, 0, sizeof(*b));
	b->s = s;
	b->first = S->first;
	b->n = S->end - S->first;
	b->to_start = calloc(b->n + 1, sizeof(*b->to_start));
	b->to = malloc((b->n ? b->n : 1) * sizeof(*b->to));
	b->stamp = calloc(b->n ? b->n : 1, sizeof(*b->stamp));
	b->queue = malloc(MAX_VISIT * sizeof(*b->queue));
	b->scc = malloc((b->n ? b->n : 1) * sizeof(*b->scc));
	b->self = calloc(b->n ? b->n : 1, sizeof(*b->self));
	if (!b->to_start || !b->to || !b->stamp || !b->queue || !b->scc || !b->self)
		return -ENOMEM;
	for (uint32_t i = S->first; i < S->end; i++) {
		uint32_t t = s->insns[i].target;

		if ((s->insns[i].flags & GT_SASS_F_BRANCH) && t >= S->first && t < S->end)
			b->to_start[t - S->first + 1]++;
	}
	for (uint32_t i = 0; i < b->n; i++)
		b->to_start[i + 1] += b->to_start[i];
	{
		uint32_t *fill = calloc(b->n ? b->n : 1, sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		for (uint32_t i = S->first; i < S->end; i++) {
			uint32_t t = s->insns[i].target;

			if ((s->insns[i].flags & GT_SASS_F_BRANCH) && t >= S->first && t < S->end)
				b->to[b->to_start[t - S->first] + fill[t - S->first]++] = i - S->first;
		}
		free(fill);
	}
	return 0;
}

static void blamer__fini(struct blamer *b)
{
	free(b->to_start);
	free(b->to);
	free(b->stamp);
	free(b->queue);
	free(b->scc);
	free(b->self);
}

static int writes(const struct gt_sass_insn *in, uint16_t reg)
{
	if (in->flags & GT_SASS_F_CALL)
		return 1; /* a call may write any register */
	for (int k = 0; k < in->n_def; k++)
		if (in->def[k] == reg)
			return 1;
	return 0;
}

/* The producers of @reg for instruction @i (section-relative): the first
 * writes of it on the paths that lead to @i, into @out (deduplicated). */
static uint32_t producers(struct blamer *b, uint32_t i, uint16_t reg, uint32_t *out, uint32_t n_out, uint32_t max)
{
	const struct gt_sass *s = b->s;
	uint32_t head = 0, tail = 0;

	b->search++;
	/* The predecessors of @i to start from. */
#define PUSH_PREDS(x)                                                                          \
	do {                                                                                   \
		if (falls_into(s, b->first + (x), b->first) && tail < MAX_VISIT &&            \
		    b->stamp[(x) - 1] != b->search) {                                          \
			b->stamp[(x) - 1] = b->search;                                         \
			b->queue[tail++] = (x) - 1;                                            \
		}                                                                              \
		for (uint32_t k_ = b->to_start[x]; k_ < b->to_start[(x) + 1] && tail < MAX_VISIT; k_++) \
			if (b->stamp[b->to[k_]] != b->search) {                                \
				b->stamp[b->to[k_]] = b->search;                               \
				b->queue[tail++] = b->to[k_];                                  \
			}                                                                      \
	} while (0)
	PUSH_PREDS(i);
	while (head < tail) {
		uint32_t q = b->queue[head++];

		if (s->insns[b->first + q].function != s->insns[b->first + i].function)
			continue;
		if (writes(&s->insns[b->first + q], reg)) {
			uint32_t k;

			for (k = 0; k < n_out && out[k] != q; k++)
				;
			if (k == n_out && n_out < max)
				out[n_out++] = q;
			continue;
		}
		PUSH_PREDS(q);
	}
#undef PUSH_PREDS
	return n_out;
}

/* The kind of stall an instruction of class @cls and opcode flags causes
 * when waited for, or -1 if it cannot cause a wait of kind @wait. */
static int kind_of(const struct gt_sass_insn *p, enum gt_sass_wait wait)
{
	int memory = p->cls == GT_SASS_GLOBAL || p->cls == GT_SASS_LOCAL;
	int mio = p->cls == GT_SASS_SHARED || p->cls == GT_SASS_SFU || p->cls == GT_SASS_CONVERT ||
		  p->cls == GT_SASS_OTHER || p->cls == GT_SASS_FP64 || (p->flags & GT_SASS_F_CALL);

	switch (wait) {
	case GT_SASS_WAIT_LONG:
		if (!memory)
			return -1;
		return p->cls == GT_SASS_LOCAL ? GT_SASS_BLAME_LOCAL : GT_SASS_BLAME_GLOBAL;
	case GT_SASS_WAIT_SHORT:
		if (!mio)
			return -1;
		return p->cls == GT_SASS_SHARED	 ? GT_SASS_BLAME_SHARED
		       : p->cls == GT_SASS_SFU	 ? GT_SASS_BLAME_SFU
		       : p->cls == GT_SASS_CONVERT ? GT_SASS_BLAME_CONVERT
						 : GT_SASS_BLAME_OTHER;
	case GT_SASS_WAIT_FIXED:
		if (memory || p->cls == GT_SASS_SHARED || p->cls == GT_SASS_SFU || (p->flags & GT_SASS_F_CALL))
			return -1;
		return GT_SASS_BLAME_ARITH;
	default:
		return -1;
	}
}

/*
 * The recurrences of the section's loops: the strongly connected components
 * of the data dependences among the instructions of each innermost loop
 * (an edge from each producer, found by producers(), to the instruction
 * that reads its result, around the back edge too). A wait of an
 * instruction for a producer in its own component is a recurrence (v =
 * f(v) from one iteration to the next), which no unrolling overlaps; a
 * producer depends on itself the same way (an edge to itself). b->scc[i]
 * gets instruction i's component, b->self[i] whether it depends on itself.
 * Edges are found once per instruction, so the cost grows with the loop's
 * size, not with the number of its waits.
 */
struct edge {
	uint32_t from, to;
};

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;

	return a->from != b->from ? (a->from < b->from ? -1 : 1) : (a->to > b->to) - (a->to < b->to);
}

static int recurrences(struct blamer *b)
{
	const struct gt_sass *s = b->s;
	struct edge *e = NULL;
	uint32_t ne = 0, cap = 0, cand[64], *start = NULL, *to = NULL, ncomp;
	int err = -ENOMEM;

	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *in = &s->insns[b->first + x];

		if (in->loop == GT_SASS_NONE)
			continue;
		for (int u = 0; u < in->n_use; u++) {
			uint32_t n = producers(b, x, in->use[u], cand, 0, 64);

			for (uint32_t k = 0; k < n; k++) {
				if (s->insns[b->first + cand[k]].loop != in->loop)
					continue;
				if (ne == cap) {
					struct edge *v = realloc(e, (cap = cap ? 2 * cap : 1024) * sizeof(*e));

					if (!v)
						goto out;
					e = v;
				}
				e[ne++] = (struct edge){ cand[k], x };
			}
		}
	}
	if (ne)
		qsort(e, ne, sizeof(*e), edge_cmp);
	start = calloc(b->n + 1, sizeof(*start));
	to = malloc((ne ? ne : 1) * sizeof(*to));
	if (!start || !to)
		goto out;
	for (uint32_t k = 0; k < ne; k++) {
		start[e[k].from + 1]++;
		to[k] = e[k].to;
		if (e[k].from == e[k].to)
			b->self[e[k].from] = 1;
	}
	for (uint32_t x = 0; x < b->n; x++)
		start[x + 1] += start[x];
	err = gt_sass__scc(b->n, start, to, b->scc, &ncomp);
out:
	free(e);
	free(start);
	free(to);
	return err;
}

/* Whether the wait of @w for @p (section-relative, the same innermost
 * loop) is a recurrence's. */
static int recurrence(const struct blamer *b, uint32_t p, uint32_t w)
{
	return p == w ? b->self[p] : b->scc[p] == b->scc[w];
}

int gt_sass__blame(const struct gt_sass *s, uint32_t section, const uint64_t *stalls, const uint64_t *issued,
		   double *blame, double *inloop)
{
	struct blamer b;
	uint32_t cand[64];
	int err;

	if (!s || section >= s->n_sections)
		return -EINVAL;
	if ((err = blamer__init(&b, s, section))) {
		blamer__fini(&b);
		return err;
	}
	memset(blame, 0, (size_t)b.n * GT_SASS__BLAMES * sizeof(*blame));
	if (inloop) {
		memset(inloop, 0, (size_t)b.n * sizeof(*inloop));
		if ((err = recurrences(&b))) {
			blamer__fini(&b);
			return err;
		}
	}
	for (uint32_t i = 0; i < b.n; i++) {
		const struct gt_sass_insn *in = &s->insns[b.first + i];
		uint32_t n = 0;

		for (int w = 0; w < GT_SASS__WAITS; w++) {
			uint64_t v = stalls[(size_t)i * GT_SASS__WAITS + (size_t)w];
			uint32_t kept = 0, keep[64];
			double total = 0;

			if (!v)
				continue;
			if (!n)
				for (int u = 0; u < in->n_use; u++)
					n = producers(&b, i, in->use[u], cand, n, 64);
			for (uint32_t k = 0; k < n; k++)
				if (kind_of(&s->insns[b.first + cand[k]], (enum gt_sass_wait)w) >= 0) {
					keep[kept++] = cand[k];
					total += (double)issued[cand[k]] + 1;
				}
			if (!kept) {
				blame[(size_t)i * GT_SASS__BLAMES + GT_SASS_BLAME_SELF] += (double)v;
				continue;
			}
			for (uint32_t k = 0; k < kept; k++) {
				const struct gt_sass_insn *p = &s->insns[b.first + keep[k]];
				int kind = kind_of(p, (enum gt_sass_wait)w);
				double part = (double)v * ((double)issued[keep[k]] + 1) / total;

				blame[(size_t)keep[k] * GT_SASS__BLAMES + (size_t)kind] += part;
				/* A wait in the producer's own loop that unrolling can
				 * overlap with another iteration's work: not on local
				 * memory (the spill's advice), not for a call, not a
				 * recurrence. */
				if (inloop && kind != GT_SASS_BLAME_LOCAL && !(p->flags & GT_SASS_F_CALL) &&
				    in->loop != GT_SASS_NONE && p->loop == in->loop && !recurrence(&b, keep[k], i))
					inloop[keep[k]] += part;
			}
		}
	}
	blamer__fini(&b);
	return 0;
}
