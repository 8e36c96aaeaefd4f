/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_RING_H
#define GT_GPU_RING_H

/* A FIFO of fixed-size elements for one thread (the monitor's blame
 * state), with indexed access and removal from the middle; capacity a
 * power of two, following the peak number of elements. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ring {
	char *buf;
	uint32_t head, n, cap, size;
};

static inline void ring__init(struct ring *r, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	r->size = size;
}

static inline void ring__fini(struct ring *r)
{
	free(r->buf);
	ring__init(r, r->size);
}

static inline void *ring__at(const struct ring *r, uint32_t i)
{
	return r->buf + (size_t)((r->head + i) & (r->cap - 1)) * r->size;
}

static inline int ring__grow(struct ring *r)
{
	uint32_t cap = r->cap ? r->cap * 2 : 16;
	char *buf;

	if (!cap)
		return -ENOMEM;
	buf = malloc((size_t)cap * r->size);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->n; i++)
		memcpy(buf + (size_t)i * r->size, ring__at(r, i), r->size);
	free(r->buf);
	r->buf = buf;
	r->head = 0;
	r->cap = cap;
	return 0;
}

/* A new last element (uninitialized), or NULL when out of memory. */
static inline void *ring__push(struct ring *r)
{
	if (r->n == r->cap && ring__grow(r))
		return NULL;
	return ring__at(r, r->n++);
}

static inline void ring__shift(struct ring *r)
{
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
}

/* Removes element @i, keeping the order of the others. */
static inline void ring__remove(struct ring *r, uint32_t i)
{
	for (; i + 1 < r->n; i++)
		memcpy(ring__at(r, i), ring__at(r, i + 1), r->size);
	r->n--;
}

#endif
