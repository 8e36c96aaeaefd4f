/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_REGION_H
#define GT_CORE_REGION_H

#include <stdint.h>

#include "core/unwind.h"

struct gt_thread;
struct gt_cct_node;

/*
 * Regions a program names itself: NVTX ranges, Kokkos kernels and regions,
 * MPI calls. Each layer opens and closes them on the thread that runs the
 * code; core keeps a stack of the open ones per thread.
 *
 * A region is a node named by its label ("<nvtx \"solve\">") under the
 * context of the code that opened it: the user function U that called the
 * layer's entry point, at the line of that call. While it is open, what the
 * thread does below U hangs under the region: CPU samples, GPU operations,
 * OpenMP constructs, nested regions. U's own code runs in the region too:
 * its samples are the region's own (self) time.
 *
 * Below U is told, with or without stack pointers (a signal handler's unwind
 * has none), by U's caller's frame: its return address and its distance
 * from the root of the stack. When U has returned with the region still open
 * (a range opened in one function and closed in another), the frames deeper
 * than that distance are the region's.
 *
 * A region belongs to the OpenMP task (or the thread outside OpenMP) that
 * opened it: in another task of the thread (the implicit task of a parallel
 * region started inside it, whose construct already hangs under it), the
 * task's own context applies.
 *
 * Every region closed adds 1 to REGION_COUNT and its length to REGION_TIME
 * (wall clock, ns) on its node.
 */

/* Who opened a region: a layer closes only its own. */
enum gt_region_owner {
	GT_REGION_NVTX = 1,
	GT_REGION_KOKKOS = 2,
	GT_REGION_MPI = 3,
	GT_REGION_USER = 4, /* tests */
};

enum {
	/*
	 * The region is a call the tool makes on the program's behalf (an MPI
	 * call through its profiling interface): while it is open, samples
	 * that stop in the tool's frames under U are the program's time, the
	 * region's, not the tool's.
	 */
	GT_REGION_CALL = 1,
};

#define GT_REGION_DEPTH 64

/*
 * Opens a region named @label (copied; a layer passes the whole label,
 * "<nvtx \"solve\">") on @t, the calling thread, inside gt_thread__enter.
 * @id: the layer's handle for gt_region__close (0: none). @ra and @key: the
 * layer's entry point's return address (into the program's code, or into a
 * runtime's wrapper) and its GT_UNWIND_KEY(); a region opened again at the
 * same call site and stack position then costs no unwind (core/unwind.h's
 * memo). ra 0: none known, an unwind every time. Returns the region's node,
 * or NULL when it is not measured (the stack is full, out of memory): its
 * close is then ignored. Normal context.
 */
struct gt_cct_node *gt_region__open(struct gt_thread *t, enum gt_region_owner owner,
				    const char *label, uint64_t id, unsigned flags, uintptr_t ra,
				    uintptr_t key);
/*
 * Closes the innermost open region @owner opened with @id, wherever it is on
 * the stack (id 0: the innermost one opened with id 0, so that a pop never
 * closes a region opened with an id of its own). Returns its node and its length in
 * *ns (when ns is not NULL), or NULL when there is none. Normal context,
 * inside gt_thread__enter.
 */
struct gt_cct_node *gt_region__close(struct gt_thread *t, enum gt_region_owner owner,
				     uint64_t id, uint64_t *ns);
/* gt_region__close with the region's end at @end (gt_clock__now() time,
 * 0: now): a region another thread ended, which its own closes later. */
struct gt_cct_node *gt_region__close_at(struct gt_thread *t, enum gt_region_owner owner,
					uint64_t id, uint64_t end, uint64_t *ns);
/*
 * Applies @t's innermost open region to a stitch the programming model made
 * (gt_sample__stitch calls it): when it belongs to st->base's task, @st
 * becomes the region's. Async-signal-safe; reads only @t's own state.
 */
void gt_region__stitch(const struct gt_thread *t, struct gt_stitch *st);
/* Of @t's opens through gt_region__open_at, how many found their context
 * remembered (no unwind), and how many unwound. */
void gt_region__stats(const struct gt_thread *t, uint64_t *hits, uint64_t *misses);
/* Whether @t is inside a GT_REGION_CALL region. Async-signal-safe. */
int gt_region__in_call(const struct gt_thread *t);

/* An interned copy of @s for @t: the same pointer for the same string,
 * living until exit. NULL when out of memory. Normal context. */
const char *gt_region__intern(struct gt_thread *t, const char *s);

#endif
