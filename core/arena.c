/* SPDX-License-Identifier: MIT */
#include "core/arena.h"

#include <pthread.h>
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

/*
 * Chunks a thread no longer needs (its spare at its end, the chunks of a
 * tree that is dropped) wait here for the next thread, by size, instead of
 * going back to the kernel: a program that starts and ends many threads
 * then maps, faults in and unmaps nothing per thread (an unmap also stops
 * every CPU of the process to flush its TLB). Normal context only: a
 * signal handler allocates from its thread's spare, never from here.
 */
#define POOL_CLASSES 4 /* CHUNK_MIN << 0 .. CHUNK_MAX */
#define POOL_MAX 16    /* chunks kept per size */

static struct {
	pthread_mutex_t lock;
	struct chunk *free[POOL_CLASSES];
	unsigned n[POOL_CLASSES];
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A child of fork() finds the lock free, whichever thread held it. */
static void pool__prepare(void)
{
	pthread_mutex_lock(&pool.lock);
}

static void pool__release(void)
{
	pthread_mutex_unlock(&pool.lock);
}

static void pool__atfork(void)
{
	pthread_atfork(pool__prepare, pool__release, pool__release);
}

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static int pool__class(size_t size)
{
	for (int k = 0; k < POOL_CLASSES; k++)
		if (size == (size_t)CHUNK_MIN << k)
			return k;
	return -1;
}

static struct chunk *chunk__map(size_t size)
{
	int k = pool__class(size);
	struct chunk *c = NULL;

	if (k >= 0) {
		pthread_once(&pool_once, pool__atfork);
		pthread_mutex_lock(&pool.lock);
		c = pool.free[k];
		if (c) {
			pool.free[k] = c->next;
			pool.n[k]--;
		}
		pthread_mutex_unlock(&pool.lock);
		if (c) {
			/* As fresh as a new mapping: users rely on zeroed memory. */
			memset(c, 0, size);
			c->size = size;
			return c;
		}
	}
	c = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	c->size = size;
	return c;
}

static void chunk__unmap(struct chunk *c)
{
	int k = pool__class(c->size);

	if (k >= 0) {
		pthread_once(&pool_once, pool__atfork);
		pthread_mutex_lock(&pool.lock);
		if (pool.n[k] < POOL_MAX) {
			c->next = pool.free[k];
			pool.free[k] = c;
			pool.n[k]++;
			c = NULL;
		}
		pthread_mutex_unlock(&pool.lock);
	}
	if (c)
		munmap(c, c->size);
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
		chunk__unmap(a->spare);
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
