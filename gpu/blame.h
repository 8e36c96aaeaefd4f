/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_BLAME_H
#define GT_GPU_BLAME_H

/*
 * CPU-GPU blame shifting, once for every backend (CUDA, OpenCL, OpenMP
 * target, OpenACC), over the device-operation records of the monitor. See
 * docs/BLAME.md.
 *
 *   CPU_IDLE           a thread blocked in a synchronization: the wait, at
 *                      the sync's call site (charged by the thread itself).
 *   CPU_IDLE_CAUSE     the same wait, at the launch sites of the operations
 *                      that ran during it: each time slice is shared equally
 *                      among the operations running in it. Computed on the
 *                      monitor thread once every operation launched before
 *                      the sync has completed, and sent to each operation's
 *                      owner as a measurement record.
 *   CPU_IDLE_OVERHEAD  the slices of the wait in which none of them ran, at
 *                      the sync's call site.
 *   GPU_IDLE_CAUSE     CPU time sampled while no device the process has used
 *                      had anything in flight, at the sample's context;
 *                      GPU_IDLE_CAUSE_D<k> per device k < 4 when the process
 *                      uses several devices.
 *
 * What a backend does:
 *
 *   at a launch      id = gt_monitor__correlate_device(t, P, device);
 *                    counts the operation in flight on @device until its
 *                    last activity reaches the monitor.
 *   at a sync        once the wait returned:
 *                    gt_blame__sync(t, S, begin_ns, end_ns, device, stream);
 *                    the monitor settles it when the activities arrive (the
 *                    backend's poll hands them over, gpu/backend.h).
 *   a device-wide    mark = gt_blame__mark(device) before the wait, and
 *   wait             gt_blame__covered(device, mark) after it: the device
 *                    counts as idle at once, before its activities arrive.
 */

#include <stdatomic.h>
#include <stdint.h>

#include "core/cct.h"

struct gt_thread;

/* Devices are numbered by the backend from 0; blame covers the first 64. */
#define GT_BLAME_MAX_DEVICES 64
/* Devices with a GPU_IDLE_CAUSE_D<k> metric of their own. */
#define GT_BLAME_DEVICE_METRICS 4

/*
 * How long (on the tool's clock, measured by the newest timestamp the
 * monitor has seen) finished operations are kept for syncs whose record has
 * not arrived yet. A sync longer than this loses the blame for the
 * operations that ended more than this before the sync's record reached the
 * monitor (those slices count as CPU_IDLE_OVERHEAD).
 */
#define GT_BLAME_RETAIN_NS 1000000000ull
/* At most this many finished operations (and busy intervals) are kept per
 * device; beyond, the oldest goes first, whatever the time. */
#define GT_BLAME_RETAIN_MAX 131072u
/*
 * A sync waits for the activities of the operations launched before it at
 * most this long (same clock) and at most this many syncs wait at once;
 * beyond either, the oldest is settled with what is known (counted as
 * forced). Bounds memory when an activity never comes.
 */
#define GT_BLAME_PENDING_NS 10000000000ull
#define GT_BLAME_PENDING_MAX 65536u

/*
 * At a synchronization point of @t (the calling thread), after the wait
 * returned: @t waited over [@begin_ns, @end_ns] (gt_clock__now() clock) for
 * @device (-1 or out of range: every device) and @stream (0: every stream
 * of it, else as the backend numbers streams in gt_device_op.stream).
 * @sync_node is the sync's placeholder in @t's tree (NULL: the root).
 *
 * Charges CPU_IDLE to @sync_node at once, then sends the sync to the
 * monitor, which charges CPU_IDLE_CAUSE and CPU_IDLE_OVERHEAD when every
 * operation launched on @device before the sync has completed; they arrive
 * through gt_monitor__drain like any measurement. Wait-free; allocates only
 * while @t's channel grows. Call it outside gt_thread__enter.
 */
void gt_blame__sync(struct gt_thread *t, struct gt_cct_node *sync_node, uint64_t begin_ns,
		    uint64_t end_ns, int device, uint64_t stream);

/*
 * A wait for everything launched on @device so far (cudaDeviceSynchronize,
 * not a stream's or an event's): gt_blame__mark before it begins, then,
 * once it returned, gt_blame__covered with the mark. Until the next launch
 * the device counts as having nothing in flight for GPU_IDLE_CAUSE. Any
 * thread; wait-free.
 */
uint64_t gt_blame__mark(int device);
void gt_blame__covered(int device, uint64_t mark);

/*
 * Operations counted in flight on @device now (launched with
 * gt_monitor__correlate_device, last activity not yet seen by the monitor).
 * Any thread; a relaxed load.
 */
int64_t gt_blame__in_flight(int device);

/* Bit d: some launch on device d was counted (gpu/blame-inflight.c). */
extern _Atomic uint64_t gt_blame_used;

/* Whether the process has launched anything counted on a device: the
 * programming-model layers (OpenMP waits, OpenACC waits) report their syncs
 * only then. Any thread; a relaxed load (inline: OpenMP task creations
 * ask). */
static inline int gt_blame__devices_used(void)
{
	return atomic_load_explicit(&gt_blame_used, memory_order_relaxed) != 0;
}

/*
 * Counters, published by the monitor after each round, before its
 * `rounds` (gt_monitor__stats: read after a wait for rounds, they cover
 * everything delivered before it).
 */
#define GT_BLAME_STATS(X)                                                            \
	X(syncs, "sync records received")                                            \
	X(settled, "syncs blamed once their operations were complete")              \
	X(forced, "syncs blamed with what was known (too old, too many, or exit)")   \
	X(pending, "syncs waiting for operations now")                               \
	X(pending_peak, "most syncs waiting at once")                               \
	X(blamed, "blame records sent")                                              \
	X(retained, "finished operations kept for syncs to come, now")              \
	X(retained_peak, "most finished operations kept at once")                   \
	X(epochs, "epochs of outstanding operations, now (all devices)")             \
	X(epochs_peak, "most epochs at once")                                        \
	X(intervals, "busy intervals not yet summed, now (all devices)")             \
	X(intervals_peak, "most busy intervals at once")                             \
	X(ignored, "operations not blamed (launched without a device)")

struct gt_blame_stats {
#define X(field, desc) uint64_t field;
	GT_BLAME_STATS(X)
#undef X
	/* Time each device executed something (union of its operations), ns:
	 * what has been summed so far (intervals GT_BLAME_RETAIN_NS old), all
	 * of it after gt_monitor__stop. */
	uint64_t busy_ns[GT_BLAME_MAX_DEVICES];
	uint64_t used; /* bit d: the process launched on device d */
};

void gt_blame__stats(struct gt_blame_stats *s);

#endif
