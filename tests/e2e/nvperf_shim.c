/* SPDX-License-Identifier: MIT */
/*
 * Stands for a vendor's measurement library (its file name starts as
 * CUPTI's PC-sampling host library's, libnvperf_host): CPU time spent in it
 * is the measurement's, not the program's. gt_shim_burn uses about ns of
 * CPU, as plain_cpu.c's burn() does (no clock read in its long loop).
 */
#include <stdint.h>
#include <time.h>

void gt_shim_burn(uint64_t ns);

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile double sink;

__attribute__((noinline, visibility("default"))) void gt_shim_burn(uint64_t ns)
{
	uint64_t t0 = process_cpu_ns(), spent = 0, done = 0, n = 1u << 16, rest;
	double x = 0;

	while (spent < ns / 8) {
		for (uint64_t i = 0; i < n; i++)
			x += (double)i * 1e-9;
		done += n;
		n *= 2;
		spent = process_cpu_ns() - t0;
	}
	rest = spent < ns ? (uint64_t)((double)done * (double)(ns - spent) / (double)spent) : 0;
	for (uint64_t i = 0; i < rest; i++)
		x += (double)i * 1e-9;
	sink = x;
}
