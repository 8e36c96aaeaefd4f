/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_GPU_MONITOR_TEST_H
#define GT_TESTS_GPU_MONITOR_TEST_H

/*
 * For tests and benchmarks of the monitor: wait until it has processed what
 * the calling thread (and whatever happened-before) delivered, so that the
 * measurement records are in their threads' channels (follow with
 * gt_monitor__drain for the caller's own) and the counters cover them.
 * gpu/monitor.h says why three rounds after a notify are enough: two for the
 * deliveries, one more for what a synchronization among them made the
 * monitor poll its backends for. Returns at once when the monitor is not
 * running, and when it stops.
 */
#include <time.h>

#include "gpu/monitor.h"

static inline void monitor_test__flush(void)
{
	struct gt_monitor_stats s;
	uint64_t first;

	if (!gt_monitor__running())
		return;
	gt_monitor__notify();
	gt_monitor__stats(&s);
	first = s.rounds;
	while (gt_monitor__running()) {
		struct timespec pause = { 0, 20000 };

		gt_monitor__stats(&s);
		if (s.rounds - first >= 3)
			return;
		/* Cut the monitor's idle sleep short. */
		gt_monitor__notify();
		nanosleep(&pause, NULL);
	}
}

#endif /* GT_TESTS_GPU_MONITOR_TEST_H */
