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
 * A parallel region instance, created by the encountering thread at
 * parallel_begin. Team members read `node` and `owner`, written before the
 * fork and so ordered before any member's implicit task.
 *
 * LLVM's libomp reports a worker's end of the region's barrier and of its
 * implicit task only when the worker wakes for the next region (or at
 * shutdown), so a worker clamps those to `t_end`, which the encountering
 * thread sets at parallel_end. The record therefore lives until its last
 * member is done with it: `refs` counts the encountering thread and every
 * worker that took it; each drops its reference with acq_rel (the last one
 * frees, after every other member's accesses), and t_end's store is ordered
 * before a late worker's load by the runtime's own fork/shutdown handshake.
 */
struct omp_region {
	struct gt_cct_node *node; /* <omp parallel> in the encountering thread's tree */
	struct gt_thread *owner;
	uint64_t t_begin;
	_Atomic uint64_t t_end;
	uint32_t team;
	atomic_uint refs;
};

/*
 * A task as the tool sees it. Implicit tasks belong to one thread for their
 * whole life. An explicit task is created on one thread and may run (and
 * move, if untied) on others; the runtime's task queues order each hand-over.
 */
struct omp_task {
	struct gt_cct_node *node;    /* context in the executing thread's tree; NULL: the initial task */
	struct gt_cct_node *creator; /* explicit: <omp task> in the creating thread's tree */
	uint64_t t_begin;            /* implicit: begin; explicit: last start or resume */
	uint64_t wait_ns;            /* waited inside this task so far */
	uint64_t wait_t0, ws_t0, red_t0;
	uint64_t wait_busy0; /* the thread's explicit-task time when the wait began */
	struct gt_cct_node *wait_node, *ws_node, *red_node;
	struct omp_region *region; /* implicit tasks: their region */
	int holds_region;          /* a worker's reference to region */
	int is_explicit;
	struct omp_task *next_free;
};

struct omp_thread {
	struct omp_task initial;
	/* Time this thread spent executing explicit tasks. A thread that waits
	 * at a barrier or taskwait runs queued tasks meanwhile: that is work,
	 * and is taken out of the wait. */
	uint64_t explicit_ns;
	struct omp_task *free_tasks;
};

extern ompt_get_task_info_t gt_ompt_get_task_info;
extern ompt_get_state_t gt_ompt_get_state;


struct omp_thread *ompt__thread_state(struct gt_thread *t);
void ompt__stitch_sample(struct gt_thread *t, struct gt_stitch *st);

#endif
