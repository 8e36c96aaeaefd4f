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

/* The sampling signal handler, on this thread, writes *samples. */
static inline void until_sample(const volatile uint64_t *samples)
{
	uint64_t n = *samples;
	volatile double x = 1;

	while (*samples == n)
		x = x * 1.0000001 + 1e-9;
}

static inline uint64_t spin(uint64_t ns, const volatile uint64_t *samples)
{
	uint64_t t0 = thread_cpu_ns(), t;
	volatile double x = 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
		t = thread_cpu_ns();
	} while (t - t0 < ns);
	until_sample(samples);
	return thread_cpu_ns() - t0;
}

uint64_t blame_spin_idle(uint64_t ns, const volatile uint64_t *samples)
{
	return spin(ns, samples);
}

uint64_t blame_spin_busy(uint64_t ns, const volatile uint64_t *samples)
{
	return spin(ns, samples);
}

uint64_t blame_spin_covered(uint64_t ns, const volatile uint64_t *samples)
{
	return spin(ns, samples);
}

uint64_t blame_spin_mixed(uint64_t ns, const volatile uint64_t *samples)
{
	return spin(ns, samples);
}

void blame_spin_align(const volatile uint64_t *samples)
{
	until_sample(samples);
}
