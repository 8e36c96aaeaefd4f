/* SPDX-License-Identifier: MIT */
/*
 * The monitor's thread side (see gpu/monitor.h and docs/MONITOR.md): what
 * application and activity threads call to send records to the monitor,
 * apply its measurements, wake it and wait for it. Each thread touches only
 * its own channels; gpu/monitor.c is the monitor thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/blame-internal.h"
#include "gpu/blame.h"
#include "gpu/monitor-state.h"

/* The calling thread's channels, created on first use. Owner only. */
static struct gt_gpu_thread *gpu_thread(struct gt_thread *t)
{
	/* Relaxed: only this thread ever stores it. */
	struct gt_gpu_thread *g = atomic_load_explicit(&t->gpu, memory_order_relaxed);

	if (g)
		return g;
	g = aligned_alloc(alignof(struct gt_gpu_thread), sizeof(*g));
	if (!g)
		return NULL;
	memset(g, 0, sizeof(*g));
	g->thread = t;
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
	atomic_fetch_add_explicit(&gt_mon.generation, 1, memory_order_release);
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
	return gt_monitor__correlate_at(t, placeholder, device, 0);
}

uint64_t gt_monitor__correlate_at(struct gt_thread *t, struct gt_cct_node *placeholder, int device,
				  uint64_t issued_ns)
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
	r->op.start_ns = 0; /* the issue time: not known */
	if (device >= 0 && device < GT_BLAME_MAX_DEVICES) {
		/* Only device operations are compared with their stream's
		 * times (gpu/streams.h): the others skip the clock. */
		r->op.start_ns = issued_ns ? issued_ns : gt_clock__now();
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
void gt_monitor__apply(void *payload, void *arg)
{
	struct gt_thread *t = arg;
	struct mon_measurement *m = payload;

	if (m->type == MEAS_BLAME)
		gt_device_op__add(&t->cct, m->placeholder, &m->op, (enum gt_metric)m->metric,
				  m->value);
	else
		gt_device_op__attribute_gap(&t->cct, m->placeholder, &m->op, m->value);
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
	if (atomic_load_explicit(&gt_mon.closing, memory_order_seq_cst)) {
		atomic_store_explicit(&g->draining, 0, memory_order_release);
		return 0;
	}
	gt_thread__enter(t);
	n = gt_bichannel__drain(g->to_thread, gt_monitor__apply, t);
	gt_thread__leave(t);
	g->consumed += n;
	/* Release: pairs with the finalizer's acquire load. */
	atomic_store_explicit(&g->draining, 0, memory_order_release);
	return n;
}

/* ---- waking ---- */

void gt_monitor__poke(void)
{
	/* Call after publishing the work; see monitor__sleep for why no
	 * wake-up is lost. */
	atomic_fetch_add_explicit(&gt_mon.wake, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&gt_mon.asleep, memory_order_seq_cst))
		futex(&gt_mon.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void gt_monitor__notify(void)
{
	if (gt_monitor__running())
		gt_monitor__poke();
}
