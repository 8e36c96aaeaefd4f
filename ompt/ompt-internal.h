/* SPDX-License-Identifier: MIT */
#ifndef GT_OMPT_INTERNAL_H
#define GT_OMPT_INTERNAL_H

#include <omp-tools.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/thread.h"
#include "core/tsan.h"
#include "core/unwind-memo.h"
#include "ompt/ompt-events.h"

/*
 * A parallel region, in two parts that the encountering thread keeps in its
 * own struct omp_thread.
 *
 * The site (struct omp_site) holds the construct's node, which every member
 * reads on its way into the region. Sites are chosen by the node, so a region
 * that repeats finds its site as it left it and the line is rewritten only
 * when another construct takes the site. Were it written at every fork, each
 * member's first read would be a transfer from the encountering thread's
 * cache on the fork's critical path (docs/PERFORMANCE.md).
 *
 * The instance (struct omp_region), a slot of a ring, holds the begin, the
 * end and the team's size. The runtime's parallel_data carries the site with
 * the slot's index in its low bits, so a member finds its instance without
 * reading anything the fork has just written.
 *
 * LLVM's libomp reports a worker's end of the region's barrier and of its
 * implicit task only when the worker wakes for the next region (or at
 * shutdown), so a worker takes the region's end from `t_end`, which the
 * encountering thread sets when its own implicit task ends. Slots are reused
 * (the ring never frees), so the worker checks that the slot still holds its
 * instance, the one that began no later than its own implicit task:
 *   encountering thread: t_end = 0; t_begin = B   ...   t_end = E (release)
 *   worker:              t_end (acquire) = E != 0; t_begin <= its own begin
 * A later use's t_end is published after that use's t_begin, which is later
 * than the worker's begin: the worker reads the clock instead. Nothing is
 * written by workers: no cache line bounces back to the encountering thread.
 */
#define OMP_REGION_RING 64
#define OMP_SITES 64

/*
 * How a region instance's team is timed. A parallel construct is timed in
 * full (every member's implicit task, waits, worksharing constructs and
 * reductions) while its first OMP_REGION_CALIBRATE regions on the
 * encountering thread run, and at every region after them if they averaged
 * GPUTOOL_REGION_TIME_NS or more. Otherwise one region in
 * OMP_REGION_SAMPLE_EVERY is timed, its times scaled by that, and the
 * others are counted only: their members read no clock and settle no late
 * end. The region's own time and count (OMP_PAR_TIME, OMP_PAR_COUNT), the
 * encountering thread's two clock reads, stay exact. The instance's mode
 * travels in the top bits of its tag (region__tag), which the members read
 * anyway: user-space addresses leave them 0.
 *
 * Each context of a construct (its <omp parallel> node) is judged and
 * sampled on its own: every context whose regions are shown gets regions
 * timed, and a context of fewer than OMP_REGION_CALIBRATE regions is timed
 * in full. Sampled, a context has region n (from 0) timed when n %
 * OMP_REGION_SAMPLE_EVERY is half of it: each timed region stands for the
 * period around it, and a context's estimate misses or adds at most half
 * a period of regions. A thread keeps OMP_REGION_TIMES contexts (apart
 * from its sites, which members read); one that finds no entry is timed in
 * full.
 */
#define OMP_REGION_CALIBRATE 16
#define OMP_REGION_TIMES 1024 /* a power of two, at most 65536 (omp_region.time) */
#define OMP_REGION_SAMPLE_EVERY 16
#define OMP_TAG_UNTIMED ((uintptr_t)1 << 63) /* counted only */
#define OMP_TAG_SAMPLE ((uintptr_t)1 << 62)  /* timed, standing for OMP_REGION_SAMPLE_EVERY */
#define OMP_TAG_MODES (OMP_TAG_UNTIMED | OMP_TAG_SAMPLE)

/* omp_task.inst: timed; counted only; timed, standing for a sampling
 * period (OMP_REGION_SAMPLE_EVERY, OMP_TASK_SAMPLE_EVERY). */
enum omp_inst { OMP_INST_EXACT, OMP_INST_UNTIMED, OMP_INST_SAMPLE };

/* A context's timing state on its encountering thread (omp_thread.region_times). */
struct omp_region_time {
	const struct gt_cct_node *node; /* its <omp parallel>; NULL: free */
	uint64_t ticks; /* calibrating: its regions' time so far */
	uint32_t n;     /* regions begun */
	uint32_t mode;  /* enum omp_time_mode */
};

struct omp_site {
	_Alignas(64) struct gt_cct_node *node; /* <omp parallel> in the encountering thread's tree */
	struct omp_thread *ot;                 /* the encountering thread's, which holds the ring */
};

struct omp_region {
	/* A cache line each: the encountering thread writes the next slot
	 * while a team may still read this one. */
	_Alignas(64) _Atomic uint64_t t_begin; /* ticks */
	_Atomic uint64_t t_end;               /* ticks; 0 until the encountering thread's implicit task ends */
	uint32_t team;
	uint8_t active;                       /* between parallel_begin and _end (encountering thread only) */
	uint8_t calibrating;                  /* its time counts towards its context's mean (encountering thread only) */
	uint16_t time;                        /* its context's entry in region_times (encountering thread only) */
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
 *
 * An explicit task that is not a target task has no record until it first
 * runs: its creator leaves in the runtime's task data only its <omp task>
 * node, tagged (OMP_TASK_PENDING, and OMP_TASK_UNTIED for an untied task),
 * and the thread that starts it makes its record from its own free list and
 * puts it there. A record is thus made, used and freed by the threads that
 * run its task (one, unless untied), none of its lines is written by two
 * threads, and no record moves between threads' free lists: a program
 * whose tasks one thread creates and others run (a master or single that
 * creates them) would otherwise allocate every record on the first and free
 * it on the others. An untimed task (OMP_TASK_BARE) keeps its tag while it
 * runs, and gets a record only for a callback of its own that needs one
 * (ompt__task_here). Readers of task data go through ompt__task_of, which
 * gives NULL for a task not started or without a record.
 */
#define OMP_TASK_PENDING ((uintptr_t)1)
#define OMP_TASK_UNTIED ((uintptr_t)2)
/*
 * How the creator judged a pending task's time, when its construct's
 * tasks are timed by sampling on the creating thread (host-task.c,
 * time__at_create): OMP_TASK_SAMPLE, timed and standing for
 * OMP_TASK_SAMPLE_EVERY tasks; OMP_TASK_BARE, untimed, and given no
 * record unless it makes a callback of its own but task_create
 * (ompt__task_here). Neither: the thread that starts it judges.
 */
#define OMP_TASK_SAMPLE ((uintptr_t)4)
#define OMP_TASK_BARE ((uintptr_t)8)
/* The top 16 bits of a pending task's data: the low 16 bits of the id of
 * the creator's tree (0: unknown), which tell the thread that starts it
 * whether the node is another thread's without reading it (the creator
 * keeps writing its cells, which may share its line). Equal bits are
 * confirmed by the node's own tree id. User-space addresses leave them 0. */
#define OMP_TASK_TREE_SHIFT 48
#define OMP_TASK_NODE_MASK ((((uintptr_t)1 << OMP_TASK_TREE_SHIFT) - 1) & ~(uintptr_t)15)

struct omp_task {
	/* The first line holds all that an explicit task's start and end
	 * touch. */
	_Alignas(64) struct gt_cct_node *node;    /* context in the executing thread's tree; NULL: the initial task */
	struct gt_cct_node *creator; /* explicit: <omp task> in the creating thread's tree */
	uint64_t t_begin;            /* implicit: begin; explicit: last start or resume (ticks) */
	uintptr_t site;              /* explicit: its construct, its call site's key (time__begin); 0: unknown */
	union {
		/* Explicit: the task its thread ran before it, which resumes
		 * when it completes (tied tasks nest on their thread's stack). */
		struct omp_task *resumes;
		struct omp_task *next_free; /* on a thread's free list */
	};
	uintptr_t exit_frame;  /* where its outlined body begins; 0: not asked yet */
	uint8_t is_explicit;
	uint8_t is_untied;
	/* A deferred target task (target nowait, ...): node is its creation
	 * site, under which its target construct hangs (ompt/target.c). */
	uint8_t is_target;
	uint8_t is_member;     /* a worker, not the encountering thread */
	/* Members: their end, reported late, waits in omp_thread.settle. */
	uint8_t wait_deferred; /* the region's barrier ended too; its end is the region's */
	/* A wait, worksharing construct or reduction began in it: fields past
	 * the first line were written (ompt__task_free clears what is left). */
	uint8_t used_cold;
	/* Explicit: timed: its time is measured; time_mode: how (enum
	 * omp_time_mode: calibrating adds it to its site's, sampled stands
	 * for OMP_TASK_SAMPLE_EVERY tasks); time_site: its entry in the
	 * running thread's time_sites. */
	uint8_t timed, time_mode, time_site;
	/* How its waits, worksharing constructs and reductions are timed
	 * (enum omp_inst): implicit tasks as their region instance, explicit
	 * ones as themselves (time__begin). */
	uint8_t inst;
	uint64_t wait_ns;      /* ticks waited inside this task so far */
	uint64_t wait_t0;
	uint64_t wait_busy0; /* the thread's explicit-task time when the wait began */
	struct gt_cct_node *wait_node;
	/* The wait is a taskwait or a taskgroup's end: the sampling handler
	 * places samples by it, not by the thread's state (host-sample.c). */
	uint8_t wait_in_task;
	/* How the wait in progress is timed (enum omp_inst): as the task's
	 * instance, or where that is exact, a taskwait's or taskgroup's as
	 * its construct was judged (ompt__wait_judge). */
	uint8_t wait_inst;
	/* The wait construct's calibration while this wait counts towards it
	 * (ompt__wait_judge); NULL: none. */
	struct omp_time_shared *wait_calib;
	struct omp_scope ws, red; /* the worksharing construct and reduction in progress */
	struct omp_region *region; /* implicit tasks: their region */
	uint64_t wait_busy;  /* explicit-task time inside that barrier wait */
	uint64_t woke;       /* ticks at the late report: the end if the region's is lost */
	/* The device node of its construct, in target_owner's tree: data
	 * operations the runtime completes for the task after the construct's
	 * end callback (deferred releases) still belong to it. */
	struct gt_cct_node *target_dev;
	struct gt_thread *target_owner;
	/* Implicit tasks (cleared whole when made): the runtime's record of
	 * the task's frames, beside its task data (ompt__frame_beside); NULL:
	 * the exit frame is asked for. */
	const ompt_frame_t *frame_at;
};
_Static_assert(offsetof(struct omp_task, wait_ns) <= 64,
	       "an explicit task's hot fields share one cache line");

#define OMP_PH_CACHE 32 /* a power of two */

/*
 * A construct of tasks (a task's creation, a taskwait, a taskgroup) met
 * again and again at one call path: its context and placeholder, with a
 * copy of the memo's call path for it (core/unwind-memo.h), checked
 * against the live stack as the memo checks it. A hit spares the memo's
 * lookup, the placeholder's and the count's cell: a task creation's whole
 * work at a site, but the task's judgement, in a few compares.
 */
#define OMP_CONSTRUCTS 32      /* a power of two */
#define OMP_CONSTRUCT_SLOTS 3  /* call paths with more are not cached */

struct omp_construct {
	const void *ra; /* NULL: empty */
	uintptr_t depth; /* the callback's key below the task's boundary */
	const struct gt_cct_node *base; /* the task's node */
	struct gt_cct_node *ctx, *ph;
	struct gt_metric_cell *count; /* ph's cell of the construct's count; NULL: not yet */
	const struct gt_cct_node *missed; /* the base of the last miss (ompt__construct_put) */
	uint16_t kind; /* enum gt_placeholder */
	uint8_t nslots;
	/* A wait construct's judgement (ompt__wait_judge), enum
	 * omp_time_mode + 1; 0: not known here yet. */
	uint8_t judged;
	struct gt_memo_slot slots[OMP_CONSTRUCT_SLOTS];
};

/*
 * How explicit tasks of one construct are timed: every task while the
 * construct calibrates (its first OMP_TASK_CALIBRATE tasks in the process,
 * on whichever threads they start), then every task if at least half of
 * them took GPUTOOL_TASK_TIME_NS or more (their median reached it), else
 * one in OMP_TASK_SAMPLE_EVERY on each thread, its time scaled by that. A
 * median, not a mean: a few tasks the machine held up (a thread
 * descheduled, a runtime that spins between tasks) do not keep a construct
 * of short tasks timed each, which would cost every later task a record
 * and two clock reads. The judgement is the process's (struct
 * omp_time_shared, host-task.c), not each thread's: a recursive tree
 * spreads its first tasks over every thread, and a record and two clock
 * reads for each thread's first 64 tasks of each construct set which
 * thread runs which tasks for the rest of the run (docs/PERFORMANCE.md).
 */
#define OMP_TIME_SITES 64 /* a power of two, at most 256 (omp_task.time_site) */
#define OMP_TASK_CALIBRATE 64
#define OMP_TASK_SAMPLE_EVERY 16

enum omp_time_mode { OMP_TIME_EXACT, OMP_TIME_CALIBRATING, OMP_TIME_SAMPLED };

/*
 * What a sampled instance's d ticks stand for: its first cap ticks count
 * for the period (OMP_TASK_SAMPLE_EVERY instances), the rest once. With
 * cap a period of thresholds (ompt__sample_cap), an instance the machine
 * held up, a thread descheduled in it, is not taken as a period of such
 * instances, while any instance of a sampled construct's usual length
 * counts in full.
 */
static inline uint64_t ompt__sampled_ticks(uint64_t d, uint64_t cap)
{
	return d > cap ? cap * OMP_TASK_SAMPLE_EVERY + (d - cap) : d * OMP_TASK_SAMPLE_EVERY;
}

/* *cap, a bound of ns in ticks (never 0), set at first use: the thread
 * keeps the thresholds' bounds it times against. */
static inline uint64_t ompt__ticks_cap(uint64_t *cap, uint64_t ns)
{
	if (!*cap)
		*cap = (gt_clock_use_tsc && gt_clock_ns_per_tick > 0 ? (uint64_t)((double)ns / gt_clock_ns_per_tick)
									: ns) + 1;
	return *cap;
}

/* *cap, set at first use to OMP_TASK_SAMPLE_EVERY times threshold_ns, in ticks. */
static inline uint64_t ompt__sample_cap(uint64_t *cap, uint64_t threshold_ns)
{
	return ompt__ticks_cap(cap, OMP_TASK_SAMPLE_EVERY * threshold_ns);
}

struct omp_time_shared;

/* A thread's entry of one construct: the process's judgement once known,
 * and its own count of the construct's tasks since (the one in
 * OMP_TASK_SAMPLE_EVERY it times). Read and written by the owner only. */
struct omp_time_site {
	uintptr_t site; /* the construct (omp_task.site); 0: free */
	struct omp_time_shared *shared; /* its calibration; NULL: none, timed exactly */
	uint32_t n;     /* tasks judged on this thread since the construct was judged */
	uint32_t mode;  /* enum omp_time_mode; calibrating: the process has not judged it yet */
};

struct omp_thread {
	struct omp_task initial;
	struct omp_site sites[OMP_SITES];
	struct omp_region regions[OMP_REGION_RING];
	/* What follows is written by the owner only; apart from the ring. */
	_Alignas(64)
	uint64_t region_gen;
	/* Instances of each site between parallel_begin and _end: a site in
	 * use keeps its node. */
	uint8_t site_busy[OMP_SITES];
	struct omp_region_time region_times[OMP_REGION_TIMES];
	uint16_t last_region_time; /* the entry of region_times used last */
	/* Time this thread spent executing explicit tasks. A thread that waits
	 * at a barrier or taskwait runs queued tasks meanwhile: that is work,
	 * and is taken out of the wait. */
	uint64_t explicit_ns;
	struct omp_task *free_tasks;
	uint32_t n_free_tasks;
	/* The task this thread runs, as its callbacks tell; NULL: not known
	 * (after an implicit task's end, around untied tasks). Spares asking
	 * the runtime at every task creation. */
	struct omp_task *running;
	/* The data of the untimed task without a record (OMP_TASK_BARE) that
	 * the thread's last task switch started or resumed; NULL: none. Its
	 * tasks' creations need not ask the runtime which task runs. */
	ompt_data_t *bare_running;
	struct gt_cct_node *bare_node; /* its node here, once a creation asked; NULL: not yet */
	/* The implicit task of a region this thread was a member of, reported
	 * ended at the next fork. The region's end is read from the
	 * encountering thread's ring later, when this thread next waits or
	 * ends: a read at the fork would be a cache miss on its critical path. */
	struct omp_task *settle;
	/* The <omp parallel> node of the region this thread forks or joins
	 * as its encountering thread: set from parallel_begin to its implicit
	 * task's begin and from that task's end to parallel_end, NULL
	 * otherwise. Read by this thread's sampling handler only. */
	struct gt_cct_node *forking;
	/* The last implicit barrier's node and the context it hangs under:
	 * a region repeats, and so does its barrier. */
	struct gt_cct_node *ibar_parent, *ibar_node;
	/* Placeholders (<omp task>, <omp taskwait>, ...) by their
	 * construct's context and kind (ompt__ph_cache_get): tasks
	 * are created and waited for at the same few sites again and again
	 * (a site a level of a recursive tree, each with its taskwait). */
	struct {
		struct gt_cct_node *ctx, *ph;
		uint32_t kind; /* enum gt_placeholder */
	} ph_cache[OMP_PH_CACHE];
	struct omp_construct constructs[OMP_CONSTRUCTS];
	struct omp_time_site time_sites[OMP_TIME_SITES];
	uint64_t task_threshold; /* GPUTOOL_TASK_TIME_NS in ticks; 0: not set yet */
	uint64_t region_calib_max; /* the most ticks a calibrating region counts; 0: not set yet */
	/* Sampled instances' caps (ompt__sampled_ticks): explicit tasks',
	 * regions'; 0: not set yet. */
	uint64_t task_sample_cap, region_sample_cap;
	uint8_t last_time_site; /* the entry of time_sites used last */
	uint32_t wait_draw; /* xorshift state of the draws of sampled waits (ompt__wait_drawn); 0: unseeded */
	uint32_t time_phase; /* where the next entry judged here starts its count (time__judged) */
	/* Tasks' exit frames read beside their task data
	 * (ompt__frame_beside), and asked of the runtime. */
	uint64_t frames_read, frames_asked;
	/* The league (teams) this thread began and has not ended: LLVM's
	 * libomp gives a league of one team's initial task no parallel_data. */
	void *league; /* its parallel_data (region__tag) */
	/* Target regions and operations of this thread (ompt/target.c). */
	struct omp_target_thread *target;
	/*
	 * A kernel of the host device this thread runs now, inside its
	 * submission (ompt/target.c sets them at the submission's begin and
	 * clears them at its end): its <omp kernel> node, and the task that
	 * submitted it. A parallel region that task opens meanwhile is the
	 * kernel's (the host plugin runs the offloaded function on libomp's
	 * threads) and hangs under that node; its name, the offload entry's
	 * (interned, NULL until known), goes to the kernel's device record.
	 */
	struct gt_cct_node *kernel;
	void *kernel_task;
	const char *kernel_name;
};

struct gt_stitch;

/*
 * The tool's record in a runtime's task or parallel data. The runtime hands
 * these between threads (a fork, a task queue) and recycles them (teams are
 * pooled, task descriptors reused), ordering each use after the previous
 * one by its own synchronization, which ThreadSanitizer cannot see: said to
 * it around every access, in its builds only.
 */
static inline void *ompt__data_get(ompt_data_t *d)
{
	void *p;

	if (!d)
		return NULL;
	gt_tsan__acquire(d);
	p = d->ptr;
	gt_tsan__release(d);
	return p;
}

/* The record in a runtime's task data; NULL for none, and for an explicit
 * task not started yet or running without one (OMP_TASK_PENDING). */
static inline struct omp_task *ompt__task_of(ompt_data_t *d)
{
	void *p = ompt__data_get(d);

	return (uintptr_t)p & OMP_TASK_PENDING ? NULL : (struct omp_task *)p;
}

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
/* ompt__context_of in the task whose node is node (this thread's) and
 * whose frame the runtime gave: also for an untimed task without a record
 * (OMP_TASK_BARE). */
struct gt_cct_node *ompt__context_in(struct gt_thread *t, const void *ra, uintptr_t key,
				     struct gt_cct_node *node, const ompt_frame_t *frame);
/* Where the outlined body of task begins, as ompt__context_of reads it:
 * the frame the runtime gave, else the one asked for once (0: unknown). */
static inline uintptr_t ompt__task_boundary(const struct omp_task *task, const ompt_frame_t *frame)
{
	return frame ? (uintptr_t)frame->exit_frame.ptr : task->exit_frame;
}

/*
 * The runtime's record of the frames of the task whose data is task_data,
 * once learned (host-context.c), else NULL: in LLVM's libomp a task's
 * ompt_frame_t and its ompt_data_t are members of one record, at a
 * distance that is the runtime's constant.
 */
const ompt_frame_t *ompt__frame_beside(const ompt_data_t *task_data);
void ompt__stitch_sample(struct gt_thread *t, struct gt_stitch *st);
/* The name of the host kernel whose code is at @pc, from its offload entry
 * (`__omp_offloading_<dev>_<file>_<function>_l<line>`: "function:line",
 * demangled), interned; NULL if pc is in no such entry. Normal context. */
const char *ompt__kernel_name(const void *pc);

/* ---- shared by the host callbacks (host.c, host-task.c) ---- */

/*
 * How a wait at a taskwait or taskgroup construct is timed, in a task timed
 * exactly (enum omp_inst). Its construct, ctx's call site, is judged as a
 * task construct is: timed each while its first OMP_TASK_CALIBRATE waits in
 * the process calibrate it against GPUTOOL_TASK_TIME_NS, then each
 * (OMP_INST_EXACT) or one in OMP_TASK_SAMPLE_EVERY (OMP_INST_SAMPLE, else
 * OMP_INST_UNTIMED). *judged (if not NULL) gets the judgement once made;
 * *calib the construct's calibration when this wait counts towards it
 * (ompt__wait_calibrated at its end), else NULL.
 */
uint8_t ompt__wait_judge(struct omp_thread *ot, const struct gt_cct_node *ctx, uint8_t *judged,
			 struct omp_time_shared **calib);
/* A wait that counted towards calibration g waited ticks. */
void ompt__wait_calibrated(struct omp_thread *ot, struct omp_time_shared *g, uint64_t ticks);

/*
 * Whether a wait of a sampled construct is timed: one in
 * OMP_TASK_SAMPLE_EVERY, drawn at random. A count would keep step with the
 * thread's count of the tasks such a wait runs (one each, in a loop of a
 * task and its taskwait), and the waits timed would always, or never, hold
 * a task timed, whose time is taken out of them. ompt__wait_draw_next
 * looks at the next draw without taking it.
 */
static inline uint32_t ompt__wait_draw_next(const struct omp_thread *ot)
{
	uint32_t x = ot->wait_draw;

	if (!x)
		x = (uint32_t)(uintptr_t)ot | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* Whether draw x times its wait. */
static inline int ompt__wait_draw_times(uint32_t x)
{
	return (x & (OMP_TASK_SAMPLE_EVERY - 1)) == 0;
}

static inline int ompt__wait_drawn(struct omp_thread *ot)
{
	uint32_t x = ompt__wait_draw_next(ot);

	ot->wait_draw = x;
	return ompt__wait_draw_times(x);
}

/* The calling thread's record with its OpenMP state; NULL when it has none
 * and none can be made. */
static inline struct gt_thread *ompt__thread_of(enum gt_thread_kind kind)
{
	struct gt_thread *t = gt_thread__self(kind);

	if (t && !t->ompt && !ompt__thread_state(t))
		return NULL;
	return t;
}

/* A slot of a table of n (a power of two) entries keyed by address p:
 * Fibonacci hashing, as nodes and records sit at strides of their size. */
static inline unsigned ompt__ptr_slot(const void *p, unsigned n)
{
	return (unsigned)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctz(n)));
}

/* The placeholder ph under ctx, from the thread's cache (ph_cache).
 * Nodes never move or die: a cached one stays valid. */
static inline __attribute__((always_inline)) struct gt_cct_node *
ompt__ph_cache_get(struct gt_thread *t, struct omp_thread *ot, struct gt_cct_node *ctx, enum gt_placeholder ph)
{
	unsigned h = (ompt__ptr_slot(ctx, OMP_PH_CACHE) + (unsigned)ph) & (OMP_PH_CACHE - 1);

	if (ctx != ot->ph_cache[h].ctx || ot->ph_cache[h].kind != (uint32_t)ph || !ot->ph_cache[h].ph) {
		ot->ph_cache[h].ph = gt_cct__placeholder(&t->cct, ctx, ph);
		ot->ph_cache[h].ctx = ctx;
		ot->ph_cache[h].kind = (uint32_t)ph;
	}
	return ot->ph_cache[h].ph;
}

static inline struct omp_construct *ompt__construct_slot(struct omp_thread *ot, const void *ra,
							  enum gt_placeholder kind)
{
	return &ot->constructs[(ompt__ptr_slot(ra, OMP_CONSTRUCTS) + (unsigned)kind) & (OMP_CONSTRUCTS - 1)];
}

/*
 * Whether c, the construct cache's entry for kind at ra
 * (ompt__construct_slot), holds the construct whose callback's key is key,
 * in a task of this thread's whose node is base and whose outlined body
 * begins at boundary (0: unknown). Under gt_thread__enter(t).
 */
static inline __attribute__((always_inline)) int
ompt__construct_hit(const struct gt_thread *t, const struct omp_construct *c, const void *ra, uintptr_t key,
		    const struct gt_cct_node *base, uintptr_t boundary, enum gt_placeholder kind)
{
	/* An open region (core/region.h) cuts contexts: not cached. */
	if (c->ra != ra || !ra || c->base != base || c->depth != boundary - key || c->kind != kind || t->regions)
		return 0;
	for (unsigned i = 0; i < c->nslots; i++)
		if (*(const uintptr_t *)(key + c->slots[i].off) != c->slots[i].val)
			return 0;
	return 1;
}

void ompt__construct_fill(struct gt_thread *t, struct omp_construct *c, const void *ra, uintptr_t key,
			  const struct gt_cct_node *base, uintptr_t boundary, enum gt_placeholder kind,
			  struct gt_cct_node *ctx, struct gt_cct_node *ph);

/*
 * After a miss of ompt__construct_hit: keeps in c the answer, ctx and its
 * placeholder ph, that ompt__context_of just gave for the same arguments.
 * A construct met under ever new bases (a recursive tree's levels, each
 * task's creations under its own node) would rewrite its entry at every
 * task: a base takes the construct's entry over when it misses twice in a
 * row.
 */
static inline __attribute__((always_inline)) void
ompt__construct_put(struct gt_thread *t, struct omp_construct *c, const void *ra, uintptr_t key,
		    const struct gt_cct_node *base, uintptr_t boundary, enum gt_placeholder kind,
		    struct gt_cct_node *ctx, struct gt_cct_node *ph)
{
	if (c->ra == ra && c->kind == (uint16_t)kind && c->missed != base) {
		c->missed = base;
		return;
	}
	ompt__construct_fill(t, c, ra, key, base, boundary, kind, ctx, ph);
}

/* Whether task data v (its ptr) is an untimed task's, running or not,
 * that has no record (OMP_TASK_BARE). */
static inline int ompt__is_bare(uintptr_t v)
{
	return (v & (OMP_TASK_PENDING | OMP_TASK_BARE)) == (OMP_TASK_PENDING | OMP_TASK_BARE);
}

/* The record of the untimed task d without one that the calling thread
 * runs (its data v), made now; NULL when out of memory. */
struct omp_task *ompt__task_bare_record(struct gt_thread *t, ompt_data_t *d, uintptr_t v);

/*
 * ompt__task_of for a callback of the task d that the calling thread t
 * runs: an untimed task without a record (OMP_TASK_BARE) gets one now.
 */
static inline struct omp_task *ompt__task_here(struct gt_thread *t, ompt_data_t *d)
{
	uintptr_t v = (uintptr_t)ompt__data_get(d);

	if (ompt__is_bare(v))
		return t->ompt ? ompt__task_bare_record(t, d, v) : NULL;
	return v & OMP_TASK_PENDING ? NULL : (struct omp_task *)v;
}

/*
 * The <omp task> of a pending task (its data v) if it is a node of t's
 * tree, else NULL. Another thread's node is not read (it keeps writing its
 * cells, which may share its line): the tag's tree bits tell it apart.
 * Reads nothing else: async-signal-safe.
 */
static inline struct gt_cct_node *ompt__pending_own(const struct gt_thread *t, uintptr_t v)
{
	struct gt_cct_node *creator = (struct gt_cct_node *)(v & OMP_TASK_NODE_MASK);
	uint32_t tree = (uint32_t)(v >> OMP_TASK_TREE_SHIFT);

	if (tree && tree != (t->cct.id & 0xffff))
		return NULL;
	return gt_cct__owns(&t->cct, creator) ? creator : NULL;
}

/* The node of a pending task (its data v) in t's tree: its <omp task>, or
 * t's copy of it. Under gt_thread__enter(t). */
static inline struct gt_cct_node *ompt__pending_node(struct gt_thread *t, uintptr_t v)
{
	struct gt_cct_node *own = ompt__pending_own(t, v);

	return own ? own : gt_thread__import(t, (struct gt_cct_node *)(v & OMP_TASK_NODE_MASK));
}

/* Sets the tool's record in a runtime's data (see ompt__data_get). */
static inline void ompt__data_set(ompt_data_t *d, void *p)
{
	gt_tsan__acquire(d);
	d->ptr = p;
	gt_tsan__release(d);
}

/*
 * Task records come from the thread's own free list and go back to the list
 * of the thread that ends them. An explicit task's record is made by the
 * thread that first runs it (host-task.c), which also ends it unless it is
 * untied: records stay with their thread, warm, without a lock. A list
 * holds at most OMP_FREE_TASKS, past which records go back to malloc.
 * Records are cache-line aligned: two threads never write one line.
 *
 * An explicit task's record is cleared by its first line, all its start
 * and end touch. Invariant: a record on a free list has no wait,
 * worksharing or reduction in progress (ompt__task_free clears one a
 * cancelled task left, when used_cold says one began); the other fields
 * past the first line are written before they are read, or read only for
 * implicit and target tasks, whose records are cleared whole.
 */
#define OMP_FREE_TASKS 1024
#define OMP_TASK_HOT offsetof(struct omp_task, wait_ns)
_Static_assert(OMP_TASK_HOT <= 64 && offsetof(struct omp_task, used_cold) < OMP_TASK_HOT,
	       "an explicit task's record is cleared by its first line, used_cold included");

static inline struct omp_task *ompt__task_new(struct omp_thread *ot, int whole)
{
	struct omp_task *task = ot->free_tasks;

	if (task) {
		ot->free_tasks = task->next_free;
		ot->n_free_tasks--;
		/* Sizes the compiler knows: a few stores, not a call. */
		if (whole)
			memset(task, 0, sizeof(*task));
		else
			memset(task, 0, OMP_TASK_HOT);
	} else {
		task = aligned_alloc(64, sizeof(*task));
		if (task)
			memset(task, 0, sizeof(*task));
	}
	return task;
}

static inline void ompt__task_free(struct omp_thread *ot, struct omp_task *task)
{
	if (ot->n_free_tasks >= OMP_FREE_TASKS) {
		free(task);
		return;
	}
	/* Left by a construct whose end never came (a cancelled task); the
	 * lines past the first are read only when a construct used them. */
	if (task->used_cold) {
		task->wait_node = NULL;
		task->wait_in_task = 0;
		task->ws.node = NULL;
		task->red.node = NULL;
	}
	task->next_free = ot->free_tasks;
	ot->free_tasks = task;
	ot->n_free_tasks++;
}

static inline void ompt__add(struct gt_thread *t, struct gt_cct_node *n, enum gt_metric m, uint64_t v)
{
	if (n)
		gt_cct__add(&t->cct, n, m, v, 0);
}

/* Durations are measured in ticks (core/clock.h) and recorded in ns. */
static inline void ompt__add_time(struct gt_thread *t, struct gt_cct_node *n, enum gt_metric m, uint64_t ticks)
{
	ompt__add(t, n, m, gt_clock__ticks_to_ns(ticks));
}

/* Counts one more of construct c at its placeholder, as metric m. */
static inline void ompt__construct_count(struct gt_thread *t, struct omp_construct *c, enum gt_metric m)
{
	if (c->count) {
		c->count->value++;
		return;
	}
	ompt__add(t, c->ph, m, 1);
	c->count = gt_cct__cell(c->ph, m);
}

#endif
