/* SPDX-License-Identifier: MIT */
/*
 * The monitor's life: the backend table (a backend that cannot start stays
 * off; flush then stop at exit, while the monitor still runs; a sync makes
 * the monitor poll the backends), the exit path racing a thread that keeps
 * draining, and a fork child.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/thread.h"
#include "gpu/backend.h"
#include "gpu/blame.h"
#include "gpu/monitor.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

static uint64_t sum_metric(struct gt_cct *cct, enum gt_metric m);

static void kernel_op(uint64_t id, struct gt_device_op *op)
{
	static const char name[] = "k";

	memset(op, 0, sizeof(*op));
	op->correlation = id;
	op->kind = GT_DEVOP_KERNEL;
	op->name = name;
	op->start_ns = 100;
	op->end_ns = 100 + id % 10;
}

/* ---- a backend that cannot start ---- */

static int nodev_calls;

static int nodev__start(void)
{
	return -ENODEV;
}

static void nodev__flush(void)
{
	nodev_calls++;
}

static const struct gt_backend nodev_backend = {
	.name = "nodev", .start = nodev__start, .flush = nodev__flush, .stop = nodev__flush,
};

/* ---- a backend whose activities come when the monitor polls it ---- */

enum { POLLED = 8 };
static uint64_t poll_ids[POLLED];
/* Set by the test thread (release) once the ids are written; taken by the
 * poll on the monitor thread (acquire exchange). */
static atomic_int poll_ready;
static atomic_int polls;

static int poll__start(void)
{
	return 0;
}

static void poll__poll(void)
{
	atomic_fetch_add_explicit(&polls, 1, memory_order_relaxed);
	if (!atomic_exchange_explicit(&poll_ready, 0, memory_order_acquire))
		return;
	for (int i = 0; i < POLLED; i++) {
		struct gt_device_op op;

		kernel_op(poll_ids[i], &op);
		gt_monitor__activity(gt_thread__self(GT_THREAD_OTHER), &op);
	}
	gt_monitor__notify();
}

static const struct gt_backend poll_backend = { .name = "poll", .start = poll__start, .poll = poll__poll };

/* A sync arrives: the monitor polls, the backend hands its activities over
 * on the monitor thread, and the device empties with no application thread
 * delivering anything. */
static void test_poll(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *ph = gt_cct__placeholder(&t->cct, t->cct.root, GT_PH_GPU_KERNEL);
	struct timespec ms = { 0, 1000000 };
	uint64_t now;

	CHECK(gt_backend__register(&poll_backend) == 0);
	for (int i = 0; i < POLLED; i++)
		CHECK((poll_ids[i] = gt_monitor__correlate_device(t, ph, 0)) != 0);
	atomic_store_explicit(&poll_ready, 1, memory_order_release);
	CHECK(gt_blame__in_flight(0) == POLLED);
	now = gt_clock__now();
	gt_blame__sync(t, NULL, now - 1000, now, 0, 0);
	for (int i = 0; i < 10000 && gt_blame__in_flight(0) > 0; i++)
		nanosleep(&ms, NULL);
	CHECK(gt_blame__in_flight(0) == 0);
	CHECK(atomic_load_explicit(&polls, memory_order_relaxed) >= 1);
	gt_monitor__drain(t);
	CHECK_EQ_U(sum_metric(&t->cct, GT_M_GKER_COUNT), POLLED);
}

/* ---- a backend that holds activities until exit ---- */

enum { HELD = 100 };
static uint64_t held_ids[HELD];
static int n_held, starts, order[4], n_order;

static int hold__start(void)
{
	starts++;
	return 0;
}

static void hold__deliver(int from, int to)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);

	for (int i = from; i < to; i++) {
		struct gt_device_op op;

		kernel_op(held_ids[i], &op);
		gt_monitor__activity(t, &op);
	}
}

/* Delivers half at flush, the rest at stop: both must be measured. */
static void hold__flush(void)
{
	order[n_order++] = 'f';
	hold__deliver(0, n_held / 2);
}

static void hold__stop(void)
{
	order[n_order++] = 's';
	hold__deliver(n_held / 2, n_held);
}

static const struct gt_backend hold_backend = {
	.name = "hold", .start = hold__start, .flush = hold__flush, .stop = hold__stop,
};

static void test_backends(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *ph = gt_cct__placeholder(&t->cct, t->cct.root, GT_PH_GPU_KERNEL);
	struct gt_monitor_stats s;
	uint64_t expect_ns = 0;

	CHECK(gt_backend__register(&nodev_backend) == -ENODEV);
	CHECK(gt_monitor__running());
	CHECK(gt_backend__register(&hold_backend) == 0);
	CHECK(gt_backend__register(&hold_backend) == 0);
	CHECK_EQ_U(starts, 1);
	for (int i = 0; i < HELD; i++) {
		held_ids[n_held++] = gt_monitor__correlate(t, ph);
		CHECK(held_ids[i]);
		expect_ns += held_ids[i] % 10;
	}
	gt_monitor__stop();
	CHECK_EQ_U(n_order, 2);
	CHECK(order[0] == 'f' && order[1] == 's');
	CHECK_EQ_U(nodev_calls, 0);
	gt_monitor__stats(&s);
	CHECK_EQ_U(s.finalized, HELD);
	CHECK_EQ_U(s.map_size + s.unmatched + s.unmeasured, 0);
	CHECK_EQ_U(sum_metric(&t->cct, GT_M_GKER_COUNT), HELD);
	CHECK_EQ_U(sum_metric(&t->cct, GT_M_GKER), expect_ns);
	CHECK(gt_backend__register(&nodev_backend) == -ESHUTDOWN);
}

/* ---- stop while a thread keeps draining ---- */

enum { RACE_OPS = 4000 };
static uint64_t race_ids[RACE_OPS];
static atomic_int race_ready, race_done;
static struct gt_thread *racer_thread;
static size_t racer_drained;
static _Atomic size_t racer_progress;

static void *racer_main(void *arg)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_WORKER);
	struct gt_cct_node *ph = gt_cct__placeholder(&t->cct, t->cct.root, GT_PH_GPU_KERNEL);

	(void)arg;
	racer_thread = t;
	for (int i = 0; i < RACE_OPS; i++)
		race_ids[i] = gt_monitor__correlate(t, ph);
	atomic_store_explicit(&race_ready, 1, memory_order_release);
	while (!atomic_load_explicit(&race_done, memory_order_acquire)) {
		struct timespec pause = { 0, 50000 };

		racer_drained += gt_monitor__drain(t);
		atomic_store_explicit(&racer_progress, racer_drained, memory_order_relaxed);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static void test_stop_while_draining(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_monitor_stats s;
	pthread_t racer;

	CHECK(gt_monitor__start() == 0);
	CHECK(pthread_create(&racer, NULL, racer_main, NULL) == 0);
	while (!atomic_load_explicit(&race_ready, memory_order_acquire))
		sched_yield();
	for (int i = 0; i < RACE_OPS; i++) {
		struct gt_device_op op;

		CHECK(race_ids[i]);
		kernel_op(race_ids[i], &op);
		gt_monitor__activity(t, &op);
		if (i % 64 == 63)
			gt_monitor__notify();
		/* Let the racer apply some first. */
		if (i == RACE_OPS / 2) {
			monitor_test__flush();
			while (!atomic_load_explicit(&racer_progress, memory_order_relaxed))
				sched_yield();
		}
	}
	/* The racer drains now and then; part of its records are left to the
	 * finalizer, and none may be applied twice. */
	gt_monitor__stop();
	atomic_store_explicit(&race_done, 1, memory_order_release);
	pthread_join(racer, NULL);
	gt_monitor__stats(&s);
	CHECK_EQ_U(s.measurements, RACE_OPS);
	CHECK_EQ_U(racer_drained + s.finalized, RACE_OPS);
	printf("racer applied %zu, finalizer %llu\n", racer_drained,
	       (unsigned long long)s.finalized);
	CHECK_EQ_U(sum_metric(&racer_thread->cct, GT_M_GKER_COUNT), RACE_OPS);
	CHECK_EQ_U(gt_monitor__drain(racer_thread), 0);
}

/* ---- fork ---- */

static void test_fork_child(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	int status = 0;
	pid_t pid;

	CHECK(gt_monitor__start() == 0);
	CHECK(gt_monitor__correlate(t, NULL) != 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* No monitor thread here: nothing may wait for one. */
		if (gt_monitor__running() || gt_monitor__correlate(t, NULL) != 0)
			_exit(1);
		monitor_test__flush();
		gt_monitor__stop();
		_exit(gt_monitor__drain(t) == 0 ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(gt_monitor__running());
	monitor_test__flush();
	gt_monitor__stop();
}

static void sum_visit(struct gt_cct_node *n, void *arg)
{
	uint64_t *sum = arg;

	sum[0] += gt_cct__get(n, (enum gt_metric)sum[1]);
}

static uint64_t sum_metric(struct gt_cct *cct, enum gt_metric m)
{
	uint64_t sum[2] = { 0, m };

	gt_cct__walk(cct->root, sum_visit, sum);
	return sum[0];
}

TEST_MAIN({ "poll at a sync", test_poll }, { "backends", test_backends }, { "stop_while_draining", test_stop_while_draining },
	  { "fork_child", test_fork_child })
