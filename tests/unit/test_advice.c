/* SPDX-License-Identifier: MIT */
/* report/advice/: the models on figures worked by hand (docs/ADVICE.md),
 * and the kinds list every writer reads. */
#include <math.h>

#include "report/advice/model.h"
#include "report/next.h"
#include "test.h"

static int near(double a, double b)
{
	return fabs(a - b) < 1e-12;
}

/* T'/T = W_R (1 - c) + (1 - W_R) (w - f) / w */
static void test_stall(void)
{
	CHECK(near(gt_advice_model__stall(0.5, 0.5, 0.25, 0), 0.75));
	CHECK(near(gt_advice_model__stall(0.4, 0.5, 0.1, 0.2), 0.4 * 0.8 + 0.6 * 0.8));
	/* More removed than waited: the waiting goes, no further. */
	CHECK(near(gt_advice_model__stall(0.5, 0.2, 0.3, 0), 0.5));
	/* Nothing waited: the other cycles stay. */
	CHECK(near(gt_advice_model__stall(0.5, 0, 0, 0), 1.0));
}

/* T'/T = W_R (1 - c) / (1 - w'^n), w' = (w - f) / (1 - f) */
static void test_gone(void)
{
	CHECK(near(gt_advice_model__gone(0.5, 0.6, 0.2, 0.1, 2), 0.45 / 0.75));
	/* Fewer than one warp per scheduler: the first model. */
	CHECK(near(gt_advice_model__gone(0.5, 0.6, 0.2, 0.1, 0.5), gt_advice_model__stall(0.5, 0.6, 0.2, 0.1)));
	/* All of it waited on the cause: the warps then issue every cycle. */
	CHECK(near(gt_advice_model__gone(0.3, 0.7, 0.7, 0, 8), 0.3));
}

/* The first model with f = b + g_sum - g_max */
static void test_barrier(void)
{
	/* 0.1 at barriers, loads of 0.2 and 0.1 serialized: f = 0.2. */
	CHECK(near(gt_advice_model__barrier(0.5, 0.8, 0.1, 0.3, 0.2), 0.5 + 0.5 * 0.6 / 0.8));
	/* One load: nothing to overlap it with, only the barrier's waits. */
	CHECK(near(gt_advice_model__barrier(0.5, 0.8, 0.1, 0.3, 0.3), gt_advice_model__stall(0.5, 0.8, 0.1, 0)));
}

/* T'/T = 1 - (1 - m) (1 - R(n) / R(n')), R(n) = 1 - (1 - e)^n */
static void test_occupancy(void)
{
	/* e = 0.5: R(1) = 0.5, R(2) = 0.75; no memory waits: 2/3. */
	CHECK(near(gt_advice_model__occupancy(0, 0.5, 1, 2), 0.5 / 0.75));
	/* A fifth of the waits on memory: only the rest shrink. */
	CHECK(near(gt_advice_model__occupancy(0.2, 0.5, 1, 2), 1 - 0.8 * (1 - 0.5 / 0.75)));
	/* All waits on memory: more warps hide none of them. */
	CHECK(near(gt_advice_model__occupancy(1, 0.5, 1, 2), 1.0));
}

/* R(n): independent warps, each ready the share e of its cycles. */
static void test_issue(void)
{
	CHECK(near(gt_advice_model__issue(0.5, 2), 0.75));
	CHECK(near(gt_advice_model__issue(0.2, 1), 0.2));
	/* Under one warp per scheduler: the schedulers with one. */
	CHECK(near(gt_advice_model__issue(0.2, 0.5), 0.1));
	CHECK(gt_advice_model__issue(0.2, 0) == 0 && gt_advice_model__issue(0, 4) == 0);
}

/* Thread increase: T'/T = u R(n) / R(n'). */
static void test_threads(void)
{
	/* Half-empty warps, 1 -> 2 warps per scheduler at e = 0.5. */
	CHECK(near(gt_advice_model__threads(0.5, 0.5, 1, 2), 0.5 * 0.5 / 0.75));
	/* Full warps already, no more warps: no change. */
	CHECK(near(gt_advice_model__threads(1, 0.3, 4, 4), 1.0));
}

/* Block increase: T'/T = sms R(n) / (sms' R(n')). */
static void test_blocks(void)
{
	/* 2 SMs with 4 warps per scheduler -> 8 SMs with 1, e = 0.5:
	 * R(4) = 15/16, R(1) = 1/2. */
	CHECK(near(gt_advice_model__blocks(2, 8, 0.5, 4, 1), 2 * (15.0 / 16) / (8 * 0.5)));
}

static void test_divergence(void)
{
	CHECK(near(gt_advice_model__divergence(0, 0, 0.25), 0.75));
	CHECK(near(gt_advice_model__divergence(1, 0.4, 0.25), 0.4 * 0.75 + 0.6));
}

static void test_launch_and_program(void)
{
	CHECK(near(gt_advice_model__launch_speedup(100, 300), 4));
	CHECK(near(gt_advice_model__program(1000, 250), 1000.0 / 750.0));
	CHECK(gt_advice_model__program(1000, 1000) == 0);
	CHECK(gt_advice_model__program(1000, 2000) == 0);
}

/* wait = waits / issued: cycles waited per global instruction issued. */
static void test_access_wait(void)
{
	CHECK(near(gt_advice_model__access_wait(8000, 10), 800));
	CHECK(gt_advice_model__access_wait(8000, 10) >= GT_ADVICE_MODEL_DRAM_WAIT);
	CHECK(gt_advice_model__access_wait(8000, 100) < GT_ADVICE_MODEL_DRAM_WAIT);
	/* No global instruction issued: no figure. */
	CHECK(gt_advice_model__access_wait(8000, 0) == 0);
}

/* OpenMP: imbalance wait / team; fork/join par - work / team; Amdahl
 * serial (1 - 1 / team); tasks (work - tasks) / team. */
static void test_openmp(void)
{
	/* 2 threads, one works 3 ms, the other 1 ms: the second waits 2 ms,
	 * the first none; balanced, both work 2 ms: 1 ms saved. */
	CHECK(near(gt_advice_model__imbalance(2e6, 2), 1e6));
	CHECK(gt_advice_model__imbalance(1e6, 0) == 0);
	/* 100 instances of 10 us on 4 threads working 1 us each. */
	CHECK(near(gt_advice_model__fork_join(100 * 10e3, 100 * 4 * 1e3, 4), 100 * 9e3));
	/* More work than wall time (a clock's rounding): nothing saved. */
	CHECK(gt_advice_model__fork_join(1e3, 8e3, 4) == 0);
	CHECK(near(gt_advice_model__amdahl(1e9, 4), 0.75e9));
	CHECK(gt_advice_model__amdahl(1e9, 1) == 0);
	CHECK(near(gt_advice_model__tasks(5e6, 2e6, 2), 1.5e6));
	CHECK(gt_advice_model__tasks(2e6, 5e6, 2) == 0);
}

/* Every kind has a distinct id, a title and something to try. */
static void test_kinds(void)
{
	for (int k = 0; k < GT_NEXT_KINDS; k++) {
		CHECK(gt_next__id(k)[0] && strcmp(gt_next__id(k), "?"));
		CHECK(gt_next__title(k)[0] && gt_next__todo(k)[0]);
		for (int j = 0; j < k; j++)
			CHECK(strcmp(gt_next__id(k), gt_next__id(j)));
	}
	CHECK(gt_next__of_kernel(GT_NEXT_GPU_LOCAL) && gt_next__of_kernel(GT_NEXT_LAUNCH_BOUND));
	CHECK(!gt_next__of_kernel(GT_NEXT_PAGEABLE) && !gt_next__of_kernel(GT_NEXT_OCL_RESTRICT));
	CHECK(!strcmp(gt_next__subject(GT_NEXT_PAGEABLE), "copies") && !gt_next__subject(GT_NEXT_OVERLAP));
	CHECK(!gt_next__of_kernel(GT_NEXT_OMP_IMBALANCE) && !strcmp(gt_next__id(GT_NEXT_OMP_SERIAL), "omp-serial"));
}

TEST_MAIN(TEST_CASE(test_stall), TEST_CASE(test_gone), TEST_CASE(test_barrier), TEST_CASE(test_occupancy),
	  TEST_CASE(test_divergence), TEST_CASE(test_issue), TEST_CASE(test_threads), TEST_CASE(test_blocks),
	  TEST_CASE(test_launch_and_program), TEST_CASE(test_access_wait), TEST_CASE(test_openmp), TEST_CASE(test_kinds))
