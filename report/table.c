/* SPDX-License-Identifier: MIT */
/*
 * The report's text tables (report/table.h): numeric columns right-aligned
 * to their widest cell, a text column after them, a line under a row.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"

int gt_table__init(struct gt_table *t, unsigned nrows, const char *tail_head, unsigned ncols, ...)
{
	va_list ap;

	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->nrows = nrows;
	t->tail_head = tail_head;
	va_start(ap, ncols);
	for (unsigned c = 0; c < ncols; c++)
		t->head[c] = va_arg(ap, const char *);
	va_end(ap);
	t->cell = calloc(nrows ? nrows : 1, sizeof(*t->cell));
	t->tail = calloc(nrows ? nrows : 1, sizeof(*t->tail));
	t->below = calloc(nrows ? nrows : 1, sizeof(*t->below));
	return t->cell && t->tail && t->below ? 0 : -ENOMEM;
}

void gt_table__fini(struct gt_table *t)
{
	for (unsigned i = 0; t->tail && i < t->nrows; i++)
		free(t->tail[i]);
	for (unsigned i = 0; t->below && i < t->nrows; i++)
		free(t->below[i]);
	free(t->tail);
	free(t->below);
	free(t->cell);
}

void gt_table__set(struct gt_table *t, unsigned row, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->cell[row][col], GT_TABLE_CELL, fmt, ap);
	va_end(ap);
}

/* Each column's width: its widest cell or its head. */
static void table__widths(const struct gt_table *t, size_t *w)
{
	for (unsigned c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->head[c]);
		for (unsigned i = 0; i < t->nrows; i++)
			if (strlen(t->cell[i][c]) > w[c])
				w[c] = strlen(t->cell[i][c]);
	}
}

void gt_table__print(const struct gt_table *t, FILE *f)
{
	size_t w[GT_TABLE_COLS];

	table__widths(t, w);
	for (unsigned c = 0; c < t->ncols; c++)
		fprintf(f, "  %*s", (int)w[c], t->head[c]);
	if (t->tail_head)
		fprintf(f, "  %s", t->tail_head);
	fputs("\n", f);
	for (unsigned i = 0; i < t->nrows; i++) {
		for (unsigned c = 0; c < t->ncols; c++)
			fprintf(f, "  %*s", (int)w[c], t->cell[i][c]);
		if (t->tail[i])
			fprintf(f, "  %s", t->tail[i]);
		fputs("\n", f);
		if (t->below[i])
			fprintf(f, "%*s%s\n", (int)(w[0] + 4), "", t->below[i]);
	}
}

size_t gt_table__tail_cols(const struct gt_table *t, size_t width)
{
	size_t w[GT_TABLE_COLS], used = 2;

	table__widths(t, w);
	for (unsigned c = 0; c < t->ncols; c++)
		used += 2 + w[c];
	return width > used + 20 ? width - used : 20;
}

void gt_table__pct(char *buf, uint64_t part, uint64_t whole)
{
	if (!whole)
		snprintf(buf, GT_TABLE_CELL, "-");
	else
		snprintf(buf, GT_TABLE_CELL, "%.1f%%", 100.0 * (double)part / (double)whole);
}
