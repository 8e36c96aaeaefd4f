/* SPDX-License-Identifier: MIT */
/*
 * Explicit tasks (ompt_callback_task_create, ompt_callback_task_schedule):
 * their creation contexts, their records, made by the thread that first
 * runs each, and their time, measured for every task or, at sites of very
 * short and very frequent tasks, by sampling (GPUTOOL_TASK_TIME_NS,
 * docs/REPORT.md). There the creating thread judges each task, and those
 * left untimed run without a record until they need one (OMP_TASK_BARE):
 * their starts and ends cost a tag test. Regions, implicit tasks and waits
 * are host.c's.
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

static uintptr_t time__at_create(struct omp_thread *ot, const struct gt_cct_node *ctx);
static inline int time__at_create_known(struct omp_thread *ot, const struct gt_cct_node *ctx, uintptr_t *bits);

/* The data of a task created at placeholder ph (16-byte aligned, within
 * OMP_TASK_NODE_MASK) by this thread, judged bits (time__at_create, or
 * OMP_TASK_UNTIED): pending, no record yet. */
static inline void *create__tag(const struct gt_thread *t, const struct gt_cct_node *ph, uintptr_t bits)
{
	return (void *)((uintptr_t)ph | OMP_TASK_PENDING | bits |
			(uintptr_t)(t->cct.id & 0xffff) << OMP_TASK_TREE_SHIFT);
}

/* ompt__on_task_create but its leaf case; key: the callback's
 * GT_UNWIND_KEY(). */
static __attribute__((noinline)) void task_create(ompt_data_t *encountering_task_data,
						   const ompt_frame_t *encountering_task_frame,
						   ompt_data_t *new_task_data, int flags, const void *codeptr_ra,
						   uintptr_t key)
{
	struct gt_thread *t = ompt__thread_of(GT_THREAD_OTHER);
	struct omp_task *task, *enc, *helper;
	struct gt_cct_node *ctx;
	struct omp_construct *c = NULL;
	ompt_data_t *current = NULL;
	uintptr_t boundary = 0;
	int hit = 0;
	struct omp_thread *ot;
	uintptr_t enc_tag;

	ompt__data_set(new_task_data, NULL);
	if (!t || !(flags & (ompt_task_explicit | ompt_task_target)))
		return;
	ot = t->ompt;
	gt_thread__enter(t);
	enc_tag = (uintptr_t)ompt__data_get(encountering_task_data);
	enc = enc_tag & OMP_TASK_PENDING ? NULL : (struct omp_task *)enc_tag;
	/* The encountering task is the one this thread runs, unless a helper
	 * of a taskloop creates it (foreign_create_context): asked of the
	 * runtime only when this thread's callbacks do not tell. An untimed
	 * task without a record that the last switch started is known; its
	 * node is found once for all its creations. */
	if (ompt__is_bare(enc_tag) && encountering_task_data == ot->bare_running) {
		if (!ot->bare_node)
			ot->bare_node = ompt__pending_node(t, enc_tag);
		ctx = ompt__context_in(t, codeptr_ra, key, ot->bare_node, encountering_task_frame);
	} else if ((!enc || enc != ot->running) &&
		   gt_ompt_get_task_info(0, NULL, &current, NULL, NULL, NULL) == 2 && current &&
		   current != encountering_task_data && (helper = ompt__task_here(t, current))) {
		ctx = foreign_create_context(t, helper);
	} else if (ompt__is_bare(enc_tag)) {
		ctx = ompt__context_in(t, codeptr_ra, key, ompt__pending_node(t, enc_tag), encountering_task_frame);
	} else if (enc && !enc->is_explicit && !(flags & ompt_task_target)) {
		/* A creation at a site met again: the construct cache's
		 * answer. (Explicit tasks, a tree's, create theirs each under
		 * a node of its own.) */
		boundary = ompt__task_boundary(enc, encountering_task_frame);
		c = ompt__construct_slot(ot, codeptr_ra, GT_PH_OMP_TASK);
		hit = ompt__construct_hit(t, c, codeptr_ra, key, enc->node, boundary, GT_PH_OMP_TASK);
		ctx = hit ? c->ctx : ompt__context_of(t, codeptr_ra, key, enc, encountering_task_frame);
	} else {
		ctx = ompt__context_of(t, codeptr_ra, key, enc, encountering_task_frame);
	}
	if (flags & ompt_task_target) {
		/* Its target construct hangs right under the call site, as if
		 * it had not been deferred; ompt/target.c counts it. A record
		 * now: ompt/target.c keeps the construct's device node in it. */
		task = ompt__task_new(ot, 1);
		if (task) {
			task->is_explicit = 1;
			task->is_untied = !!(flags & ompt_task_untied);
			task->creator = ctx;
			task->is_target = 1;
			task->timed = 1;
			ompt__data_set(new_task_data, task);
		}
	} else {
		struct gt_cct_node *ph;

		if (hit) {
			ph = c->ph;
			ompt__construct_count(t, c, GT_M_OMP_EXPLICIT_TASKS);
		} else {
			ph = ompt__ph_cache_get(t, ot, ctx, GT_PH_OMP_TASK);
			ompt__add(t, ph, GT_M_OMP_EXPLICIT_TASKS, 1);
			if (c)
				ompt__construct_put(t, c, codeptr_ra, key, enc->node, boundary, GT_PH_OMP_TASK, ctx, ph);
		}
		/* No record yet (OMP_TASK_PENDING): the runtime's task queue
		 * hands the node to the thread that runs the task. Nodes are
		 * 16-byte aligned (core/arena.c), so the tag bits are free. */
		if (ph && !((uintptr_t)ph & ~OMP_TASK_NODE_MASK))
			ompt__data_set(new_task_data,
				       create__tag(t, ph, flags & ompt_task_untied ? OMP_TASK_UNTIED : time__at_create(ot, ctx)));
	}
	gt_thread__leave(t);
}

/*
 * A creation by the implicit task this thread runs, at a site the
 * construct cache holds, whose judgement the thread's last time site
 * answers (tasks of one construct follow each other), is a leaf: a count,
 * a judgement and a tag. The rest is task_create's, explicit tasks'
 * creations included: a tree's tasks create theirs under a node of their
 * own each, which the cache misses.
 */
void ompt__on_task_create(ompt_data_t *encountering_task_data,
			  const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
			  int flags, int has_dependences, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = gt_thread__peek();
	uintptr_t enc_tag = encountering_task_data ? (uintptr_t)encountering_task_data->ptr : 0, bits;
	struct omp_task *enc = (struct omp_task *)enc_tag;
	struct omp_construct *c;
	struct omp_thread *ot;

	(void)has_dependences;
	if (t && (ot = t->ompt) &&
	    (flags & (ompt_task_explicit | ompt_task_target | ompt_task_untied)) == ompt_task_explicit && enc_tag &&
	    !(enc_tag & OMP_TASK_PENDING) && enc == ot->running && !enc->is_explicit &&
	    (c = ompt__construct_slot(ot, codeptr_ra, GT_PH_OMP_TASK))->count &&
	    !((uintptr_t)c->ph & ~OMP_TASK_NODE_MASK) &&
	    ompt__construct_hit(t, c, codeptr_ra, key, enc->node,
				ompt__task_boundary(enc, encountering_task_frame), GT_PH_OMP_TASK) &&
	    time__at_create_known(ot, c->ctx, &bits)) {
		gt_thread__enter(t);
		c->count->value++;
		ompt__data_set(new_task_data, create__tag(t, c->ph, bits));
		gt_thread__leave(t);
		return;
	}
	task_create(encountering_task_data, encountering_task_frame, new_task_data, flags, codeptr_ra, key);
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
 * A construct's calibration, shared by all threads: its site, set once; how
 * many of its tasks began and how many of those runs took the threshold or
 * more while it calibrated; and the judgement. Its counters are written
 * while it calibrates only: each thread keeps the judgement in its own
 * time_sites once it reads it, and never touches the entry again. Every
 * field is self-contained (a count, or the judgement, which publishes
 * nothing else), so relaxed order serves throughout.
 */
struct omp_time_shared {
	_Alignas(64) _Atomic uintptr_t site; /* 0: free */
	_Atomic uint32_t n_begun;
	_Atomic uint32_t n_long;
	_Atomic uint32_t judged; /* 0: calibrating; else enum omp_time_mode + 1 */
};

#define OMP_TIME_SHARED 256 /* a power of two */

static struct omp_time_shared time_shared[OMP_TIME_SHARED];

/* The calibration of construct site, taken when free; NULL: none free. */
static struct omp_time_shared *shared__get(uintptr_t site)
{
	unsigned h = ompt__ptr_slot((const void *)site, OMP_TIME_SHARED);

	for (unsigned i = 0; i < 8; i++, h = (h + 1) & (OMP_TIME_SHARED - 1)) {
		struct omp_time_shared *g = &time_shared[h];
		uintptr_t cur = atomic_load_explicit(&g->site, memory_order_relaxed);

		if (!cur && atomic_compare_exchange_strong_explicit(&g->site, &cur, site, memory_order_relaxed,
								    memory_order_relaxed))
			return g;
		if (cur == site)
			return g;
	}
	return NULL;
}

/*
 * The thread's entry of construct site (struct omp_time_site), made when
 * add; NULL: none. A construct is its call site (omp_task.site), whatever
 * its calling context: a recursive task tree creates each task of a level
 * in a context of its own, too few each to judge. An entry is a copy of
 * the process's judgement and this thread's count since: where a program
 * has more constructs than fit, one gives way to another, and is read
 * again from the process's entry when its construct returns.
 */
static struct omp_time_site *time__site(struct omp_thread *ot, uintptr_t site, int add)
{
	unsigned h = ot->last_time_site, h0;
	struct omp_time_site *s;

	/* Tasks of one construct usually follow each other. */
	if (ot->time_sites[h].site == site)
		return &ot->time_sites[h];
	h = h0 = ompt__ptr_slot((const void *)site, OMP_TIME_SITES);
	for (unsigned i = 0; i < 4; i++, h = (h + 1) & (OMP_TIME_SITES - 1)) {
		s = &ot->time_sites[h];
		if (s->site == site)
			goto found;
		if (!s->site)
			break;
	}
	if (!add)
		return NULL;
	if (s->site)
		s = &ot->time_sites[h = h0];
	s->site = site;
	s->shared = shared__get(site);
	s->mode = s->shared ? OMP_TIME_CALIBRATING : OMP_TIME_EXACT;
found:
	ot->last_time_site = (uint8_t)h;
	return s;
}

/*
 * Whether s, calibrating on this thread, has been judged since; then this
 * thread keeps the judgement. Its count starts at a phase that steps
 * through all OMP_TASK_SAMPLE_EVERY residues from one entry to the next:
 * a construct whose entry keeps giving way, its tasks met a few at a time,
 * still has one in OMP_TASK_SAMPLE_EVERY timed on average, not the first
 * of each visit.
 */
static int time__judged(struct omp_thread *ot, struct omp_time_site *s)
{
	uint32_t j = atomic_load_explicit(&s->shared->judged, memory_order_relaxed);

	if (!j)
		return 0;
	s->mode = j - 1;
	s->n = ot->time_phase;
	ot->time_phase += 7; /* odd: coprime to OMP_TASK_SAMPLE_EVERY */
	return 1;
}

/*
 * The mode of a task of s that begins on this thread while s calibrates:
 * OMP_TIME_CALIBRATING for the construct's first OMP_TASK_CALIBRATE tasks;
 * the task after them judges (those of them still running count as
 * short); tasks that begin meanwhile are timed exactly and not counted.
 */
static uint32_t time__calibrate(struct omp_time_site *s)
{
	struct omp_time_shared *g = s->shared;
	uint32_t k = atomic_fetch_add_explicit(&g->n_begun, 1, memory_order_relaxed);
	uint32_t mode;

	if (k < OMP_TASK_CALIBRATE)
		return OMP_TIME_CALIBRATING;
	if (k > OMP_TASK_CALIBRATE)
		return OMP_TIME_EXACT;
	mode = 2 * atomic_load_explicit(&g->n_long, memory_order_relaxed) >= OMP_TASK_CALIBRATE
		       ? OMP_TIME_EXACT
		       : OMP_TIME_SAMPLED;
	atomic_store_explicit(&g->judged, mode + 1, memory_order_relaxed);
	s->mode = mode;
	s->n = 0;
	return mode;
}

/* Whether the n-th task of a sampled construct on this thread (from 0) is
 * timed. Deterministic: the first after the judgement, then every
 * OMP_TASK_SAMPLE_EVERY-th (n wraps at a multiple of it). */
static inline int time__sampled(uint32_t n)
{
	return n % OMP_TASK_SAMPLE_EVERY == 0;
}

/* The creating thread's judgement of a task of s, judged (time__at_create). */
static inline uintptr_t time__create_bits(struct omp_time_site *s)
{
	if (s->mode != OMP_TIME_SAMPLED || gt_blame__devices_used())
		return 0;
	return time__sampled(s->n++) ? OMP_TASK_SAMPLE : OMP_TASK_BARE;
}

/*
 * The judgement of a task created at context ctx (its call site's frame),
 * made by the creating thread where the construct's tasks are timed by
 * sampling: OMP_TASK_SAMPLE or OMP_TASK_BARE; else 0, the thread that
 * starts the task judges it (time__begin). Both share this thread's count,
 * so one task in OMP_TASK_SAMPLE_EVERY is timed either way. A taskwait is a
 * sync point for blame where a device is used: untimed tasks then get
 * records (time__begin).
 */
static uintptr_t time__at_create(struct omp_thread *ot, const struct gt_cct_node *ctx)
{
	struct omp_time_site *s;

	if (gt_config.exact_timing || !ctx || ctx->kind != GT_NODE_FRAME)
		return 0;
	s = time__site(ot, (uintptr_t)ctx->key, 1);
	if (!s || (s->mode == OMP_TIME_CALIBRATING && !time__judged(ot, s)))
		return 0;
	return time__create_bits(s);
}

/* time__at_create where the thread's last time site is ctx's construct's,
 * judged: 1 and *bits; else 0. */
static inline __attribute__((always_inline)) int time__at_create_known(struct omp_thread *ot,
								   const struct gt_cct_node *ctx, uintptr_t *bits)
{
	struct omp_time_site *s = &ot->time_sites[ot->last_time_site];

	if (gt_config.exact_timing || ctx->kind != GT_NODE_FRAME || s->site != (uintptr_t)ctx->key ||
	    s->mode == OMP_TIME_CALIBRATING)
		return 0;
	*bits = time__create_bits(s);
	return 1;
}

uint8_t ompt__wait_judge(struct omp_thread *ot, const struct gt_cct_node *ctx, uint8_t *judged,
			 struct omp_time_shared **calib)
{
	struct omp_time_site *s;
	uint32_t mode;

	*calib = NULL;
	/* A process that uses a device: a wait may be a sync point for
	 * blame, timed each. */
	if (gt_blame__devices_used())
		return OMP_INST_EXACT;
	if (gt_config.exact_timing) {
		if (judged)
			*judged = OMP_TIME_EXACT + 1;
		return OMP_INST_EXACT;
	}
	/* No call site known (the runtime gave no frame), or no entry: this
	 * wait timed, the construct not judged. */
	if (!ctx || ctx->kind != GT_NODE_FRAME || !(s = time__site(ot, (uintptr_t)ctx->key, 1)))
		return OMP_INST_EXACT;
	mode = s->mode == OMP_TIME_CALIBRATING && !time__judged(ot, s) ? time__calibrate(s) : s->mode;
	if (mode == OMP_TIME_CALIBRATING) {
		ompt__ticks_cap(&ot->task_threshold, gt_config.task_time_ns);
		*calib = s->shared;
		return OMP_INST_EXACT;
	}
	/* Judged, unless it began while the judgement was made. */
	if (judged && s->mode != OMP_TIME_CALIBRATING)
		*judged = (uint8_t)(s->mode + 1);
	if (mode != OMP_TIME_SAMPLED)
		return OMP_INST_EXACT;
	return ompt__wait_drawn(ot) ? OMP_INST_SAMPLE : OMP_INST_UNTIMED;
}

void ompt__wait_calibrated(struct omp_thread *ot, struct omp_time_shared *g, uint64_t ticks)
{
	if (ticks >= ot->task_threshold)
		atomic_fetch_add_explicit(&g->n_long, 1, memory_order_relaxed);
}

/* A task's state as sampled: timed or counted only (task->inst), its waits
 * following it. */
static void time__set_sampled(struct gt_thread *t, struct omp_task *task, int timed)
{
	task->time_mode = OMP_TIME_SAMPLED;
	task->timed = (uint8_t)timed;
	/* Its waits follow it: counted only, or timed and scaled. */
	task->inst = timed ? OMP_INST_SAMPLE : OMP_INST_UNTIMED;
	if (timed)
		ompt__add(t, task->node, GT_M_OMP_TASK_TIME_SAMPLES, 1);
}

/*
 * Whether task, which starts on this thread for the first time, is timed,
 * from its construct's state (struct omp_time_site): short, frequent tasks
 * cost two clock reads each, more than the rest of their measurement.
 * Untied tasks (which may resume on another thread) and constructs that
 * find no entry are timed exactly.
 */
static void time__begin(struct gt_thread *t, struct omp_thread *ot, struct omp_task *task)
{
	struct omp_time_site *s;
	uint32_t mode;

	task->timed = 1;
	if (gt_config.exact_timing || task->is_untied || !task->site)
		return;
	ompt__ticks_cap(&ot->task_threshold, gt_config.task_time_ns);
	s = time__site(ot, task->site, 1);
	if (!s)
		return;
	mode = s->mode == OMP_TIME_CALIBRATING && !time__judged(ot, s) ? time__calibrate(s) : s->mode;
	task->time_site = (uint8_t)(s - ot->time_sites);
	task->time_mode = (uint8_t)mode;
	if (mode == OMP_TIME_SAMPLED) {
		time__set_sampled(t, task, time__sampled(s->n++));
		if (!task->timed && gt_blame__devices_used())
			task->inst = OMP_INST_EXACT;
	}
}

/* Its construct: the call site's frame, the same in every context and on
 * every thread. */
static uintptr_t node__site(const struct gt_cct_node *node)
{
	const struct gt_cct_node *up = node ? node->parent : NULL;

	return up && up->kind == GT_NODE_FRAME ? (uintptr_t)up->key : 0;
}

/*
 * The record of an explicit task that starts for the first time on this
 * thread (its data holds its creator's tagged <omp task>, see
 * ompt-internal.h), from this thread's free list, put in the task's data;
 * node: its node here. NULL when out of memory: the task then goes
 * unmeasured.
 */
static struct omp_task *task__record(struct omp_thread *ot, ompt_data_t *d, uintptr_t v,
				     struct gt_cct_node *node)
{
	struct omp_task *task = ompt__task_new(ot, 0);

	if (!task) {
		ompt__data_set(d, NULL);
		return NULL;
	}
	task->is_explicit = 1;
	task->is_untied = !!(v & OMP_TASK_UNTIED);
	task->creator = (struct gt_cct_node *)(v & OMP_TASK_NODE_MASK);
	task->node = node;
	task->site = node__site(node);
	ompt__data_set(d, task);
	return task;
}

static struct omp_task *task__start(struct gt_thread *t, struct omp_thread *ot, ompt_data_t *d, uintptr_t v)
{
	struct omp_task *task = task__record(ot, d, v, ompt__pending_node(t, v));

	if (task && (v & OMP_TASK_SAMPLE))
		time__set_sampled(t, task, 1);
	else if (task)
		time__begin(t, ot, task);
	return task;
}

struct omp_task *ompt__task_bare_record(struct gt_thread *t, ompt_data_t *d, uintptr_t v)
{
	struct omp_thread *ot = t->ompt;
	struct omp_task *task;

	gt_thread__enter(t);
	task = task__record(ot, d, v, ompt__pending_node(t, v));
	if (task)
		time__set_sampled(t, task, 0);
	/* It runs here (it resumes nothing known: running__switch). */
	ot->running = task;
	gt_thread__leave(t);
	return task;
}

/* A timed explicit task stops running at now (it completes, or switches
 * away and resumes later, timed again from then). */
static void time__end(struct gt_thread *t, struct omp_thread *ot, struct omp_task *task, uint64_t now)
{
	uint64_t d = now > task->t_begin ? now - task->t_begin : 0;

	if (task->time_mode == OMP_TIME_CALIBRATING) {
		const struct omp_time_site *s = &ot->time_sites[task->time_site];

		/* A task suspended and resumed counts each run apart. */
		if (s->site == task->site && s->shared && d >= ot->task_threshold)
			atomic_fetch_add_explicit(&s->shared->n_long, 1, memory_order_relaxed);
	} else if (task->time_mode == OMP_TIME_SAMPLED) {
		d = ompt__sampled_ticks(d, ompt__sample_cap(&ot->task_sample_cap, gt_config.task_time_ns));
	}
	/* A target task's time is its construct's (OMP_TGT_TIME). */
	if (!task->is_target)
		ompt__add_time(t, task->node, GT_M_OMP_EXPLICIT_TASK_TIME, d);
	/* Waits that ran tasks of a sampled site lose their estimated time. */
	ot->explicit_ns += d;
}

/* A task switch that starts, ends or resumes a task with a record of an
 * explicit task: the rest of ompt__on_task_schedule (schedule__switch). */
static inline __attribute__((always_inline)) void schedule__records(struct gt_thread *t, struct omp_thread *ot,
							 ompt_data_t *prior_task_data, struct omp_task *prior,
							 ompt_task_status_t prior_task_status,
							 ompt_data_t *next_task_data, uintptr_t next_tag)
{
	struct omp_task *next;
	uint64_t now = 0;

	gt_thread__enter(t);
	if (ompt__is_bare(next_tag))
		next = NULL;
	else if (next_tag & OMP_TASK_PENDING)
		next = task__start(t, ot, next_task_data, next_tag);
	else
		next = (struct omp_task *)next_tag;
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
	gt_thread__leave(t);
}

/* A switch that starts, ends or resumes a record of an explicit task:
 * schedule__records from the callback's arguments, out of line and called
 * last, so that the common switches need no frame of the callback's. */
static __attribute__((noinline)) void schedule__switch(ompt_data_t *prior_task_data,
							ompt_task_status_t prior_task_status,
							ompt_data_t *next_task_data)
{
	struct gt_thread *t = gt_thread__peek();

	schedule__records(t, t->ompt, prior_task_data, ompt__task_of(prior_task_data), prior_task_status,
			  next_task_data, (uintptr_t)ompt__data_get(next_task_data));
	/* An untied task may resume on another thread. */
	if (prior_task_data)
		gt_tsan__release(prior_task_data);
}

/* A thread's first switch, before it has its OpenMP state. */
static __attribute__((noinline)) void schedule__first(ompt_data_t *prior_task_data,
						       ompt_task_status_t prior_task_status,
						       ompt_data_t *next_task_data)
{
	if (ompt__thread_of(GT_THREAD_OTHER))
		ompt__on_task_schedule(prior_task_data, prior_task_status, next_task_data);
}

void ompt__on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
			    ompt_data_t *next_task_data)
{
	struct gt_thread *t = gt_thread__peek();
	struct omp_task *prior;
	struct omp_thread *ot;
	uintptr_t next_tag;

	if (!t || !t->ompt) {
		schedule__first(prior_task_data, prior_task_status, next_task_data);
		return;
	}
	ot = t->ompt;
	prior = ompt__task_of(prior_task_data);
	next_tag = (uintptr_t)ompt__data_get(next_task_data);
	/*
	 * Untimed tasks without records (OMP_TASK_BARE) are all but invisible
	 * here: a switch to one from another, or from an implicit task (a
	 * barrier that runs queued tasks), and back, only notes which task
	 * runs, for its task creations (running__switch's answers, in short:
	 * none has a record of an explicit task to start or end).
	 */
	ot->bare_running = ompt__is_bare(next_tag) ? next_task_data : NULL;
	ot->bare_node = NULL;
	if ((prior && prior->is_explicit) ||
	    (next_tag && !ompt__is_bare(next_tag) &&
	     ((next_tag & OMP_TASK_PENDING) || ((struct omp_task *)next_tag)->is_explicit))) {
		schedule__switch(prior_task_data, prior_task_status, next_task_data);
		return;
	}
	ot->running = !next_tag || ompt__is_bare(next_tag) ? NULL : (struct omp_task *)next_tag;
	if (prior_task_data)
		gt_tsan__release(prior_task_data);
}
