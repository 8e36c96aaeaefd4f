/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_THREAD_H
#define GT_CORE_THREAD_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/arena.h"
#include "core/cct.h"

#define GT_MAX_THREADS 65536u

enum gt_thread_kind {
	GT_THREAD_INITIAL = 0,
	GT_THREAD_WORKER = 1,
	GT_THREAD_OTHER = 2,
};

struct gt_unwind_memo;
struct gt_import_map;

/*
 * Per-thread state. Created by the thread itself (gt_thread__self) and
 * published in the registry; never freed before the finalizer.
 *
 * A record can outlive its thread for another: when a thread that no
 * OpenMP runtime reported ends (one only CUDA, OpenACC or an OpenMP target
 * construct saw), its record goes to a pool, and the next such thread takes
 * it over, tree, channels and all. The contexts of threads that come and go
 * are then measured in a number of records that the threads alive at once
 * bound, not the number ever started. Ownership passes through the pool's
 * lock: the old owner's last access happens-before the new owner's first.
 *
 * Only the owning thread writes any field, with two exceptions: `exited`
 * (written by the owner, read by the finalizer) and the sampling flags, which
 * the owner's own signal handler reads.
 */
struct gt_thread {
	uint32_t index; /* 0-based, in order of creation; carried in correlation ids */
	pid_t tid;
	enum gt_thread_kind kind;
	struct gt_arena arena;
	struct gt_cct cct;

	/*
	 * > 0 while the thread's normal code touches its CCT or caches. The
	 * sampling handler of this same thread then leaves the tree alone and
	 * counts the sample as the tool's own time. Same-thread only: ordered by
	 * atomic_signal_fence, no cross-thread atomics needed.
	 */
	volatile sig_atomic_t in_tool;
	/* The sampling handlers running on the thread (the CPU-time one may
	 * interrupt the wall-clock one). A handler adds 1 then loads the
	 * sampler's `active` flag; the finalizer clears `active` then loads
	 * this: both seq_cst, so at least one of them sees the other's store. */
	atomic_int in_handler;

	uint64_t samples;
	uint64_t tool_samples;
	/* CPU_IDLE charged to this thread's waits so far (gt_blame__sync):
	 * a layer that sees a wait around nested ones charges only the rest.
	 * Written and read by the thread itself. */
	uint64_t idle_ns;
	uint64_t dropped_samples;
	timer_t timer;
	int has_timer;
	/* Wall-clock sampling (GPUTOOL_SAMPLE=wall): its timer, its samples
	 * (those in the tool's own code are counted, not charged). */
	timer_t wall_timer;
	int has_wall_timer;
	uint64_t wall_samples, wall_tool_samples;

	struct gt_unwind_memo *memo;
	struct gt_import_map *imports;
	/* gt_thread__import's last two answers, [0] the newer: a thread that
	 * runs a taskloop's chunks imports two nodes in turn (the construct's
	 * and the chunk's <omp task>), which one entry would miss each time. */
	struct gt_cct_node *last_import[2], *last_import_own[2];
	uint64_t imports_predicted; /* answered by the predicted import */
	/* Nodes that every thread has at its root. */
	struct gt_cct_node *idle_node;

	/* Per-backend state, owned by that backend (e.g. OMPT task records). */
	void *ompt;
	void *acc;
	/* The open regions (core/region.c); the owner's, read by its own
	 * sampling handler only. */
	struct gt_regions *regions;
	/*
	 * The thread's channels to and from the GPU monitor (gpu/monitor-thread.c).
	 * Written once by the owner (release); read by the monitor thread and
	 * the finalizer (acquire).
	 */
	struct gt_gpu_thread *_Atomic gpu;

	/* Written by the owner at thread end (release); read by the finalizer
	 * and the GPU monitor (acquire). Back to 0 when a thread takes the
	 * record over from the pool. */
	atomic_int exited;
	int ended; /* the owner's own record that gt_thread__exit ran */
	/*
	 * A layer's objects point to this record after its thread ends (the
	 * OpenCL layer's per-thread operation pools): never pooled. Owner only.
	 */
	int pinned;
	/*
	 * Threads that owned the record: 1 at creation, one more each time a
	 * thread takes it over from the pool. Stored by the new owner (release)
	 * before gt_thread__revivals changes; the GPU monitor loads it
	 * (acquire) to poll again a channel it had retired.
	 */
	_Atomic uint32_t lives;
	struct gt_thread *next_free; /* the pool's list; under its lock */
};

/* The calling thread's state; initial-exec TLS, read without a call. */
extern __thread struct gt_thread *gt_thread_self __attribute__((tls_model("initial-exec")));

struct gt_thread *gt_thread__self_slow(enum gt_thread_kind kind);

/* The calling thread's state, created on first use. Not for signal handlers. */
static inline struct gt_thread *gt_thread__self(enum gt_thread_kind kind)
{
	struct gt_thread *t = gt_thread_self;

	return t ? t : gt_thread__self_slow(kind);
}

/* The calling thread's state or NULL. Async-signal-safe. */
static inline struct gt_thread *gt_thread__peek(void)
{
	return gt_thread_self;
}
/*
 * The calling thread ends: runs the layers' exit hooks, stops its CPU-time
 * sampling, gives back its caches and unused memory, and marks its tree
 * final. Once per thread (later calls do nothing); called by OMPT's
 * thread_end, and for every other thread by a key destructor at its exit.
 */
void gt_thread__exit(struct gt_thread *t);
/* Registers fn to run at each thread's end, before it is marked exited
 * (a layer applies what the thread is owed and frees its own state). */
int gt_thread__on_exit(void (*fn)(struct gt_thread *t));

/* Keeps @t out of the pool after its thread ends (see `pinned`). Owner only. */
static inline void gt_thread__pin(struct gt_thread *t)
{
	t->pinned = 1;
}

/* Threads that took over the record of one that had ended. */
uint64_t gt_thread__reused(void);
/* A count that changes each time a thread takes a record over, after its
 * `lives` changed: a reader that sees a new count sees the new `lives`
 * (the GPU monitor, to poll again a channel it had retired). */
uint32_t gt_thread__revivals(void);

/* Threads that asked for state and got none (beyond GPUTOOL_MAX_THREADS, or
 * out of memory): not measured, counted once each. */
uint64_t gt_thread__refused(void);

/*
 * Dynamic thread-local storage of the libraries the tool uses (libunwind's
 * frame cache, libdw's and libelf's error codes): the loader allocates a
 * thread's block with malloc at the thread's first touch, and ends the
 * process when that malloc fails ("cannot allocate memory for thread-local
 * data", exit 127). gt_thread__tls_touch(size, touch) calls touch(), which
 * makes a block's first touch, right after a malloc of size (and some more)
 * has just worked and been freed, so the loader's malloc is served from it;
 * where that malloc fails it calls nothing and returns -ENOMEM (the caller
 * then never touches the block). gt_thread__tls_size: what the loader asks
 * malloc for, for the module that holds @fn; 0 when it has no such block.
 * Normal context.
 */
size_t gt_thread__tls_size(const void *fn);
int gt_thread__tls_touch(size_t size, void (*touch)(void));

/* Registry: threads in creation order. A slot not yet published reads NULL. */
uint32_t gt_thread__count(void);
struct gt_thread *gt_thread__at(uint32_t index);

static inline void gt_thread__enter(struct gt_thread *t)
{
	t->in_tool++;
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void gt_thread__leave(struct gt_thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->in_tool--;
}

/*
 * The node in t's tree that stands for foreign, a node of another thread's
 * tree (or of t's own): the same path of (kind, key) from the root. Used to
 * hang a worker's frames under the encountering thread's call site, and an
 * explicit task under its creator's context. Memoized per thread.
 */
struct gt_cct_node *gt_thread__import_slow(struct gt_thread *t, struct gt_cct_node *foreign);

/* t's copy of foreign if t imported it before, else NULL: changes nothing,
 * allocates nothing. Async-signal-safe in t's own handler while t is not
 * in the tool (gt_thread__enter), where imports are made. */
struct gt_cct_node *gt_thread__imported(const struct gt_thread *t, const struct gt_cct_node *foreign);

/* Imports answered by the one that followed the previous answer last time. */
uint64_t gt_thread__imports_predicted(const struct gt_thread *t);

/* gt_thread__import's last two answers inline: they read nothing of the
 * node, whose owner keeps writing its line. */
static inline struct gt_cct_node *gt_thread__import(struct gt_thread *t, struct gt_cct_node *foreign)
{
	if (foreign && foreign == t->last_import[0])
		return t->last_import_own[0];
	if (foreign && foreign == t->last_import[1])
		return t->last_import_own[1];
	return gt_thread__import_slow(t, foreign);
}

#endif
