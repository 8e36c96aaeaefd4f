/* SPDX-License-Identifier: MIT */
#include "core/arena.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Chunks start small and double up to CHUNK_MAX: a thread that makes a few
 * nodes reserves little address space (a program of thousands of threads
 * runs under `ulimit -v`), and a busy one soon gets large chunks.
 */
#define CHUNK_MIN (32u * 1024u)
#define CHUNK_MAX (256u * 1024u)
#define ALIGN 16u

/* The first ALIGN bytes of a chunk: the link and the chunk's size. */
struct chunk {
	struct chunk *next;
	size_t size;
};

_Static_assert(sizeof(struct chunk) <= ALIGN, "chunk header fits its alignment");

static struct chunk *chunk__map(size_t size)
{
	struct chunk *c = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	c->size = size;
	return c;
}

void gt_arena__init(struct gt_arena *a)
{
	memset(a, 0, sizeof(*a));
	gt_arena__refill(a);
}

/* Links chunk c in and makes it current. */
static void arena__use(struct gt_arena *a, struct chunk *c)
{
	c->next = a->chunks;
	a->chunks = c;
	a->cur = (char *)c + ALIGN;
	a->end = (char *)c + c->size;
	a->bytes += c->size;
}

void gt_arena__refill(struct gt_arena *a)
{
	size_t size;

	if (a->spare)
		return;
	size = a->chunks ? ((struct chunk *)a->chunks)->size * 2 : CHUNK_MIN;
	if (size > CHUNK_MAX)
		size = CHUNK_MAX;
	a->spare = chunk__map(size);
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
	struct chunk *c = a->spare;

	if (p || !c || size > c->size - ALIGN)
		return p;
	arena__use(a, c);
	a->spare = NULL;
	return arena__bump(a, size);
}

void *gt_arena__alloc(struct gt_arena *a, size_t size)
{
	void *p = gt_arena__alloc_signal(a, size);

	/* Keep a chunk ready for the signal handler's allocations. */
	if (!a->spare)
		gt_arena__refill(a);
	if (p || size > CHUNK_MAX - ALIGN)
		return p;
	return gt_arena__alloc_signal(a, size);
}

void gt_arena__trim(struct gt_arena *a)
{
	struct chunk *c = a->chunks;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t keep, end;

	if (a->spare) {
		munmap(a->spare, ((struct chunk *)a->spare)->size);
		a->spare = NULL;
	}
	if (!c)
		return;
	keep = ((uintptr_t)a->cur + page - 1) & ~(page - 1);
	end = (uintptr_t)c + c->size;
	if (keep >= end)
		return;
	munmap((void *)keep, end - keep);
	a->bytes -= end - keep;
	c->size = keep - (uintptr_t)c;
	a->end = (char *)keep;
}

void gt_arena__fini(struct gt_arena *a)
{
	struct chunk *c = a->chunks;

	while (c) {
		struct chunk *next = c->next;

		munmap(c, c->size);
		c = next;
	}
	if (a->spare)
		munmap(a->spare, ((struct chunk *)a->spare)->size);
	memset(a, 0, sizeof(*a));
}
