/* SPDX-License-Identifier: MIT */
/*
 * Memory stays flat under blame shifting: 1,000,000 operations and 100,000
 * syncs through the monitor. Each cycle launches 10 kernels on two streams
 * of device 0, overlapping pairwise, and syncs over them; one cycle in ten
 * delivers its activities after the sync, so that syncs wait. Synthetic
 * time advances 1.2 ms a cycle (120 s in all), so that the window of
 * finished operations (GT_BLAME_RETAIN_NS) holds about 830 cycles.
 *
 * Checked: every sync is blamed, exactly (per cycle 400/300/300 us at the
 * three launch sites, no overhead); the finished operations, epochs, busy
 * intervals and pending syncs stay bounded by the window, not by the run;
 * resident memory does not grow after the first tenth; the device's busy
 * time is the union of its kernels.
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "core/clock.h"
#include "tests/blame/blame-test.h"

enum {
	CYCLES = 100000,
	PER = 10, /* kernels per cycle */
	SITES = 3,
	LATE_EVERY = 10,  /* cycles whose activities come after their sync */
	SETTLE_EVERY = 64 /* cycles between two flushes */
};

#define T0 (100 * SEC)
#define CYCLE_NS (1200 * US)
#define SYNC_NS (1000 * US)
#define STEP_NS (100 * US)
#define KERNEL_NS (150 * US)

static const char kernel[] = "step";

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
	struct gt_cct_node *L[SITES], *S;
	struct gt_blame_stats s;
	uint64_t ids[PER], wall = gt_clock__now();
	long rss_tenth = 0, rss_end;
	/* Per cycle: op 0 gets 125 us, ops 1-8 100 us, op 9 75 us (clipped). */
	const uint64_t per_site[SITES] = { 400 * US, 300 * US, 300 * US };

	CHECK(t);
	CHECK(gt_monitor__start() == 0);
	for (int k = 0; k < SITES; k++)
		L[k] = site(t, 0x1000 + 0x100 * (uintptr_t)k, GT_PH_GPU_KERNEL);
	S = site(t, 0x2000, GT_PH_GPU_SYNC);

	for (uint64_t c = 0; c < CYCLES; c++) {
		uint64_t tc = T0 + c * CYCLE_NS;
		int late = c % LATE_EVERY == 0;

		for (int k = 0; k < PER; k++)
			ids[k] = launch(t, L[k % SITES], 0);
		for (int k = 0; !late && k < PER; k++)
			complete(t, ids[k], tc + (uint64_t)k * STEP_NS,
				 tc + (uint64_t)k * STEP_NS + KERNEL_NS, 0, 1 + (uint64_t)k % 2, kernel);
		gt_blame__sync(t, S, tc, tc + SYNC_NS, 0, 0);
		for (int k = 0; late && k < PER; k++)
			complete(t, ids[k], tc + (uint64_t)k * STEP_NS,
				 tc + (uint64_t)k * STEP_NS + KERNEL_NS, 0, 1 + (uint64_t)k % 2, kernel);
		if (c % SETTLE_EVERY == SETTLE_EVERY - 1)
			settle(t);
		if (c == CYCLES / 10)
			rss_tenth = rss_kib();
		if (c % (CYCLES / 5) == 0) {
			gt_blame__stats(&s);
			printf("%7" PRIu64 " syncs: pending %" PRIu64 " (peak %" PRIu64
			       "), kept %" PRIu64 " (peak %" PRIu64 "), epochs peak %" PRIu64
			       ", intervals peak %" PRIu64 ", rss %ld KiB\n",
			       c, s.pending, s.pending_peak, s.retained, s.retained_peak,
			       s.epochs_peak, s.intervals_peak, rss_kib());
		}
	}
	settle(t);
	rss_end = rss_kib();
	gt_blame__stats(&s);
	printf("%d syncs, %d operations in %.2f s; pending peak %" PRIu64 ", kept peak %" PRIu64
	       ", epochs peak %" PRIu64 ", intervals peak %" PRIu64 "; rss %ld KiB at a tenth, %ld at the end\n",
	       CYCLES, CYCLES * PER, (double)(gt_clock__now() - wall) / 1e9, s.pending_peak,
	       s.retained_peak, s.epochs_peak, s.intervals_peak, rss_tenth, rss_end);

	CHECK_EQ_U(s.syncs, CYCLES);
	CHECK_EQ_U(s.settled, CYCLES);
	CHECK_EQ_U(s.forced, 0);
	CHECK_EQ_U(s.pending, 0);
	CHECK_EQ_U(gt_blame__in_flight(0), 0);
	/* Bounded by the window: GT_BLAME_RETAIN_NS of cycles, plus those
	 * between two flushes. */
	CHECK(s.retained_peak <= (GT_BLAME_RETAIN_NS / CYCLE_NS + 2 * SETTLE_EVERY) * PER);
	CHECK(s.intervals_peak <= GT_BLAME_RETAIN_NS / CYCLE_NS + 2 * SETTLE_EVERY);
	CHECK(s.pending_peak <= 2 * SETTLE_EVERY);
	CHECK(s.epochs_peak <= s.pending_peak + 1);
	CHECK(rss_end - rss_tenth < 2048);

	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE), (uint64_t)CYCLES * SYNC_NS);
	CHECK_EQ_U(gt_cct__get(S, GT_M_CPU_IDLE_OVERHEAD), 0);
	for (int k = 0; k < SITES; k++)
		CHECK_EQ_U(incl(L[k], GT_M_CPU_IDLE_CAUSE), (uint64_t)CYCLES * per_site[k]);

	gt_monitor__stop();
	gt_blame__stats(&s);
	/* Each cycle's kernels cover [0, 1050 us] of it without a gap. */
	CHECK_EQ_U(s.busy_ns[0], (uint64_t)CYCLES * (9 * STEP_NS + KERNEL_NS));
	CHECK_EQ_U(s.retained + s.epochs + s.intervals + s.pending, 0);
	return 0;
}
