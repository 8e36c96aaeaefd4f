/* SPDX-License-Identifier: MIT */
/*
 * The cost of a calling context at a repeated call site: the runtime
 * stand-in calls the tool, which asks for the context of its caller's call
 * site, as at every OpenMP construct. Three ways in one run: an empty
 * callback (the baseline the call chain itself costs), the memoized lookup,
 * and a cold unwind every time. Depth: the call site sits DEPTH user frames
 * below main. Budget: memoized <= 50 ns over the baseline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/unit/unwind_probe.h"

static volatile int sink;
static void (*callback)(void *ra, int depth);

static void empty_cb(void *ra, int depth)
{
	(void)ra, (void)depth;
	sink++;
}

__attribute__((noinline)) static void site(void)
{
	rt_call(callback, 0);
	sink++;
}

__attribute__((noinline)) static void nest(int n)
{
	if (n)
		nest(n - 1);
	else
		site();
	sink++;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double per_call(void (*cb)(void *, int), int depth, long reps)
{
	double best = 1e30;

	callback = cb;
	for (int trial = 0; trial < 5; trial++) {
		double t0 = now_ns(), t;

#pragma clang loop unroll(disable)
		for (long i = 0; i < reps; i++)
			nest(depth);
		t = (now_ns() - t0) / (double)reps;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 10;
	double base, memo, cold, fast;

	probe_init(1);
	base = per_call(empty_cb, depth, 2000000);
	memo = per_call(probe_context, depth, 2000000);
	fast = per_call(probe_ips_context, depth, 200000);
	probe_init(0);
	cold = per_call(probe_context, depth, 20000);
	printf("calling context at a repeated call site, %d user frames below main\n", depth + 2);
	printf("  baseline (empty callback)   %8.1f ns per call\n", base);
	printf("  memoized                    %8.1f ns per call (+%.1f ns)\n", memo, memo - base);
	printf("  cold unwind                 %8.1f ns per call (+%.1f ns)\n", cold, cold - base);
	printf("  fast unwind (no memo)       %8.1f ns per call (+%.1f ns)\n", fast, fast - base);
	printf("  cold / memoized (own cost)  %8.1fx\n", (cold - base) / (memo - base));
	printf("  budget: memoized <= 50 ns: %s\n", memo - base <= 50.0 ? "PASS" : "OVER");
	return 0;
}
