/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_TABLE_H
#define GT_REPORT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GT_TABLE_COLS 10
#define GT_TABLE_CELL 32

/* Right-aligned numeric columns, then an optional left-aligned text column
 * (tail), and optionally a line printed under each row (below). The table
 * owns the tail and below strings it is given (freed by gt_table__fini). */
struct gt_table {
	unsigned ncols, nrows;
	const char *head[GT_TABLE_COLS];
	const char *tail_head;
	char (*cell)[GT_TABLE_COLS][GT_TABLE_CELL];
	char **tail;
	char **below;
};

/* nrows rows of ncols columns, whose heads follow ncols; -ENOMEM. */
int gt_table__init(struct gt_table *t, unsigned nrows, const char *tail_head, unsigned ncols, ...);
void gt_table__fini(struct gt_table *t);
__attribute__((format(printf, 4, 5))) void gt_table__set(struct gt_table *t, unsigned row, unsigned col,
							 const char *fmt, ...);
void gt_table__print(const struct gt_table *t, FILE *f);
/* The columns left for the tail of each row, of width, once the cells are
 * set (20 at least). */
size_t gt_table__tail_cols(const struct gt_table *t, size_t width);
/* part of whole as "12.3%" into a cell; "-" without a whole. */
void gt_table__pct(char *cell, uint64_t part, uint64_t whole);

#endif
