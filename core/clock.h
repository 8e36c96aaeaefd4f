/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_CLOCK_H
#define GT_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The one timeline of the tool: CLOCK_MONOTONIC in ns. Every timestamp a
 * backend hands over (device or host) is converted to it. Async-signal-safe. */
static inline uint64_t gt_clock__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A cheaper counter for durations measured inside runtime callbacks, where a
 * clock_gettime per event is most of the tool's cost: the x86 time-stamp
 * counter when the kernel itself keeps time with it (then it runs at a
 * constant rate and agrees across CPUs), else CLOCK_MONOTONIC ns. Only
 * differences of ticks mean anything; gt_clock__ticks_to_ns converts them.
 */
extern int gt_clock_use_tsc;
extern double gt_clock_ns_per_tick;

void gt_clock__init(void);

static inline uint64_t gt_clock__ticks(void)
{
#if defined(__x86_64__)
	if (gt_clock_use_tsc)
		return __builtin_ia32_rdtsc();
#endif
	return gt_clock__now();
}

static inline uint64_t gt_clock__ticks_to_ns(uint64_t ticks)
{
	/* Through int64_t: x86-64 converts signed integers in one
	 * instruction each way, unsigned ones in a dozen. Durations are far
	 * below 2^63 ticks. */
	return gt_clock_use_tsc ? (uint64_t)(int64_t)((double)(int64_t)ticks * gt_clock_ns_per_tick) : ticks;
}

#endif
