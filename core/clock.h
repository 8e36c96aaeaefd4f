/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_CLOCK_H
#define GT_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The one clock of the tool: CLOCK_MONOTONIC in ns. Every timestamp a backend
 * hands over (device or host) is converted to it. Async-signal-safe. */
static inline uint64_t gt_clock__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
