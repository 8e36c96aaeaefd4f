/* SPDX-License-Identifier: MIT */
/*
 * The GPU monitor thread, its start and its stop; see gpu/monitor.h and
 * docs/MONITOR.md. What other threads call is in gpu/monitor-thread.c; the
 * state both halves share, in gpu/monitor-state.h.
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
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
#include "gpu/monitor-state.h"
#include "gpu/streams.h"

_Static_assert(GT_MAX_THREADS <= (1ull << (64 - GT_CORRELATION_SEQ_BITS)),
	       "thread indices must fit in the high bits of a correlation id");

/* Bounds the final rounds at stop, should a producer keep going. */
#define FINAL_ROUNDS 16
/* Rounds between two looks for exited threads. */
#define RETIRE_EVERY 64

struct gt_mon gt_mon = { .once = PTHREAD_ONCE_INIT };

int gt_monitor__running(void)
{
	int s = mon__state();

	return s == MON_RUNNING || s == MON_STOPPING;
}

/* ---- the monitor thread ---- */

/* Puts @g in the list of channels drained every round. */
static void threads__poll(struct gt_gpu_thread *g)
{
	if (g->state == GPU_THREAD_POLLED)
		return;
	if (gt_mon.n_threads == gt_mon.cap_threads) {
		uint32_t cap = gt_mon.cap_threads ? gt_mon.cap_threads * 2 : 64;
		struct gt_gpu_thread **a = realloc(gt_mon.threads, cap * sizeof(*a));

		if (!a)
			return; /* retried at the next rescan or route */
		gt_mon.threads = a;
		gt_mon.cap_threads = cap;
	}
	gt_mon.threads[gt_mon.n_threads++] = g;
	if (g->state == GPU_THREAD_NEW)
		gt_mon.priv.threads++;
	else
		gt_mon.priv.retired--;
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

/*
 * Scans the registry when it changed: a thread published its channels (the
 * monitor's generation), or took over an ended thread's record, whose
 * channels the monitor may have retired (core's revivals). Acquire loads:
 * they pair with the release increments, so the scan sees `gpu` and
 * `lives` as they were stored.
 */
static void threads__rescan(void)
{
	uint32_t gen = atomic_load_explicit(&gt_mon.generation, memory_order_acquire);
	uint32_t rev = gt_thread__revivals();

	if (gen == gt_mon.seen_generation && rev == gt_mon.seen_revivals)
		return;
	gt_mon.seen_generation = gen;
	gt_mon.seen_revivals = rev;
	threads__scan();
}

static void monitor__send(struct gt_gpu_thread *owner, struct gt_cct_node *placeholder,
			  const struct gt_device_op *op, uint32_t type, uint32_t metric,
			  uint64_t value)
{
	struct mon_measurement *m = gt_bichannel__produce_begin(owner->to_thread);

	if (!m) {
		gt_mon.priv.lost++;
		return;
	}
	m->placeholder = placeholder;
	m->op = *op;
	m->type = type;
	m->metric = metric;
	m->value = value;
	gt_bichannel__produce_commit(owner->to_thread, m);
	gt_mon.priv.measurements++;
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

/*
 * Sends @op, the next activity of @e, to its owner, with the time its
 * stream stood idle before it after its issue (gpu/streams.h), and has
 * blame shifting take it.
 */
static void monitor__deliver(struct corr_entry *e, const struct gt_device_op *op)
{
	/* One activity, the whole of its issue: not a graph's or a region's. */
	int single = !e->delivered && !(op->flags & GT_DEVOP_F_MORE);
	uint64_t idle = gt_streams__idle_before(op, e->issued_ns, single);

	e->delivered++;
	monitor__send(e->owner, e->placeholder, op, MEAS_OP, 0, idle);
	if (e->wait.node) {
		/* Issued right after a wait for another stream's work. */
		uint64_t serial = single ? gt_streams__serialized(&e->wait, op) : 0;
		struct gt_device_op sync_op = { .kind = GT_DEVOP_OTHER };

		if (serial) {
			monitor__send(e->owner, e->wait.node, &sync_op, MEAS_BLAME, GT_M_GSYNC_SERIAL, serial);
			monitor__send(e->owner, e->wait.node, &sync_op, MEAS_BLAME, GT_M_GSYNC_SERIAL_COUNT, 1);
		}
		e->wait.node = NULL;
	}
	/* Every matched operation, with the id of its launch (the flow). */
	if (gt_tracer__on() && op->start_ns && op->kind != GT_DEVOP_OTHER)
		gt_tracer__device(trace_kind(op), op->kind == GT_DEVOP_FREE ? "free" : op->name, e->placeholder,
				  op->start_ns, op->end_ns, op->correlation, op->device, op->stream);
	gt_blame__finished(e, op);
}

void gt_monitor__send_blame(struct gt_gpu_thread *owner, struct gt_cct_node *placeholder,
			    const struct gt_device_op *op, enum gt_metric metric, uint64_t value)
{
	monitor__send(owner, placeholder, op, MEAS_BLAME, (uint32_t)metric, value);
}

static void on_correlation(struct gt_gpu_thread *owner, uint64_t id,
			   struct gt_cct_node *placeholder, uint32_t device, uint64_t issued_ns)
{
	struct corr_entry *e = gt_corrmap__find(&gt_mon.map, id);
	struct gt_device_op op;
	int complete = 0;

	gt_mon.priv.correlations++;
	if (!e) {
		e = gt_corrmap__insert(&gt_mon.map, id);
		if (!e) {
			gt_mon.priv.lost++;
			gt_tool__unmeasured_ops(1);
			if (device < GT_BLAME_MAX_DEVICES)
				gt_blame__unlaunched(device);
			return;
		}
	}
	e->owner = owner;
	e->placeholder = placeholder;
	e->issued_ns = issued_ns;
	/* The thread's next device operation after a wait for one stream
	 * takes the wait along (gpu/streams.h). */
	if (device != GT_BLAME_NO_DEVICE) {
		if (owner->wait.node && issued_ns >= owner->wait.end_ns)
			e->wait = owner->wait;
		owner->wait.node = NULL;
	}
	gt_blame__issued(e, device);
	/* Activities that came first: deliver them in arrival order. */
	while (gt_corrmap__unpark(&gt_mon.map, e, &op)) {
		monitor__deliver(e, &op);
		if (!(op.flags & GT_DEVOP_F_MORE))
			complete = 1;
	}
	if (complete) {
		gt_blame__completed(e);
		gt_corrmap__remove(&gt_mon.map, e);
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
	struct gt_gpu_thread *g, *outer = gt_mon.current;

	if (gt_mon.nested)
		return NULL;
	g = gpu_of(gt_thread__at(gt_correlation__thread(id)));
	if (!g || g == outer)
		return NULL;
	/* A retired thread that produced again is polled again. */
	threads__poll(g);
	gt_mon.nested = 1;
	gt_mon.current = g;
	gt_bichannel__drain(g->to_monitor, on_record, g);
	gt_mon.current = outer;
	gt_mon.nested = 0;
	return gt_corrmap__find(&gt_mon.map, id);
}

static void on_activity(const struct gt_device_op *op)
{
	struct corr_entry *e;

	gt_mon.priv.activities++;
	if (!op->correlation) {
		gt_mon.priv.unmatched++;
		return;
	}
	e = gt_corrmap__find(&gt_mon.map, op->correlation);
	if (!e)
		e = route__find(op->correlation);
	if (e && e->owner) {
		monitor__deliver(e, op);
		if (!(op->flags & GT_DEVOP_F_MORE)) {
			gt_blame__completed(e);
			gt_corrmap__remove(&gt_mon.map, e);
		}
		return;
	}
	gt_mon.priv.early++;
	if (gt_corrmap__park(&gt_mon.map, op))
		gt_mon.priv.unmatched++;
}

/*
 * A sync record of @owner. What other threads launched before the sync
 * ended was committed to their channels before this record was: read every
 * other channel once first (not recursing), so that those correlations are
 * in the map when the sync takes its horizon.
 */
static void on_sync(struct gt_gpu_thread *owner, struct mon_record *r)
{
	struct gt_gpu_thread *outer = gt_mon.current;

	if (!gt_mon.nested) {
		threads__rescan();
		gt_mon.nested = 1;
		for (uint32_t i = 0; i < gt_mon.n_threads; i++) {
			struct gt_gpu_thread *g = gt_mon.threads[i];

			if (g == outer)
				continue;
			gt_mon.current = g;
			gt_bichannel__drain(g->to_monitor, on_record, g);
		}
		gt_mon.current = outer;
		gt_mon.nested = 0;
	}
	gt_mon.want_poll = 1;
	/* A wait for one stream (0: the device's every stream; UINT64_MAX:
	 * none) is remembered until the thread issues its next operation. */
	if (r->op.stream && r->op.stream != UINT64_MAX && r->op.end_ns > r->op.start_ns)
		owner->wait = (struct gt_stream_wait){
			.node = r->placeholder, .stream = r->op.stream, .end_ns = r->op.end_ns,
			.ns = r->op.end_ns - r->op.start_ns, .device = r->op.device,
		};
	else
		owner->wait.node = NULL;
	gt_blame__on_sync(owner, r->placeholder, &r->op);
}

static void on_record(void *payload, void *arg)
{
	struct mon_record *r = payload;

	if (r->type == MON_CORRELATION)
		on_correlation(arg, r->op.correlation, r->placeholder, r->op.device, r->op.start_ns);
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
	for (uint32_t i = 0; i < gt_mon.n_threads;) {
		struct gt_gpu_thread *g = gt_mon.threads[i];
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
		gt_mon.current = g;
		gt_bichannel__drain(g->to_monitor, on_record, g);
		gt_mon.current = NULL;
		g->state = GPU_THREAD_RETIRED;
		g->retired_lives = lives;
		gt_mon.priv.retired++;
		gt_mon.threads[i] = gt_mon.threads[--gt_mon.n_threads];
	}
}

/* One pass over every polled channel. Returns the number of records taken. */
static uint64_t monitor__round(void)
{
	uint64_t before = gt_mon.priv.correlations + gt_mon.priv.activities;

	threads__rescan();
	for (uint32_t i = 0; i < gt_mon.n_threads; i++) {
		gt_mon.current = gt_mon.threads[i];
		gt_bichannel__drain(gt_mon.threads[i]->to_monitor, on_record, gt_mon.threads[i]);
	}
	gt_mon.current = NULL;
	if (++gt_mon.priv.rounds % RETIRE_EVERY == 0)
		threads__retire();
	return gt_mon.priv.correlations + gt_mon.priv.activities - before;
}

static void monitor__publish(void)
{
	uint64_t v[STAT_N];

	gt_mon.priv.map_size = gt_mon.map.size;
	gt_mon.priv.map_capacity = gt_mon.map.cap;
	gt_mon.priv.map_peak = gt_mon.map.peak;
	gt_mon.priv.pending = gt_mon.map.parked;
	gt_mon.priv.pending_peak = gt_mon.map.parked_peak;
	gt_mon.priv.evicted = gt_mon.map.evicted;
#define X(field, desc) v[STAT_##field] = gt_mon.priv.field;
	GT_MONITOR_STATS(X)
#undef X
	for (int i = 0; i < STAT_N; i++)
		if (i != STAT_rounds)
			atomic_store_explicit(&gt_mon.pub[i], v[i], memory_order_relaxed);
	gt_blame__publish();
	/* Seq_cst, last: pairs with the seq_cst load in gt_monitor__stats, so
	 * that a reader who sees round n sees what round n published; and
	 * ordered before the next round's seq_cst load of `wake` (monitor.h,
	 * on waiting for rounds). Every round but the final ones publishes
	 * once, so the count grows by one a round. */
	atomic_store_explicit(&gt_mon.pub[STAT_rounds], v[STAT_rounds], memory_order_seq_cst);
}

/*
 * Sleeps up to @ns unless a stop is pending. @w is the value of
 * `wake` read at the start of the round that found nothing. No wake-up is
 * lost: a waker (poke) first publishes its work (records committed, the
 * stop flag), then increments `wake`, then loads `asleep`, all
 * seq_cst. If its increment precedes the monitor's read of @w, the round
 * that followed saw its work. Otherwise `wake` != @w, and the futex wait,
 * which compares the two atomically with going to sleep, either returns at
 * once or is already asleep when the waker, seeing asleep = 1, wakes it.
 */
static void monitor__sleep(uint64_t ns, uint32_t w)
{
	struct timespec ts = ns_to_ts(ns);

	atomic_store_explicit(&gt_mon.asleep, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&gt_mon.stop_req, memory_order_seq_cst)) {
		futex(&gt_mon.wake, FUTEX_WAIT_PRIVATE, w, &ts);
		gt_mon.priv.sleeps++;
	}
	/* Relaxed: a hint; a waker that still reads 1 makes one spare call. */
	atomic_store_explicit(&gt_mon.asleep, 0, memory_order_relaxed);
}

/* At the end: what never matched is counted, and the map's memory freed. */
static void monitor__leftovers(void)
{
	/* Syncs still waiting are blamed with what is known. */
	gt_blame__fini();
	gt_mon.priv.unmeasured = 0;
	for (uint32_t i = 0; i < gt_mon.map.cap; i++)
		if (gt_mon.map.slots[i].id && gt_mon.map.slots[i].owner)
			gt_mon.priv.unmeasured++;
	gt_mon.priv.unmatched += gt_mon.map.parked;
	monitor__publish();
	gt_corrmap__fini(&gt_mon.map);
	gt_streams__fini();
}

static void *monitor__main(void *arg)
{
	uint64_t idle = GT_MONITOR_IDLE_MIN_NS;

	(void)arg;
	/* Named for the user's top and debugger, and for the fault matrix,
	 * which starves this thread to check what the budgets bound. */
	pthread_setname_np(pthread_self(), "gputool-monitor");
	for (;;) {
		/* Seq_cst: pairs with the wakers' increments; see monitor__sleep
		 * and, for waiting on a round, gt_monitor__stats. */
		uint32_t w = atomic_load_explicit(&gt_mon.wake, memory_order_seq_cst);
		/* Acquire: pairs with the release store in gt_monitor__stop, after
		 * which the backends have delivered everything. */
		int stop = atomic_load_explicit(&gt_mon.stop_req, memory_order_acquire);
		uint64_t n = monitor__round();

		if (stop) {
			for (int i = 0; n && i < FINAL_ROUNDS; i++)
				n = monitor__round();
			break;
		}
		monitor__publish();
		if (gt_mon.want_poll) {
			uint64_t now = gt_clock__now();

			/* What the syncs wait for has completed: the backends
			 * hand it over here, not on the application's threads. */
			if (now - gt_mon.last_poll >= GT_MONITOR_POLL_NS) {
				gt_mon.want_poll = 0;
				gt_mon.last_poll = now;
				gt_backend__poll_all();
				continue;
			}
		}
		if (n) {
			idle = GT_MONITOR_IDLE_MIN_NS;
			continue;
		}
		monitor__sleep(idle, w);
		idle = idle * 2 < GT_MONITOR_IDLE_MAX_NS ? idle * 2 : GT_MONITOR_IDLE_MAX_NS;
	}
	monitor__leftovers();
	return NULL;
}

/* ---- lifecycle ---- */

static void monitor__atfork_child(void)
{
	/* The monitor thread does not exist in the child: switch everything
	 * off, so that nothing waits for it and no channel fills up. */
	atomic_store_explicit(&gt_mon.state, MON_STOPPED, memory_order_release);
	gt_backend__atfork_child();
	gt_blame__atfork_child();
}

static void monitor__start_once(void)
{
	sigset_t all, old;
	int err;

	gt_corrmap__init(&gt_mon.map, GT_MONITOR_PENDING_MAX);
	gt_blame__init();
	/* The monitor takes no signal meant for the application: it starts
	 * with every signal blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&gt_mon.thread, NULL, monitor__main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		gt_mon.start_err = -err;
		gt_warn("gpu", "monitor thread not started (%s); GPU operations are not measured",
			strerror(err));
		return;
	}
	pthread_atfork(NULL, NULL, monitor__atfork_child);
	/* Registered once the thread runs; see docs/MONITOR.md, "Exit". */
	gt_tool__on_stop(gt_monitor__stop);
	/* Release: pairs with the acquire load in every entry point. */
	atomic_store_explicit(&gt_mon.state, MON_RUNNING, memory_order_release);
}

int gt_monitor__start(void)
{
	pthread_once(&gt_mon.once, monitor__start_once);
	return gt_mon.start_err;
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

	atomic_store_explicit(&gt_mon.closing, 1, memory_order_seq_cst);
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
			gt_mon.priv.finalized +=
				gt_bichannel__drain(g->to_thread, gt_monitor__apply, t);
	}
	atomic_store_explicit(&gt_mon.pub[STAT_finalized], gt_mon.priv.finalized, memory_order_relaxed);
}

/*
 * From the stop on, the exit waits for the monitor: it runs at the stopping
 * thread's scheduling policy, whatever was made of it meanwhile (a monitor
 * moved to SCHED_IDLE on a busy machine would make the exit last as long as
 * the machine stays busy).
 */
static void monitor__lift(void)
{
	struct sched_param sp;
	int policy;

	if (!pthread_getschedparam(pthread_self(), &policy, &sp))
		pthread_setschedparam(gt_mon.thread, policy, &sp);
}

void gt_monitor__stop(void)
{
	int expected = MON_RUNNING;

	/* Acq_rel: one stopper; it sees what start published. */
	if (!atomic_compare_exchange_strong_explicit(&gt_mon.state, &expected, MON_STOPPING,
						     memory_order_acq_rel, memory_order_acquire))
		return;
	monitor__lift();
	/* Backends deliver their last activities while the monitor runs. */
	gt_backend__stop_all();
	/* Release: pairs with the monitor's acquire load; everything the
	 * backends delivered precedes its final rounds. */
	atomic_store_explicit(&gt_mon.stop_req, 1, memory_order_release);
	gt_monitor__poke();
	pthread_join(gt_mon.thread, NULL);
	monitor__finalize();
	gt_backend__settle_all();
	atomic_store_explicit(&gt_mon.state, MON_STOPPED, memory_order_release);
	/* Operations whose activity never came (the lost ones are counted
	 * where they are lost). */
	gt_tool__unmeasured_ops(gt_mon.priv.unmeasured);
	if (gt_mon.priv.unmatched || gt_mon.priv.unmeasured || gt_mon.priv.lost || gt_mon.priv.evicted)
		gt_info("gpu",
			"monitor: %llu operations measured; %llu activities unmatched, %llu "
			"correlations unmeasured, %llu records lost",
			(unsigned long long)gt_mon.priv.measurements,
			(unsigned long long)gt_mon.priv.unmatched,
			(unsigned long long)gt_mon.priv.unmeasured, (unsigned long long)gt_mon.priv.lost);
}

void gt_monitor__stats(struct gt_monitor_stats *s)
{
	uint32_t n = gt_thread__count();
	/* Seq_cst, first: pairs with the store in monitor__publish; the other
	 * counters are then at least those of that round. */
	uint64_t rounds = atomic_load_explicit(&gt_mon.pub[STAT_rounds], memory_order_seq_cst);

#define X(field, desc) \
	s->field = atomic_load_explicit(&gt_mon.pub[STAT_##field], memory_order_relaxed);
	GT_MONITOR_STATS(X)
#undef X
	s->rounds = rounds;
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
