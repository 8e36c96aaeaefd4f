/* SPDX-License-Identifier: MIT */
/*
 * The cost of an NVTX push/pop pair: PAIRS pairs (argv[1], default 200000)
 * at one call site, DEPTH frames (argv[2], default 8) below main, each
 * nesting nothing. Prints "pushpop: DEPTH frames NS ns per pair" on stdout,
 * from the wall clock around the whole loop (after a warm-up of 1000 pairs,
 * which also takes NVTX's first-call initialization out of the figure).
 */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void pairs(long n)
{
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
}

/* depth frames more, then the loop */
__attribute__((noinline)) static void below(int depth, long n)
{
	if (depth > 0)
		below(depth - 1, n);
	else
		pairs(n);
	__asm__ volatile("" ::: "memory"); /* no tail call: the frames stay */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int depth = argc > 2 ? atoi(argv[2]) : 8;
	uint64_t t0;

	below(depth, 1000);
	t0 = now_ns();
	below(depth, n);
	printf("pushpop: %d frames %.1f ns per pair\n", depth, (double)(now_ns() - t0) / (double)n);
	return 0;
}
