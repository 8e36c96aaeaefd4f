/* SPDX-License-Identifier: MIT */
/*
 * Blame shifting end to end through the monitor thread, with a fake device
 * and synthetic timestamps, so every figure is exact (docs/BLAME.md):
 *
 *   one_kernel        a kernel [0, 300 ms] launched at L, a sync at S over
 *                     [100, 300]: CPU_IDLE 200 ms at S, CPU_IDLE_CAUSE
 *                     200 ms at L (beside the kernel's GKER), no overhead;
 *                     a sync on a device never used is all overhead
 *   two_queues        A [0, 200] and B [100, 300] on two streams, a sync
 *                     [0, 300]: A and B 150 ms each; a sync on A's stream
 *                     only: A 200, 100 of overhead; three equal kernels
 *                     share a slice in whole ns that add up
 *   other_thread      operations launched by another thread than the one
 *                     that syncs: the blame lands in the launcher's tree
 *   late_activities   the sync's record comes before its operations'
 *                     activities: it waits (pending) and is blamed when
 *                     the last arrives; a launch after the sync does not
 *                     hold it
 *   lost_activity     an operation whose activity never comes: the syncs
 *                     after it wait GT_BLAME_PENDING_NS at most, then are
 *                     blamed with what is known; memory stays bounded
 *   at_exit           what is still waiting at exit is settled by the
 *                     finalizer (an operation that never completes: all
 *                     overhead, counted as forced)
 *
 * Each case runs in its own process with its own monitor.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "tests/blame/blame-test.h"

#define T0 (100 * SEC) /* synthetic time origin */

static const char kernel_a[] = "kernel_a";
static const char kernel_b[] = "kernel_b";
static const char kernel_c[] = "kernel_c";

static struct gt_thread *start(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);

	CHECK(t);
	CHECK(gt_monitor__start() == 0);
	return t;
}

static struct gt_cct_node *name_node(struct gt_thread *t, struct gt_cct_node *ph, const char *name)
{
	return gt_cct__child(&t->cct, ph, GT_NODE_NAME, (uint64_t)(uintptr_t)name, 0);
}

static void check_stats(uint64_t syncs, uint64_t settled, uint64_t forced, uint64_t pending)
{
	struct gt_blame_stats s;

	gt_blame__stats(&s);
	CHECK_EQ_U(s.syncs, syncs);
	CHECK_EQ_U(s.settled, settled);
	CHECK_EQ_U(s.forced, forced);
	CHECK_EQ_U(s.pending, pending);
}

static void one_kernel(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *L = site(t, 0x1000, GT_PH_GPU_KERNEL);
	struct gt_cct_node *S = site(t, 0x2000, GT_PH_GPU_SYNC);
	struct gt_cct_node *S2 = site(t, 0x3000, GT_PH_GPU_SYNC);
	uint64_t id = launch(t, L, 0);

	CHECK_EQ_U(gt_blame__in_flight(0), 1);
	complete(t, id, T0, T0 + 300 * MS, 0, 1, kernel_a);
	gt_blame__sync(t, S, T0 + 100 * MS, T0 + 300 * MS, 0, 0);
	settle(t);
	CHECK_EQ_U(gt_blame__in_flight(0), 0);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE), 200 * MS);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE_OVERHEAD), 0);
	CHECK_EQ_U(incl(L, GT_M_CPU_IDLE_CAUSE), 200 * MS);
	/* On the kernel's name node, beside its time. */
	CHECK_EQ_U(gt_cct__get(name_node(t, L, kernel_a), GT_M_CPU_IDLE_CAUSE), 200 * MS);
	CHECK_EQ_U(gt_cct__get(name_node(t, L, kernel_a), GT_M_GKER), 300 * MS);
	CHECK_EQ_U(incl(t->cct.root, GT_M_CPU_IDLE_CAUSE), 200 * MS);
	check_stats(1, 1, 0, 0);

	/* Device 1 never ran anything: the whole wait is overhead. */
	gt_blame__sync(t, S2, T0 + 300 * MS, T0 + 310 * MS, 1, 0);
	settle(t);
	CHECK_EQ_U(gt_cct__get(S2, GT_M_CPU_IDLE), 10 * MS);
	CHECK_EQ_U(gt_cct__get(S2, GT_M_CPU_IDLE_OVERHEAD), 10 * MS);
	CHECK_EQ_U(incl(t->cct.root, GT_M_CPU_IDLE_CAUSE), 200 * MS);
	check_stats(2, 2, 0, 0);
	gt_monitor__stop();
}

static void two_queues(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *LA = site(t, 0x1000, GT_PH_GPU_KERNEL);
	struct gt_cct_node *LB = site(t, 0x1100, GT_PH_GPU_KERNEL);
	struct gt_cct_node *S1 = site(t, 0x2000, GT_PH_GPU_SYNC);
	struct gt_cct_node *S2 = site(t, 0x2100, GT_PH_GPU_SYNC);
	struct gt_cct_node *S3 = site(t, 0x2200, GT_PH_GPU_SYNC);
	struct gt_cct_node *LC[3];
	uint64_t a = launch(t, LA, 0), b = launch(t, LB, 0), c[3];

	complete(t, b, T0 + 100 * MS, T0 + 300 * MS, 0, 2, kernel_b);
	complete(t, a, T0, T0 + 200 * MS, 0, 1, kernel_a);
	/* Every stream: [0,100] A alone, [100,200] both, [200,300] B alone. */
	gt_blame__sync(t, S1, T0, T0 + 300 * MS, 0, 0);
	settle(t);
	CHECK_EQ_U(incl(LA, GT_M_CPU_IDLE_CAUSE), 150 * MS);
	CHECK_EQ_U(incl(LB, GT_M_CPU_IDLE_CAUSE), 150 * MS);
	CHECK_EQ_U(gt_cct__get(S1, GT_M_CPU_IDLE), 300 * MS);
	CHECK_EQ_U(gt_cct__get(S1, GT_M_CPU_IDLE_OVERHEAD), 0);

	/* A's stream only: A the whole of its time, nothing ran in [200,300]. */
	gt_blame__sync(t, S2, T0, T0 + 300 * MS, 0, 1);
	settle(t);
	CHECK_EQ_U(incl(LA, GT_M_CPU_IDLE_CAUSE), (150 + 200) * MS);
	CHECK_EQ_U(incl(LB, GT_M_CPU_IDLE_CAUSE), 150 * MS);
	CHECK_EQ_U(gt_cct__get(S2, GT_M_CPU_IDLE_OVERHEAD), 100 * MS);

	/* Three kernels over one slice of 100 ns: whole ns that add up. */
	for (int i = 0; i < 3; i++) {
		LC[i] = site(t, 0x1200 + 0x10 * (uintptr_t)i, GT_PH_GPU_KERNEL);
		c[i] = launch(t, LC[i], 0);
		complete(t, c[i], T0 + SEC, T0 + SEC + 100, 0, 3 + (uint64_t)i, kernel_c);
	}
	gt_blame__sync(t, S3, T0 + SEC, T0 + SEC + 100, -1, 0);
	settle(t);
	for (int i = 0; i < 3; i++)
		CHECK(incl(LC[i], GT_M_CPU_IDLE_CAUSE) >= 33 && incl(LC[i], GT_M_CPU_IDLE_CAUSE) <= 34);
	CHECK_EQ_U(incl(LC[0], GT_M_CPU_IDLE_CAUSE) + incl(LC[1], GT_M_CPU_IDLE_CAUSE) +
			   incl(LC[2], GT_M_CPU_IDLE_CAUSE),
		   100);
	/* Conservation: CPU_IDLE = CPU_IDLE_CAUSE + CPU_IDLE_OVERHEAD. */
	CHECK_EQ_U(incl(t->cct.root, GT_M_CPU_IDLE),
		   incl(t->cct.root, GT_M_CPU_IDLE_CAUSE) +
			   incl(t->cct.root, GT_M_CPU_IDLE_OVERHEAD));
	check_stats(3, 3, 0, 0);
	gt_monitor__stop();
}

/* ---- operations launched by another thread ---- */

static struct {
	struct gt_thread *t;
	struct gt_cct_node *L;
	uint64_t id;
	atomic_int phase; /* 1: launched; 2: blamed, drain and check; 3: checked */
} other;

static void wait_phase(int p)
{
	while (atomic_load_explicit(&other.phase, memory_order_acquire) < p)
		sched_yield();
}

static void *launcher_main(void *arg)
{
	(void)arg;
	other.t = gt_thread__self(GT_THREAD_WORKER);
	CHECK(other.t);
	other.L = site(other.t, 0x4000, GT_PH_GPU_KERNEL);
	other.id = launch(other.t, other.L, 0);
	atomic_store_explicit(&other.phase, 1, memory_order_release);
	wait_phase(2);
	gt_monitor__drain(other.t);
	CHECK_EQ_U(incl(other.L, GT_M_CPU_IDLE_CAUSE), 250 * MS);
	CHECK_EQ_U(gt_cct__get(gt_cct__child(&other.t->cct, other.L, GT_NODE_NAME,
					     (uint64_t)(uintptr_t)kernel_a, 0),
			       GT_M_CPU_IDLE_CAUSE),
		   250 * MS);
	CHECK_EQ_U(incl(other.t->cct.root, GT_M_CPU_IDLE), 0);
	atomic_store_explicit(&other.phase, 3, memory_order_release);
	return NULL;
}

static void other_thread(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *S = site(t, 0x2000, GT_PH_GPU_SYNC);
	pthread_t launcher;

	CHECK(pthread_create(&launcher, NULL, launcher_main, NULL) == 0);
	wait_phase(1);
	/* The sync comes first: it must find the other thread's launch. */
	gt_blame__sync(t, S, T0 + 50 * MS, T0 + 300 * MS, 0, 0);
	settle(t);
	check_stats(1, 0, 0, 1);
	complete(t, other.id, T0, T0 + 300 * MS, 0, 7, kernel_a);
	settle(t);
	check_stats(1, 1, 0, 0);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE), 250 * MS);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE_OVERHEAD), 0);
	CHECK_EQ_U(incl(t->cct.root, GT_M_CPU_IDLE_CAUSE), 0);
	atomic_store_explicit(&other.phase, 2, memory_order_release);
	pthread_join(launcher, NULL);
	CHECK_EQ_U(atomic_load_explicit(&other.phase, memory_order_acquire), 3);
	gt_monitor__stop();
}

static void late_activities(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *LA = site(t, 0x1000, GT_PH_GPU_KERNEL);
	struct gt_cct_node *LB = site(t, 0x1100, GT_PH_GPU_KERNEL);
	struct gt_cct_node *LC = site(t, 0x1200, GT_PH_GPU_KERNEL);
	struct gt_cct_node *S = site(t, 0x2000, GT_PH_GPU_SYNC);
	uint64_t a = launch(t, LA, 0), b = launch(t, LB, 0), c;

	gt_blame__sync(t, S, T0, T0 + 300 * MS, 0, 0);
	/* Launched after the sync: it must not hold the sync back. */
	c = launch(t, LC, 0);
	settle(t);
	check_stats(1, 0, 0, 1);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE), 300 * MS);
	CHECK_EQ_U(incl(t->cct.root, GT_M_CPU_IDLE_CAUSE) + gt_cct__get(S, GT_M_CPU_IDLE_OVERHEAD),
		   0);
	CHECK_EQ_U(gt_blame__in_flight(0), 3);

	complete(t, a, T0, T0 + 200 * MS, 0, 1, kernel_a);
	settle(t);
	check_stats(1, 0, 0, 1);
	CHECK_EQ_U(incl(t->cct.root, GT_M_CPU_IDLE_CAUSE), 0);

	complete(t, b, T0 + 100 * MS, T0 + 300 * MS, 0, 2, kernel_b);
	settle(t);
	check_stats(1, 1, 0, 0);
	CHECK_EQ_U(incl(LA, GT_M_CPU_IDLE_CAUSE), 150 * MS);
	CHECK_EQ_U(incl(LB, GT_M_CPU_IDLE_CAUSE), 150 * MS);
	CHECK_EQ_U(incl(LC, GT_M_CPU_IDLE_CAUSE), 0);
	CHECK_EQ_U(gt_blame__in_flight(0), 1);

	complete(t, c, T0 + 300 * MS, T0 + 400 * MS, 0, 1, kernel_c);
	settle(t);
	CHECK_EQ_U(gt_blame__in_flight(0), 0);
	CHECK_EQ_U(incl(LC, GT_M_CPU_IDLE_CAUSE), 0);
	gt_monitor__stop();
}

static void lost_activity(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *LX = site(t, 0x1000, GT_PH_GPU_KERNEL);
	struct gt_cct_node *L = site(t, 0x1100, GT_PH_GPU_KERNEL);
	struct gt_cct_node *S = site(t, 0x2000, GT_PH_GPU_SYNC);
	struct gt_blame_stats s;
	enum { CYCLES = 300 };
	const uint64_t cycle = 100 * MS, waited = GT_BLAME_PENDING_NS / cycle;

	/* Never completes: every later sync on device 0 waits for it, until
	 * it is GT_BLAME_PENDING_NS old and is blamed with what is known. */
	launch(t, LX, 0);
	for (uint64_t c = 0; c < CYCLES; c++) {
		uint64_t id = launch(t, L, 0);

		complete(t, id, T0 + c * cycle, T0 + c * cycle + 50 * MS, 0, 1, kernel_a);
		gt_blame__sync(t, S, T0 + c * cycle, T0 + c * cycle + 60 * MS, 0, 0);
		if (c % 16 == 15)
			settle(t);
	}
	settle(t);
	gt_blame__stats(&s);
	printf("lost_activity: %" PRIu64 " syncs, %" PRIu64 " forced, %" PRIu64
	       " waiting (peak %" PRIu64 "), epochs peak %" PRIu64 ", kept peak %" PRIu64 "\n",
	       s.syncs, s.forced, s.pending, s.pending_peak, s.epochs_peak, s.retained_peak);
	CHECK_EQ_U(s.syncs, CYCLES);
	CHECK_EQ_U(s.settled, 0);
	CHECK(s.pending_peak <= waited + 2);
	CHECK(s.epochs_peak <= s.pending_peak + 1);
	CHECK(s.retained_peak <= s.pending_peak + 2);
	CHECK_EQ_U(s.forced + s.pending, CYCLES);
	/* Forced, but every operation in their windows was known. */
	CHECK_EQ_U(incl(L, GT_M_CPU_IDLE_CAUSE), s.forced * 50 * MS);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE_OVERHEAD), s.forced * 10 * MS);
	CHECK_EQ_U(gt_blame__in_flight(0), 1);
	gt_monitor__stop();
	gt_blame__stats(&s);
	CHECK_EQ_U(s.forced, CYCLES);
	CHECK_EQ_U(incl(L, GT_M_CPU_IDLE_CAUSE), CYCLES * 50 * MS);
	CHECK_EQ_U(incl(LX, GT_M_CPU_IDLE_CAUSE), 0);
}

static void at_exit(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *L = site(t, 0x1000, GT_PH_GPU_KERNEL);
	struct gt_cct_node *LK = site(t, 0x1100, GT_PH_GPU_KERNEL);
	struct gt_cct_node *S = site(t, 0x2000, GT_PH_GPU_SYNC);
	struct gt_cct_node *S2 = site(t, 0x2100, GT_PH_GPU_SYNC);
	struct gt_blame_stats s;
	uint64_t lost, k;

	/* Never completes: its sync waits until exit, then is all overhead. */
	lost = launch(t, L, 0);
	(void)lost;
	gt_blame__sync(t, S, T0, T0 + 100 * MS, 0, 0);
	/* Completes in the monitor's last rounds, after the stop began; its
	 * sync (device 1) is blamed normally and applied by the finalizer. */
	k = launch(t, LK, 1);
	gt_blame__sync(t, S2, T0 + 10 * MS, T0 + 40 * MS, 1, 0);
	complete(t, k, T0, T0 + 30 * MS, 1, 1, kernel_a);
	gt_monitor__stop();

	gt_blame__stats(&s);
	CHECK_EQ_U(s.syncs, 2);
	CHECK_EQ_U(s.settled, 1);
	CHECK_EQ_U(s.forced, 1);
	CHECK_EQ_U(s.pending, 0);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE), 100 * MS);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE_OVERHEAD), 100 * MS);
	CHECK_EQ_U(incl(L, GT_M_CPU_IDLE_CAUSE), 0);
	CHECK_EQ_U(incl(LK, GT_M_CPU_IDLE_CAUSE), 20 * MS);
	CHECK_EQ_U(gt_cct__get(S2, GT_M_CPU_IDLE_OVERHEAD), 10 * MS);
	CHECK_EQ_U(s.busy_ns[0], 0);
	CHECK_EQ_U(s.busy_ns[1], 30 * MS);
	CHECK_EQ_U(s.used, 3);
	CHECK_EQ_U(s.retained + s.epochs + s.intervals, 0);
}

TEST_MAIN({ "one_kernel", one_kernel }, { "two_queues", two_queues },
	  { "other_thread", other_thread }, { "late_activities", late_activities },
	  { "lost_activity", lost_activity }, { "at_exit", at_exit })
