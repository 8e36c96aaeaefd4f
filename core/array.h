/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_ARRAY_H
#define GT_CORE_ARRAY_H

/*
 * Growing arrays: an array *p of *cap elements of size bytes, with room
 * made for element n (0-based) by doubling it, first elements at first.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* 0, or -ENOMEM (the array is unchanged). */
static inline int gt_array__grow(void **p, uint32_t *cap, uint32_t n, size_t size, uint32_t first)
{
	uint32_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	q = realloc(*p, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

#endif
