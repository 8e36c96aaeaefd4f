/* SPDX-License-Identifier: MIT */
/*
 * Where a CPU sample of a thread in OpenMP hangs (ompt__stitch_sample): read
 * from the runtime's state and the thread's own task record, in the
 * sampling signal handler.
 */
#include <stdatomic.h>

#include "core/sample.h"
#include "ompt/ompt-internal.h"

/* States in which libomp waits at a construct that has a node of its own
 * (sync_region_wait made it): barriers, taskwaits, taskgroups. */
static int state__waits(int state)
{
	return (state >= ompt_state_wait_barrier && state <= ompt_state_wait_barrier_teams) ||
	       state == ompt_state_wait_taskwait || state == ompt_state_wait_taskgroup;
}

/*
 * Whether a member's region has ended. libomp keeps a worker in the state of
 * the region's barrier from its arrival until the next fork, and reports the
 * barrier's end only then: after the region's end (which the encountering
 * thread publishes) the worker waits for work, not for its team. Reads the
 * slot as region__member_end does; a later use of the slot (begun after the
 * member's own begin) means the region ended too.
 */
static int member__region_ended(const struct omp_task *task)
{
	const struct omp_region *r = task->region;
	/* Acquire: pairs with the release store of t_end at the encountering
	 * thread's implicit-task end. */
	uint64_t end = atomic_load_explicit(&r->t_end, memory_order_acquire);
	uint64_t begin = atomic_load_explicit(&r->t_begin, memory_order_relaxed);

	return (end && end >= task->t_begin) || begin > task->t_begin;
}

/*
 * Where a CPU sample on t hangs. The thread's OpenMP state says what the
 * runtime does, and is read here rather than tracked by callbacks, which
 * would cost every construct:
 *   idle (waiting for work):  <omp idle>;
 *   overhead, forking or joining a region as its encountering thread:
 *       <omp runtime: fork/join> under its <omp parallel>;
 *   waiting at a barrier, taskwait or taskgroup: that wait's node, which
 *       sync_region_wait made; a member of a team whose region has ended
 *       waits for the next fork: <omp idle>;
 *   otherwise, in a task: its node, for the frames below its exit frame;
 *       an implicit task's sample with no user frame there (the fork, the
 *       join, the runtime handing out work) under <omp runtime: fork/join>;
 *   in the initial task and outside OpenMP: a full unwind.
 * Runs in the sampling signal handler: the OMPT inquiry functions are
 * async-signal-safe, and the task record is this thread's own; the region
 * slot a member reads is atomic.
 */
void ompt__stitch_sample(struct gt_thread *t, struct gt_stitch *st)
{
	ompt_data_t *task_data = NULL;
	ompt_frame_t *frame = NULL;
	ompt_wait_id_t wait_id;
	struct omp_thread *ot;
	struct omp_task *task;
	int flags = 0, state = ompt_state_undefined;
	uintptr_t v;

	st->base = NULL;
	st->boundary = 0;
	if (gt_ompt_get_state)
		state = gt_ompt_get_state(&wait_id);
	if (state == ompt_state_idle) {
		st->base = t->idle_node;
		return;
	}
	ot = t->ompt;
	if (state == ompt_state_overhead && ot && gt_cct__owns(&t->cct, ot->forking)) {
		st->base = ot->forking;
		st->runtime = GT_PH_OMP_FORK_JOIN;
		return;
	}
	if (!gt_ompt_get_task_info ||
	    gt_ompt_get_task_info(0, &flags, &task_data, &frame, NULL, NULL) != 2)
		return;
	v = (uintptr_t)ompt__data_get(task_data);
	if (ompt__is_bare(v)) {
		/* An untimed task without a record (host-task.c): its
		 * <omp task>, or this thread's copy of it if one was made
		 * (nothing is made here). Else the sample is unwound whole,
		 * as in a task the tool does not know. */
		struct gt_cct_node *node = ompt__pending_own(t, v);

		if (!node)
			node = gt_thread__imported(t, (struct gt_cct_node *)(v & OMP_TASK_NODE_MASK));

		if (node && gt_cct__owns(&t->cct, node)) {
			st->base = node;
			st->boundary = frame ? (uintptr_t)frame->exit_frame.ptr : 0;
		}
		return;
	}
	task = v & OMP_TASK_PENDING ? NULL : (struct omp_task *)v;
	/* The current task's node is this thread's own; anything else would
	 * have the handler write another thread's tree. */
	if (!task || !gt_cct__owns(&t->cct, task->node))
		return;
	/* In a wait, and not running a task (that would be the current
	 * task). libomp keeps a thread that spins in a taskwait or at a
	 * taskgroup's end for tasks to run at work_parallel: those go by the
	 * wait's callbacks, not the state. */
	if ((state__waits(state) || task->wait_in_task) && task->wait_node &&
	    gt_cct__owns(&t->cct, task->wait_node)) {
		if (task->is_member && task->region && member__region_ended(task))
			st->base = t->idle_node;
		else
			st->base = task->wait_node;
		return;
	}
	st->base = task->node;
	st->boundary = frame ? (uintptr_t)frame->exit_frame.ptr : 0;
	if (!task->is_explicit)
		st->runtime = GT_PH_OMP_FORK_JOIN;
}
