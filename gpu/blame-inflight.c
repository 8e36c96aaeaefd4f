/* SPDX-License-Identifier: MIT */
/*
 * The blame state other threads touch (gpu/blame-internal.h): the in-flight
 * counters of the devices, the sampling hook that reads them, and the
 * thread side of a sync. The rest of blame shifting is the monitor's
 * (gpu/blame.c).
 */
#include "gpu/blame.h"

#include <stdalign.h>
#include <stdatomic.h>

#include "core/cct.h"
#include "core/thread.h"
#include "gpu/blame-internal.h"
#include "gpu/monitor-internal.h"
#include "gpu/monitor.h"

/* ---- in flight: any thread ---- */

/*
 * Operations counted in flight on each device. Incremented (relaxed RMW) by
 * the launching thread before it commits the correlation; decremented
 * (relaxed RMW) by the monitor when the last activity arrived, which the
 * channel's release/acquire orders after the increment; read (relaxed) by
 * sampling handlers, which only need a recent value. One line per device.
 */
static struct {
	alignas(64) _Atomic int64_t n;
	/*
	 * Launches counted on the device so far, and how many of the first of
	 * them a finished device-wide synchronization has covered (the count
	 * when the wait began). covered == launched: the device has nothing
	 * in flight, whether or not the activities have reached the monitor.
	 * Relaxed: a mark taken late or a store seen late only makes the
	 * device look busy a little longer.
	 */
	_Atomic uint64_t launched;
	_Atomic uint64_t covered;
} in_flight[GT_BLAME_MAX_DEVICES];

/* Bit d: some launch on device d was counted. Set once per device (relaxed
 * load, then relaxed RMW); read by sampling handlers and the monitor. */
_Atomic uint64_t gt_blame_used;

void gt_blame__launched(uint32_t device)
{
	uint64_t bit = 1ull << device;

	if (!(atomic_load_explicit(&gt_blame_used, memory_order_relaxed) & bit))
		atomic_fetch_or_explicit(&gt_blame_used, bit, memory_order_relaxed);
	atomic_fetch_add_explicit(&in_flight[device].n, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&in_flight[device].launched, 1, memory_order_relaxed);
}

uint64_t gt_blame__mark(int device)
{
	if (device < 0 || device >= GT_BLAME_MAX_DEVICES)
		return 0;
	return atomic_load_explicit(&in_flight[device].launched, memory_order_relaxed);
}

void gt_blame__covered(int device, uint64_t mark)
{
	uint64_t cur;

	if (device < 0 || device >= GT_BLAME_MAX_DEVICES)
		return;
	cur = atomic_load_explicit(&in_flight[device].covered, memory_order_relaxed);
	while (cur < mark && !atomic_compare_exchange_weak_explicit(&in_flight[device].covered, &cur, mark,
								     memory_order_relaxed, memory_order_relaxed))
		;
}

/* Device d has nothing in flight: every activity arrived, or a finished
 * device-wide wait covered every launch. Async-signal-safe. */
static int dev__idle(int d)
{
	return atomic_load_explicit(&in_flight[d].n, memory_order_relaxed) <= 0 ||
	       atomic_load_explicit(&in_flight[d].covered, memory_order_relaxed) >=
		       atomic_load_explicit(&in_flight[d].launched, memory_order_relaxed);
}

uint64_t gt_blame__used_mask(void)
{
	return atomic_load_explicit(&gt_blame_used, memory_order_relaxed);
}

int64_t gt_blame__in_flight(int device)
{
	if (device < 0 || device >= GT_BLAME_MAX_DEVICES)
		return 0;
	return atomic_load_explicit(&in_flight[device].n, memory_order_relaxed);
}

void gt_blame__unlaunched(uint32_t device)
{
	atomic_fetch_sub_explicit(&in_flight[device].n, 1, memory_order_relaxed);
}

void gt_blame__atfork_child(void)
{
	atomic_store_explicit(&gt_blame_used, 0, memory_order_relaxed);
	for (int d = 0; d < GT_BLAME_MAX_DEVICES; d++) {
		atomic_store_explicit(&in_flight[d].n, 0, memory_order_relaxed);
		atomic_store_explicit(&in_flight[d].launched, 0, memory_order_relaxed);
		atomic_store_explicit(&in_flight[d].covered, 0, memory_order_relaxed);
	}
}

/*
 * The sampling hook: runs in the sampling signal handler of @t, after the
 * sample's CPU time went to @node. Async-signal-safe: relaxed loads, and
 * the thread's own tree with signal-context allocation. A completion the
 * monitor has not seen yet still counts as in flight, so GPU idleness is
 * under-counted by the monitor's latency (docs/BLAME.md).
 */
void gt_blame__sample(struct gt_thread *t, struct gt_cct_node *node, uint64_t weight)
{
	uint64_t u = atomic_load_explicit(&gt_blame_used, memory_order_relaxed), idle = 0;

	if (!u)
		return;
	for (uint64_t m = u; m; m &= m - 1) {
		int d = __builtin_ctzll(m);

		if (dev__idle(d))
			idle |= 1ull << d;
	}
	if (idle == u)
		gt_cct__add(&t->cct, node, GT_M_GPU_IDLE_CAUSE, weight, 1);
	if (!(u & (u - 1)))
		return; /* one device: the per-device metric would repeat it */
	for (int d = 0; d < GT_BLAME_DEVICE_METRICS; d++)
		if (idle & (1ull << d))
			gt_cct__add(&t->cct, node, (enum gt_metric)(GT_M_GPU_IDLE_CAUSE_D0 + d),
				    weight, 1);
}

/* ---- the thread side of a sync ---- */

void gt_blame__sync(struct gt_thread *t, struct gt_cct_node *sync_node, uint64_t begin_ns,
		    uint64_t end_ns, int device, uint64_t stream)
{
	uint32_t dev = device >= 0 && device < GT_BLAME_MAX_DEVICES ? (uint32_t)device
								    : GT_BLAME_NO_DEVICE;

	if (!t || end_ns <= begin_ns)
		return;
	gt_thread__enter(t);
	gt_cct__add(&t->cct, sync_node ? sync_node : t->cct.root, GT_M_CPU_IDLE,
		    end_ns - begin_ns, 0);
	t->idle_ns += end_ns - begin_ns;
	gt_thread__leave(t);
	/* No wake-up: the monitor holds the sync until its operations'
	 * activities arrive anyway, and a futex wake per sync would cost a
	 * launch-and-wait loop more than the rest of the tool. */
	gt_monitor__send_sync(t, sync_node, begin_ns, end_ns, dev, stream);
}
