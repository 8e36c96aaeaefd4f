/* SPDX-License-Identifier: MIT */
/*
 * Memory stays flat: 1,000,000 operations through the monitor (correlate on
 * an application thread, activity on a fake device thread, drain back on the
 * application thread), with at most WINDOW operations in flight, as a
 * program that synchronizes now and then has. The monitor's map, its pending
 * list, every channel's node count and the process's resident memory must
 * stay bounded by the window, not grow with the number of operations.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "channels/bichannel.h"
#include "core/clock.h"
#include "core/thread.h"
#include "gpu/monitor.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

enum {
	OPS = 1000000,
	WINDOW = 1024,
	SAMPLE_EVERY = 100000,
};

static struct gt_bichannel *ids; /* application → device: correlation ids */
static atomic_int device_stop;

static void emit(void *payload, void *arg)
{
	uint64_t id = *(uint64_t *)payload;
	struct gt_device_op op = {
		.correlation = id,
		.kind = GT_DEVOP_COPY,
		.copy = GT_COPY_H2D,
		.start_ns = 1000,
		.end_ns = 1000 + id % 64,
		.bytes = 4096,
	};

	gt_monitor__activity(arg, &op);
}

static void *device_main(void *arg)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);

	(void)arg;
	CHECK(t);
	for (;;) {
		/* Acquire before the drain: after the flag, nothing new comes. */
		int stop = atomic_load_explicit(&device_stop, memory_order_acquire);

		if (gt_bichannel__drain(ids, emit, t)) {
			gt_monitor__notify();
			continue;
		}
		if (stop)
			break;
		sched_yield();
	}
	return NULL;
}

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *ph[4];
	struct gt_monitor_stats s;
	uint64_t measured = 0, copies = 0, t0;
	uint64_t alloc_mid = 0;
	long rss_first = 0;
	pthread_t device;

	CHECK(t);
	CHECK(gt_monitor__start() == 0);
	ids = gt_bichannel__new(sizeof(uint64_t));
	CHECK(ids);
	for (int i = 0; i < 4; i++)
		ph[i] = gt_cct__placeholder(&t->cct,
					    gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME,
							  0x100 + i, 0),
					    GT_PH_GPU_COPY_H2D);
	CHECK(pthread_create(&device, NULL, device_main, NULL) == 0);

	t0 = gt_clock__now();
	for (uint64_t n = 1; n <= OPS; n++) {
		uint64_t *slot;
		uint64_t id;

		measured += gt_monitor__drain(t);
		while (n - 1 - measured >= WINDOW) {
			sched_yield();
			measured += gt_monitor__drain(t);
		}
		id = gt_monitor__correlate(t, ph[n % 4]);
		CHECK(id);
		slot = gt_bichannel__produce_begin(ids);
		CHECK(slot);
		*slot = id;
		gt_bichannel__produce_commit(ids, slot);

		if (n % SAMPLE_EVERY == 0) {
			gt_monitor__stats(&s);
			printf("%8" PRIu64 " ops: map %" PRIu64 "/%" PRIu64 " (peak %" PRIu64
			       "), pending peak %" PRIu64 ", channel nodes %" PRIu64
			       " + %zu, rss %ld KiB\n",
			       n, s.map_size, s.map_capacity, s.map_peak, s.pending_peak,
			       s.channel_allocations, gt_bichannel__allocations(ids), rss_kib());
			if (n == SAMPLE_EVERY)
				rss_first = rss_kib();
			if (n == OPS / 2)
				alloc_mid = s.channel_allocations;
		}
	}
	while (measured < OPS) {
		monitor_test__flush();
		measured += gt_monitor__drain(t);
	}
	printf("%d operations in %.2f s\n", OPS, (double)(gt_clock__now() - t0) / 1e9);
	atomic_store_explicit(&device_stop, 1, memory_order_release);
	pthread_join(device, NULL);

	monitor_test__flush();
	gt_monitor__stats(&s);
	CHECK_EQ_U(s.correlations, OPS);
	CHECK_EQ_U(s.activities, OPS);
	CHECK_EQ_U(s.measurements, OPS);
	CHECK_EQ_U(s.map_size, 0);
	CHECK_EQ_U(s.pending, 0);
	CHECK(s.map_peak <= WINDOW);
	CHECK(s.map_capacity <= 4 * WINDOW);
	CHECK(s.pending_peak <= WINDOW);
	/* Three channels carry at most WINDOW records each at any time (plus
	 * nodes released but not yet seen again by their producer). */
	CHECK(s.channel_allocations <= 4 * WINDOW);
	CHECK(gt_bichannel__allocations(ids) <= 2 * WINDOW);
	CHECK(rss_kib() - rss_first < 8 * 1024);
	printf("channel nodes: %" PRIu64 " at %d ops, %" PRIu64 " at the end\n", alloc_mid,
	       OPS / 2, s.channel_allocations);

	for (int i = 0; i < 4; i++)
		copies += gt_cct__get(ph[i], GT_M_GXCOPY_H2D_COUNT);
	CHECK_EQ_U(copies, OPS);
	gt_monitor__stop();
	gt_bichannel__delete(ids);
	return 0;
}
