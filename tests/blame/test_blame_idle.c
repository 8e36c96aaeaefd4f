/* SPDX-License-Identifier: MIT */
/*
 * GPU_IDLE_CAUSE from real CPU-time samples (1 kHz per thread), with a fake
 * device:
 *
 *   idle    device 0 has been used, nothing is in flight: a function that
 *           spins 0.4 s of CPU gets GPU_IDLE_CAUSE equal to its sampled
 *           CPU time, which is the CPU time it measured itself
 *   busy    an operation is in flight for the whole spin: nothing
 *   covered an operation whose activity has not come, but a device-wide
 *           wait covered it (gt_blame__covered): idle at once, as in
 *           "idle"; a launch after the wait makes the device busy again
 *   mixed   devices 0 and 1 used, an operation in flight on 1 only: no
 *           GPU_IDLE_CAUSE, GPU_IDLE_CAUSE_D0 as in "idle", no _D1
 *   latency each completion handed to the monitor makes the device read
 *           idle, with and without gt_monitor__notify, and at once after a
 *           flush. How long it took is printed (each completion
 *           under-counts GPU_IDLE_CAUSE by at most that much CPU time,
 *           docs/BLAME.md), not checked: it is the scheduler's figure on a
 *           shared machine, not a property of the code.
 *
 * A sample carries the CPU time since the one before, and on a busy machine
 * the kernel delivers CPU-time timer signals tens of milliseconds of CPU
 * time apart, so a spin's sampled time would shift by as much across its
 * ends. Each spin therefore begins just after a sample and ends just after
 * one (blame_spin_align, and the spins' own ends): its samples then carry
 * its CPU time up to one period, however busy the machine.
 *
 * The spinning functions live in their own load module (blame_spin.c).
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/clock.h"
#include "core/modmap.h"
#include "core/sample.h"
#include "core/unwind.h"
#include "tests/blame/blame-test.h"
#include "tests/blame/blame_spin.h"
#include "tests/gpu/monitor-test.h"

enum { HZ = 1000, RUNS = 200 };
#define PERIOD (1000000000ull / HZ)

struct at_fn {
	const char *sym;
	enum gt_metric m;
	uint64_t sum;
};

static int in_fn(const struct gt_cct_node *n, const char *sym)
{
	Dl_info di;

	if (!n || n->kind != GT_NODE_FRAME)
		return 0;
	return dladdr((void *)(uintptr_t)n->key, &di) && di.dli_sname && !strcmp(di.dli_sname, sym);
}

static void at_fn__visit(struct gt_cct_node *n, void *arg)
{
	struct at_fn *a = arg;

	/* The outermost frames of the function: their subtrees, once. */
	if (in_fn(n, a->sym) && !in_fn(n->parent, a->sym))
		a->sum += incl(n, a->m);
}

/* Metric @m inclusive at the function named @sym, wherever it was called. */
static uint64_t at_fn(struct gt_thread *t, const char *sym, enum gt_metric m)
{
	struct at_fn a = { sym, m, 0 };

	gt_cct__walk(t->cct.root, at_fn__visit, &a);
	return a.sum;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Time from handing a completion to the monitor to the device reading idle,
 * over RUNS completions; every one must get there, and a flush must leave
 * nothing in flight.
 */
static void latency(struct gt_thread *t, struct gt_cct_node *L, int notify, uint64_t *median,
		    uint64_t *max)
{
	static uint64_t lat[RUNS];
	struct gt_monitor_stats s0, s1;

	monitor_test__flush();
	gt_monitor__stats(&s0);
	for (int i = 0; i < RUNS; i++) {
		uint64_t id = launch(t, L, 0), t0;
		struct gt_device_op op;

		CHECK(gt_blame__in_flight(0) == 1);
		memset(&op, 0, sizeof(op));
		op.correlation = id;
		op.kind = GT_DEVOP_KERNEL;
		op.start_ns = gt_clock__now();
		op.end_ns = op.start_ns + 1000;
		t0 = gt_clock__now();
		gt_monitor__activity(t, &op);
		if (notify)
			gt_monitor__notify();
		while (gt_blame__in_flight(0) > 0)
			;
		lat[i] = gt_clock__now() - t0;
		CHECK(gt_blame__in_flight(0) == 0);
		gt_monitor__drain(t);
	}
	monitor_test__flush();
	gt_monitor__stats(&s1);
	CHECK_EQ_U(s1.activities - s0.activities, RUNS);
	CHECK_EQ_U(s1.correlations - s0.correlations, RUNS);
	CHECK_EQ_U(gt_blame__in_flight(0), 0);
	qsort(lat, RUNS, sizeof(lat[0]), u64_cmp);
	*median = lat[RUNS / 2];
	*max = lat[RUNS - 1];
}

/* A spin's sampled CPU time against what it measured itself: both run from
 * just after one sample to just after another, so they agree up to the
 * period (timer expirations are counted whole) and the handler's own time,
 * which the spin's clock counts: a few microseconds a sample, tens in a
 * sanitizer build, over 200-400 samples. Half or double is far outside. */
static void check_spin(uint64_t got, uint64_t want, const char *what)
{
	int64_t err = (int64_t)got - (int64_t)want;

	printf("  %-40s %.4f s, against %.4f s (%+.2f ms)\n", what, (double)got / 1e9,
	       (double)want / 1e9, (double)err / 1e6);
	/* Not in sanitizer builds, whose instrumented handler and loaded
	 * timers have missed several periods. */
	if (!getenv("GT_SANITIZER_BUILD"))
		CHECK(err >= -(int64_t)(4 * PERIOD) && err <= (int64_t)(2 * PERIOD));
}

int main(void)
{
	struct gt_thread *t;
	struct gt_cct_node *L;
	uint64_t id, id1, id2, cpu_idle, cpu_busy, cpu_covered, cpu_mixed, med_n, max_n, med_q, max_q, now;
	uint64_t mark;

	CHECK(gt_modmap__init() == 0);
	gt_unwind__init();
	CHECK(gt_sample__init(HZ, NULL) == 0);
	t = gt_thread__self(GT_THREAD_INITIAL);
	CHECK(t);
	gt_sample__thread_start(t);
	CHECK(t->has_timer);
	CHECK(gt_monitor__start() == 0);
	L = site(t, 0x1000, GT_PH_GPU_KERNEL);

	/* idle: the process used device 0; nothing in flight now. */
	id = launch(t, L, 0);
	now = gt_clock__now();
	complete(t, id, now, now + 1000, 0, 1, NULL);
	settle(t);
	CHECK_EQ_U(gt_blame__in_flight(0), 0);
	blame_spin_align(&t->samples);
	cpu_idle = blame_spin_idle(400 * MS, &t->samples);

	/* busy: one operation in flight for the whole spin. */
	id = launch(t, L, 0);
	blame_spin_align(&t->samples);
	cpu_busy = blame_spin_busy(200 * MS, &t->samples);
	now = gt_clock__now();
	complete(t, id, now - 200 * MS, now, 0, 1, NULL);
	settle(t);

	/* covered: in flight, its activity not here yet, but waited for. */
	id = launch(t, L, 0);
	mark = gt_blame__mark(0);
	gt_blame__covered(0, mark);
	CHECK(gt_blame__in_flight(0) == 1);
	blame_spin_align(&t->samples);
	cpu_covered = blame_spin_covered(200 * MS, &t->samples);
	/* A launch after the wait: busy again, until its activity comes. */
	id2 = launch(t, L, 0);
	blame_spin_align(&t->samples);
	cpu_busy += blame_spin_busy(100 * MS, &t->samples);
	now = gt_clock__now();
	complete(t, id, now - 300 * MS, now - 300 * MS + 1000, 0, 1, NULL);
	complete(t, id2, now - 100 * MS, now, 0, 1, NULL);
	settle(t);
	CHECK_EQ_U(gt_blame__in_flight(0), 0);

	/* mixed: device 1 busy, device 0 idle. */
	id1 = launch(t, L, 1);
	blame_spin_align(&t->samples);
	cpu_mixed = blame_spin_mixed(200 * MS, &t->samples);
	now = gt_clock__now();
	complete(t, id1, now - 200 * MS, now, 1, 1, NULL);
	settle(t);

	latency(t, L, 1, &med_n, &max_n);
	latency(t, L, 0, &med_q, &max_q);
	gt_sample__thread_stop(t);
	gt_monitor__stop();

	printf("GPU_IDLE_CAUSE at %d Hz:\n", HZ);
	check_spin(at_fn(t, "blame_spin_idle", GT_M_CPUTIME), cpu_idle, "idle spin: CPUTIME");
	CHECK_EQ_U(at_fn(t, "blame_spin_idle", GT_M_GPU_IDLE_CAUSE),
		   at_fn(t, "blame_spin_idle", GT_M_CPUTIME));
	printf("  %-40s = CPUTIME\n", "idle spin: GPU_IDLE_CAUSE");
	CHECK_EQ_U(at_fn(t, "blame_spin_idle", GT_M_GPU_IDLE_CAUSE_D0), 0); /* one device then */
	check_spin(at_fn(t, "blame_spin_busy", GT_M_CPUTIME), cpu_busy, "busy spin: CPUTIME");
	CHECK_EQ_U(at_fn(t, "blame_spin_busy", GT_M_GPU_IDLE_CAUSE), 0);
	printf("  %-40s 0\n", "busy spin: GPU_IDLE_CAUSE");
	check_spin(at_fn(t, "blame_spin_covered", GT_M_CPUTIME), cpu_covered, "covered spin: CPUTIME");
	CHECK(at_fn(t, "blame_spin_covered", GT_M_CPUTIME) > 0);
	CHECK_EQ_U(at_fn(t, "blame_spin_covered", GT_M_GPU_IDLE_CAUSE),
		   at_fn(t, "blame_spin_covered", GT_M_CPUTIME));
	printf("  %-40s = CPUTIME\n", "covered spin: GPU_IDLE_CAUSE");
	check_spin(at_fn(t, "blame_spin_mixed", GT_M_CPUTIME), cpu_mixed, "mixed spin: CPUTIME");
	CHECK_EQ_U(at_fn(t, "blame_spin_mixed", GT_M_GPU_IDLE_CAUSE), 0);
	CHECK_EQ_U(at_fn(t, "blame_spin_mixed", GT_M_GPU_IDLE_CAUSE_D0),
		   at_fn(t, "blame_spin_mixed", GT_M_CPUTIME));
	printf("  %-40s = CPUTIME\n", "mixed spin: GPU_IDLE_CAUSE_D0");
	CHECK_EQ_U(at_fn(t, "blame_spin_mixed", GT_M_GPU_IDLE_CAUSE_D1), 0);
	printf("completion seen by the monitor after (%d runs): median %.1f us, max %.1f us with "
	       "gt_monitor__notify; median %.1f us, max %.1f us without\n",
	       RUNS, (double)med_n / 1e3, (double)max_n / 1e3, (double)med_q / 1e3,
	       (double)max_q / 1e3);
	return 0;
}
