/* SPDX-License-Identifier: MIT */
/*
 * Explicit tasks (ompt_callback_task_create, ompt_callback_task_schedule):
 * their creation contexts, their records, made by the thread that first
 * runs each, and their time, measured for every task or, at sites of very
 * short and very frequent tasks, by sampling (GPUTOOL_TASK_TIME_NS,
 * docs/REPORT.md). Regions, implicit tasks and waits are host.c's.
 */
#include "ompt/host.h"

#include "core/config.h"
#include "core/unwind.h"
#include "gpu/blame.h"
#include "ompt/ompt-internal.h"

/*
 * The context of a task created for an encountering task that another
 * thread runs. LLVM does this for taskloop only: a helper task, created at
 * the taskloop by the encountering task, creates chunks on whichever thread
 * runs it, and reports the taskloop's encountering task as theirs; the
 * helper is then the task this thread runs. The construct's frames are on
 * the other thread's stack and its task record is that thread's (read
 * nothing of it). The helper's creation context is the construct's: the
 * chunks hang where they would on the encountering thread. (The return
 * address of a chunk's creation, inside the runtime, is the helper's too:
 * the record no longer keeps it, and nothing else reaches here.)
 */
static struct gt_cct_node *foreign_create_context(struct gt_thread *t, struct omp_task *current)
{
	if (current && current->is_explicit && !current->is_target && current->creator &&
	    current->creator->parent)
		return gt_thread__import(t, current->creator->parent);
	/* Unknown: under the task this thread runs, without frames. */
	if (current && current->node)
		return current->node;
	return t->cct.root;
}

void ompt__on_task_create(ompt_data_t *encountering_task_data,
			  const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
			  int flags, int has_dependences, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = ompt__thread_of(GT_THREAD_OTHER);
	struct omp_task *task, *enc;
	struct gt_cct_node *ctx;
	ompt_data_t *current = NULL;

	(void)has_dependences;
	ompt__data_set(new_task_data, NULL);
	if (!t || !(flags & (ompt_task_explicit | ompt_task_target)))
		return;
	gt_thread__enter(t);
	enc = ompt__task_of(encountering_task_data);
	/* The encountering task is the one this thread runs, unless a helper
	 * of a taskloop creates it (foreign_create_context): asked of the
	 * runtime only when this thread's callbacks do not tell. */
	if ((!enc || enc != ((struct omp_thread *)t->ompt)->running) &&
	    gt_ompt_get_task_info(0, NULL, &current, NULL, NULL, NULL) == 2 && current &&
	    current != encountering_task_data && ompt__task_of(current))
		ctx = foreign_create_context(t, ompt__task_of(current));
	else
		ctx = ompt__context_of(t, codeptr_ra, key, enc, encountering_task_frame);
	if (flags & ompt_task_target) {
		/* Its target construct hangs right under the call site, as if
		 * it had not been deferred; ompt/target.c counts it. A record
		 * now: ompt/target.c keeps the construct's device node in it. */
		task = ompt__task_new(t->ompt, 1);
		if (task) {
			task->is_explicit = 1;
			task->is_untied = !!(flags & ompt_task_untied);
			task->creator = ctx;
			task->is_target = 1;
			task->timed = 1;
			ompt__data_set(new_task_data, task);
		}
	} else {
		struct gt_cct_node *ph = ompt__ph_cache_get(t, t->ompt, ctx, GT_PH_OMP_TASK);

		ompt__add(t, ph, GT_M_OMP_EXPLICIT_TASKS, 1);
		/* No record yet (OMP_TASK_PENDING): the runtime's task queue
		 * hands the node to the thread that runs the task. Nodes are
		 * 16-byte aligned (core/arena.c), so the tag bits are free. */
		if (ph && !((uintptr_t)ph & ~OMP_TASK_NODE_MASK)) {
			uintptr_t v = (uintptr_t)ph | OMP_TASK_PENDING | (flags & ompt_task_untied ? OMP_TASK_UNTIED : 0);

			v |= (uintptr_t)(t->cct.id & 0xffff) << OMP_TASK_TREE_SHIFT;
			ompt__data_set(new_task_data, (void *)v);
		}
	}
	gt_thread__leave(t);
}

/*
 * What the thread runs after a switch from prior to next. A tied task runs
 * to completion nested in the one its thread left for it, and LLVM names
 * no next task when a deferred one completes: the one it left resumes.
 * Untied tasks move between threads: not followed.
 */
static void running__switch(struct omp_thread *ot, struct omp_task *prior,
			    ompt_task_status_t status, struct omp_task *next)
{
	struct omp_task *run = next;

	if ((prior && prior->is_untied) || (next && next->is_untied)) {
		ot->running = NULL;
		return;
	}
	if (status == ompt_task_complete && prior && !next)
		run = prior->resumes;
	else if (next && next->is_explicit && status != ompt_task_complete)
		next->resumes = prior;
	ot->running = run;
}

/*
 * Whether task, which starts on this thread for the first time, is timed,
 * from its construct's state on this thread (struct omp_time_site): short,
 * frequent tasks cost two clock reads each, more than the rest of their
 * measurement. A construct is its call site (task->site), whatever its
 * calling context: a recursive task tree creates each task of a level in a
 * context of its own, too few each to judge. Untied tasks (which may
 * resume on another thread) and constructs that find no entry are timed
 * exactly.
 */
static void time__begin(struct gt_thread *t, struct omp_thread *ot, struct omp_task *task)
{
	struct omp_time_site *s = NULL;
	unsigned h;
	uint32_t n;

	task->timed = 1;
	if (gt_config.exact_timing || task->is_untied || !task->site)
		return;
	ompt__ticks_cap(&ot->calib_max, 4 * gt_config.task_time_ns);
	/* Tasks of one construct usually follow each other. */
	h = ot->last_time_site;
	if (ot->time_sites[h].site == task->site) {
		s = &ot->time_sites[h];
	} else {
		h = ompt__ptr_slot((const void *)task->site, OMP_TIME_SITES);
		for (unsigned i = 0; i < 4; i++, h = (h + 1) & (OMP_TIME_SITES - 1)) {
			if (ot->time_sites[h].site == task->site) {
				s = &ot->time_sites[h];
				break;
			}
			if (!ot->time_sites[h].site) {
				s = &ot->time_sites[h];
				s->site = task->site;
				s->mode = OMP_TIME_CALIBRATING;
				break;
			}
		}
		if (!s)
			return;
		ot->last_time_site = (uint8_t)h;
	}
	n = s->n++;
	if (s->mode == OMP_TIME_CALIBRATING && n == OMP_TASK_CALIBRATE)
		s->mode = gt_clock__ticks_to_ns(s->ticks) / OMP_TASK_CALIBRATE >= gt_config.task_time_ns
				  ? OMP_TIME_EXACT
				  : OMP_TIME_SAMPLED;
	task->time_site = (uint8_t)h;
	task->time_mode = (uint8_t)s->mode;
	if (s->mode == OMP_TIME_SAMPLED) {
		/* Deterministic: the first task after calibration, then every
		 * OMP_TASK_SAMPLE_EVERY-th (n wraps at a multiple of it). */
		task->timed = (n - OMP_TASK_CALIBRATE) % OMP_TASK_SAMPLE_EVERY == 0;
		/* Its waits follow it: counted only, or timed and scaled. */
		task->inst = task->timed ? OMP_INST_SAMPLE : OMP_INST_UNTIMED;
		/* A taskwait is a sync point for blame where a device is used:
		 * timed (ompt__on_sync_region_wait). */
		if (!task->timed && gt_blame__devices_used())
			task->inst = OMP_INST_EXACT;
		if (task->timed)
			ompt__add(t, task->node, GT_M_OMP_TASK_TIME_SAMPLES, 1);
	}
}

/*
 * The record of an explicit task that starts for the first time on this
 * thread (its data holds its creator's tagged <omp task>, see
 * ompt-internal.h), from this thread's free list, put in the task's data.
 * NULL when out of memory: the task then goes unmeasured.
 */
static struct omp_task *task__start(struct gt_thread *t, struct omp_thread *ot, ompt_data_t *d)
{
	uintptr_t v = (uintptr_t)ompt__data_get(d);
	struct omp_task *task = ompt__task_new(ot, 0);
	const struct gt_cct_node *up;
	uint32_t tree;

	if (!task) {
		ompt__data_set(d, NULL);
		return NULL;
	}
	task->is_explicit = 1;
	task->is_untied = !!(v & OMP_TASK_UNTIED);
	task->creator = (struct gt_cct_node *)(v & OMP_TASK_NODE_MASK);
	tree = (uint32_t)(v >> OMP_TASK_TREE_SHIFT);
	/* Another thread's node is not read (it keeps writing its cells,
	 * which may share its line): its copy here is remembered. */
	if (tree && tree != (t->cct.id & 0xffff))
		task->node = gt_thread__import(t, task->creator);
	else
		task->node = gt_cct__owns(&t->cct, task->creator) ? task->creator
								  : gt_thread__import(t, task->creator);
	/* Its construct: the call site's frame, the same in every context
	 * and on every thread. */
	up = task->node ? task->node->parent : NULL;
	task->site = up && up->kind == GT_NODE_FRAME ? (uintptr_t)up->key : 0;
	time__begin(t, ot, task);
	ompt__data_set(d, task);
	return task;
}

/* A timed explicit task stops running at now (it completes, or switches
 * away and resumes later, timed again from then). */
static void time__end(struct gt_thread *t, struct omp_thread *ot, struct omp_task *task, uint64_t now)
{
	uint64_t d = now > task->t_begin ? now - task->t_begin : 0;

	if (task->time_mode == OMP_TIME_CALIBRATING) {
		struct omp_time_site *s = &ot->time_sites[task->time_site];

		/* At most 4 thresholds a task: one preempted task among the
		 * first 64 adds at most a sixteenth of the threshold to their
		 * mean, and cannot keep a site of short tasks exact. */
		if (s->site == task->site)
			s->ticks += d < ot->calib_max ? d : ot->calib_max;
	} else if (task->time_mode == OMP_TIME_SAMPLED) {
		d = ompt__sampled_ticks(d, ompt__sample_cap(&ot->task_sample_cap, gt_config.task_time_ns));
	}
	/* A target task's time is its construct's (OMP_TGT_TIME). */
	if (!task->is_target)
		ompt__add_time(t, task->node, GT_M_OMP_EXPLICIT_TASK_TIME, d);
	/* Waits that ran tasks of a sampled site lose their estimated time. */
	ot->explicit_ns += d;
}

void ompt__on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
			    ompt_data_t *next_task_data)
{
	struct gt_thread *t = ompt__thread_of(GT_THREAD_OTHER);
	struct omp_task *prior, *next;
	struct omp_thread *ot;
	uint64_t now = 0;

	if (!t)
		return;
	ot = t->ompt;
	gt_thread__enter(t);
	prior = ompt__task_of(prior_task_data);
	if (next_task_data && ((uintptr_t)ompt__data_get(next_task_data) & OMP_TASK_PENDING))
		next = task__start(t, ot, next_task_data);
	else
		next = ompt__task_of(next_task_data);
	running__switch(ot, prior, prior_task_status, next);
	if (prior && prior->is_explicit) {
		if (prior->node && prior->timed) {
			now = gt_clock__ticks();
			time__end(t, ot, prior, now);
		}
		prior->node = NULL;
		if (prior_task_status == ompt_task_complete || prior_task_status == ompt_task_cancel ||
		    prior_task_status == ompt_task_late_fulfill) {
			ompt__data_set(prior_task_data, NULL);
			ompt__task_free(ot, prior);
		}
	}
	if (next && next->is_explicit) {
		/* An untied task may resume here after it ran elsewhere. The
		 * creator's node is not read: its copy here is remembered. */
		if (!next->node)
			next->node = gt_thread__import(t, next->creator);
		next->exit_frame = 0; /* where it runs now: asked for at first use */
		if (next->timed)
			next->t_begin = now ? now : gt_clock__ticks();
	}
	/* An untied task may resume on another thread. */
	if (prior_task_data)
		gt_tsan__release(prior_task_data);
	gt_thread__leave(t);
}
