/* SPDX-License-Identifier: MIT */
#include "core/arena.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_SIZE (256u * 1024u)
#define ALIGN 16u

static void *chunk__map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void gt_arena__init(struct gt_arena *a)
{
	memset(a, 0, sizeof(*a));
	gt_arena__refill(a);
}

/* Links chunk c in and makes it current; the first ALIGN bytes hold the link. */
static void arena__use(struct gt_arena *a, void *c)
{
	*(void **)c = a->chunks;
	a->chunks = c;
	a->cur = (char *)c + ALIGN;
	a->end = (char *)c + CHUNK_SIZE;
	a->bytes += CHUNK_SIZE;
}

void gt_arena__refill(struct gt_arena *a)
{
	if (!a->spare)
		a->spare = chunk__map(CHUNK_SIZE);
}

static void *arena__bump(struct gt_arena *a, size_t size)
{
	char *p;

	size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if ((size_t)(a->end - a->cur) < size)
		return NULL;
	p = a->cur;
	a->cur += size;
	return p;
}

void *gt_arena__alloc_signal(struct gt_arena *a, size_t size)
{
	void *p = arena__bump(a, size);

	if (p || size > CHUNK_SIZE - ALIGN || !a->spare)
		return p;
	arena__use(a, a->spare);
	a->spare = NULL;
	return arena__bump(a, size);
}

void *gt_arena__alloc(struct gt_arena *a, size_t size)
{
	void *p = gt_arena__alloc_signal(a, size);

	/* Keep a chunk ready for the signal handler's allocations. */
	if (!a->spare)
		gt_arena__refill(a);
	if (p || size > CHUNK_SIZE - ALIGN)
		return p;
	return gt_arena__alloc_signal(a, size);
}

void gt_arena__fini(struct gt_arena *a)
{
	void *c = a->chunks;

	while (c) {
		void *next = *(void **)c;

		munmap(c, CHUNK_SIZE);
		c = next;
	}
	if (a->spare)
		munmap(a->spare, CHUNK_SIZE);
	memset(a, 0, sizeof(*a));
}
