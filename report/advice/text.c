/* SPDX-License-Identifier: MIT */
/*
 * The advice as the writers show it: each kind's id, title, "try" text and
 * scope from kinds.h, and the "What to do next" section of the text report.
 * The JSON writer (report/fmt-json.c) reads the same accessors, so that a
 * new kind needs no change in either.
 */
#include "report/next.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "report/paths.h"
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

static void put_time(struct gt_sb *b, uint64_t ns)
{
	if (ns >= 1000000000)
		gt_sb__addf(b, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		gt_sb__addf(b, "%.3f ms", (double)ns / 1e6);
	else
		gt_sb__addf(b, "%.3f us", (double)ns / 1e3);
}

/* The columns an item's lines after its first start at. */
#define ITEM_INDENT 8

/* Byte length of the first k columns of s (UTF-8: a column per character). */
static size_t cols_bytes(const char *s, size_t n, size_t k)
{
	size_t i = 0, w = 0;

	for (; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && w++ == k)
			break;
	return i;
}

/*
 * Writes text as lines of at most width columns, broken at spaces: the
 * first line after first (already written, first_cols wide), the others
 * after indent spaces, the item's indent. A word wider than a whole line is
 * cut where the line ends, so that no line is wider than width, whatever
 * the measurements put in the text.
 */
void gt_next__put_wrapped(FILE *f, size_t first_cols, const char *first, const char *text, size_t indent,
			  size_t width)
{
	size_t col = first_cols;
	int fresh = 1; /* nothing of text on this line yet */

	fputs(first, f);
	for (const char *s = text; *s;) {
		size_t n = 0, w;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		while (s[n] && s[n] != ' ')
			n++;
		w = 0;
		for (size_t i = 0; i < n; i++)
			w += ((unsigned char)s[i] & 0xc0) != 0x80;
		if (!fresh && col + 1 + w > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			fresh = 1;
		}
		if (!fresh) {
			fputc(' ', f);
			col++;
		}
		/* Only a word wider than a line of its own is cut. */
		while (col + w > width && width > col) {
			size_t b = cols_bytes(s, n, width - col);

			fwrite(s, 1, b, f);
			fprintf(f, "\n%*s", (int)indent, "");
			w -= width - col;
			col = indent;
			s += b;
			n -= b;
		}
		fwrite(s, 1, n, f);
		col += w;
		s += n;
		fresh = 0;
	}
	fputc('\n', f);
}

/* One line of an item, after its indent, wrapped to width. */
static void put_item_line(FILE *f, const struct gt_sb *b, size_t width)
{
	gt_next__put_wrapped(f, ITEM_INDENT, "        ", b->s ? b->s : "", ITEM_INDENT, width);
}

/* The longest lead of a context's line: "launched at ", "CPU work at ". */
#define WHERE_LEAD 12

int gt_next__wheres(const struct gt_profile *p, const struct gt_next_list *l, uint32_t shown, size_t width,
		    int signatures, char **ctx)
{
	const size_t used = ITEM_INDENT + WHERE_LEAD;
	const struct gt_paths_opts o = { .width = width > used + 20 ? width - used : 20,
					 .leaf_first = 1,
					 .label_flags = signatures ? 0 : GT_LABEL_ELIDE_ARGS };
	uint32_t *nodes = calloc(2 * (size_t)shown + 1, sizeof(*nodes));
	uint32_t *row = calloc(2 * (size_t)shown + 1, sizeof(*row));
	char **built = calloc(2 * (size_t)shown + 1, sizeof(*built));
	uint32_t n = 0;
	int err = -ENOMEM;

	memset(ctx, 0, 2 * (size_t)shown * sizeof(*ctx));
	if (nodes && row && built) {
		for (uint32_t k = 0; k < shown; k++) {
			const struct gt_next *x = &l->v[k];
			int kernel = gt_next__of_kernel(x->kind);

			row[n] = 2 * k;
			nodes[n++] = kernel ? gt_ptree__launch_site(p, x->node) : x->node;
			if (!kernel && x->line != GT_NONE) {
				row[n] = 2 * k + 1;
				nodes[n++] = x->line;
			}
		}
		err = gt_paths__build(p, nodes, n, &o, built);
		if (!err)
			for (uint32_t j = 0; j < n; j++)
				ctx[row[j]] = built[j];
	}
	free(built);
	free(row);
	free(nodes);
	return err;
}

int gt_next__write_text(const struct gt_profile *p, const struct gt_next_list *l, FILE *f, unsigned top,
			const struct gt_sections_run *run)
{
	char what[256], path[GT_PTREE_WHERE_COLS + 512];
	uint32_t shown = l->n < top ? l->n : top;
	size_t width = run && run->width ? run->width : GT_PATHS_WIDTH;
	char **ctx;

	if (!l->n) {
		struct gt_sb b = { 0 };

		gt_sb__add(&b, "No advice applies: ");
		gt_sb__add(&b, gt_next__none_why(p));
		fputc('\n', f);
		gt_next__put_wrapped(f, 0, "", b.s ? b.s : "", ITEM_INDENT, width);
		free(b.s);
		return b.oom ? -ENOMEM : 0;
	}
	{
		struct gt_sb b = { 0 };

		gt_sb__addf(&b, "What to do next (%" PRIu32 " of %" PRIu32 ", by the estimated gain of the whole program;"
				" how each is estimated: docs/ADVICE.md)", shown, l->n);
		fputc('\n', f);
		gt_next__put_wrapped(f, 0, "", b.s ? b.s : "", ITEM_INDENT, width);
		free(b.s);
		if (b.oom)
			return -ENOMEM;
	}
	ctx = calloc(2 * (size_t)shown + 1, sizeof(*ctx));
	if (!ctx || gt_next__wheres(p, l, shown, width, run && run->signatures, ctx)) {
		free(ctx);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < shown; k++) {
		const struct gt_next *n = &l->v[k];
		int kernel = gt_next__of_kernel(n->kind);
		const char *subject = gt_next__subject(n->kind);
		struct gt_sb b = { 0 };
		char head[16];
		size_t len = 0;

		what[0] = 0;
		gt_ptree__label(p, n->node, what, sizeof(what), &len);
		snprintf(head, sizeof(head), "  %2" PRIu32 ". ", k + 1);
		if (n->program > 0) {
			gt_sb__addf(&b, "program %s%.3fx, saves ", n->upper_bound ? "up to " : "", n->program);
			put_time(&b, n->saved_ns);
		} else {
			gt_sb__add(&b, "gain not estimated");
		}
		/* (gt_sb__addf holds 255 bytes: texts and names go in whole.) */
		gt_sb__add(&b, ": ");
		if (kernel) {
			gt_sb__add(&b, what);
			gt_sb__add(&b, ": ");
		}
		gt_sb__add(&b, gt_next__title(n->kind));
		gt_next__put_wrapped(f, gt_cols(head), head, b.s ? b.s : "", ITEM_INDENT, width);
		if (n->line != GT_NONE && kernel) {
			len = 0;
			what[0] = 0;
			gt_ptree__label(p, n->line, what, sizeof(what), &len);
			gt_ptree__kernel_of(p, n->line, path, sizeof(path));
			b.len = 0;
			gt_sb__add(&b, "at ");
			gt_sb__add(&b, what);
			if (path[0]) {
				gt_sb__add(&b, " in ");
				gt_sb__add(&b, path);
			}
			put_item_line(f, &b, width);
		}
		b.len = 0;
		gt_sb__add(&b, n->why);
		put_item_line(f, &b, width);
		if (n->speedup > 0 && subject) {
			b.len = 0;
			gt_sb__addf(&b, "the %s: %.2fx faster (", subject, n->speedup);
			put_time(&b, n->time_ns);
			gt_sb__add(&b, " -> ");
			put_time(&b, (uint64_t)((double)n->time_ns / n->speedup));
			/* A kernel's gain counts for the program as far as blame
			 * measured the CPU's wait for it. */
			gt_sb__addf(&b, ")%s",
				    kernel && n->upper_bound ? "; no blame measured: all of it counted as the program's" : "");
			put_item_line(f, &b, width);
		}
		b.len = 0;
		gt_sb__add(&b, "try: ");
		gt_sb__add(&b, n->todo);
		put_item_line(f, &b, width);
		b.len = 0;
		gt_sb__add(&b, kernel ? "launched at " : "at ");
		gt_sb__add(&b, ctx[2 * k]);
		put_item_line(f, &b, width);
		/* Outside a kernel, the line names the CPU work that overlaps. */
		if (ctx[2 * k + 1]) {
			b.len = 0;
			gt_sb__add(&b, "CPU work at ");
			gt_sb__add(&b, ctx[2 * k + 1]);
			put_item_line(f, &b, width);
		}
		free(b.s);
		if (b.oom) {
			gt_paths__free(ctx, 2 * shown);
			free(ctx);
			return -ENOMEM;
		}
	}
	gt_paths__free(ctx, 2 * shown);
	free(ctx);
	if (shown < l->n)
		fprintf(f, "  … %" PRIu32 " more (--top N shows N)\n", l->n - shown);
	return 0;
}
