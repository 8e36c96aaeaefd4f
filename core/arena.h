/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_ARENA_H
#define GT_CORE_ARENA_H

#include <stddef.h>

/*
 * A per-thread bump allocator for calling-context nodes and metric cells.
 * Memory comes from mmap in chunks that grow with use; what was allocated
 * stays where it is for the life of the process (nodes are never moved or
 * freed), while gt_arena__trim() gives back what is mapped and unused.
 * Owned by one thread; never shared.
 *
 * Signal handlers may allocate only through gt_arena__alloc_signal(), which
 * never makes a system call: it uses the current chunk and, once, the spare
 * chunk that gt_arena__refill() (called from normal context) keeps ready.
 */
struct gt_arena {
	char *cur;
	char *end;
	void *chunks; /* singly linked through the first word of each chunk */
	void *spare;
	size_t bytes; /* total mapped, for the report */
};

void gt_arena__init(struct gt_arena *a);
void *gt_arena__alloc(struct gt_arena *a, size_t size);
void *gt_arena__alloc_signal(struct gt_arena *a, size_t size);
void gt_arena__refill(struct gt_arena *a);
/* Unmaps the spare chunk and the unused pages of the current one: for a
 * thread that has ended. Allocation still works after it (new chunks). */
void gt_arena__trim(struct gt_arena *a);

#endif
