/* SPDX-License-Identifier: MIT */
/*
 * What a sampled OpenMP instance's time stands for (ompt/ompt-internal.h):
 * a period of instances up to a cap of a period of thresholds, the rest
 * once, so that an instance the machine held up is not taken sixteen
 * times; and the cap in ticks from the threshold in ns.
 */
#include "core/clock.h"
#include "ompt/ompt-internal.h"
#include "tests/unit/test.h"

static void test_below_cap(void)
{
	CHECK_EQ_U(ompt__sampled_ticks(0, 100), 0);
	CHECK_EQ_U(ompt__sampled_ticks(10, 100), 10 * OMP_TASK_SAMPLE_EVERY);
	CHECK_EQ_U(ompt__sampled_ticks(100, 100), 100 * OMP_TASK_SAMPLE_EVERY);
}

static void test_beyond_cap(void)
{
	/* 1 tick past the cap, and a thread held up for 10,000 times it. */
	CHECK_EQ_U(ompt__sampled_ticks(101, 100), 100 * OMP_TASK_SAMPLE_EVERY + 1);
	CHECK_EQ_U(ompt__sampled_ticks(1000000, 100), 100 * OMP_TASK_SAMPLE_EVERY + 999900);
}

static void test_cap_in_ticks(void)
{
	uint64_t cap = 0;

	/* Without a TSC, ticks are ns. */
	gt_clock_use_tsc = 0;
	CHECK_EQ_U(ompt__sample_cap(&cap, 20000), OMP_TASK_SAMPLE_EVERY * 20000 + 1);
	/* Set once: a later threshold does not move it. */
	CHECK_EQ_U(ompt__sample_cap(&cap, 5000), OMP_TASK_SAMPLE_EVERY * 20000 + 1);
	/* A TSC of 2 ticks a ns. */
	cap = 0;
	gt_clock_use_tsc = 1;
	gt_clock_ns_per_tick = 0.5;
	CHECK_EQ_U(ompt__sample_cap(&cap, 5000), 2 * OMP_TASK_SAMPLE_EVERY * 5000 + 1);
}

TEST_MAIN(TEST_CASE(test_below_cap), TEST_CASE(test_beyond_cap), TEST_CASE(test_cap_in_ticks))
