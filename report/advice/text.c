/* SPDX-License-Identifier: MIT */
/*
 * The advice as the writers show it: each kind's id, title, "try" text and
 * scope from kinds.h, and the "What to do next" section of the text report.
 * The JSON writer (report/fmt-json.c) reads the same accessors, so that a
 * new kind needs no change in either.
 */
#include "report/next.h"

#include <inttypes.h>
#include <stdio.h>

#include "report/ptree.h"

static const struct {
	const char *id, *title, *todo, *subject;
	enum gt_advice_scope scope;
} kinds[GT_NEXT_KINDS] = {
#define X(id_, json, scope_, subject_, title_, todo_) \
	[GT_NEXT_##id_] = { json, title_, todo_, subject_, GT_ADVICE_##scope_ },
	GT_ADVICE_KINDS(X)
#undef X
};

int gt_next__of_kernel(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS && kinds[k].scope == GT_ADVICE_KERNEL;
}

const char *gt_next__id(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS ? kinds[k].id : "?";
}

const char *gt_next__title(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS ? kinds[k].title : "?";
}

const char *gt_next__todo(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS ? kinds[k].todo : "";
}

const char *gt_next__subject(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS ? kinds[k].subject : NULL;
}

const char *gt_next__none_why(const struct gt_profile *p)
{
	return gt_next__applies(p) ? "no check found a change worth a line (docs/ADVICE.md gives their thresholds)"
				   : "the run measured none of what the checks read (parallel regions, PC samples, "
				     "instruction counts, pageable or resent copies, launch gaps, waits, OpenCL's "
				     "counts): a CPU-only run is advised on its parallel regions only";
}

static void put_time(FILE *f, uint64_t ns)
{
	if (ns >= 1000000000)
		fprintf(f, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		fprintf(f, "%.3f ms", (double)ns / 1e6);
	else
		fprintf(f, "%.3f us", (double)ns / 1e3);
}

int gt_next__write_text(const struct gt_profile *p, const struct gt_next_list *l, FILE *f, unsigned top)
{
	char what[256], ctx[GT_PTREE_WHERE_COLS + 512], path[GT_PTREE_WHERE_COLS + 512];
	uint32_t shown = l->n < top ? l->n : top;

	if (!l->n) {
		fprintf(f, "\nNo advice applies: %s\n", gt_next__none_why(p));
		return 0;
	}
	fprintf(f, "\nWhat to do next (%" PRIu32 " of %" PRIu32 ", by the estimated gain of the whole program;"
		   " how each is estimated: docs/ADVICE.md)\n",
		shown, l->n);
	for (uint32_t k = 0; k < shown; k++) {
		const struct gt_next *n = &l->v[k];
		int kernel = gt_next__of_kernel(n->kind);
		const char *subject = gt_next__subject(n->kind);
		size_t len = 0;

		what[0] = 0;
		gt_ptree__label(p, n->node, what, sizeof(what), &len);
		fprintf(f, "  %2" PRIu32 ". ", k + 1);
		if (n->program > 0) {
			fprintf(f, "program %s%.3fx, saves ", n->upper_bound ? "up to " : "", n->program);
			put_time(f, n->saved_ns);
		} else {
			fputs("gain not estimated", f);
		}
		fprintf(f, ": %s%s%s\n", kernel ? what : "", kernel ? ": " : "", gt_next__title(n->kind));
		if (n->line != GT_NONE && kernel) {
			len = 0;
			what[0] = 0;
			gt_ptree__label(p, n->line, what, sizeof(what), &len);
			gt_ptree__kernel_of(p, n->line, path, sizeof(path));
			fprintf(f, "        at %s%s%s\n", what, path[0] ? " in " : "", path);
		}
		fprintf(f, "        %s\n", n->why);
		if (n->speedup > 0 && subject) {
			fprintf(f, "        the %s: %.2fx faster (", subject, n->speedup);
			put_time(f, n->time_ns);
			fputs(" -> ", f);
			put_time(f, (uint64_t)((double)n->time_ns / n->speedup));
			/* A kernel's gain counts for the program as far as blame
			 * measured the CPU's wait for it. */
			fprintf(f, ")%s\n",
				kernel && n->upper_bound ? "; no blame measured: all of it counted as the program's" : "");
		}
		fprintf(f, "        try: %s\n", n->todo);
		gt_ptree__where(p, kernel ? gt_ptree__launch_site(p, n->node) : n->node, ctx, sizeof(ctx));
		fprintf(f, "        %s %s\n", kernel ? "launched at" : "at", ctx);
		/* Outside a kernel, the line names the CPU work that overlaps. */
		if (!kernel && n->line != GT_NONE) {
			gt_ptree__where(p, n->line, ctx, sizeof(ctx));
			fprintf(f, "        CPU work at %s\n", ctx);
		}
	}
	if (shown < l->n)
		fprintf(f, "  … %" PRIu32 " more (--top N shows N)\n", l->n - shown);
	return 0;
}
