/* SPDX-License-Identifier: MIT */
/*
 * The GPU monitor thread; see gpu/monitor.h and docs/MONITOR.md.
 *
 * Who runs what:
 *   application / activity threads   correlate, activity, drain (own channels)
 *   any thread                       start, notify, flush, stats
 *   monitor thread                   monitor__main and everything it calls:
 *                                    the map, the thread list, `priv`
 *   the thread that stops the tool   stop, then the finalizer
 */
#include "gpu/monitor.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/trace-format.h"
#include "core/log.h"
#include "core/thread.h"
#include "core/clock.h"
#include "core/tool.h"
#include "core/trace.h"
#include "gpu/backend.h"
#include "gpu/blame-internal.h"
#include "gpu/blame.h"
#include "gpu/monitor-internal.h"

_Static_assert(GT_MAX_THREADS <= (1ull << (64 - GT_CORRELATION_SEQ_BITS)),
	       "thread indices must fit in the high bits of a correlation id");

enum mon_state {
	MON_OFF = 0,	  /* not started, or could not start */
	MON_RUNNING = 1,  /* accepting records */
	MON_STOPPING = 2, /* backends flushing; records still accepted */
	MON_STOPPED = 3,  /* finalized; nothing accepted */
};

/* Indices of the published counters. */
enum {
#define X(field, desc) STAT_##field,
	GT_MONITOR_STATS(X)
#undef X
	STAT_N
};

/* Bounds the final rounds at stop, should a producer keep going. */
#define FINAL_ROUNDS 16
/* Rounds between two looks for exited threads. */
#define RETIRE_EVERY 64
/* A flusher re-checks that the monitor is alive this often. */
#define FLUSH_RECHECK_NS 10000000u

/*
 * Grouped by who writes how often, one group per cache line or more: the
 * words every correlate and drain reads are written almost never, so their
 * line stays shared in every core's cache.
 */
static struct {
	pthread_once_t once;
	int start_err;
	pthread_t thread;

	/*
	 * enum mon_state. Release stores (start, stop, the fork child) pair
	 * with the acquire loads at the entry of every call, so a caller that
	 * sees RUNNING sees the monitor's initialized state.
	 */
	atomic_int state;
	/* Set by stop (release); read by the monitor (acquire) at each round. */
	atomic_int stop_req;
	/* 1 from start until the monitor thread leaves its loop (release). */
	atomic_int alive;
	/* Set by the finalizer; see gt_gpu_thread.draining. seq_cst. */
	atomic_int closing;
	/*
	 * Bumped (release) by every thread that publishes its channels; the
	 * monitor rescans the registry when its acquire load sees a change.
	 */
	_Atomic uint32_t generation;

	/*
	 * Futex words, written at each flush, notify and sleep.
	 * `wake`: the monitor sleeps on it; wakers increment it.
	 * `asleep`: 1 while the monitor may be in (or entering) its sleep.
	 * `flush_req`: tickets of flushers (seq_cst RMW); `flush_done`: the last
	 * ticket the monitor has served (release store, acquire loads),
	 * flushers sleep on it.
	 */
	alignas(64) _Atomic uint32_t wake;
	atomic_int asleep;
	_Atomic uint32_t flush_req;
	_Atomic uint32_t flush_done;

	/* Published counters: written by the monitor (relaxed), read anywhere. */
	alignas(64) _Atomic uint64_t pub[STAT_N];

	/* ---- monitor thread only (and the stopper after the join) ---- */
	alignas(64) struct gt_monitor_stats priv;
	struct corr_map map;
	struct gt_gpu_thread **threads; /* channels the monitor drains */
	uint32_t n_threads, cap_threads;
	uint32_t seen_generation;
	struct gt_gpu_thread *current; /* whose to_monitor is being drained */
	int nested;
	int want_poll;	    /* a sync arrived since the backends were last polled */
	uint64_t last_poll; /* gt_clock__now() of the last poll */
} mon = { .once = PTHREAD_ONCE_INIT };

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	/* The kernel reads the word itself; _Atomic uint32_t has its layout. */
	return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u),
				  .tv_nsec = (long)(ns % 1000000000u) };
}

static int state(void)
{
	return atomic_load_explicit(&mon.state, memory_order_acquire);
}

int gt_monitor__running(void)
{
	int s = state();

	return s == MON_RUNNING || s == MON_STOPPING;
}

/* ---- the thread side ---- */

/* The calling thread's channels, created on first use. Owner only. */
static struct gt_gpu_thread *gpu_thread(struct gt_thread *t)
{
	/* Relaxed: only this thread ever stores it. */
	struct gt_gpu_thread *g = atomic_load_explicit(&t->gpu, memory_order_relaxed);

	if (g) {
		/* Relaxed: the owner's own store, or its predecessor's, which
		 * the pool's lock ordered before this thread took the record. */
		uint32_t lives = atomic_load_explicit(&t->lives, memory_order_relaxed);

		if (__builtin_expect(g->lives != lives, 0)) {
			/* A new thread took the record over: the monitor may
			 * have retired its channels. Release: pairs with the
			 * acquire load in monitor__round, whose rescan then
			 * sees `lives` and polls them again. */
			g->lives = lives;
			atomic_fetch_add_explicit(&mon.generation, 1, memory_order_release);
		}
		return g;
	}
	g = aligned_alloc(alignof(struct gt_gpu_thread), sizeof(*g));
	if (!g)
		return NULL;
	memset(g, 0, sizeof(*g));
	g->thread = t;
	g->lives = atomic_load_explicit(&t->lives, memory_order_relaxed);
	g->to_monitor = gt_bichannel__new(sizeof(struct mon_record));
	g->to_thread = gt_bichannel__new(sizeof(struct mon_measurement));
	if (!g->to_monitor || !g->to_thread)
		goto out_free;
	atomic_init(&g->lost, 0);
	atomic_init(&g->draining, 0);
	atomic_init(&g->produced, 0);
	/* Release: pairs with the acquire loads of t->gpu in the monitor
	 * (scan, route) and the finalizer; publishes the channels. */
	atomic_store_explicit(&t->gpu, g, memory_order_release);
	/* Release: pairs with the acquire load in monitor__round, which then
	 * rescans and finds t->gpu set. */
	atomic_fetch_add_explicit(&mon.generation, 1, memory_order_release);
	return g;

out_free:
	gt_bichannel__delete(g->to_monitor);
	gt_bichannel__delete(g->to_thread);
	free(g);
	return NULL;
}

static void thread__lost(struct gt_gpu_thread *g)
{
	/* Single writer (the owner): a load and a store, no read-modify-write. */
	atomic_store_explicit(&g->lost, atomic_load_explicit(&g->lost, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

uint64_t gt_monitor__correlate(struct gt_thread *t, struct gt_cct_node *placeholder)
{
	return gt_monitor__correlate_device(t, placeholder, -1);
}

uint64_t gt_monitor__correlate_device(struct gt_thread *t, struct gt_cct_node *placeholder,
				      int device)
{
	struct gt_gpu_thread *g;
	struct mon_record *r;
	uint64_t id;

	if (!t || !gt_monitor__running())
		return 0;
	g = gpu_thread(t);
	if (!g)
		return 0;
	id = gt_correlation__make(t->index, ++g->seq);
	r = gt_bichannel__produce_begin(g->to_monitor);
	if (!r) {
		thread__lost(g);
		gt_tool__unmeasured_ops(1);
		return 0;
	}
	r->type = MON_CORRELATION;
	r->placeholder = placeholder;
	r->op.correlation = id;
	r->op.device = GT_BLAME_NO_DEVICE;
	if (device >= 0 && device < GT_BLAME_MAX_DEVICES) {
		/* Before the commit, whose release orders it before the
		 * monitor's decrement. */
		gt_blame__launched((uint32_t)device);
		r->op.device = (uint32_t)device;
	}
	gt_bichannel__produce_commit(g->to_monitor, r);
	return id;
}

void gt_monitor__activity(struct gt_thread *t, const struct gt_device_op *op)
{
	struct gt_gpu_thread *g;
	struct mon_record *r;

	if (!t || !gt_monitor__running())
		return;
	g = gpu_thread(t);
	if (!g)
		return;
	r = gt_bichannel__produce_begin(g->to_monitor);
	if (!r) {
		thread__lost(g);
		return;
	}
	r->type = MON_ACTIVITY;
	r->placeholder = NULL;
	r->op = *op;
	gt_bichannel__produce_commit(g->to_monitor, r);
}

int gt_monitor__send_sync(struct gt_thread *t, struct gt_cct_node *sync_node, uint64_t begin_ns,
			  uint64_t end_ns, uint32_t device, uint64_t stream)
{
	struct gt_gpu_thread *g;
	struct mon_record *r;

	if (!t || !gt_monitor__running())
		return -EAGAIN;
	g = gpu_thread(t);
	if (!g)
		return -ENOMEM;
	r = gt_bichannel__produce_begin(g->to_monitor);
	if (!r) {
		thread__lost(g);
		return -ENOMEM;
	}
	memset(&r->op, 0, sizeof(r->op));
	r->type = MON_SYNC;
	r->placeholder = sync_node;
	r->op.start_ns = begin_ns;
	r->op.end_ns = end_ns;
	r->op.device = device;
	r->op.stream = stream;
	gt_bichannel__produce_commit(g->to_monitor, r);
	return 0;
}

/* Applies one measurement record to the tree of the thread in @arg. */
static void measurement__apply(void *payload, void *arg)
{
	struct gt_thread *t = arg;
	struct mon_measurement *m = payload;

	if (m->type == MEAS_BLAME)
		gt_device_op__add(&t->cct, m->placeholder, &m->op, (enum gt_metric)m->metric,
				  m->value);
	else
		gt_device_op__attribute(&t->cct, m->placeholder, &m->op);
}

size_t gt_monitor__drain(struct gt_thread *t)
{
	struct gt_gpu_thread *g;
	size_t n;

	if (!t)
		return 0;
	/* Relaxed: the owner's own store. */
	g = atomic_load_explicit(&t->gpu, memory_order_relaxed);
	/* Relaxed hint; a record it misses is taken by the next drain. */
	if (!g || atomic_load_explicit(&g->produced, memory_order_relaxed) == g->consumed)
		return 0;
	/* seq_cst store then load: the owner's half of the handshake with the
	 * finalizer (see gt_gpu_thread.draining). */
	atomic_store_explicit(&g->draining, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&mon.closing, memory_order_seq_cst)) {
		atomic_store_explicit(&g->draining, 0, memory_order_release);
		return 0;
	}
	gt_thread__enter(t);
	n = gt_bichannel__drain(g->to_thread, measurement__apply, t);
	gt_thread__leave(t);
	g->consumed += n;
	/* Release: pairs with the finalizer's acquire load. */
	atomic_store_explicit(&g->draining, 0, memory_order_release);
	return n;
}

/* ---- waking and flushing ---- */

static void monitor__poke(void)
{
	/* Call after publishing the work; see monitor__sleep for why no
	 * wake-up is lost. */
	atomic_fetch_add_explicit(&mon.wake, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&mon.asleep, memory_order_seq_cst))
		futex(&mon.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void gt_monitor__notify(void)
{
	if (gt_monitor__running())
		monitor__poke();
}

void gt_monitor__flush(void)
{
	struct timespec recheck = ns_to_ts(FLUSH_RECHECK_NS);
	uint32_t ticket;

	if (!gt_monitor__running())
		return;
	/*
	 * seq_cst RMW: everything this thread (and whatever happened-before
	 * it) delivered precedes the ticket; the monitor's acquire load of
	 * flush_req at the start of a round makes it visible to that round.
	 */
	ticket = atomic_fetch_add_explicit(&mon.flush_req, 1, memory_order_seq_cst) + 1;
	monitor__poke();
	for (;;) {
		/* Acquire: pairs with the monitor's release store, which follows
		 * the round and the publication of the counters. */
		uint32_t done = atomic_load_explicit(&mon.flush_done, memory_order_acquire);

		if ((int32_t)(done - ticket) >= 0)
			return;
		if (!atomic_load_explicit(&mon.alive, memory_order_acquire))
			return;
		futex(&mon.flush_done, FUTEX_WAIT_PRIVATE, done, &recheck);
	}
}

/* ---- the monitor thread ---- */

/* Puts @g in the list of channels drained every round. */
static void threads__poll(struct gt_gpu_thread *g)
{
	if (g->state == GPU_THREAD_POLLED)
		return;
	if (mon.n_threads == mon.cap_threads) {
		uint32_t cap = mon.cap_threads ? mon.cap_threads * 2 : 64;
		struct gt_gpu_thread **a = realloc(mon.threads, cap * sizeof(*a));

		if (!a)
			return; /* retried at the next rescan or route */
		mon.threads = a;
		mon.cap_threads = cap;
	}
	mon.threads[mon.n_threads++] = g;
	if (g->state == GPU_THREAD_NEW)
		mon.priv.threads++;
	else
		mon.priv.retired--;
	g->state = GPU_THREAD_POLLED;
}

static struct gt_gpu_thread *gpu_of(struct gt_thread *t)
{
	/* Acquire: pairs with the release store in gpu_thread(). */
	return t ? atomic_load_explicit(&t->gpu, memory_order_acquire) : NULL;
}

static void threads__scan(void)
{
	uint32_t n = gt_thread__count();

	for (uint32_t i = 0; i < n; i++) {
		struct gt_gpu_thread *g = gpu_of(gt_thread__at(i));

		if (!g)
			continue;
		/* Acquire: pairs with the new owner's release store. */
		if (g->state == GPU_THREAD_NEW ||
		    (g->state == GPU_THREAD_RETIRED &&
		     atomic_load_explicit(&g->thread->lives, memory_order_acquire) != g->retired_lives))
			threads__poll(g);
	}
}

static void monitor__send(struct gt_gpu_thread *owner, struct gt_cct_node *placeholder,
			  const struct gt_device_op *op, uint32_t type, uint32_t metric,
			  uint64_t value)
{
	struct mon_measurement *m = gt_bichannel__produce_begin(owner->to_thread);

	if (!m) {
		mon.priv.lost++;
		return;
	}
	m->placeholder = placeholder;
	m->op = *op;
	m->type = type;
	m->metric = metric;
	m->value = value;
	gt_bichannel__produce_commit(owner->to_thread, m);
	mon.priv.measurements++;
	/* Single writer (the monitor). */
	atomic_store_explicit(&owner->produced,
			      atomic_load_explicit(&owner->produced, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The trace's event kind (core/trace-format.h) of a device operation. */
static uint32_t trace_kind(const struct gt_device_op *op)
{
	static const uint8_t copies[] = { [GT_COPY_OTHER] = GT_EV_COPY_OTHER, [GT_COPY_H2D] = GT_EV_COPY_H2D,
					  [GT_COPY_D2H] = GT_EV_COPY_D2H, [GT_COPY_D2D] = GT_EV_COPY_D2D };

	switch (op->kind) {
	case GT_DEVOP_KERNEL: return GT_EV_KERNEL;
	case GT_DEVOP_COPY: return op->copy <= GT_COPY_D2D ? copies[op->copy] : GT_EV_COPY_OTHER;
	case GT_DEVOP_MEMSET: return GT_EV_MEMSET;
	case GT_DEVOP_ALLOC:
	case GT_DEVOP_FREE: return GT_EV_ALLOC;
	case GT_DEVOP_SYNC: return GT_EV_SYNC;
	default: return GT_EV_OTHER;
	}
}

static void monitor__deliver(struct gt_gpu_thread *owner, struct gt_cct_node *placeholder,
			     const struct gt_device_op *op)
{
	monitor__send(owner, placeholder, op, MEAS_OP, 0, 0);
	/* Every matched operation, with the id of its launch (the flow). */
	if (gt_tracer__on() && op->start_ns && op->kind != GT_DEVOP_OTHER)
		gt_tracer__device(trace_kind(op), op->kind == GT_DEVOP_FREE ? "free" : op->name, placeholder,
				  op->start_ns, op->end_ns, op->correlation, op->device, op->stream);
}

void gt_monitor__send_blame(struct gt_gpu_thread *owner, struct gt_cct_node *placeholder,
			    const struct gt_device_op *op, enum gt_metric metric, uint64_t value)
{
	monitor__send(owner, placeholder, op, MEAS_BLAME, (uint32_t)metric, value);
}

static void on_correlation(struct gt_gpu_thread *owner, uint64_t id,
			   struct gt_cct_node *placeholder, uint32_t device)
{
	struct corr_entry *e = gt_corrmap__find(&mon.map, id);
	struct gt_device_op op;
	int complete = 0;

	mon.priv.correlations++;
	if (!e) {
		e = gt_corrmap__insert(&mon.map, id);
		if (!e) {
			mon.priv.lost++;
			gt_tool__unmeasured_ops(1);
			if (device < GT_BLAME_MAX_DEVICES)
				gt_blame__unlaunched(device);
			return;
		}
	}
	e->owner = owner;
	e->placeholder = placeholder;
	gt_blame__issued(e, device);
	/* Activities that came first: deliver them in arrival order. */
	while (gt_corrmap__unpark(&mon.map, e, &op)) {
		monitor__deliver(owner, placeholder, &op);
		gt_blame__finished(e, &op);
		if (!(op.flags & GT_DEVOP_F_MORE))
			complete = 1;
	}
	if (complete) {
		gt_blame__completed(e);
		gt_corrmap__remove(&mon.map, e);
	}
}

static void on_record(void *payload, void *arg);

/*
 * The activity's correlation is not in the map. It was committed to its
 * owner's channel before the operation was handed to the device, so it
 * usually just has not been drained yet: drain that one channel now, once,
 * without recursing.
 */
static struct corr_entry *route__find(uint64_t id)
{
	struct gt_gpu_thread *g, *outer = mon.current;

	if (mon.nested)
		return NULL;
	g = gpu_of(gt_thread__at(gt_correlation__thread(id)));
	if (!g || g == outer)
		return NULL;
	/* A retired thread that produced again is polled again. */
	threads__poll(g);
	mon.nested = 1;
	mon.current = g;
	gt_bichannel__drain(g->to_monitor, on_record, g);
	mon.current = outer;
	mon.nested = 0;
	return gt_corrmap__find(&mon.map, id);
}

static void on_activity(const struct gt_device_op *op)
{
	struct corr_entry *e;

	mon.priv.activities++;
	if (!op->correlation) {
		mon.priv.unmatched++;
		return;
	}
	e = gt_corrmap__find(&mon.map, op->correlation);
	if (!e)
		e = route__find(op->correlation);
	if (e && e->owner) {
		monitor__deliver(e->owner, e->placeholder, op);
		gt_blame__finished(e, op);
		if (!(op->flags & GT_DEVOP_F_MORE)) {
			gt_blame__completed(e);
			gt_corrmap__remove(&mon.map, e);
		}
		return;
	}
	mon.priv.early++;
	if (gt_corrmap__park(&mon.map, op))
		mon.priv.unmatched++;
}

/*
 * A sync record of @owner. What other threads launched before the sync
 * ended was committed to their channels before this record was: read every
 * other channel once first (not recursing), so that those correlations are
 * in the map when the sync takes its horizon.
 */
static void on_sync(struct gt_gpu_thread *owner, struct mon_record *r)
{
	struct gt_gpu_thread *outer = mon.current;
	/* Acquire: pairs with the release increment in gpu_thread(). */
	uint32_t gen = atomic_load_explicit(&mon.generation, memory_order_acquire);

	if (!mon.nested) {
		if (gen != mon.seen_generation) {
			mon.seen_generation = gen;
			threads__scan();
		}
		mon.nested = 1;
		for (uint32_t i = 0; i < mon.n_threads; i++) {
			struct gt_gpu_thread *g = mon.threads[i];

			if (g == outer)
				continue;
			mon.current = g;
			gt_bichannel__drain(g->to_monitor, on_record, g);
		}
		mon.current = outer;
		mon.nested = 0;
	}
	mon.want_poll = 1;
	gt_blame__on_sync(owner, r->placeholder, &r->op);
}

static void on_record(void *payload, void *arg)
{
	struct mon_record *r = payload;

	if (r->type == MON_CORRELATION)
		on_correlation(arg, r->op.correlation, r->placeholder, r->op.device);
	else if (r->type == MON_SYNC)
		on_sync(arg, r);
	else
		on_activity(&r->op);
}

/*
 * Stops polling the channels of threads that have exited, so that a round
 * costs what the live threads cost however many threads came and went. A
 * thread produces nothing after gt_thread__exit; its channel is drained one
 * last time first. Measurement records still reach it (the map holds the
 * owner itself), for the finalizer to apply.
 */
static void threads__retire(void)
{
	for (uint32_t i = 0; i < mon.n_threads;) {
		struct gt_gpu_thread *g = mon.threads[i];
		/* Acquire: pairs with the release store of a new owner. Read
		 * first: should `exited` below be a later owner's, the rescan
		 * sees a newer `lives` and polls the channel once more. */
		uint32_t lives = atomic_load_explicit(&g->thread->lives, memory_order_acquire);

		/* Acquire: pairs with the release store in gt_thread__exit, so
		 * the drain below sees everything the thread committed. */
		if (!atomic_load_explicit(&g->thread->exited, memory_order_acquire)) {
			i++;
			continue;
		}
		mon.current = g;
		gt_bichannel__drain(g->to_monitor, on_record, g);
		mon.current = NULL;
		g->state = GPU_THREAD_RETIRED;
		g->retired_lives = lives;
		mon.priv.retired++;
		mon.threads[i] = mon.threads[--mon.n_threads];
	}
}

/* One pass over every polled channel. Returns the number of records taken. */
static uint64_t monitor__round(void)
{
	uint64_t before = mon.priv.correlations + mon.priv.activities;
	/* Acquire: pairs with the release increment in gpu_thread(). */
	uint32_t gen = atomic_load_explicit(&mon.generation, memory_order_acquire);

	if (gen != mon.seen_generation) {
		mon.seen_generation = gen;
		threads__scan();
	}
	for (uint32_t i = 0; i < mon.n_threads; i++) {
		mon.current = mon.threads[i];
		gt_bichannel__drain(mon.threads[i]->to_monitor, on_record, mon.threads[i]);
	}
	mon.current = NULL;
	if (++mon.priv.rounds % RETIRE_EVERY == 0)
		threads__retire();
	return mon.priv.correlations + mon.priv.activities - before;
}

static void monitor__publish(void)
{
	uint64_t v[STAT_N];

	mon.priv.map_size = mon.map.size;
	mon.priv.map_capacity = mon.map.cap;
	mon.priv.map_peak = mon.map.peak;
	mon.priv.pending = mon.map.parked;
	mon.priv.pending_peak = mon.map.parked_peak;
	mon.priv.evicted = mon.map.evicted;
#define X(field, desc) v[STAT_##field] = mon.priv.field;
	GT_MONITOR_STATS(X)
#undef X
	for (int i = 0; i < STAT_N; i++)
		atomic_store_explicit(&mon.pub[i], v[i], memory_order_relaxed);
	gt_blame__publish();
}

/*
 * Sleeps up to @ns unless a flush or stop is pending. @w is the value of
 * `wake` read at the start of the round that found nothing. No wake-up is
 * lost: a waker (poke) first publishes its work (records committed, a flush
 * ticket, the stop flag), then increments `wake`, then loads `asleep`, all
 * seq_cst. If its increment precedes the monitor's read of @w, the round
 * that followed saw its work. Otherwise `wake` != @w, and the futex wait,
 * which compares the two atomically with going to sleep, either returns at
 * once or is already asleep when the waker, seeing asleep = 1, wakes it.
 */
static void monitor__sleep(uint64_t ns, uint32_t w, uint32_t served)
{
	struct timespec ts = ns_to_ts(ns);

	atomic_store_explicit(&mon.asleep, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&mon.flush_req, memory_order_seq_cst) == served &&
	    !atomic_load_explicit(&mon.stop_req, memory_order_seq_cst)) {
		futex(&mon.wake, FUTEX_WAIT_PRIVATE, w, &ts);
		mon.priv.sleeps++;
	}
	/* Relaxed: a hint; a waker that still reads 1 makes one spare call. */
	atomic_store_explicit(&mon.asleep, 0, memory_order_relaxed);
}

static void monitor__serve(uint32_t ticket)
{
	/* Release: pairs with the flusher's acquire load; the round and the
	 * published counters happen-before the flusher returns. */
	atomic_store_explicit(&mon.flush_done, ticket, memory_order_release);
	futex(&mon.flush_done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* At the end: what never matched is counted, and the map's memory freed. */
static void monitor__leftovers(void)
{
	/* Syncs still waiting are blamed with what is known. */
	gt_blame__fini();
	mon.priv.unmeasured = 0;
	for (uint32_t i = 0; i < mon.map.cap; i++)
		if (mon.map.slots[i].id && mon.map.slots[i].owner)
			mon.priv.unmeasured++;
	mon.priv.unmatched += mon.map.parked;
	monitor__publish();
	gt_corrmap__fini(&mon.map);
}

static void *monitor__main(void *arg)
{
	uint64_t idle = GT_MONITOR_IDLE_MIN_NS;
	uint32_t served = 0;

	(void)arg;
	for (;;) {
		/* Seq_cst: pairs with the wakers' increments; see monitor__sleep. */
		uint32_t w = atomic_load_explicit(&mon.wake, memory_order_seq_cst);
		/* Acquire: pairs with the flusher's RMW; see gt_monitor__flush. */
		uint32_t ticket = atomic_load_explicit(&mon.flush_req, memory_order_acquire);
		/* Acquire: pairs with the release store in gt_monitor__stop, after
		 * which the backends have delivered everything. */
		int stop = atomic_load_explicit(&mon.stop_req, memory_order_acquire);
		uint64_t n = monitor__round();

		if (stop) {
			for (int i = 0; n && i < FINAL_ROUNDS; i++)
				n = monitor__round();
			break;
		}
		monitor__publish();
		if (mon.want_poll) {
			uint64_t now = gt_clock__now();

			/* What the syncs wait for has completed: the backends
			 * hand it over here, not on the application's threads. */
			if (now - mon.last_poll >= GT_MONITOR_POLL_NS) {
				mon.want_poll = 0;
				mon.last_poll = now;
				gt_backend__poll_all();
				continue;
			}
		}
		if (ticket != served) {
			served = ticket;
			monitor__serve(served);
		}
		if (n) {
			idle = GT_MONITOR_IDLE_MIN_NS;
			continue;
		}
		monitor__sleep(idle, w, served);
		idle = idle * 2 < GT_MONITOR_IDLE_MAX_NS ? idle * 2 : GT_MONITOR_IDLE_MAX_NS;
	}
	monitor__leftovers();
	/* Release: a flusher that sees 0 returns; everything is processed. */
	atomic_store_explicit(&mon.alive, 0, memory_order_release);
	monitor__serve(atomic_load_explicit(&mon.flush_req, memory_order_acquire));
	return NULL;
}

/* ---- lifecycle ---- */

static void monitor__atfork_child(void)
{
	/* The monitor thread does not exist in the child: switch everything
	 * off, so that nothing waits for it and no channel fills up. */
	atomic_store_explicit(&mon.alive, 0, memory_order_relaxed);
	atomic_store_explicit(&mon.state, MON_STOPPED, memory_order_release);
	gt_backend__atfork_child();
	gt_blame__atfork_child();
}

static void monitor__start_once(void)
{
	sigset_t all, old;
	int err;

	gt_corrmap__init(&mon.map, GT_MONITOR_PENDING_MAX);
	gt_blame__init();
	atomic_store_explicit(&mon.alive, 1, memory_order_relaxed);
	/* The monitor takes no signal meant for the application: it starts
	 * with every signal blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&mon.thread, NULL, monitor__main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		atomic_store_explicit(&mon.alive, 0, memory_order_relaxed);
		mon.start_err = -err;
		gt_warn("gpu", "monitor thread not started (%s); GPU operations are not measured",
			strerror(err));
		return;
	}
	pthread_atfork(NULL, NULL, monitor__atfork_child);
	/* Registered once the thread runs; see docs/MONITOR.md, "Exit". */
	gt_tool__on_stop(gt_monitor__stop);
	/* Release: pairs with the acquire load in every entry point. */
	atomic_store_explicit(&mon.state, MON_RUNNING, memory_order_release);
}

int gt_monitor__start(void)
{
	pthread_once(&mon.once, monitor__start_once);
	return mon.start_err;
}

/*
 * Applies what is left in every thread's to_thread channel, on the calling
 * thread, for threads alive or exited. Safe because, by now, the monitor
 * (the only producer) is joined, and every owner has either finished its
 * last drain or will see `closing` and not start another (the handshake on
 * gt_gpu_thread.draining), so this thread is the channel's only consumer and
 * the only writer of GPU metrics into the tree. The tool stops sampling
 * before its stop hooks run, so no sampling handler writes these trees
 * either; the profile is built from them right after.
 */
static void monitor__finalize(void)
{
	struct gt_thread *self = gt_thread__peek();
	uint32_t n = gt_thread__count();

	atomic_store_explicit(&mon.closing, 1, memory_order_seq_cst);
	for (uint32_t i = 0; i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);
		struct gt_gpu_thread *g = gpu_of(t);
		int skip = 0;

		if (!g)
			continue;
		/* Acquire: pairs with the owner's release store of 0. */
		while (atomic_load_explicit(&g->draining, memory_order_acquire)) {
			/* Stopped from inside our own drain (a signal handler):
			 * waiting would never end. */
			if (t == self) {
				skip = 1;
				break;
			}
			sched_yield();
		}
		if (!skip)
			mon.priv.finalized +=
				gt_bichannel__drain(g->to_thread, measurement__apply, t);
	}
	atomic_store_explicit(&mon.pub[STAT_finalized], mon.priv.finalized, memory_order_relaxed);
}

void gt_monitor__stop(void)
{
	int expected = MON_RUNNING;

	/* Acq_rel: one stopper; it sees what start published. */
	if (!atomic_compare_exchange_strong_explicit(&mon.state, &expected, MON_STOPPING,
						     memory_order_acq_rel, memory_order_acquire))
		return;
	/* Backends deliver their last activities while the monitor runs. */
	gt_backend__stop_all();
	/* Release: pairs with the monitor's acquire load; everything the
	 * backends delivered precedes its final rounds. */
	atomic_store_explicit(&mon.stop_req, 1, memory_order_release);
	monitor__poke();
	pthread_join(mon.thread, NULL);
	monitor__finalize();
	atomic_store_explicit(&mon.state, MON_STOPPED, memory_order_release);
	/* Operations whose activity never came (the lost ones are counted
	 * where they are lost). */
	gt_tool__unmeasured_ops(mon.priv.unmeasured);
	if (mon.priv.unmatched || mon.priv.unmeasured || mon.priv.lost || mon.priv.evicted)
		gt_info("gpu",
			"monitor: %llu operations measured; %llu activities unmatched, %llu "
			"correlations unmeasured, %llu records lost",
			(unsigned long long)mon.priv.measurements,
			(unsigned long long)mon.priv.unmatched,
			(unsigned long long)mon.priv.unmeasured, (unsigned long long)mon.priv.lost);
}

void gt_monitor__stats(struct gt_monitor_stats *s)
{
	uint32_t n = gt_thread__count();
#define X(field, desc) \
	s->field = atomic_load_explicit(&mon.pub[STAT_##field], memory_order_relaxed);
	GT_MONITOR_STATS(X)
#undef X
	s->channel_allocations = 0;
	s->thread_lost = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct gt_gpu_thread *g = gpu_of(gt_thread__at(k));

		if (!g)
			continue;
		s->channel_allocations += gt_bichannel__allocations(g->to_monitor) +
					  gt_bichannel__allocations(g->to_thread);
		s->thread_lost += atomic_load_explicit(&g->lost, memory_order_relaxed);
	}
}
