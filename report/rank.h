/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_RANK_H
#define GT_REPORT_RANK_H

#include <stdint.h>

/* A node with the value it is listed by. */
struct gt_ranked {
	uint64_t key;
	uint32_t node;
};

/* qsort order of every list in the report: largest key first, ties in
 * node order, so that reports are stable. */
int gt_ranked__cmp(const void *a, const void *b);

/* Sorts k[n] in that order and gives its nodes, in order, in *out
 * (malloc()ed); frees k, which may be NULL (then -ENOMEM). 0 or -ENOMEM. */
int gt_ranked__nodes(struct gt_ranked *k, uint32_t n, uint32_t **out);

#endif
