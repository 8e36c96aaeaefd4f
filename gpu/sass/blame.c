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
	uint32_t *seen;      /* per instruction: the recurrence search that visited it last */
	uint32_t walk;
	uint32_t *stack;
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
	b->seen = calloc(b->n ? b->n : 1, sizeof(*b->seen));
	b->stack = malloc(MAX_VISIT * sizeof(*b->stack));
	if (!b->to_start || !b->to || !b->stamp || !b->queue || !b->seen || !b->stack)
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
	free(b->seen);
	free(b->stack);
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

/* Whether instruction @l (global index) is in loop @loop or a loop inside it. */
static int in_loop(const struct gt_sass *s, uint32_t l, uint32_t loop)
{
	for (uint32_t x = s->insns[l].loop; x != GT_SASS_NONE; x = s->loops[x].parent)
		if (x == loop)
			return 1;
	return 0;
}

/*
 * Whether producer @p (section-relative) depends on the result of the
 * waiting instruction @w within their loop @loop: a recurrence (v = f(v)
 * from one iteration to the next), whose waits no unrolling overlaps. The
 * producers of @p's operands, and theirs, are followed back through the
 * loop's instructions (around its back edge too), at most MAX_VISIT.
 */
static int recurrence(struct blamer *b, uint32_t p, uint32_t w, uint32_t loop)
{
	const struct gt_sass *s = b->s;
	uint32_t top = 0, visits = 0, cand[64];

	b->walk++;
	b->seen[p] = b->walk;
	b->stack[top++] = p;
	while (top && visits < MAX_VISIT) {
		uint32_t x = b->stack[--top];
		const struct gt_sass_insn *in = &s->insns[b->first + x];

		visits++;
		for (int u = 0; u < in->n_use; u++) {
			uint32_t n = producers(b, x, in->use[u], cand, 0, 64);

			for (uint32_t k = 0; k < n; k++) {
				uint32_t q = cand[k];

				if (q == w)
					return 1;
				if (b->seen[q] == b->walk || !in_loop(s, b->first + q, loop) || top == MAX_VISIT)
					continue;
				b->seen[q] = b->walk;
				b->stack[top++] = q;
			}
		}
	}
	return 0;
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
	if (inloop)
		memset(inloop, 0, (size_t)b.n * sizeof(*inloop));
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
				    in->loop != GT_SASS_NONE && p->loop == in->loop &&
				    !recurrence(&b, keep[k], i, in->loop))
					inloop[keep[k]] += part;
			}
		}
	}
	blamer__fini(&b);
	return 0;
}
