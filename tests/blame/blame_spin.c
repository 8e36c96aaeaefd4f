/* SPDX-License-Identifier: MIT */
/*
 * CPU work for the GPU-idle test, in a load module of its own: the tool,
 * linked into the test program, elides the program's frames as its own, so
 * the samples taken here hang under these functions, as under a user's.
 */
#include "tests/blame/blame_spin.h"

#include <stdint.h>
#include <time.h>

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until the calling thread has used @ns of CPU time; returns what it used. */
static inline uint64_t spin(uint64_t ns)
{
	uint64_t t0 = thread_cpu_ns(), t;
	volatile double x = 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
		t = thread_cpu_ns();
	} while (t - t0 < ns);
	return t - t0;
}

uint64_t blame_spin_idle(uint64_t ns)
{
	return spin(ns);
}

uint64_t blame_spin_busy(uint64_t ns)
{
	return spin(ns);
}

uint64_t blame_spin_mixed(uint64_t ns)
{
	return spin(ns);
}
