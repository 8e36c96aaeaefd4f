/* SPDX-License-Identifier: MIT */
/*
 * Where an OpenMP construct's context comes from: the memo's answer under
 * the task's node, up to the task's exit frame (asked of the runtime, or
 * read where it keeps it), and the construct cache's copy of the memo's
 * path (ompt__construct_fill).
 */
#include <stdatomic.h>

#include "core/region.h"
#include "core/unwind.h"
#include "ompt/ompt-internal.h"

/* ompt__context_of under a region the thread opened (core/region.h). */
static __attribute__((noinline)) struct gt_cct_node *context__in_region(struct gt_thread *t, const void *ra,
									 uintptr_t key,
									 struct gt_cct_node *base,
									 uintptr_t boundary)
{
	struct gt_stitch st = { .base = base, .boundary = boundary };
	struct gt_cct_node *node;

	gt_region__stitch(t, &st);
	node = gt_unwind__memo_lookup(t, (uintptr_t)ra, key, &st);
	if (!node)
		node = gt_unwind__context(t, (uintptr_t)ra, key, &st);
	return node ? node : t->cct.root;
}

/* The context of a construct at ra whose frames up to boundary (0: all)
 * hang under base (NULL: the root). */
static inline struct gt_cct_node *context__under(struct gt_thread *t, const void *ra, uintptr_t key,
						 struct gt_cct_node *base, uintptr_t boundary)
{
	/* A region the task opened (an NVTX range, a Kokkos kernel) holds the
	 * construct; none was ever opened on most threads. */
	if (t->regions)
		return context__in_region(t, ra, key, base, boundary);
	return gt_unwind__memo_context(t, (uintptr_t)ra, key, base, boundary);
}

/*
 * An implicit task's exit frame is asked of the runtime at the task's first
 * construct: at every region, on every thread of the team, an inquiry call
 * of about 150 instructions on the way to the construct. The runtime keeps
 * it beside the task's data, at a distance its answers tell: once
 * FRAME_AGREE answers agreed on it and none differed, the exit frame is
 * read there. Every FRAME_CHECK-th read is asked all the same, and an
 * answer that differs turns the reading off for good.
 */
#define FRAME_AGREE 16
#define FRAME_CHECK 64

static atomic_intptr_t frame_off;  /* task data minus frame record; 0: none yet */
/* Answers that agreed with frame_off: incremented with release after it
 * was set or read, loaded with acquire before it is used. */
static atomic_uint frame_agree;
/* Set once, for good; relaxed: a thread that has not seen it yet reads one
 * exit frame more where every answer so far agreed it lies. */
static atomic_int frame_off_bad;

const ompt_frame_t *ompt__frame_beside(const ompt_data_t *task_data)
{
	intptr_t off;

	if (!task_data || atomic_load_explicit(&frame_agree, memory_order_acquire) < FRAME_AGREE ||
	    atomic_load_explicit(&frame_off_bad, memory_order_relaxed))
		return NULL;
	off = atomic_load_explicit(&frame_off, memory_order_relaxed);
	return off ? (const ompt_frame_t *)(const void *)((const char *)task_data - off) : NULL;
}

/* get_task_info answered data and frame for one task: their distance
 * counts towards the one learned, or turns the learning off for good. */
static void frame__observe(const ompt_data_t *data, const ompt_frame_t *frame)
{
	intptr_t off = (const char *)data - (const char *)frame;
	intptr_t was = atomic_load_explicit(&frame_off, memory_order_relaxed);

	if (!off)
		return;
	/* The first answer sets it; the CAS tells a concurrent first one. */
	if (!was && atomic_compare_exchange_strong_explicit(&frame_off, &was, off, memory_order_relaxed,
							    memory_order_relaxed))
		was = off;
	if (was != off) {
		atomic_store_explicit(&frame_off_bad, 1, memory_order_relaxed);
		return;
	}
	/* Once learned, the checks' agreement only needs reading. */
	if (atomic_load_explicit(&frame_agree, memory_order_relaxed) < FRAME_AGREE)
		atomic_fetch_add_explicit(&frame_agree, 1, memory_order_release);
}

/* ompt__context_of in a task whose exit frame is not known yet. */
static __attribute__((noinline)) struct gt_cct_node *context__ask_frame(struct gt_thread *t, const void *ra,
									 uintptr_t key, struct omp_task *task)
{
	struct omp_thread *ot = t->ompt;
	ompt_frame_t *cur = NULL;
	ompt_data_t *data = NULL;
	uintptr_t boundary;

	if (!task->is_explicit && task->frame_at && (ot->frames_read + ot->frames_asked + 1) % FRAME_CHECK) {
		task->exit_frame = (uintptr_t)task->frame_at->exit_frame.ptr;
		ot->frames_read++;
	} else {
		ot->frames_asked++;
		if (gt_ompt_get_task_info(0, NULL, &data, &cur, NULL, NULL) == 2 && cur) {
			task->exit_frame = (uintptr_t)cur->exit_frame.ptr;
			if (data)
				frame__observe(data, cur);
			if (!task->is_explicit && task->frame_at && task->frame_at != cur)
				atomic_store_explicit(&frame_off_bad, 1, memory_order_relaxed);
		}
	}
	boundary = task->exit_frame;
	/* None: the call comes from the runtime itself. */
	if (!boundary)
		return task->node;
	return context__under(t, ra, key, task->node, boundary);
}

/*
 * The context of a construct at user return address ra, inside task (NULL:
 * the initial task). key pins the stack position of the calling handler.
 * The task's exit frame, where its outlined body begins, is asked of the
 * runtime at the task's first construct that gives none. The rare cases
 * are functions of their own, so that the common one (the memo's answer
 * for a thread with no region open) saves no registers.
 */
struct gt_cct_node *ompt__context_of(struct gt_thread *t, const void *ra, uintptr_t key,
				     struct omp_task *task, const ompt_frame_t *frame)
{
	struct gt_cct_node *base = task ? task->node : NULL;
	uintptr_t boundary = 0;

	/* The task's node was made by the thread that runs it, which is this
	 * one; a node of another tree is imported, never written. */
	if (base && !gt_cct__owns(&t->cct, base))
		return gt_thread__import(t, base);
	if (!ra)
		return base ? base : t->cct.root;
	if (base) {
		/* Where the task's outlined body begins: fixed while it runs,
		 * given, or asked for once per task. */
		if (frame)
			return ompt__context_in(t, ra, key, base, frame);
		if (!task->exit_frame)
			return context__ask_frame(t, ra, key, task);
		boundary = task->exit_frame;
	}
	return context__under(t, ra, key, base, boundary);
}

struct gt_cct_node *ompt__context_in(struct gt_thread *t, const void *ra, uintptr_t key,
				     struct gt_cct_node *node, const ompt_frame_t *frame)
{
	uintptr_t boundary = frame ? (uintptr_t)frame->exit_frame.ptr : 0;

	/* No exit frame: the call comes from the runtime itself. */
	if (!ra || !boundary || !node)
		return node ? node : t->cct.root;
	return context__under(t, ra, key, node, boundary);
}


void ompt__construct_fill(struct gt_thread *t, struct omp_construct *c, const void *ra, uintptr_t key,
			  const struct gt_cct_node *base, uintptr_t boundary, enum gt_placeholder kind,
			  struct gt_cct_node *ctx, struct gt_cct_node *ph)
{
#if defined(__x86_64__)
	struct gt_unwind_memo *memo = t->memo;
	const struct gt_memo_entry *e;
	uintptr_t depth;

	if (!ph || !boundary || t->regions || !gt_memo__usable(memo, (uintptr_t)ra, key, boundary) ||
	    !gt_cct__owns(&t->cct, base))
		return;
	depth = gt_memo__depth(key, boundary);
	/* The memo's entry that just answered, whose call path is checked: a
	 * context it made anew is kept at its next lookup. */
	e = gt_memo__recent_entry(memo, (uintptr_t)ra, depth, base, ctx);
	if (!e || e->nslots > OMP_CONSTRUCT_SLOTS)
		return;
	/* A construct's judgement is its call site's, whatever the base. */
	if (c->ra != ra || c->kind != (uint16_t)kind)
		c->judged = 0;
	c->ra = ra;
	c->depth = depth;
	c->base = base;
	c->ctx = ctx;
	c->ph = ph;
	c->count = NULL;
	c->kind = (uint16_t)kind;
	c->nslots = (uint8_t)e->nslots;
	c->missed = NULL;
	for (unsigned i = 0; i < e->nslots; i++)
		c->slots[i] = e->slots[i];
#else
	(void)t, (void)c, (void)ra, (void)key, (void)base, (void)boundary, (void)kind, (void)ctx, (void)ph;
#endif
}
