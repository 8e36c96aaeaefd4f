/* SPDX-License-Identifier: MIT */
/*
 * End to end through the monitor thread, with a fake device backend.
 *
 * NAPP application threads each issue operations from their own calling
 * contexts: a placeholder under one of 7 call sites, correlated with the
 * monitor. A fake device thread (a registered thread, like a CUPTI
 * buffer-completion thread) delivers an activity for every operation (two
 * for "graph" kernels), in shuffled batches. Before any operation is issued,
 * it delivers the first EARLY activities of each thread, whose ids it
 * predicts, so that they wait in the monitor for their correlation.
 *
 * Each application thread keeps a shadow tree where it charges every
 * operation directly (gt_device_op__attribute); at each synchronization
 * point it flushes the monitor, drains its channel and checks that its tree
 * equals the shadow: every metric on the right node, exactly once. One thread
 * issues a last batch and exits before any of it is measured; the finalizer
 * (gt_monitor__stop) applies those records, checked afterwards.
 *
 * Also checked: the monitor's map and pending list end empty, nothing was
 * dropped, and the channels' node allocations stay within one phase's worth
 * of records however many phases run.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/cct.h"
#include "core/clock.h"
#include "core/thread.h"
#include "gpu/device-op.h"
#include "gpu/monitor-internal.h"
#include "gpu/monitor.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

#ifndef TEST_OPS
#define TEST_OPS 1500 /* operations per thread per phase */
#endif

enum {
	NAPP = 4,
	EXITER = NAPP - 1, /* issues one phase, then HELD operations, then exits */
	PHASES = 6,
	OPS = TEST_OPS,
	EARLY = 48,
	HELD = TEST_OPS / 2,
	SITES = 7,
	BATCH = 256,
};

/* What operation number seq of a thread is; the device derives the same. */
enum op_type {
	T_KERNEL_AXPY,
	T_KERNEL_REDUCE,
	T_COPY_H2D,
	T_COPY_D2H,
	T_COPY_D2D,
	T_COPY_OTHER,
	T_MEMSET,
	T_ALLOC,
	T_FREE,
	T_SYNC,
	T_KERNEL_AT_FRAME, /* issued at the call site itself, not at a placeholder */
	T_KERNEL_GRAPH,	   /* two activities for one correlation */
	T__N,
};

static const char name_axpy[] = "axpy";
static const char name_reduce[] = "reduce";
static const char name_stencil[] = "stencil";
static const char name_graph_a[] = "graph_a";
static const char name_graph_b[] = "graph_b";

static unsigned type_of(uint64_t seq)
{
	return (unsigned)(seq % T__N);
}

static unsigned parts_of(uint64_t seq)
{
	return type_of(seq) == T_KERNEL_GRAPH ? 2 : 1;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Activity @part of operation @id, as the device reports it. */
static void make_op(uint64_t id, unsigned part, struct gt_device_op *op)
{
	uint64_t seq = id & GT_CORRELATION_SEQ_MASK;
	uint64_t h = mix(id * 2 + part);

	memset(op, 0, sizeof(*op));
	op->correlation = id;
	op->start_ns = 1000000 + (h & 0xffff);
	op->end_ns = op->start_ns + 100 + (h >> 20) % 5000;
	op->bytes = 1 + (h >> 40) % 100000;
	op->stream = h % 4;
	switch (type_of(seq)) {
	case T_KERNEL_AXPY:
	case T_KERNEL_REDUCE:
	case T_KERNEL_AT_FRAME:
	case T_KERNEL_GRAPH:
		op->kind = GT_DEVOP_KERNEL;
		op->bytes = 0;
		op->name = type_of(seq) == T_KERNEL_AXPY     ? name_axpy
			   : type_of(seq) == T_KERNEL_REDUCE ? name_reduce
			   : type_of(seq) == T_KERNEL_AT_FRAME
				   ? (seq % 2 ? name_stencil : NULL)
				   : (part ? name_graph_b : name_graph_a);
		op->launch = (struct gt_kernel_launch){
			.grid = { 1 + (uint32_t)(h % 7), 2, 1 },
			.block = { 32 * (1 + (uint32_t)(h >> 8) % 4), 1, 1 },
			.registers = 16 + (uint32_t)(h >> 12) % 32,
			.static_shared = (uint32_t)(h >> 16) % 4096,
			.dynamic_shared = (uint32_t)(h >> 24) % 2048,
			.occupancy = (uint32_t)(h >> 32) % 1001,
		};
		if (type_of(seq) == T_KERNEL_GRAPH && part == 0)
			op->flags = GT_DEVOP_F_MORE;
		break;
	case T_COPY_H2D:
	case T_COPY_D2H:
	case T_COPY_D2D:
	case T_COPY_OTHER:
		op->kind = GT_DEVOP_COPY;
		op->copy = type_of(seq) == T_COPY_H2D	  ? GT_COPY_H2D
			   : type_of(seq) == T_COPY_D2H ? GT_COPY_D2H
			   : type_of(seq) == T_COPY_D2D ? GT_COPY_D2D
							: GT_COPY_OTHER;
		break;
	case T_MEMSET:
		op->kind = GT_DEVOP_MEMSET;
		break;
	case T_ALLOC:
		op->kind = GT_DEVOP_ALLOC;
		break;
	case T_FREE:
		op->kind = GT_DEVOP_FREE;
		break;
	default:
		op->kind = GT_DEVOP_SYNC;
		op->bytes = 0;
		break;
	}
}

/* Where operation @seq is issued in @cct: a placeholder under a call site. */
static struct gt_cct_node *site_of(struct gt_cct *cct, uint64_t seq)
{
	static const enum gt_placeholder ph[T__N] = {
		[T_KERNEL_AXPY] = GT_PH_GPU_KERNEL,   [T_KERNEL_REDUCE] = GT_PH_GPU_KERNEL,
		[T_COPY_H2D] = GT_PH_GPU_COPY_H2D,    [T_COPY_D2H] = GT_PH_GPU_COPY_D2H,
		[T_COPY_D2D] = GT_PH_GPU_COPY_D2D,    [T_COPY_OTHER] = GT_PH_GPU_COPY,
		[T_MEMSET] = GT_PH_GPU_MEMSET,	      [T_ALLOC] = GT_PH_GPU_ALLOC,
		[T_FREE] = GT_PH_GPU_FREE,	      [T_SYNC] = GT_PH_GPU_SYNC,
		[T_KERNEL_GRAPH] = GT_PH_GPU_KERNEL,
	};
	struct gt_cct_node *frame =
		gt_cct__child(cct, cct->root, GT_NODE_FRAME, 0x1000 + seq % SITES, 0);

	if (type_of(seq) == T_KERNEL_AT_FRAME)
		return frame;
	return gt_cct__placeholder(cct, frame, ph[type_of(seq)]);
}

struct app {
	pthread_t pthread;
	int slot;
	struct gt_thread *t;
	uint32_t index;
	/* Seqs 1..early were delivered by the device before being issued. */
	uint64_t early;
	/* Published by the app (release), read by the device (acquire). */
	_Atomic uint64_t issued;
	/* Published by the device (release): activities up to this seq sent. */
	_Atomic uint64_t acked;
	/* The exiter's last seq; main publishes it once the thread is gone. */
	uint64_t held_final;
	uint64_t held_records;

	struct gt_arena shadow_arena;
	struct gt_cct shadow;
	/* Sums computed without gt_device_op__attribute. */
	uint64_t kernel_ns, kernel_count, h2d_bytes, d2h_bytes, d2d_bytes, other_bytes,
		alloc_bytes, sync_count;
	size_t allocations[PHASES];
};

static struct app apps[NAPP];
static pthread_barrier_t announced, go;
static atomic_int device_stop;

static size_t channel_allocations(struct gt_thread *t)
{
	struct gt_gpu_thread *g = atomic_load_explicit(&t->gpu, memory_order_acquire);

	if (!g)
		return 0;
	return gt_bichannel__allocations(g->to_monitor) + gt_bichannel__allocations(g->to_thread);
}

static void pause_briefly(void)
{
	struct timespec ts = { 0, 20000 };

	nanosleep(&ts, NULL);
}

/* ---- checks ---- */

static unsigned n_metrics(const struct gt_cct_node *n)
{
	unsigned k = 0;

	for (const struct gt_metric_cell *c = n->metrics; c; c = c->next)
		k++;
	return k;
}

static const struct gt_cct_node *find_child(const struct gt_cct_node *n, uint32_t kind,
					    uint64_t key)
{
	for (const struct gt_cct_node *c = n->children; c; c = c->sibling)
		if (c->kind == kind && c->key == key)
			return c;
	return NULL;
}

/* Every node of @exp exists in @real with the same metrics. */
static void check_subtree(const struct gt_cct_node *real, const struct gt_cct_node *exp)
{
	for (const struct gt_metric_cell *c = exp->metrics; c; c = c->next)
		CHECK_EQ_U(gt_cct__get(real, c->metric), c->value);
	CHECK_EQ_U(n_metrics(real), n_metrics(exp));
	for (const struct gt_cct_node *e = exp->children; e; e = e->sibling) {
		const struct gt_cct_node *r = find_child(real, e->kind, e->key);

		CHECK(r != NULL);
		check_subtree(r, e);
	}
}

static void sum_visit(struct gt_cct_node *n, void *arg)
{
	uint64_t *sum = arg;

	for (struct gt_metric_cell *c = n->metrics; c; c = c->next)
		sum[c->metric] += c->value;
}

/* @real holds exactly what @exp holds: same nodes, and no metric elsewhere. */
static void check_tree(struct gt_cct *real, struct gt_cct *exp)
{
	uint64_t a[GT_M__COUNT] = { 0 }, b[GT_M__COUNT] = { 0 };

	check_subtree(real->root, exp->root);
	gt_cct__walk(real->root, sum_visit, a);
	gt_cct__walk(exp->root, sum_visit, b);
	for (int m = 0; m < GT_M__COUNT; m++)
		CHECK_EQ_U(a[m], b[m]);
}

static void check_totals(struct app *a, struct gt_cct *real)
{
	uint64_t s[GT_M__COUNT] = { 0 };

	gt_cct__walk(real->root, sum_visit, s);
	CHECK_EQ_U(s[GT_M_GKER], a->kernel_ns);
	CHECK_EQ_U(s[GT_M_GKER_COUNT], a->kernel_count);
	CHECK_EQ_U(s[GT_M_GXCOPY_H2D_BYTES], a->h2d_bytes);
	CHECK_EQ_U(s[GT_M_GXCOPY_D2H_BYTES], a->d2h_bytes);
	CHECK_EQ_U(s[GT_M_GXCOPY_D2D_BYTES], a->d2d_bytes);
	CHECK_EQ_U(s[GT_M_GXCOPY_OTHER_BYTES], a->other_bytes);
	CHECK_EQ_U(s[GT_M_GMEM_BYTES], a->alloc_bytes);
	CHECK_EQ_U(s[GT_M_GSYNC_COUNT], a->sync_count);
}

/* ---- the application threads ---- */

static void expect(struct app *a, uint64_t id, uint64_t seq)
{
	for (unsigned part = 0; part < parts_of(seq); part++) {
		struct gt_device_op op;

		make_op(id, part, &op);
		CHECK(gt_device_op__attribute(&a->shadow, site_of(&a->shadow, seq), &op) == 0);
		if (op.kind == GT_DEVOP_KERNEL) {
			a->kernel_ns += op.end_ns - op.start_ns;
			a->kernel_count++;
		} else if (op.kind == GT_DEVOP_COPY) {
			uint64_t *b[] = { &a->other_bytes, &a->h2d_bytes, &a->d2h_bytes,
					  &a->d2d_bytes };

			*b[op.copy] += op.bytes;
		} else if (op.kind == GT_DEVOP_ALLOC) {
			a->alloc_bytes += op.bytes;
		} else if (op.kind == GT_DEVOP_SYNC) {
			a->sync_count++;
		}
	}
}

/* What a backend does at a device API call. */
static void issue(struct app *a, uint64_t seq, int publish)
{
	struct gt_cct_node *ph;
	uint64_t id;

	gt_monitor__drain(a->t);
	gt_thread__enter(a->t);
	ph = site_of(&a->t->cct, seq);
	gt_thread__leave(a->t);
	id = gt_monitor__correlate(a->t, ph);
	CHECK(id == gt_correlation__make(a->index, seq));
	expect(a, id, seq);
	if (publish)
		atomic_store_explicit(&a->issued, seq, memory_order_release);
}

/* What a backend does at a synchronization point, then the check. */
static void sync_point(struct app *a, uint64_t seq)
{
	while (atomic_load_explicit(&a->acked, memory_order_acquire) < seq)
		pause_briefly();
	monitor_test__flush();
	gt_monitor__drain(a->t);
	check_tree(&a->t->cct, &a->shadow);
}

static void *app_main(void *arg)
{
	struct app *a = arg;
	int phases = a->slot == EXITER ? 1 : PHASES;
	uint64_t seq = 0;

	a->t = gt_thread__self(GT_THREAD_WORKER);
	CHECK(a->t);
	a->index = a->t->index;
	a->early = a->slot == EXITER ? 0 : EARLY;
	gt_arena__init(&a->shadow_arena);
	gt_cct__init(&a->shadow, &a->shadow_arena);
	pthread_barrier_wait(&announced);
	pthread_barrier_wait(&go);

	for (int p = 0; p < phases; p++) {
		for (int k = 0; k < OPS; k++)
			issue(a, ++seq, 1);
		sync_point(a, seq);
		a->allocations[p] = channel_allocations(a->t);
	}
	if (a->slot == EXITER) {
		/* Issued, never delivered while this thread lives. */
		for (int k = 0; k < HELD; k++) {
			issue(a, ++seq, 0);
			a->held_records += parts_of(seq);
		}
		a->held_final = seq;
		gt_thread__exit(a->t);
	}
	return NULL;
}

/* ---- the fake device ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void deliver(struct gt_thread *t, uint64_t *ids, size_t n)
{
	/* Shuffled across threads and operations; the parts of one operation
	 * stay in order (the last one has no GT_DEVOP_F_MORE). */
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next_rand() % i);
		uint64_t x = ids[i - 1];

		ids[i - 1] = ids[j];
		ids[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t seq = ids[i] & GT_CORRELATION_SEQ_MASK;

		for (unsigned part = 0; part < parts_of(seq); part++) {
			struct gt_device_op op;

			make_op(ids[i], part, &op);
			gt_monitor__activity(t, &op);
		}
	}
	if (n)
		gt_monitor__notify();
}

static void *device_main(void *arg)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	uint64_t emitted[NAPP] = { 0 };
	uint64_t ids[BATCH];
	uint64_t parked = 0, parked_ids = 0;
	struct gt_monitor_stats s;
	size_t n = 0;

	(void)arg;
	CHECK(t);
	pthread_barrier_wait(&announced);
	/* Before anything is issued: activities whose ids are predicted. */
	for (int i = 0; i < NAPP; i++) {
		for (uint64_t seq = 1; seq <= apps[i].early; seq++) {
			ids[n++] = gt_correlation__make(apps[i].index, seq);
			parked += parts_of(seq);
			parked_ids++;
			if (n == BATCH) {
				deliver(t, ids, n);
				n = 0;
			}
		}
		emitted[i] = apps[i].early;
	}
	deliver(t, ids, n);
	monitor_test__flush();
	gt_monitor__stats(&s);
	CHECK_EQ_U(s.pending, parked);
	CHECK_EQ_U(s.map_size, parked_ids);
	CHECK_EQ_U(s.early, parked);
	pthread_barrier_wait(&go);

	for (;;) {
		n = 0;
		for (int i = 0; i < NAPP; i++) {
			uint64_t upto = atomic_load_explicit(&apps[i].issued, memory_order_acquire);

			while (emitted[i] < upto && n < BATCH)
				ids[n++] = gt_correlation__make(apps[i].index, ++emitted[i]);
		}
		deliver(t, ids, n);
		for (int i = 0; i < NAPP; i++)
			atomic_store_explicit(&apps[i].acked, emitted[i], memory_order_release);
		if (n)
			continue;
		if (atomic_load_explicit(&device_stop, memory_order_acquire))
			break;
		pause_briefly();
	}
	return NULL;
}

int main(void)
{
	struct gt_monitor_stats s;
	pthread_t device;
	struct app *x = &apps[EXITER];
	uint64_t ops = 0, activities = 0, t0 = gt_clock__now();

	CHECK(gt_monitor__start() == 0);
	CHECK(gt_monitor__start() == 0);
	pthread_barrier_init(&announced, NULL, NAPP + 1);
	pthread_barrier_init(&go, NULL, NAPP + 1);
	for (int i = 0; i < NAPP; i++) {
		apps[i].slot = i;
		CHECK(pthread_create(&apps[i].pthread, NULL, app_main, &apps[i]) == 0);
	}
	CHECK(pthread_create(&device, NULL, device_main, NULL) == 0);

	/* The exiter is gone before its last operations are delivered. */
	pthread_join(x->pthread, NULL);
	CHECK(atomic_load_explicit(&x->t->exited, memory_order_acquire));
	atomic_store_explicit(&x->issued, x->held_final, memory_order_release);
	for (int i = 0; i < NAPP; i++)
		if (i != EXITER)
			pthread_join(apps[i].pthread, NULL);
	while (atomic_load_explicit(&x->acked, memory_order_acquire) < x->held_final)
		pause_briefly();
	atomic_store_explicit(&device_stop, 1, memory_order_release);
	pthread_join(device, NULL);

	for (int i = 0; i < NAPP; i++) {
		uint64_t last = i == EXITER ? x->held_final : (uint64_t)PHASES * OPS;

		ops += last;
		for (uint64_t seq = 1; seq <= last; seq++)
			activities += parts_of(seq);
	}
	monitor_test__flush();
	gt_monitor__stats(&s);
	CHECK_EQ_U(s.correlations, ops);
	CHECK_EQ_U(s.activities, activities);
	CHECK_EQ_U(s.measurements, activities);
	CHECK_EQ_U(s.map_size, 0);
	CHECK_EQ_U(s.pending, 0);
	CHECK_EQ_U(s.unmatched + s.evicted + s.lost + s.thread_lost, 0);
	CHECK_EQ_U(s.threads, NAPP + 1);

	gt_monitor__stop();
	gt_monitor__stop();
	gt_monitor__stats(&s);
	CHECK_EQ_U(s.finalized, x->held_records);
	CHECK_EQ_U(s.unmeasured, 0);
	CHECK_EQ_U(s.map_size, 0);
	CHECK(!gt_monitor__running());
	CHECK_EQ_U(gt_monitor__correlate(gt_thread__self(GT_THREAD_INITIAL), NULL), 0);

	for (int i = 0; i < NAPP; i++) {
		check_tree(&apps[i].t->cct, &apps[i].shadow);
		check_totals(&apps[i], &apps[i].t->cct);
	}

	/* Allocations: bounded by one phase's records, not by the run. */
	printf("channel nodes per thread after each phase:");
	for (int i = 0; i < NAPP; i++) {
		printf("\n  thread %d:", i);
		for (int p = 0; p < (i == EXITER ? 1 : PHASES); p++)
			printf(" %zu", apps[i].allocations[p]);
		/* to_monitor: at most one phase of correlations; to_thread: at
		 * most one phase of measurements (two for graph kernels). */
		CHECK(channel_allocations(apps[i].t) <=
		      (size_t)OPS * 3 + EARLY * 2 + (i == EXITER ? x->held_records : 0));
	}
	printf("\n  all threads, device included: %" PRIu64 " (%" PRIu64 " records sent)\n",
	       s.channel_allocations, ops + 2 * activities);
	CHECK(s.channel_allocations <= (uint64_t)NAPP * (OPS * 2 + EARLY * 2) * 3 + HELD * 2);
	printf("%" PRIu64 " operations, %" PRIu64 " activities, %" PRIu64
	       " waited for their correlation, %" PRIu64 " applied at exit; map peak %" PRIu64
	       ", pending peak %" PRIu64 ", %" PRIu64 " rounds, %" PRIu64 " sleeps; %.2f s\n",
	       ops, activities, s.early, s.finalized, s.map_peak, s.pending_peak, s.rounds,
	       s.sleeps, (double)(gt_clock__now() - t0) / 1e9);
	return 0;
}
