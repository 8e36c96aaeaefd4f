/* SPDX-License-Identifier: MIT */
#ifndef GT_OMPT_INTERNAL_H
#define GT_OMPT_INTERNAL_H

#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/cct.h"
#include "core/thread.h"
#include "ompt/ompt-events.h"

/*
 * A parallel region instance. The encountering thread takes a slot of its
 * own ring (struct omp_thread) at parallel_begin; team members read `node`,
 * written before the fork and so ordered before any member's implicit task.
 *
 * LLVM's libomp reports a worker's end of the region's barrier and of its
 * implicit task only when the worker wakes for the next region (or at
 * shutdown), so a worker takes the region's end from `t_end`, which the
 * encountering thread sets when its own implicit task ends. Slots are reused
 * (the ring never frees), so a worker checks `gen`, seqlock-style:
 *   encountering thread: t_end = 0; gen = G (release)  ... t_end = E (release)
 *   worker:              gen (acquire) == G, t_end (acquire), gen == G again
 * A t_end from a later use of the slot is published after that use's gen, so
 * the second gen load sees the change; 0 means "not known", and the worker
 * reads the clock instead. Nothing is written by workers: no cache line
 * bounces back to the encountering thread.
 */
struct omp_region {
	/* A cache line each: the encountering thread writes the next slot
	 * while the team still reads this one. */
	_Alignas(64) struct gt_cct_node *node; /* <omp parallel> in the encountering thread's tree */
	struct gt_thread *owner;
	uint64_t t_begin;         /* ticks */
	_Atomic uint64_t t_end;   /* ticks; 0 until the encountering thread's implicit task ends */
	_Atomic uint64_t gen;     /* which use of the slot this is */
	uint32_t team;
	int active;               /* between parallel_begin and _end (encountering thread only) */
};

/* A construct timed from its begin to its end callback. */
struct omp_scope {
	struct gt_cct_node *node; /* NULL: none in progress */
	uint64_t t0;		  /* ticks at the begin */
};

/*
 * A task as the tool sees it. Implicit tasks belong to one thread for their
 * whole life. An explicit task is created on one thread and may run (and
 * move, if untied) on others; the runtime's task queues order each hand-over.
 */
struct omp_task {
	struct gt_cct_node *node;    /* context in the executing thread's tree; NULL: the initial task */
	struct gt_cct_node *creator; /* explicit: <omp task> in the creating thread's tree */
	uint64_t t_begin;            /* implicit: begin; explicit: last start or resume (ticks) */
	uint64_t wait_ns;            /* ticks waited inside this task so far */
	uint64_t wait_t0;
	uint64_t wait_busy0; /* the thread's explicit-task time when the wait began */
	struct gt_cct_node *wait_node;
	struct omp_scope ws, red; /* the worksharing construct and reduction in progress */
	struct omp_region *region; /* implicit tasks: their region */
	uint64_t region_gen;       /* workers: region->gen at the task's begin */
	int is_member;             /* a worker, not the encountering thread */
	int is_explicit;
	/* A deferred target task (target nowait, ...): node is its creation
	 * site, under which its target construct hangs (ompt/target.c). */
	int is_target;
	/* The device node of its construct, in target_owner's tree: data
	 * operations the runtime completes for the task after the construct's
	 * end callback (deferred releases) still belong to it. */
	struct gt_cct_node *target_dev;
	struct gt_thread *target_owner;
	const void *create_ra; /* explicit: its construct's return address */
	uintptr_t exit_frame;  /* where its outlined body begins; 0: not asked yet */
	struct omp_task *next_free;
};

#define OMP_REGION_RING 64

struct omp_thread {
	struct omp_task initial;
	struct omp_region regions[OMP_REGION_RING];
	/* What follows is written by the owner only; apart from the ring. */
	_Alignas(64)
	uint64_t region_gen;
	/* Time this thread spent executing explicit tasks. A thread that waits
	 * at a barrier or taskwait runs queued tasks meanwhile: that is work,
	 * and is taken out of the wait. */
	uint64_t explicit_ns;
	struct omp_task *free_tasks;
	/* The last implicit barrier's node and the context it hangs under:
	 * a region repeats, and so does its barrier. */
	struct gt_cct_node *ibar_parent, *ibar_node;
	/* The league (teams) this thread began and has not ended: LLVM's
	 * libomp gives a league of one team's initial task no parallel_data. */
	struct omp_region *league;
	/* Target regions and operations of this thread (ompt/target.c). */
	struct omp_target_thread *target;
};

struct gt_stitch;

extern ompt_get_task_info_t gt_ompt_get_task_info;
extern ompt_get_state_t gt_ompt_get_state;


struct omp_thread *ompt__thread_state(struct gt_thread *t);
/*
 * The context of a construct at user return address ra, inside task (NULL:
 * the initial task); key: GT_UNWIND_KEY() of the calling handler. Unwinds
 * once per call path (memoized). Under gt_thread__enter(t).
 */
struct gt_cct_node *ompt__context_of(struct gt_thread *t, const void *ra, uintptr_t key,
				     struct omp_task *task, const ompt_frame_t *frame);
void ompt__stitch_sample(struct gt_thread *t, struct gt_stitch *st);

#endif
