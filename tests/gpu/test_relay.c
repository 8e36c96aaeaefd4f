/* SPDX-License-Identifier: MIT */
/*
 * Threads that come and go, handing their records on (core/thread.h).
 *
 * GENERATIONS batches of BATCH application threads, each alive with the
 * others of its batch: a thread takes the record of one that ended, drains
 * what the monitor measured for its predecessors, issues OPS copies of known
 * size and ends without waiting for them. A fake device thread delivers each
 * copy's activity at once or late, after its thread has ended, so the
 * monitor meets records that are retired, revived and retired again, with
 * measurements waiting in their channels. At the end the finalizer applies
 * what is left.
 *
 * Every WAITER-th batch only waits (a sync, as cudaDeviceSynchronize with
 * nothing launched), and starts once the monitor has retired every ended
 * record: its records' channels then carry a sync record and nothing the
 * device answers, which only the monitor's rescan of revived records finds.
 *
 * Checked: every byte reaches exactly one tree, on the node of its call
 * site; the monitor saw every sync; the records are as many as the threads
 * alive at once, not as many as ever ran; nothing was lost or unmatched. Under ThreadSanitizer the
 * hand-over between owners and the monitor's reading of it are race free.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/cct.h"
#include "core/thread.h"
#include "core/clock.h"
#include "gpu/blame.h"
#include "gpu/device-op.h"
#include "gpu/monitor.h"
#include "tests/unit/test.h"

#ifndef TEST_GENERATIONS
#define TEST_GENERATIONS 400
#endif

enum {
	GENERATIONS = TEST_GENERATIONS,
	BATCH = 4,
	OPS = 16,
	SITES = 3,
	WAITER = 8,
	RING = 1 << 14, /* ids in flight to the device; more than ever wait */
};

/* Bytes of a copy from site s: distinct per site, so sums identify sites. */
static uint64_t bytes_of(unsigned site)
{
	return 1000u + site;
}

/* Application threads to the device thread: one producer at a time (under
 * the lock), one consumer. */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t id;
	unsigned site;
} ring[RING];
static uint32_t ring_head, ring_tail;
static atomic_int device_stop;
static pthread_barrier_t batch_barrier;

static void ring_put(uint64_t id, unsigned site)
{
	pthread_mutex_lock(&ring_lock);
	CHECK(ring_head - ring_tail < RING);
	ring[ring_head % RING].id = id;
	ring[ring_head++ % RING].site = site;
	pthread_mutex_unlock(&ring_lock);
}

static int ring_get(uint64_t *id, unsigned *site)
{
	int got = 0;

	pthread_mutex_lock(&ring_lock);
	if (ring_tail != ring_head) {
		*id = ring[ring_tail % RING].id;
		*site = ring[ring_tail++ % RING].site;
		got = 1;
	}
	pthread_mutex_unlock(&ring_lock);
	return got;
}

static struct gt_cct_node *site_node(struct gt_thread *t, unsigned site)
{
	struct gt_cct_node *n = gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 0x1000 + site, 0);

	CHECK(n);
	n = gt_cct__placeholder(&t->cct, n, GT_PH_GPU_COPY_H2D);
	CHECK(n);
	return n;
}

static int waits_only(unsigned gen)
{
	return gen % WAITER == WAITER - 1;
}

static void *app_main(void *arg)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	unsigned n = (unsigned)(uintptr_t)arg;

	CHECK(t);
	/* What was measured for the record's earlier threads. */
	gt_monitor__drain(t);
	if (waits_only(n / BATCH)) {
		uint64_t now = gt_clock__now();

		gt_blame__sync(t, NULL, now - 1000, now, 0, 0);
		pthread_barrier_wait(&batch_barrier);
		return NULL;
	}
	for (unsigned i = 0; i < OPS; i++) {
		unsigned site = (n + i) % SITES;
		uint64_t id = gt_monitor__correlate(t, site_node(t, site));

		CHECK(id);
		ring_put(id, site);
	}
	gt_monitor__notify();
	pthread_barrier_wait(&batch_barrier);
	return NULL;
}

static void *device_main(void *arg)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	unsigned n = 0, site;
	uint64_t id;

	(void)arg;
	CHECK(t);
	for (;;) {
		int stop = atomic_load_explicit(&device_stop, memory_order_acquire);

		if (!ring_get(&id, &site)) {
			if (stop)
				break;
			sched_yield();
			continue;
		}
		{
			struct gt_device_op op = {
				.correlation = id,
				.kind = GT_DEVOP_COPY,
				.copy = GT_COPY_H2D,
				.start_ns = 1000,
				.end_ns = 1001,
				.bytes = bytes_of(site),
			};

			gt_monitor__activity(t, &op);
		}
		if (++n % 64 == 0)
			gt_monitor__notify();
	}
	gt_monitor__notify();
	return NULL;
}

struct sums {
	uint64_t bytes[SITES];
	uint64_t count;
};

static void sum_visit(struct gt_cct_node *n, void *arg)
{
	struct sums *s = arg;
	uint64_t b = gt_cct__get(n, GT_M_GXCOPY_H2D_BYTES);

	if (!b)
		return;
	CHECK(n->kind == GT_NODE_PLACEHOLDER && n->parent && n->parent->kind == GT_NODE_FRAME);
	CHECK(n->parent->key >= 0x1000 && n->parent->key < 0x1000 + SITES);
	s->bytes[n->parent->key - 0x1000] += b;
	s->count += gt_cct__get(n, GT_M_GXCOPY_H2D);
}

int main(void)
{
	struct gt_monitor_stats st;
	struct gt_blame_stats bs;
	struct sums s = { { 0 }, 0 };
	uint64_t ops = 0, syncs = 0;
	uint64_t want[SITES] = { 0 };
	pthread_t device, th[BATCH];
	uint32_t records;

	CHECK(gt_monitor__start() == 0);
	gt_thread__self(GT_THREAD_INITIAL);
	CHECK(!pthread_barrier_init(&batch_barrier, NULL, BATCH));
	CHECK(!pthread_create(&device, NULL, device_main, NULL));
	for (unsigned g = 0; g < GENERATIONS; g++) {
		/* Rounds until the monitor polls none of the ended records. */
		for (unsigned spins = 0; waits_only(g) && g; spins++) {
			CHECK(spins < 10000000);
			gt_monitor__stats(&st);
			if (st.retired == BATCH)
				break;
			gt_monitor__notify();
			sched_yield();
		}
		for (int i = 0; i < BATCH; i++)
			CHECK(!pthread_create(&th[i], NULL, app_main, (void *)(uintptr_t)(g * BATCH + (unsigned)i)));
		for (int i = 0; i < BATCH; i++)
			CHECK(!pthread_join(th[i], NULL));
		if (waits_only(g)) {
			syncs += BATCH;
			continue;
		}
		for (int i = 0; i < BATCH; i++)
			for (unsigned k = 0; k < OPS; k++)
				want[(g * BATCH + (unsigned)i + k) % SITES] += bytes_of((g * BATCH + (unsigned)i + k) % SITES);
		ops += BATCH * OPS;
	}
	atomic_store_explicit(&device_stop, 1, memory_order_release);
	CHECK(!pthread_join(device, NULL));
	gt_monitor__stop();

	records = gt_thread__count();
	/* This thread, the device's, and one per thread of a batch. */
	CHECK(records <= BATCH + 2);
	CHECK_EQ_U(gt_thread__reused(), GENERATIONS * BATCH - (records - 2));
	for (uint32_t i = 0; i < records; i++)
		gt_cct__walk(gt_thread__at(i)->cct.root, sum_visit, &s);
	for (unsigned k = 0; k < SITES; k++)
		CHECK_EQ_U(s.bytes[k], want[k]);
	CHECK_EQ_U(s.count, ops);
	gt_blame__stats(&bs);
	CHECK_EQ_U(bs.syncs, syncs);
	gt_monitor__stats(&st);
	CHECK_EQ_U(st.lost, 0);
	CHECK_EQ_U(st.unmatched, 0);
	CHECK_EQ_U(st.unmeasured, 0);
	printf("%u threads in %u records; %llu copies measured, %llu applied by the finalizer\n",
	       GENERATIONS * BATCH, records - 2, (unsigned long long)s.count,
	       (unsigned long long)st.finalized);
	return 0;
}
