/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_MEM_H
#define GT_CORE_MEM_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The tool's heap: every block the library allocates comes from pages it
 * maps itself, never from the program's malloc. glibc's allocator keeps
 * process-wide state that the tool must not touch: a small block the tool
 * takes while the program's large temporaries are live lands at the top of
 * the main heap and pins it, so glibc can no longer give the temporaries'
 * pages back (no trim, no page faults when they are taken again), and a
 * freed mmapped block moves the mmap and trim thresholds. A program measured
 * through glibc's heap is then another program (LULESH made 418,969 page
 * faults alone and 8,371 under a tool that used it).
 *
 * The library is linked with --wrap for malloc, free and their kin
 * (core/mem-wrap.c), so its code calls these without naming them. Blocks
 * that libc or a dependency allocated (asprintf's, realpath's, a demangler's
 * string) are recognised by address and given back to libc's free.
 *
 * Any thread, normal context only (never a signal handler). Small blocks
 * come from a per-thread cache without a lock; the one lock is taken for a
 * batch of them, and for large blocks (whose mappings are made outside
 * it). fork() leaves it free in the child.
 */
void *gt_mem__alloc(size_t size);
void *gt_mem__calloc(size_t n, size_t size);
void *gt_mem__realloc(void *p, size_t size);
/* align: a power of two; size need not be a multiple of it. */
void *gt_mem__aligned(size_t align, size_t size);
/* Blocks of this heap only; false for any other pointer (and NULL). */
bool gt_mem__owns(const void *p);
/* Gives a block of this heap back; false, and nothing done, for a pointer
 * that is not one (NULL counts as one). */
bool gt_mem__free(void *p);

struct gt_mem_stats {
	size_t mapped;     /* bytes mapped now: slabs, large blocks (live and
			    * kept for reuse), the tables */
	size_t large;      /* of which live large blocks */
};

void gt_mem__stats(struct gt_mem_stats *s);

#endif
