/* SPDX-License-Identifier: MIT */
/* A library that dlclose'd.c opens, runs and closes before it exits: its
 * CPU time must still be named. */
#include <time.h>

__attribute__((visibility("default"))) double plugin_burn(double secs);

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) double plugin_burn(double secs)
{
	double t0 = cpu_s(), x = 0;

	/* The clock read about once a millisecond: a thread that reads its
	 * CPU-time clock every few microseconds can lose its CPU-time timer's
	 * signals on a loaded machine (seen on Linux 6.18). */
	while (cpu_s() - t0 < secs)
		for (int i = 0; i < 1000000; i++) /* LINE_BURN */
			x = x * 0.999 + i;
	return x;
}
