/* SPDX-License-Identifier: MIT */
/*
 * Throughput of the monitor path (gpu/monitor.h) with a fake device backend:
 * per operation, a correlation record (application thread → monitor), an
 * activity record (delivering thread → monitor) and a measurement record
 * (monitor → application thread, applied to its tree by drain): three
 * records through the monitor.
 *
 *   bench_monitor [OPS [REPEATS]]     (default: 2000000 5)
 *
 * OPS operations per application thread per repeat, at most WINDOW in
 * flight per thread (a program that synchronizes now and then). The first
 * repeat warms up; the best of the others is printed, with the nodes the
 * configuration's channels allocated in all and after the first repeat, and
 * the map's slots. Channels and map grow to the most records in flight at
 * once, bounded by WINDOW per channel, never by the number of operations;
 * after warm-up they grow only when a slower consumer lets more records be
 * in flight than before.
 *
 * Configurations, each against the same work done without the monitor:
 *   direct        the application thread charges each operation to its own
 *                 tree itself (gt_device_op__attribute): the floor;
 *   self          one application thread that also delivers its own
 *                 activities (as an OpenCL completion on the same thread);
 *   1 app + dev   one application thread, one device thread delivering;
 *   N apps + dev  N application threads (N = CPUs - 2, at least 2, at most
 *                 8), one device thread.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channels/bichannel.h"
#include "core/clock.h"
#include "core/thread.h"
#include "gpu/monitor.h"
#include "tests/gpu/monitor-test.h"

enum { WINDOW = 4096, MAX_APPS = 8, SITES = 16 };

static const char kernel_name[] = "bench_kernel";

static void fill_op(uint64_t id, struct gt_device_op *op)
{
	memset(op, 0, sizeof(*op));
	op->correlation = id;
	op->start_ns = 1000;
	op->end_ns = 1000 + (id & 1023);
	/* Even sequence numbers are kernels, issued at the odd call sites. */
	if (!(id & 1)) {
		op->kind = GT_DEVOP_KERNEL;
		op->name = kernel_name;
		op->launch.grid[0] = op->launch.grid[1] = op->launch.grid[2] = 1;
		op->launch.block[0] = 128;
		op->launch.block[1] = op->launch.block[2] = 1;
	} else {
		op->kind = GT_DEVOP_COPY;
		op->copy = GT_COPY_H2D;
		op->bytes = 4096;
	}
}

struct app {
	pthread_t pthread;
	struct gt_thread *t;
	struct gt_cct_node *sites[SITES];
	struct gt_bichannel *ids; /* to the device thread; NULL: deliver itself */
	int direct;
};

static struct {
	uint64_t ops;
	int n_apps;
	struct app apps[MAX_APPS];
	pthread_barrier_t start, end;
	atomic_int quit;	/* threads leave after the next barrier */
	atomic_int device_quit; /* the device thread leaves */
} b;

static void pause_ns(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static void app__run(struct app *a)
{
	uint64_t measured = 0;

	for (uint64_t n = 0; n < b.ops; n++) {
		struct gt_cct_node *ph = a->sites[n % SITES];
		struct gt_device_op op;
		uint64_t id;

		if (a->direct) {
			/* What the monitor path ends with, and nothing else. */
			fill_op(n + 1, &op);
			gt_thread__enter(a->t);
			gt_device_op__attribute(&a->t->cct, ph, &op);
			gt_thread__leave(a->t);
			continue;
		}
		measured += gt_monitor__drain(a->t);
		while (n - measured >= WINDOW) {
			sched_yield();
			measured += gt_monitor__drain(a->t);
		}
		id = gt_monitor__correlate(a->t, ph);
		if (!a->ids) {
			fill_op(id, &op);
			gt_monitor__activity(a->t, &op);
			if (n % 256 == 255)
				gt_monitor__notify();
		} else {
			uint64_t *slot = gt_bichannel__produce_begin(a->ids);

			*slot = id;
			gt_bichannel__produce_commit(a->ids, slot);
		}
	}
	while (!a->direct && measured < b.ops) {
		monitor_test__flush();
		measured += gt_monitor__drain(a->t);
	}
}

static void *app_main(void *arg)
{
	struct app *a = arg;

	a->t = gt_thread__self(GT_THREAD_WORKER);
	if (!a->t)
		abort();
	for (int i = 0; i < SITES; i++) {
		struct gt_cct_node *f =
			gt_cct__child(&a->t->cct, a->t->cct.root, GT_NODE_FRAME, 0x1000 + i, 0);

		a->sites[i] = gt_cct__placeholder(&a->t->cct, f,
						  i & 1 ? GT_PH_GPU_KERNEL : GT_PH_GPU_COPY_H2D);
	}
	for (;;) {
		pthread_barrier_wait(&b.start);
		if (atomic_load_explicit(&b.quit, memory_order_acquire))
			return NULL;
		app__run(a);
		pthread_barrier_wait(&b.end);
	}
}

static void emit(void *payload, void *arg)
{
	struct gt_device_op op;

	fill_op(*(uint64_t *)payload, &op);
	gt_monitor__activity(arg, &op);
}

static void *device_main(void *arg)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);

	(void)arg;
	while (!atomic_load_explicit(&b.device_quit, memory_order_acquire)) {
		size_t n = 0;

		for (int i = 0; i < b.n_apps; i++)
			n += gt_bichannel__drain(b.apps[i].ids, emit, t);
		if (n)
			gt_monitor__notify();
		else
			pause_ns(20000);
	}
	return NULL;
}

/* Runs one configuration; returns the best operations per second. */
static double run(const char *label, int n_apps, int device, int direct, int repeats)
{
	pthread_t dev;
	double best = 0;
	uint64_t alloc_base, alloc_warm = 0, cap_warm = 0, ids_warm = 0;
	struct gt_monitor_stats s;

	/* Threads of earlier configurations keep their (idle) channels. */
	gt_monitor__stats(&s);
	alloc_base = s.channel_allocations;

	b.n_apps = n_apps;
	atomic_store(&b.quit, 0);
	atomic_store(&b.device_quit, 0);
	pthread_barrier_init(&b.start, NULL, (unsigned)n_apps + 1);
	pthread_barrier_init(&b.end, NULL, (unsigned)n_apps + 1);
	for (int i = 0; i < n_apps; i++) {
		memset(&b.apps[i], 0, sizeof(b.apps[i]));
		b.apps[i].direct = direct;
		b.apps[i].ids = device ? gt_bichannel__new(sizeof(uint64_t)) : NULL;
		pthread_create(&b.apps[i].pthread, NULL, app_main, &b.apps[i]);
	}
	if (device)
		pthread_create(&dev, NULL, device_main, NULL);

	for (int r = 0; r < repeats; r++) {
		uint64_t t0, t1;

		pthread_barrier_wait(&b.start);
		t0 = gt_clock__now();
		pthread_barrier_wait(&b.end);
		t1 = gt_clock__now();
		if (r == 0) {
			monitor_test__flush();
			gt_monitor__stats(&s);
			alloc_warm = s.channel_allocations;
			cap_warm = s.map_capacity;
			for (int i = 0; i < n_apps; i++)
				ids_warm += device ? gt_bichannel__allocations(b.apps[i].ids) : 0;
			continue;
		}
		double rate = (double)b.ops * n_apps / ((double)(t1 - t0) / 1e9);
		if (rate > best)
			best = rate;
	}
	atomic_store_explicit(&b.quit, 1, memory_order_release);
	pthread_barrier_wait(&b.start);
	for (int i = 0; i < n_apps; i++)
		pthread_join(b.apps[i].pthread, NULL);
	if (device) {
		atomic_store_explicit(&b.device_quit, 1, memory_order_release);
		pthread_join(dev, NULL);
	}

	monitor_test__flush();
	gt_monitor__stats(&s);
	if (direct) {
		printf("%-14s %10.2f M ops/s %8.1f ns/op\n", label, best / 1e6, 1e9 / best);
	} else {
		uint64_t ids_end = 0;

		for (int i = 0; i < n_apps; i++)
			ids_end += device ? gt_bichannel__allocations(b.apps[i].ids) : 0;
		printf("%-14s %10.2f M ops/s %8.1f ns/op %10.2f M records/s   channel nodes "
		       "%" PRIu64 " (+%" PRIu64 " after warm-up), id nodes %" PRIu64 " (+%" PRIu64
		       "), map slots %" PRIu64 " (+%" PRIu64 ")\n",
		       label, best / 1e6, 1e9 / best, 3 * best / 1e6,
		       s.channel_allocations - alloc_base, s.channel_allocations - alloc_warm,
		       ids_end, ids_end - ids_warm, s.map_capacity, s.map_capacity - cap_warm);
	}
	for (int i = 0; i < n_apps; i++)
		gt_bichannel__delete(b.apps[i].ids);
	pthread_barrier_destroy(&b.start);
	pthread_barrier_destroy(&b.end);
	return best;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int repeats = argc > 2 ? atoi(argv[2]) : 5;
	int many = cpus - 2 < 2 ? 2 : cpus - 2 > MAX_APPS ? MAX_APPS : (int)cpus - 2;
	char label[32];
	struct gt_monitor_stats s;
	double floor;

	b.ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	if (repeats < 2)
		repeats = 2;
	if (gt_monitor__start()) {
		fprintf(stderr, "bench_monitor: the monitor thread did not start\n");
		return 1;
	}
	printf("bench_monitor: %" PRIu64 " operations per thread, %d repeats (best of the last "
	       "%d), window %d, %ld CPUs\n",
	       b.ops, repeats, repeats - 1, WINDOW, cpus);
	floor = run("direct", 1, 0, 1, repeats);
	double self = run("self", 1, 0, 0, repeats);
	double one = run("1 app + dev", 1, 1, 0, repeats);
	snprintf(label, sizeof(label), "%d apps + dev", many);
	double multi = run(label, many, 1, 0, repeats);
	printf("cost of the monitor path over direct attribution, per operation: self %.0f ns, "
	       "1 app + dev %.0f ns; %s: %.2f M ops/s in all\n",
	       1e9 / self - 1e9 / floor, 1e9 / one - 1e9 / floor, label, multi / 1e6);

	gt_monitor__stop();
	gt_monitor__stats(&s);
	printf("total: %" PRIu64 " correlations, %" PRIu64 " measurements, %" PRIu64
	       " waited, %" PRIu64 " lost, %" PRIu64 " rounds, %" PRIu64 " sleeps\n",
	       s.correlations, s.measurements, s.early, s.lost + s.thread_lost, s.rounds,
	       s.sleeps);
	return s.lost + s.thread_lost ? 1 : 0;
}
