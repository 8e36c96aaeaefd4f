/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_MONITOR_H
#define GT_GPU_MONITOR_H

/*
 * The GPU monitor thread (ICS'20 §3.2): one per process. It matches what
 * application threads issued (correlation records) with what devices
 * completed (activity records) and sends the result back to the issuing
 * thread (measurement records), which charges it to its own calling-context
 * tree. See docs/MONITOR.md.
 *
 *   application thread T                        monitor thread
 *   ────────────────────                        ──────────────
 *   id = gt_monitor__correlate(T, P) ─ T.to_monitor ─► map: id → (T, P)
 *   activity thread A (any registered thread)              │
 *   gt_monitor__activity(A, op) ───── A.to_monitor ─► look up op->correlation,
 *                                                          │ remove the entry
 *   gt_monitor__drain(T) ◄──────────── T.to_thread ◄── {P, op}
 *     gt_device_op__attribute(T's tree, P, op)
 *
 * Each arrow is a gt_bichannel (channels/bichannel.h): wait-free for both
 * sides, nodes recycled through its return direction. Only T writes T's tree;
 * the monitor never touches a tree. The finalizer (gt_monitor__stop) applies
 * what is left at exit, for live and exited threads alike.
 *
 * Every call taking a struct gt_thread *t must be made by that thread
 * (t == gt_thread__self(...)): t's channels have exactly one producer and
 * one consumer.
 */

#include <stddef.h>
#include <stdint.h>

#include "core/cct.h"
#include "gpu/device-op.h"

struct gt_thread;

/*
 * A correlation id: the issuing thread's index in the high bits, a
 * per-thread sequence number (from 1) in the low bits. Unique for the
 * process without a shared counter, and it names the thread that owns the
 * operation. 0 is never an id.
 */
#define GT_CORRELATION_SEQ_BITS 44
#define GT_CORRELATION_SEQ_MASK ((UINT64_C(1) << GT_CORRELATION_SEQ_BITS) - 1)

static inline uint64_t gt_correlation__make(uint32_t thread_index, uint64_t seq)
{
	return ((uint64_t)thread_index << GT_CORRELATION_SEQ_BITS) |
	       (seq & GT_CORRELATION_SEQ_MASK);
}

static inline uint32_t gt_correlation__thread(uint64_t id)
{
	return (uint32_t)(id >> GT_CORRELATION_SEQ_BITS);
}

/*
 * Starts the monitor thread, once; later calls return the first result.
 * Thread-safe. Registers gt_monitor__stop with gt_tool__on_stop. Returns 0
 * or a negative errno. Backends normally call gt_backend__register instead.
 */
int gt_monitor__start(void);

/*
 * At exit (registered with gt_tool__on_stop; tests call it directly): flushes
 * and stops every registered backend, lets the monitor process everything
 * delivered, joins it, then applies every thread's remaining measurement
 * records on the calling thread. Idempotent. After it, correlate and activity
 * do nothing and drain returns 0.
 */
void gt_monitor__stop(void);

/* 1 while correlations and activities are accepted. */
int gt_monitor__running(void);

/*
 * Issues a correlation id for an operation that @t is about to hand to a
 * device and sends {id, @placeholder} to the monitor. @placeholder is a node
 * of @t's own tree (NULL: the root). Returns 0 when the monitor is not
 * running or memory ran out (the operation then goes unmeasured).
 * Wait-free; allocates only while @t's channel grows to its working size.
 */
uint64_t gt_monitor__correlate(struct gt_thread *t, struct gt_cct_node *placeholder);

/*
 * gt_monitor__correlate for an operation that will run on @device (the
 * number the backend puts in gt_device_op.device; < GT_BLAME_MAX_DEVICES):
 * also counts it in flight on @device until its last activity reaches the
 * monitor. Blame shifting (gpu/blame.h) needs it for kernels, copies and
 * memsets: syncs wait for the operations counted, and samples taken while
 * no device has anything in flight are GPU_IDLE_CAUSE. A @device out of
 * range (e.g. -1) counts nothing. Every operation counted must get its
 * activity (one without GT_DEVOP_F_MORE last), or its device looks busy
 * until exit. Wait-free.
 */
uint64_t gt_monitor__correlate_device(struct gt_thread *t, struct gt_cct_node *placeholder,
				      int device);

/*
 * gt_monitor__correlate_device, the operation issued at @issued_ns
 * (gt_clock__now() time; 0: now). The monitor compares it with the times
 * of the stream's previous operation (gpu/streams.h): a replay of a
 * recording gives the recorded time. An operation not counted on a device
 * (@device out of range) carries no issue time.
 */
uint64_t gt_monitor__correlate_at(struct gt_thread *t, struct gt_cct_node *placeholder, int device,
				  uint64_t issued_ns);

/*
 * Sends a completed operation to the monitor; op->correlation names it. @t
 * is the calling thread (a vendor callback thread registers itself with
 * gt_thread__self(GT_THREAD_OTHER)). Wait-free. The monitor may sleep up to
 * GT_MONITOR_IDLE_MAX_NS before it looks: call gt_monitor__notify after a
 * batch when the results are wanted sooner.
 */
void gt_monitor__activity(struct gt_thread *t, const struct gt_device_op *op);

/* Wakes the monitor if it sleeps. One system call at most; no lock. */
void gt_monitor__notify(void);

/*
 * Applies the measurement records the monitor has sent to @t so far, under
 * gt_thread__enter(t). Call at the next device API call, at synchronization
 * points and at thread end. Returns the number of records applied. Costs two
 * relaxed loads when nothing is waiting. Wait-free.
 */
size_t gt_monitor__drain(struct gt_thread *t);

/*
 * Counters, for tests, benchmarks and the exit summary. The monitor publishes
 * them after every round, `rounds` last (seq_cst store, read first with a
 * seq_cst load); after stop they cover everything delivered.
 *
 * Waiting for rounds: a thread that delivers, then calls gt_monitor__notify
 * (a seq_cst increment of the monitor's wake word) and reads `rounds` = n,
 * finds its deliveries processed once it reads n + 2: the round that
 * published n + 1 came after its read in the seq_cst order, and the next
 * round's first act, a seq_cst load of the wake word, then reads its
 * increment or a later one. The tests wait so (tests/gpu/monitor-test.h);
 * the library itself never waits for the monitor but at stop.
 */
#define GT_MONITOR_STATS(X)                                                          \
	X(correlations, "correlation records received")                             \
	X(activities, "activity records received")                                  \
	X(measurements, "measurement records sent")                                 \
	X(early, "activities that arrived before their correlation and waited")     \
	X(evicted, "waiting activities dropped to stay within the bound")            \
	X(unmatched, "activities never matched (no id, or still waiting at exit)")  \
	X(unmeasured, "correlations with no activity at exit")                      \
	X(lost, "measurement records not sent for lack of memory")                   \
	X(map_size, "correlations waiting for their activity now")                  \
	X(map_capacity, "slots in the correlation map")                             \
	X(map_peak, "most correlations waiting at once")                            \
	X(pending, "activities waiting for their correlation now")                  \
	X(pending_peak, "most activities waiting at once")                          \
	X(threads, "threads that have had channels to the monitor")                 \
	X(retired, "exited threads whose channel the monitor no longer polls")      \
	X(rounds, "monitor rounds")                                                 \
	X(sleeps, "times the monitor slept")                                        \
	X(finalized, "measurement records applied by the finalizer")

struct gt_monitor_stats {
#define X(field, desc) uint64_t field;
	GT_MONITOR_STATS(X)
#undef X
	/* Summed over every thread's channels at the time of the call. */
	uint64_t channel_allocations; /* nodes ever allocated, both directions */
	uint64_t thread_lost;	      /* records threads could not send (no memory) */
};

void gt_monitor__stats(struct gt_monitor_stats *s);

/* Idle sleep of the monitor: doubles from MIN to MAX while rounds find nothing. */
#define GT_MONITOR_IDLE_MIN_NS 20000u
#define GT_MONITOR_IDLE_MAX_NS 1000000u
/* Backends are polled (gt_backend__poll_all) at most this often, when a
 * synchronization has arrived since the last poll. */
#define GT_MONITOR_POLL_NS 10000000u
/* Most activities that may wait for their correlation; beyond, the oldest is dropped. */
#define GT_MONITOR_PENDING_MAX 4096u

#endif
