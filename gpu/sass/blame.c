/* SPDX-License-Identifier: MIT */
/*
 * The instruction blamer (sass.h says what it does; GPA (CGO'21), section 4).
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
	uint8_t *idiom;      /* per instruction: part of a long-latency arithmetic idiom (idioms()):
			      * IDIOM_GOES, or IDIOM_STAYS for the ones its cheaper form keeps */
	uint32_t *unrolled;  /* per loop of the module: how often it is unrolled already (unrolled()) */
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
	b->idiom = calloc(b->n ? b->n : 1, sizeof(*b->idiom));
	b->unrolled = calloc(s->n_loops ? s->n_loops : 1, sizeof(*b->unrolled));
	if (!b->to_start || !b->to || !b->stamp || !b->queue || !b->scc || !b->self || !b->idiom || !b->unrolled)
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
	free(b->idiom);
	free(b->unrolled);
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

/* An idiom's instructions: those its cheaper form removes, and the start
 * and the first instruction that reads it, which stand for the one or two
 * instructions of the cheaper form (a shift and a mask for an integer
 * division by a power of two; a reciprocal and a multiplication for
 * __fdividef; MUFU.SIN and its argument's scaling for __sinf). */
enum { IDIOM_GOES = 1, IDIOM_STAYS = 2 };

/* @in reads @reg; with @skip_guard, not counting its guard (the first use
 * of a predicated instruction). */
static int reads(const struct gt_sass_insn *in, uint16_t reg, int skip_guard)
{
	for (int u = skip_guard && (in->flags & GT_SASS_F_PRED) ? 1 : 0; u < in->n_use; u++)
		if (in->use[u] == reg)
			return 1;
	return 0;
}

/* An idiom's slow path and its range check (sass.h): the paths that a
 * BSSY Bn parts and its BSYNC Bn joins, around an idiom's start, where a
 * guarded branch after the start is decided by a comparison between them
 * that reads the start's operand or an idiom's result (sinf's |x| against
 * 105615, precise division's FCHK, sqrtf's range). The cheaper form has
 * no slow path: the BSSY, the BSYNC, those branches and their comparisons
 * go. A condition of the program around the idiom is tested before its
 * start, and its paths hold the idiom's own: neither is one. */
static void slow_paths(struct blamer *b, uint8_t *mark)
{
	const struct gt_sass *s = b->s;
	uint32_t cand[64];

	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *d = &s->insns[b->first + x], *st = NULL;
		uint32_t join = UINT32_MAX, start = UINT32_MAX;
		int hit = 0;

		if (!(d->flags & GT_SASS_F_SPLIT) || d->n_def != 1)
			continue;
		for (uint32_t y = x + 1; y < b->n && y <= x + GT_SASS_IDIOM_SPAN; y++) {
			const struct gt_sass_insn *in = &s->insns[b->first + y];

			/* The idiom's own paths are the innermost around its
			 * start: a BSSY before the start parts others. */
			if (in->function != d->function ||
			    ((in->flags & GT_SASS_F_SPLIT) && (start == UINT32_MAX || writes(in, d->def[0]))))
				break;
			if ((in->flags & GT_SASS_F_JOIN) && reads(in, d->def[0], 0)) {
				join = y;
				break;
			}
			if (start == UINT32_MAX && mark[y] &&
			    (in->flags & (GT_SASS_F_DIVISOR | GT_SASS_F_MATH | GT_SASS_F_RECIP | GT_SASS_F_SQRT)))
				start = y;
		}
		if (join == UINT32_MAX || start == UINT32_MAX)
			continue;
		st = &s->insns[b->first + start];
		for (uint32_t z = start + 1; z < join; z++) {
			const struct gt_sass_insn *br = &s->insns[b->first + z];
			uint32_t n;

			if ((br->flags & (GT_SASS_F_BRANCH | GT_SASS_F_PRED)) != (GT_SASS_F_BRANCH | GT_SASS_F_PRED) || !br->n_use)
				continue;
			n = producers(b, z, br->use[0], cand, 0, 64);
			for (uint32_t k = 0; k < n; k++) {
				const struct gt_sass_insn *cmp = &s->insns[b->first + cand[k]];
				int check = mark[cand[k]] != 0;

				for (int u = 0; u < st->n_use && !check; u++)
					check = reads(cmp, st->use[u], 1);
				if (cand[k] <= x || cand[k] >= z || !check)
					continue;
				if (!mark[cand[k]])
					mark[cand[k]] = IDIOM_GOES;
				if (!mark[z])
					mark[z] = IDIOM_GOES;
				hit = 1;
			}
		}
		if (hit) {
			mark[x] = mark[x] ? mark[x] : IDIOM_GOES;
			mark[join] = mark[join] ? mark[join] : IDIOM_GOES;
		}
	}
}

/* The constants only an idiom reads (sass.h, GT_SASS_F_CONST), in its own
 * loop: a precise function's polynomial coefficients, set into registers
 * before it, go with it; a constant that anything else reads stays, as
 * does one set outside the loop (an accumulator's start). */
static void constants(struct blamer *b, uint8_t *mark)
{
	const struct gt_sass *s = b->s;
	uint32_t cand[64];

	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *d = &s->insns[b->first + x];
		uint32_t readers = 0;
		int all = 1;

		if (!(d->flags & GT_SASS_F_CONST) || mark[x])
			continue;
		for (uint32_t y = x + 1; all && y < b->n && y <= x + GT_SASS_IDIOM_SPAN; y++) {
			const struct gt_sass_insn *in = &s->insns[b->first + y];
			uint32_t n;

			if (in->function != d->function)
				break;
			if (!reads(in, d->def[0], 0))
				continue;
			n = producers(b, y, d->def[0], cand, 0, 64);
			for (uint32_t k = 0; k < n; k++)
				if (cand[k] == x) {
					readers++;
					all = mark[y] && in->loop == d->loop;
				}
		}
		if (readers && all)
			mark[x] = IDIOM_GOES;
	}
}

/*
 * The long-latency arithmetic idioms (sass.h, gt_sass__blame's @idiom): from each
 * start, forward over GT_SASS_IDIOM_SPAN instructions of its function in
 * program order and in the start's own innermost loop, the instructions
 * one of whose operands a marked one may have written (producers(): the
 * writes that reach it along the control flow, so that a path around the
 * idiom, as sinf's rarely taken slow path between its reduction and its
 * polynomial, neither joins it nor cuts it).
 */
static void idioms(struct blamer *b, uint8_t *mark)
{
	const struct gt_sass *s = b->s;
	uint32_t cand[64];

	memset(mark, 0, b->n ? b->n : 1);
	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *d = &s->insns[b->first + x];

		/* The cheaper form's instructions yet to find after the
		 * start, and how many the idiom has after it: a precise
		 * division's fast path keeps one multiplication (the start's
		 * place) by MUFU.RCP's result, which stays; sqrtf's keeps its
		 * MUFU.RSQ's place (MUFU.SQRT). */
		int kept = 1, bounded = 0;
		uint32_t left = UINT32_MAX;

		if (!(d->flags & (GT_SASS_F_DIVISOR | GT_SASS_F_MATH | GT_SASS_F_RECIP | GT_SASS_F_SQRT)))
			continue;
		if (d->flags & GT_SASS_F_RECIP) {
			kept = 0;
			left = 4;
			bounded = 1;
		} else if (d->flags & GT_SASS_F_SQRT) {
			uint32_t rsq = UINT32_MAX;

			for (uint32_t y = x >= 2 ? x - 2 : 0; y < b->n && y <= x + 2; y++) {
				const struct gt_sass_insn *r = &s->insns[b->first + y];

				if ((r->flags & GT_SASS_F_RSQ) && r->function == d->function && r->n_use &&
				    d->n_use && r->use[r->n_use - 1] == d->use[d->n_use - 1])
					rsq = y;
			}
			if (rsq == UINT32_MAX || mark[rsq])
				continue;
			mark[rsq] = IDIOM_STAYS;
			kept = 0;
			left = 5;
			bounded = 1;
		}
		mark[x] = bounded && !(d->flags & GT_SASS_F_RECIP) ? IDIOM_GOES : IDIOM_STAYS;
		for (uint32_t y = x + 1; y < b->n && y <= x + GT_SASS_IDIOM_SPAN; y++) {
			const struct gt_sass_insn *in = &s->insns[b->first + y];

			if (in->function != d->function)
				break;
			/* What a loop does with a value computed before it (a
			 * reciprocal computed once) is the cheap form. */
			if (mark[y] || in->loop != d->loop || (in->flags & GT_SASS_F_CALL) || in->cls == GT_SASS_GLOBAL ||
			    in->cls == GT_SASS_LOCAL || in->cls == GT_SASS_SHARED || in->cls == GT_SASS_CONTROL)
				continue;
			/* The guard (the first use of a predicated instruction)
			 * only selects the threads: what an idiom's comparison
			 * guards uses its result, as the cheaper form's would. */
			for (int u = (in->flags & GT_SASS_F_PRED) ? 1 : 0; u < in->n_use && !mark[y]; u++) {
				uint32_t n = producers(b, y, in->use[u], cand, 0, 64);

				for (uint32_t k = 0; k < n && !mark[y]; k++)
					mark[y] = mark[cand[k]] ? IDIOM_GOES : 0;
			}
			if (mark[y] && kept > 0) {
				mark[y] = IDIOM_STAYS;
				kept--;
			}
			/* A short idiom ends with its result: its consumers are not part. */
			if (mark[y] && bounded && !--left)
				break;
		}
	}
	slow_paths(b, mark);
	constants(b, mark);
}

/* The kind of stall an instruction of class @cls and opcode flags causes
 * when waited for, or -1 if it cannot cause a wait of kind @wait; @idiom:
 * it is part of a long-latency arithmetic idiom (an integer division, a
 * precise math function), whose arithmetic and special functions count as
 * the conversions the integer division starts from. */
static int kind_of(const struct gt_sass_insn *p, int idiom, enum gt_sass_wait wait)
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
		return p->cls == GT_SASS_SHARED			 ? GT_SASS_BLAME_SHARED
		       : p->cls == GT_SASS_CONVERT || idiom ? GT_SASS_BLAME_CONVERT
		       : p->cls == GT_SASS_SFU		 ? GT_SASS_BLAME_SFU
							 : GT_SASS_BLAME_OTHER;
	case GT_SASS_WAIT_FIXED:
		if (memory || p->cls == GT_SASS_SHARED || p->cls == GT_SASS_SFU || (p->flags & GT_SASS_F_CALL))
			return -1;
		return idiom ? GT_SASS_BLAME_CONVERT : GT_SASS_BLAME_ARITH;
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

struct line_load {
	uint32_t loop, file, line;
};

static int line_load_cmp(const void *x, const void *y)
{
	const struct line_load *a = x, *b = y;

	if (a->loop != b->loop)
		return a->loop < b->loop ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

/* The last instruction before @x in its loop, back to the loop's header,
 * that writes register @r; GT_SASS_NONE if none. */
static uint32_t def_before(const struct blamer *b, uint32_t x, uint16_t r)
{
	const struct gt_sass *s = b->s;
	uint32_t l = s->insns[b->first + x].loop, head = s->loops[l].header;

	while (x-- > 0 && b->first + x >= head) {
		const struct gt_sass_insn *in = &s->insns[b->first + x];

		if (in->loop != l)
			continue;
		for (int d = 0; d < in->n_def; d++)
			if (in->def[d] == r)
				return x;
	}
	return GT_SASS_NONE;
}

/* Whether loop @l holds another loop. */
static int has_inner(const struct gt_sass *s, uint32_t l)
{
	for (uint32_t i = 0; i < s->n_loops; i++)
		if (s->loops[i].parent == l)
			return 1;
	return 0;
}

/* Whether @in adds an immediate to the register it writes (R = R + imm). */
static int steps_itself(const struct gt_sass_insn *in)
{
	return in->addi && in->n_def == 1 && in->n_use == 1 && in->def[0] == in->use[0];
}

/* The step by which loop @l adds an immediate to register @r itself (R =
 * R + imm), as a magnitude; 0 if it does not. */
static uint32_t self_step(const struct blamer *b, uint32_t l, uint16_t r)
{
	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *in = &b->s->insns[b->first + x];

		if (in->loop == l && steps_itself(in) && in->def[0] == r)
			return (uint32_t)(in->addi < 0 ? -(int64_t)in->addi : in->addi);
	}
	return 0;
}

/*
 * The step of the counter that loop back edge @x (a branch to its loop's
 * header) tests: the compare that writes its guard reads a register that
 * the loop steps by an immediate (R = R + imm), or that an add of an
 * immediate makes from one (R37 = R27 + 3, R27 = R27 + 4, in either
 * order). The compiler unrolling a loop of step 1 u times steps its
 * counter by u. 0 where no such counter is found (a step in a register,
 * a pointer compared, an unguarded back edge).
 */
static uint32_t counter_step(const struct blamer *b, uint32_t x)
{
	const struct gt_sass *s = b->s;
	const struct gt_sass_insn *br = &s->insns[b->first + x], *cmp;
	uint32_t c = GT_SASS_NONE, l = br->loop, step;

	for (int u = 0; u < br->n_use && c == GT_SASS_NONE; u++)
		if (br->use[u] >= GT_SASS_REG_P && br->use[u] < GT_SASS_REG_UR)
			c = def_before(b, x, br->use[u]);
	if (c == GT_SASS_NONE)
		return 0;
	cmp = &s->insns[b->first + c];
	for (int u = 0; u < cmp->n_use; u++) {
		uint32_t d;
		const struct gt_sass_insn *in;

		if (cmp->use[u] >= GT_SASS_REG_P)
			continue;
		if ((step = self_step(b, l, cmp->use[u])))
			return step;
		d = def_before(b, c, cmp->use[u]);
		in = d != GT_SASS_NONE ? &s->insns[b->first + d] : NULL;
		if (in && in->addi && !steps_itself(in) && in->n_use == 1 && (step = self_step(b, l, in->use[0])))
			return step;
	}
	return 0;
}

/*
 * How many times each innermost loop of the section is unrolled already,
 * by the compiler or by hand: the most loads of one source line it holds
 * (memory instructions that write a register), as each copy of the body
 * repeats its loads; 1 for a loop without loads. Two loads of one line in
 * a rolled loop (a[i] + b[i]) read as unrolled twice: they overlap
 * already, as two iterations' loads would.
 */
static int unrolled(struct blamer *b)
{
	const struct gt_sass *s = b->s;
	struct line_load *l = malloc((b->n ? b->n : 1) * sizeof(*l));
	uint32_t n = 0;

	if (!l)
		return -ENOMEM;
	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *in = &s->insns[b->first + x];

		if (in->loop != GT_SASS_NONE && in->file != GT_SASS_NONE && in->n_def &&
		    !(in->flags & GT_SASS_F_CALL) &&
		    (in->cls == GT_SASS_GLOBAL || in->cls == GT_SASS_LOCAL || in->cls == GT_SASS_SHARED))
			l[n++] = (struct line_load){ in->loop, in->file, in->line };
	}
	if (n)
		qsort(l, n, sizeof(*l), line_load_cmp);
	for (uint32_t i = 0, run = 0; i < n; i++) {
		run = i && !line_load_cmp(&l[i - 1], &l[i]) ? run + 1 : 1;
		if (run > b->unrolled[l[i].loop])
			b->unrolled[l[i].loop] = run;
	}
	free(l);
	/* Read as unrolled GT_GPO_UNROLL_BY times or more, a loop with no
	 * loop inside must show it in its counter too: the loads of one line
	 * also count the fields of one element (a 32-byte struct read in two
	 * 128-bit loads, once in each of two copies, reads as 4). In a loop
	 * around others they are the inner loops' peeled or fully unrolled
	 * iterations, which copies of the outer body would not overlap: the
	 * loads' count stands. */
	for (uint32_t x = 0; x < b->n; x++) {
		const struct gt_sass_insn *in = &s->insns[b->first + x];
		uint32_t lp = in->loop, step;

		if (lp != GT_SASS_NONE && (in->flags & GT_SASS_F_BRANCH) && in->target == s->loops[lp].header &&
		    b->unrolled[lp] >= GT_GPO_UNROLL_BY && !has_inner(s, lp) && (step = counter_step(b, x)) &&
		    step < b->unrolled[lp])
			b->unrolled[lp] = step;
	}
	return 0;
}

/* The share of a loop's overlappable waits that unrolling it
 * GT_GPO_UNROLL_BY times hides, as unrolled @u times already. */
static double hidden(uint32_t u)
{
	if (u < 1)
		u = 1;
	return u >= GT_GPO_UNROLL_BY ? 0 : 1.0 - (double)u / GT_GPO_UNROLL_BY;
}

int gt_sass__blame(const struct gt_sass *s, uint32_t section, const uint64_t *stalls, const uint64_t *issued,
		   double *blame, double *inloop, uint8_t *idiom)
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
	idioms(&b, b.idiom);
	for (uint32_t i = 0; idiom && i < b.n; i++)
		idiom[i] = b.idiom[i] == IDIOM_GOES;
	if (inloop) {
		memset(inloop, 0, (size_t)b.n * sizeof(*inloop));
		if ((err = recurrences(&b)) || (err = unrolled(&b))) {
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
				if (kind_of(&s->insns[b.first + cand[k]], b.idiom[cand[k]], (enum gt_sass_wait)w) >= 0) {
					keep[kept++] = cand[k];
					total += (double)issued[cand[k]] + 1;
				}
			if (!kept) {
				blame[(size_t)i * GT_SASS__BLAMES + GT_SASS_BLAME_SELF] += (double)v;
				continue;
			}
			for (uint32_t k = 0; k < kept; k++) {
				const struct gt_sass_insn *p = &s->insns[b.first + keep[k]];
				int kind = kind_of(p, b.idiom[keep[k]], (enum gt_sass_wait)w);
				double part = (double)v * ((double)issued[keep[k]] + 1) / total;

				blame[(size_t)keep[k] * GT_SASS__BLAMES + (size_t)kind] += part;
				/* A wait in the producer's own loop that unrolling can
				 * overlap with another iteration's work: not on local
				 * memory (the spill's advice), not for a call, not a
				 * recurrence; the part that unrolling the loop
				 * GT_GPO_UNROLL_BY times hides, as unrolled already. */
				if (inloop && kind != GT_SASS_BLAME_LOCAL && !(p->flags & GT_SASS_F_CALL) &&
				    in->loop != GT_SASS_NONE && p->loop == in->loop && !recurrence(&b, keep[k], i))
					inloop[keep[k]] += part * hidden(b.unrolled[in->loop]);
			}
		}
	}
	blamer__fini(&b);
	return 0;
}
