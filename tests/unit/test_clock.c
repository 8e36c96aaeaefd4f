/* SPDX-License-Identifier: MIT */
/* core/clock: durations in ticks against CLOCK_MONOTONIC, and ticks read on
 * one CPU never ahead of ticks read later on another. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "core/clock.h"
#include "tests/unit/test.h"

/* A 20 ms sleep timed both ways: the monotonic reads enclose the tick
 * reads, so a preemption between them only makes the monotonic interval
 * longer. The best of 5 tries agrees within 0.5 %. */
static void test_rate(void)
{
	double best = 1.0;

	gt_clock__init();
	fprintf(stderr, "clock: %s, %.4f ns per tick\n", gt_clock_use_tsc ? "TSC" : "CLOCK_MONOTONIC",
		gt_clock_ns_per_tick);
	for (int i = 0; i < 5; i++) {
		struct timespec d = { 0, 20000000 };
		uint64_t n0 = gt_clock__now(), t0 = gt_clock__ticks(), t1, n1;
		double err;

		nanosleep(&d, NULL);
		t1 = gt_clock__ticks();
		n1 = gt_clock__now();
		CHECK(t1 > t0 && n1 - n0 >= 20000000);
		err = 1.0 - (double)gt_clock__ticks_to_ns(t1 - t0) / (double)(n1 - n0);
		if (err < 0)
			err = -err;
		if (err < best)
			best = err;
	}
	fprintf(stderr, "clock: best disagreement over 20 ms %.5f\n", best);
	CHECK(best < 0.005);
}

/* Two threads on two CPUs hand a tick value back and forth: the receiver's
 * own read, made after it saw the value, is never smaller. */
static _Atomic uint64_t passed;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

#define ROUNDS 20000

static int cpu_other;

static void *receiver(void *arg)
{
	uint64_t *behind = arg;

	pin(cpu_other);
	for (uint64_t i = 1; i <= ROUNDS; i++) {
		uint64_t v;

		/* Acquire: pairs with the sender's release store. */
		while ((v = atomic_load_explicit(&passed, memory_order_acquire)) == 0)
			;
		/* rdtsc does not wait for earlier loads: a fence keeps
		 * the read after the one of v. */
#if defined(__x86_64__)
		__builtin_ia32_lfence();
#endif
		if (gt_clock__ticks() < v)
			(*behind)++;
		atomic_store_explicit(&passed, 0, memory_order_release);
	}
	return NULL;
}

static void test_across_cpus(void)
{
	cpu_set_t set;
	uint64_t behind = 0;
	pthread_t th;
	int first = -1;

	gt_clock__init();
	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (first < 0)
			first = c;
		else {
			cpu_other = c;
			break;
		}
	}
	if (cpu_other <= first) {
		fprintf(stderr, "clock: one CPU only, nothing to compare\n");
		return;
	}
	CHECK(pthread_create(&th, NULL, receiver, &behind) == 0);
	pin(first);
	for (int i = 0; i < ROUNDS; i++) {
		/* Acquire: pairs with the receiver's release store of 0. */
		while (atomic_load_explicit(&passed, memory_order_acquire) != 0)
			;
		/* Release: pairs with the receiver's acquire load. */
		atomic_store_explicit(&passed, gt_clock__ticks(), memory_order_release);
	}
	CHECK(pthread_join(th, NULL) == 0);
	fprintf(stderr, "clock: CPUs %d and %d, %llu of %d reads behind\n", first, cpu_other,
		(unsigned long long)behind, ROUNDS);
	CHECK_EQ_U(behind, 0);
}

TEST_MAIN(TEST_CASE(test_rate), TEST_CASE(test_across_cpus))
