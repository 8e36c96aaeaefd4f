/* SPDX-License-Identifier: MIT */
#include "ompt/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/trace-format.h"
#include "core/sample.h"
#include "core/trace.h"
#include "core/tsan.h"
#include "core/unwind.h"
#include "gpu/blame.h"
#include "ompt/ompt-internal.h"

struct omp_thread *ompt__thread_state(struct gt_thread *t)
{
	struct omp_thread *ot = t->ompt;

	if (!ot) {
		/* Cache-line aligned: the sites and the ring are read by the
		 * teams. */
		ot = aligned_alloc(64, sizeof(*ot));
		if (ot) {
			memset(ot, 0, sizeof(*ot));
			for (int i = 0; i < OMP_SITES; i++)
				ot->sites[i].ot = ot;
		}
		t->ompt = ot;
	}
	return ot;
}

/* Sites are 64-byte aligned: the low bits of a region's parallel_data
 * carry its slot in the ring. */
_Static_assert(OMP_REGION_RING <= 64 && !(OMP_REGION_RING & (OMP_REGION_RING - 1)),
	       "a slot's index fits in a site's alignment");

static void *region__tag(const struct omp_site *s, const struct omp_region *r, uintptr_t mode)
{
	return (void *)((uintptr_t)s | (uintptr_t)(r - s->ot->regions) | mode);
}

static struct omp_site *tag__site(void *tag)
{
	return (struct omp_site *)((uintptr_t)tag & ~((uintptr_t)(OMP_REGION_RING - 1) | OMP_TAG_MODES));
}

/* How the instance of a tag is timed (enum omp_inst). */
static uint8_t tag__inst(void *tag)
{
	uintptr_t v = (uintptr_t)tag;

	return v & OMP_TAG_UNTIMED ? OMP_INST_UNTIMED : v & OMP_TAG_SAMPLE ? OMP_INST_SAMPLE : OMP_INST_EXACT;
}

static struct omp_region *tag__region(void *tag)
{
	return &tag__site(tag)->ot->regions[(uintptr_t)tag & (OMP_REGION_RING - 1)];
}

_Static_assert(OMP_REGION_SAMPLE_EVERY == OMP_TASK_SAMPLE_EVERY, "one period for tasks and regions");

/* What d ticks of a time in task (a wait, a construct, the task itself)
 * stand for (enum omp_inst, ompt__sampled_ticks). */
static inline uint64_t inst__charge(struct omp_thread *ot, const struct omp_task *task, uint64_t d)
{
	if (task->inst != OMP_INST_SAMPLE)
		return d;
	if (task->is_explicit)
		return ompt__sampled_ticks(d, ompt__sample_cap(&ot->task_sample_cap, gt_config.task_time_ns));
	return ompt__sampled_ticks(d, ompt__sample_cap(&ot->region_sample_cap, gt_config.region_time_ns));
}

/*
 * The mode of the next region r of the construct at node (see
 * OMP_REGION_CALIBRATE), as its tag's bits. A league's (teams) regions, a
 * traced run's and those of a process that uses a device (whose waits are
 * sync points for blame) are timed in full.
 */
static uintptr_t region__mode(struct omp_thread *ot, struct omp_region *r, const struct gt_cct_node *node,
			      int flags)
{
	struct omp_region_time *rt = NULL;
	unsigned h = ot->last_region_time;
	uint32_t n;

	r->calibrating = 0;
	if (gt_config.exact_timing || !gt_config.region_time_ns)
		return 0;
	/* Regions of one context usually follow each other. */
	if (ot->region_times[h].node == node) {
		rt = &ot->region_times[h];
	} else {
		h = ompt__ptr_slot(node, OMP_REGION_TIMES);
		for (unsigned i = 0; i < 8; i++, h = (h + 1) & (OMP_REGION_TIMES - 1)) {
			if (ot->region_times[h].node == node) {
				rt = &ot->region_times[h];
				break;
			}
			if (!ot->region_times[h].node) {
				rt = &ot->region_times[h];
				rt->node = node;
				rt->mode = OMP_TIME_CALIBRATING;
				break;
			}
		}
		if (!rt)
			return 0;
		ot->last_region_time = (uint16_t)h;
	}
	n = rt->n++;
	if (rt->mode == OMP_TIME_CALIBRATING) {
		if (n < OMP_REGION_CALIBRATE) {
			r->time = (uint16_t)h;
			r->calibrating = 1;
			return 0;
		}
		rt->mode = gt_clock__ticks_to_ns(rt->ticks) / OMP_REGION_CALIBRATE >= gt_config.region_time_ns
				   ? OMP_TIME_EXACT
				   : OMP_TIME_SAMPLED;
	}
	if (rt->mode != OMP_TIME_SAMPLED || (flags & ompt_parallel_league) || gt_tracer__on() ||
	    gt_blame__devices_used())
		return 0;
	/* n wraps at a multiple of OMP_REGION_SAMPLE_EVERY. */
	return n % OMP_REGION_SAMPLE_EVERY == OMP_REGION_SAMPLE_EVERY / 2 ? OMP_TAG_SAMPLE : OMP_TAG_UNTIMED;
}

/* A region r that took ticks ended: while its context calibrates, its
 * time counts towards the mean, at most 4 thresholds (one preempted region
 * among the first ones cannot keep a context of short ones timed in
 * full). */
static void region__time(struct omp_thread *ot, const struct omp_region *r, uint64_t ticks)
{
	uint64_t max;

	if (!r->calibrating)
		return;
	max = ompt__ticks_cap(&ot->region_calib_max, 4 * gt_config.region_time_ns);
	ot->region_times[r->time].ticks += ticks < max ? ticks : max;
}

/*
 * The site for node: the one it had, or a free one along its probe, which
 * it takes over. NULL if all are in use: nesting 64 levels deep.
 */
static struct omp_site *site__take(struct omp_thread *ot, struct gt_cct_node *node)
{
	unsigned h = (unsigned)(((uintptr_t)node * 0x9e3779b97f4a7c15ull) >> 58);
	int unused = -1;

	/* Its own site within four steps, or one never used: two constructs
	 * whose nodes hash alike, met in turn, would otherwise take each
	 * other's site at every region, and the members' lines with it. */
	for (unsigned i = 0; i < 4; i++) {
		unsigned k = (h + i) % OMP_SITES;

		if (ot->sites[k].node == node) {
			ot->site_busy[k]++;
			return &ot->sites[k];
		}
		if (!ot->sites[k].node && unused < 0)
			unused = (int)k;
	}
	if (unused >= 0)
		h = (unsigned)unused;
	for (unsigned i = 0; i < OMP_SITES; i++) {
		unsigned k = (h + i) % OMP_SITES;
		struct omp_site *s = &ot->sites[k];

		if (s->node != node) {
			if (ot->site_busy[k])
				continue;
			/* The last team to read it did before its join, which
			 * the runtime orders before this rewrite (released in
			 * ompt__on_implicit_task). */
			gt_tsan__acquire(s);
			s->node = node;
		}
		ot->site_busy[k]++;
		return s;
	}
	return NULL;
}

static void site__put(struct omp_thread *ot, const struct omp_site *s)
{
	ot->site_busy[s - ot->sites]--;
}

/* A free slot of the encountering thread's ring (slots of its own enclosing
 * regions are still active). NULL if all are: nesting 64 levels deep. */
static struct omp_region *region__take(struct omp_thread *ot)
{
	for (int i = 0; i < OMP_REGION_RING; i++) {
		uint64_t g = ++ot->region_gen;
		struct omp_region *r = &ot->regions[g % OMP_REGION_RING];

		if (r->active)
			continue;
		atomic_store_explicit(&r->t_end, 0, memory_order_relaxed);
		r->active = 1;
		return r;
	}
	return NULL;
}

/*
 * When a worker's part of a region ended. LLVM reports it late (at the next
 * fork): the region's end, once known, is the answer and saves a clock read.
 * The slot may hold a later instance by now (see ompt-internal.h).
 */
static uint64_t region__member_end(const struct omp_task *task)
{
	struct omp_region *r = task->region;
	uint64_t end, begin;

	/* Pairs with the release store of t_end at the encountering thread's
	 * implicit-task end: the t_begin of the same use, or of a later one,
	 * is seen. */
	end = atomic_load_explicit(&r->t_end, memory_order_acquire);
	begin = atomic_load_explicit(&r->t_begin, memory_order_relaxed);
	if (!end || begin > task->t_begin || end < task->t_begin)
		return task->woke;
	return end;
}

/* A wait of task that began at task->wait_t0 ended at now, busy ticks of it
 * running explicit tasks: the rest is charged. Returns it. */
static inline __attribute__((always_inline)) uint64_t wait__end(struct gt_thread *t, struct omp_task *task,
								uint64_t now, uint64_t busy)
{
	static const enum gt_metric m[] = { GT_M_OMP_WAIT, GT_M_OMP_WAIT_COUNT, GT_M_OMP_WAIT_TIME_SAMPLES };
	struct omp_thread *ot = t->ompt;
	uint64_t d = now > task->wait_t0 ? now - task->wait_t0 : 0, charge;
	/* Sampled by its construct's judgement, not as its task's instance. */
	int own = task->wait_inst != task->inst;

	d = d > busy ? d - busy : 0;
	charge = own ? ompt__sampled_ticks(d, ompt__sample_cap(&ot->task_sample_cap, gt_config.task_time_ns))
		     : inst__charge(ot, task, d);
	{
		const uint64_t v[] = { gt_clock__ticks_to_ns(charge), 1, 1 };

		gt_cct__add_n(&t->cct, task->wait_node, m, v, own ? 3 : 2, 0);
	}
	if (task->wait_calib) {
		ompt__wait_calibrated(ot, task->wait_calib, d);
		task->wait_calib = NULL;
	}
	/* The task's waits, for its work: a sampled wait stands for the
	 * untimed ones. */
	task->wait_ns += own ? charge : d;
	task->wait_node = NULL;
	return d;
}

/* An implicit task ended at now: its time and work, and its record freed. */
static void implicit__end(struct gt_thread *t, struct omp_thread *ot, struct omp_task *task,
			  uint64_t now)
{
	uint64_t d = now > task->t_begin ? now - task->t_begin : 0;

	if (task->node && task->inst != OMP_INST_UNTIMED) {
		static const enum gt_metric m[] = { GT_M_OMP_TASK_TIME, GT_M_OMP_WORK };
		const uint64_t v[] = {
			gt_clock__ticks_to_ns(inst__charge(ot, task, d)),
			gt_clock__ticks_to_ns(inst__charge(ot, task, d > task->wait_ns ? d - task->wait_ns : 0)),
		};

		gt_cct__add_n(&t->cct, task->node, m, v, 2, 0);
	}
	if (gt_tracer__on())
		gt_tracer__span_ticks(t, GT_EV_REGION, "omp implicit task", task->node, task->t_begin,
				      task->t_begin + d);
	ompt__task_free(ot, task);
}

/* A member's implicit task, and its region's barrier, end at the region's
 * end, read now (omp_thread.settle). Under gt_thread__enter. */
static void member__settle(struct gt_thread *t, struct omp_thread *ot)
{
	struct omp_task *task = ot->settle;
	uint64_t end = region__member_end(task);

	ot->settle = NULL;
	if (task->wait_deferred && task->wait_node)
		(void)wait__end(t, task, end, task->wait_busy);
	implicit__end(t, ot, task, end);
}

/* A member's end, reported at the next fork: settled later. */
static void member__defer(struct gt_thread *t, struct omp_thread *ot, struct omp_task *task)
{
	if (ot->settle && ot->settle != task)
		member__settle(t, ot);
	if (!task->woke)
		task->woke = gt_clock__ticks();
	/* The line arrives while the next region runs. */
	__builtin_prefetch((const void *)&task->region->t_end);
	ot->settle = task;
}

void ompt__on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
	enum gt_thread_kind kind = type == ompt_thread_initial ? GT_THREAD_INITIAL
				   : type == ompt_thread_worker ? GT_THREAD_WORKER
								: GT_THREAD_OTHER;
	struct gt_thread *t = ompt__thread_of(kind);

	/* A record the preloaded pthread_create made as the thread started
	 * (core/thread-create.c) learns what the runtime says the thread is. */
	if (t && t->kind == GT_THREAD_OTHER)
		t->kind = kind;
	thread_data->ptr = t;
	if (t)
		gt_sample__thread_start(t);
}

void ompt__on_thread_end(ompt_data_t *thread_data)
{
	struct gt_thread *t = thread_data->ptr;
	struct omp_thread *ot;

	if (!t)
		return;
	ot = t->ompt;
	if (ot && ot->settle) {
		gt_thread__enter(t);
		member__settle(t, ot);
		gt_thread__leave(t);
	}
	gt_thread__exit(t);
}

void ompt__on_parallel_begin(ompt_data_t *encountering_task_data,
			     const ompt_frame_t *encountering_task_frame, ompt_data_t *parallel_data,
			     unsigned int requested_parallelism, int flags, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = ompt__thread_of(GT_THREAD_OTHER);
	struct omp_thread *ot;
	struct gt_cct_node *node;
	struct omp_region *r;
	struct omp_site *s;
	void *tag;

	ompt__data_set(parallel_data, NULL);
	if (!t)
		return;
	ot = t->ompt;
	gt_thread__enter(t);
	if (ot->kernel && !ot->kernel_name)
		ot->kernel_name = ompt__kernel_name(codeptr_ra);
	/* A region the task running a host kernel opens is the kernel's: it
	 * hangs under <omp kernel>, not beside its construct (the frames
	 * between are the offload runtime's, and its entry function's). */
	if (ot->kernel && ompt__data_get(encountering_task_data) == ot->kernel_task)
		node = gt_cct__placeholder(&t->cct, ot->kernel, GT_PH_OMP_PARALLEL);
	else
		node = ompt__ph_cache_get(t, ot,
					  ompt__context_of(t, codeptr_ra, key, ompt__task_here(t, encountering_task_data),
							   encountering_task_frame),
					  GT_PH_OMP_PARALLEL);
	s = node ? site__take(ot, node) : NULL;
	if (!s)
		goto out;
	r = region__take(ot);
	if (!r) {
		site__put(ot, s);
		goto out;
	}
	r->team = requested_parallelism;
	atomic_store_explicit(&r->t_begin, gt_clock__ticks(), memory_order_relaxed);
	tag = region__tag(s, r, region__mode(ot, r, node, flags));
	if (flags & ompt_parallel_league)
		ot->league = tag;
	/* The fork hands the site to the team: the runtime orders these writes
	 * before the members' implicit tasks begin. It copies parallel_data
	 * into the team, so the hand-over is told on the site itself. */
	gt_tsan__release(s);
	ompt__data_set(parallel_data, tag);
	ot->forking = node;
out:
	gt_thread__leave(t);
}

void ompt__on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
			   int flags, const void *codeptr_ra)
{
	struct gt_thread *t = gt_thread__peek();
	void *tag = ompt__data_get(parallel_data);
	struct omp_thread *ot;
	struct omp_region *r;
	struct omp_site *s;
	uint64_t now, begin;

	(void)encountering_task_data, (void)flags, (void)codeptr_ra;
	if (!t || !tag || tag__site(tag)->ot != t->ompt)
		return;
	ot = t->ompt;
	s = tag__site(tag);
	r = tag__region(tag);
	/* The encountering thread's implicit task ended just before: its end
	 * is the region's (a clock read saved on the join's critical path). */
	now = atomic_load_explicit(&r->t_end, memory_order_relaxed);
	if (!now)
		now = gt_clock__ticks();
	begin = atomic_load_explicit(&r->t_begin, memory_order_relaxed);
	r->active = 0;
	ot->forking = NULL;
	if (ot->league == tag)
		ot->league = NULL;
	gt_thread__enter(t);
	{
		static const enum gt_metric m[] = { GT_M_OMP_PAR_TIME, GT_M_OMP_PAR_COUNT,
						    GT_M_OMP_PAR_THREADS };
		const uint64_t v[] = { gt_clock__ticks_to_ns(now - begin), 1, r->team };

		if (s->node) {
			gt_cct__add_n(&t->cct, s->node, m, v, 3, 0);
			if ((uintptr_t)tag & OMP_TAG_SAMPLE)
				gt_cct__add(&t->cct, s->node, GT_M_OMP_PAR_TIME_SAMPLES, 1, 0);
		}
	}
	region__time(ot, r, now - begin);
	if (gt_tracer__on())
		gt_tracer__span_ticks(t, GT_EV_REGION, "omp parallel", s->node, begin, now);
	site__put(ot, s);
	/* parallel_data keeps the tag: the slot is not reused before the
	 * next parallel_begin that gets this parallel_data sets it anew, and
	 * a store here would take the team's cache line back at the join. */
	gt_thread__leave(t);
}

void ompt__on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
			    ompt_data_t *task_data, unsigned int actual_parallelism,
			    unsigned int index, int flags)
{
	struct gt_thread *t = ompt__thread_of(GT_THREAD_OTHER);
	struct omp_thread *ot;
	void *tag, *league = NULL;
	struct omp_task *task;
	uint64_t now;

	if (!t)
		return;
	ot = t->ompt;
	/* The initial task of a thread: contexts are unwound to the root.
	 * The initial task of a team of a league (teams, and the host
	 * device's target regions) belongs to the league's region, which
	 * parallel_begin made: like any member of a team. */
	if (flags & ompt_task_initial) {
		task = ompt__task_of(task_data);
		league = parallel_data ? ompt__data_get(parallel_data) : NULL;
		if (!league)
			league = ot->league; /* a league of one team: no parallel_data */
		if (endpoint == ompt_scope_begin ? !league : !task || task == &ot->initial) {
			if (endpoint == ompt_scope_begin)
				ompt__data_set(task_data, &ot->initial);
			ot->running = endpoint == ompt_scope_begin ? &ot->initial : NULL;
			return;
		}
	}
	gt_thread__enter(t);
	if (endpoint == ompt_scope_begin) {
		struct omp_site *s = NULL;

		tag = league ? league : ompt__data_get(parallel_data);
		if (tag) {
			s = tag__site(tag);
			gt_tsan__acquire(s); /* the fork's hand-over (parallel_begin) */
		}
		task = ompt__task_new(ot, 1);
		if (task) {
			now = 0;
			task->frame_at = ompt__frame_beside(task_data);
			if (!s) {
				task->node = t->cct.root;
			} else if (s->ot == ot) {
				task->node = s->node;
				task->region = tag__region(tag);
				task->inst = tag__inst(tag);
				ot->forking = NULL;
				now = atomic_load_explicit(&task->region->t_begin, memory_order_relaxed);
				/* Member 0; it alone writes team. */
				if (index == 0)
					task->region->team = actual_parallelism;
			} else {
				/* Nothing of the instance is read here: the
				 * encountering thread has just written it. */
				task->node = gt_thread__import(t, s->node);
				task->region = tag__region(tag);
				task->is_member = 1;
				task->inst = tag__inst(tag);
			}
			/* An untimed member's begin is never read. */
			if (task->inst != OMP_INST_UNTIMED || !task->is_member)
				task->t_begin = now ? now : gt_clock__ticks();
		}
		ot->running = task;
		/* This member is done reading the site before the join
		 * (site__take). */
		if (s)
			gt_tsan__release(s);
		ompt__data_set(task_data, task);
	} else {
		task = ompt__task_of(task_data);
		/* LLVM reports a member's end at its next fork: what then runs
		 * is reported next. */
		if (ot->running == task)
			ot->running = NULL;
		if (task && task != &ot->initial) {
			if (task->is_member && task->inst == OMP_INST_UNTIMED) {
				/* Nothing to settle. */
				ompt__task_free(ot, task);
			} else if (task->is_member) {
				member__defer(t, ot, task);
			} else {
				now = gt_clock__ticks();
				/* The encountering thread: its end is the region's. */
				if (task->region) {
					atomic_store_explicit(&task->region->t_end, now,
							      memory_order_release);
					ot->forking = task->node;
				}
				implicit__end(t, ot, task, now);
			}
			ompt__data_set(task_data, NULL);
		}
	}
	gt_thread__leave(t);
}

static enum gt_placeholder work_placeholder(ompt_work_t type)
{
	switch (type) {
	case ompt_work_sections:
		return GT_PH_OMP_SECTIONS;
	case ompt_work_single_executor:
	case ompt_work_single_other:
		return GT_PH_OMP_SINGLE;
	case ompt_work_workshare:
		return GT_PH_OMP_WORKSHARE;
	default:
		return GT_PH_OMP_LOOP;
	}
}

/*
 * The begin or end of a construct timed in @s: at the begin its placeholder
 * @ph under the construct's context (@ra, @key: the callback's), at the end
 * its time and count. Inlined, so that the context is the callback's own.
 */
static inline __attribute__((always_inline)) void scope(struct gt_thread *t, struct omp_task *task,
							struct omp_scope *s, ompt_scope_endpoint_t endpoint,
							const void *ra, uintptr_t key, enum gt_placeholder ph,
							enum gt_metric time, enum gt_metric count)
{
	/* Counted only in an untimed region instance. */
	uint64_t now = task->inst == OMP_INST_UNTIMED ? 0 : gt_clock__ticks();

	gt_thread__enter(t);
	if (endpoint == ompt_scope_begin) {
		s->node = gt_cct__placeholder(&t->cct, ompt__context_of(t, ra, key, task, NULL), ph);
		task->used_cold = 1;
		s->t0 = now;
	} else if (s->node) {
		if (task->inst != OMP_INST_UNTIMED)
			ompt__add_time(t, s->node, time, inst__charge(t->ompt, task, now - s->t0));
		ompt__add(t, s->node, count, 1);
		s->node = NULL;
	}
	gt_thread__leave(t);
}

void ompt__on_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint,
		   ompt_data_t *parallel_data, ompt_data_t *task_data, uint64_t count,
		   const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = gt_thread__peek();
	struct omp_task *task;

	(void)parallel_data, (void)count;
	if (!t || !t->ompt || work_type == ompt_work_scope)
		return;
	task = ompt__task_here(t, task_data);
	if (!task)
		return;
	scope(t, task, &task->ws, endpoint, codeptr_ra, key, work_placeholder(work_type), GT_M_OMP_WS_TIME,
	      GT_M_OMP_WS_COUNT);
}

/*
 * A reduction (ompt_callback_reduction), from its begin to its end. Waits,
 * the barriers' included, are measured by sync_region_wait: the tool takes
 * no sync_region callback, which the runtime would make four times a region
 * (each barrier's begin and end) for nothing.
 */
void ompt__on_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
			ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = gt_thread__peek();
	struct omp_task *task;

	(void)kind, (void)parallel_data;
	if (!t || !t->ompt)
		return;
	task = ompt__task_here(t, task_data);
	if (!task)
		return;
	scope(t, task, &task->red, endpoint, codeptr_ra, key, GT_PH_OMP_REDUCTION, GT_M_OMP_REDUCTION_TIME,
	      GT_M_OMP_REDUCTION_COUNT);
}

/* The placeholder of a wait of kind, but a region's own barrier. */
static enum gt_placeholder sync__placeholder(ompt_sync_region_t kind)
{
	static const uint8_t ph[] = {
		[ompt_sync_region_barrier_implicit] = GT_PH_OMP_IMPLICIT_BARRIER,
		[ompt_sync_region_barrier_explicit] = GT_PH_OMP_BARRIER,
		[ompt_sync_region_barrier_implementation] = GT_PH_OMP_BARRIER,
		[ompt_sync_region_taskwait] = GT_PH_OMP_TASKWAIT,
		[ompt_sync_region_taskgroup] = GT_PH_OMP_TASKGROUP,
		[ompt_sync_region_reduction] = GT_PH_OMP_REDUCTION,
		[ompt_sync_region_barrier_implicit_workshare] = GT_PH_OMP_IMPLICIT_BARRIER,
		[ompt_sync_region_barrier_implicit_parallel] = GT_PH_OMP_IMPLICIT_BARRIER,
		[ompt_sync_region_barrier_teams] = GT_PH_OMP_IMPLICIT_BARRIER,
	};

	/* ompt_sync_region_barrier (1, deprecated) and kinds to come: a barrier. */
	if ((unsigned)kind < sizeof(ph) / sizeof(ph[0]) && ph[kind])
		return (enum gt_placeholder)ph[kind];
	return GT_PH_OMP_BARRIER;
}

/* A wait of task begins at its node (task->wait_node), timed as inst; in
 * a task's taskwait or taskgroup (in_task) or not. */
static inline void wait__begin(struct omp_thread *ot, struct omp_task *task, int in_task, uint8_t inst)
{
	task->wait_in_task = (uint8_t)in_task;
	task->wait_inst = inst;
	task->used_cold = 1;
	task->wait_t0 = inst == OMP_INST_UNTIMED ? 0 : gt_clock__ticks();
	task->wait_busy0 = ot->explicit_ns;
}

/* An untimed wait of task ends: nothing to charge. */
static inline void wait__end_untimed(struct omp_task *task)
{
	task->wait_node = NULL;
	task->wait_in_task = 0;
}

/* ompt__wait_judge for a wait whose construct has an entry in the
 * construct cache: *judged, the entry's, keeps the judgement once made. */
static inline __attribute__((always_inline)) uint8_t
wait__inst(struct omp_thread *ot, const struct gt_cct_node *ctx, uint8_t *judged, struct omp_time_shared **calib)
{
	if (*judged == OMP_TIME_SAMPLED + 1 && !gt_blame__devices_used())
		return ompt__wait_drawn(ot) ? OMP_INST_SAMPLE : OMP_INST_UNTIMED;
	if (*judged == OMP_TIME_EXACT + 1)
		return OMP_INST_EXACT;
	return ompt__wait_judge(ot, ctx, judged, calib);
}

/* ompt__on_sync_region_wait but its leaf cases; key: the callback's
 * GT_UNWIND_KEY(). */
static __attribute__((noinline)) void sync_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
						 ompt_data_t *parallel_data, ompt_data_t *task_data,
						 const void *codeptr_ra, uintptr_t key)
{
	struct gt_thread *t = gt_thread__peek();
	struct omp_task *task;
	struct gt_cct_node *sync_node = NULL;
	uint64_t wait_ticks = 0;
	struct omp_thread *ot;

	(void)parallel_data;
	if (!t || !t->ompt)
		return;
	task = ompt__task_here(t, task_data);
	if (!task)
		return;
	ot = t->ompt;
	gt_thread__enter(t);
	if (endpoint == ompt_scope_begin) {
		struct omp_construct *cached = NULL;
		struct gt_cct_node *ctx;
		uint8_t inst = task->inst;

		/* Off the fork's path: the line was fetched meanwhile. */
		if (ot->settle)
			member__settle(t, ot);
		task->wait_calib = NULL;
		if (kind == ompt_sync_region_barrier_implicit_parallel ||
		    kind == ompt_sync_region_barrier_teams) {
			/* The region's own barrier: its return address is the
			 * fork's, outside the task, so it hangs on the task.
			 * The same region's barrier at every instance. */
			ctx = ompt__context_of(t, NULL, 0, task, NULL);
			if (ctx != ot->ibar_parent || !ot->ibar_node) {
				ot->ibar_node = gt_cct__placeholder(&t->cct, ctx, GT_PH_OMP_IMPLICIT_BARRIER);
				ot->ibar_parent = ctx;
			}
			task->wait_node = ot->ibar_node;
		} else if (kind == ompt_sync_region_taskwait || kind == ompt_sync_region_taskgroup) {
			/* A task's waits: at the same few sites again and again
			 * (the construct cache). */
			enum gt_placeholder ph = sync__placeholder(kind);
			struct omp_construct *c = ompt__construct_slot(ot, codeptr_ra, ph);

			if (ompt__construct_hit(t, c, codeptr_ra, key, task->node, task->exit_frame, ph)) {
				task->wait_node = c->ph;
				cached = c;
				/* Where its task is timed exactly, the wait is
				 * timed as its construct was judged. */
				if (inst == OMP_INST_EXACT)
					inst = wait__inst(ot, c->ctx, &c->judged, &task->wait_calib);
			} else {
				ctx = ompt__context_of(t, codeptr_ra, key, task, NULL);
				task->wait_node = ompt__ph_cache_get(t, ot, ctx, ph);
				/* The exit frame was asked for by now. */
				ompt__construct_put(t, c, codeptr_ra, key, task->node, task->exit_frame, ph, ctx,
						    task->wait_node);
				/* The entry of the same construct under another
				 * base keeps its judgement all the same. */
				if (inst == OMP_INST_EXACT && c->ra == codeptr_ra && c->kind == ph)
					inst = wait__inst(ot, ctx, &c->judged, &task->wait_calib);
				else if (inst == OMP_INST_EXACT)
					inst = ompt__wait_judge(ot, ctx, NULL, &task->wait_calib);
			}
		} else {
			ctx = ompt__context_of(t, codeptr_ra, key, task, NULL);
			task->wait_node = ompt__ph_cache_get(t, ot, ctx, sync__placeholder(kind));
		}
		wait__begin(ot, task, kind == ompt_sync_region_taskwait || kind == ompt_sync_region_taskgroup, inst);
		/* An untimed wait's: counted now, its node kept for the samples
		 * taken while it waits (host-sample.c). */
		if (inst == OMP_INST_UNTIMED && cached)
			ompt__construct_count(t, cached, GT_M_OMP_WAIT_COUNT);
		else if (inst == OMP_INST_UNTIMED)
			ompt__add(t, task->wait_node, GT_M_OMP_WAIT_COUNT, 1);
	} else if (task->wait_node && task->wait_inst == OMP_INST_UNTIMED) {
		wait__end_untimed(task);
	} else if (task->wait_node) {
		uint64_t busy = ot->explicit_ns - task->wait_busy0;

		task->wait_in_task = 0;
		if (kind == ompt_sync_region_barrier_implicit_parallel && task->is_member) {
			/* Reported at the next fork: it ended with the region,
			 * whose end is read when the task is settled. */
			task->wait_busy = busy;
			task->wait_deferred = 1;
			task->woke = gt_clock__ticks();
		} else {
			if ((kind == ompt_sync_region_taskwait || kind == ompt_sync_region_taskgroup) &&
			    !busy)
				sync_node = task->wait_node;
			wait_ticks = wait__end(t, task, gt_clock__ticks(), busy);
		}
	}
	gt_thread__leave(t);
	/* A taskwait or taskgroup of a process that uses a device may be
	 * waiting for it (target nowait regions): a sync point for blame.
	 * Waits that ran tasks meanwhile were not idle, and are left out. */
	if (sync_node && gt_blame__devices_used()) {
		uint64_t end_ns = gt_clock__now();

		gt_blame__sync(t, sync_node, end_ns - gt_clock__ticks_to_ns(wait_ticks), end_ns, -1, 0);
	}
}

/*
 * The waits of a loop of very short tasks, each waited for, without a
 * frame: the begin of a taskwait or taskgroup whose construct the cache
 * holds, judged sampled, in an implicit task timed exactly, drawn untimed
 * (counted now, its node kept for the samples taken while it waits); and
 * the end of every untimed wait, a barrier's too. The rest is sync_wait's,
 * explicit tasks' waits included (a tree's, each under a node of its own).
 */
void ompt__on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
			       ompt_data_t *parallel_data, ompt_data_t *task_data,
			       const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = gt_thread__peek();
	uintptr_t v = task_data ? (uintptr_t)task_data->ptr : 0;
	struct omp_task *task = (struct omp_task *)v;

	/* The end of any untimed wait: nothing to charge (sync_wait's own
	 * case, without its call). Most of a region-dense program's barriers
	 * are such waits, in the regions whose teams go untimed. */
	if (endpoint == ompt_scope_end && t && v && !(v & OMP_TASK_PENDING) && task->wait_node &&
	    task->wait_inst == OMP_INST_UNTIMED) {
		gt_thread__enter(t);
		wait__end_untimed(task);
		gt_thread__leave(t);
		return;
	}
	if ((kind != ompt_sync_region_taskwait && kind != ompt_sync_region_taskgroup) || !t || !t->ompt || !v ||
	    (v & OMP_TASK_PENDING) || task->is_explicit) {
		sync_wait(kind, endpoint, parallel_data, task_data, codeptr_ra, key);
		return;
	}
	if (endpoint == ompt_scope_begin) {
		struct omp_thread *ot = t->ompt;
		enum gt_placeholder ph = sync__placeholder(kind);
		struct omp_construct *c = ompt__construct_slot(ot, codeptr_ra, ph);
		uint32_t draw;

		/* A draw that times the wait is left for sync_wait to take. */
		if (task->inst != OMP_INST_EXACT || ot->settle || c->judged != OMP_TIME_SAMPLED + 1 || !c->count ||
		    !ompt__construct_hit(t, c, codeptr_ra, key, task->node, task->exit_frame, ph) ||
		    gt_blame__devices_used() || ompt__wait_draw_times(draw = ompt__wait_draw_next(ot))) {
			sync_wait(kind, endpoint, parallel_data, task_data, codeptr_ra, key);
			return;
		}
		ot->wait_draw = draw;
		gt_thread__enter(t);
		task->wait_node = c->ph;
		task->wait_calib = NULL;
		wait__begin(ot, task, 1, OMP_INST_UNTIMED);
		c->count->value++;
		gt_thread__leave(t);
	} else {
		sync_wait(kind, endpoint, parallel_data, task_data, codeptr_ra, key);
	}
}

void ompt__on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
		     ompt_data_t *task_data, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_thread *t = gt_thread__peek();
	struct omp_task *task;

	(void)parallel_data;
	if (endpoint != ompt_scope_begin || !t || !t->ompt)
		return;
	task = ompt__task_here(t, task_data);
	if (!task)
		return;
	gt_thread__enter(t);
	ompt__add(t, gt_cct__placeholder(&t->cct, ompt__context_of(t, codeptr_ra, key, task, NULL), GT_PH_OMP_MASKED),
	    GT_M_OMP_MASKED_COUNT, 1);
	gt_thread__leave(t);
}

void ompt__host_init(void)
{
	struct gt_thread *t = ompt__thread_of(GT_THREAD_INITIAL);

	if (t)
		gt_sample__thread_start(t);
}
