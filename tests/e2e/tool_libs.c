/* SPDX-License-Identifier: MIT */
/*
 * A program that spends CPU time in its own code and in a library named as
 * a vendor's measurement library (nvperf_shim.c): the first is its work,
 * the second the measurement's. Each burns about SECONDS (argv[1], default
 * 0.3), measured by the program on CLOCK_PROCESS_CPUTIME_ID and printed on
 * stderr as "tool_libs times: app_ns A tool_ns T total_ns N".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void gt_shim_burn(uint64_t ns);

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile double sink;

/* About ns of CPU (plain_cpu.c says why it reads the clock so rarely). */
__attribute__((noinline)) static void app_burn(uint64_t ns)
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

int main(int argc, char **argv)
{
	uint64_t ns = (uint64_t)((argc > 1 ? atof(argv[1]) : 0.3) * 1e9), t0, t1, t2;

	t0 = process_cpu_ns();
	app_burn(ns);
	t1 = process_cpu_ns();
	gt_shim_burn(ns);
	t2 = process_cpu_ns();
	printf("tool_libs: done\n");
	fprintf(stderr, "tool_libs times: app_ns %llu tool_ns %llu total_ns %llu\n", (unsigned long long)(t1 - t0),
		(unsigned long long)(t2 - t1), (unsigned long long)t2);
	return 0;
}
