/* SPDX-License-Identifier: MIT */
/* core/hmap.h against a plain array, through growth and overwrites. */
#include <errno.h>
#include <stdint.h>

#include "core/hmap.h"
#include "tests/unit/test.h"

#define N 100000

static void test_against_array(void)
{
	static uint64_t want[N];
	struct gt_hmap m = { 0 };

	CHECK(gt_hmap__get(&m, 1) == NULL);
	/* Keys that collide in their low bits (addresses 64 bytes apart). */
	for (uint64_t i = 0; i < N; i++) {
		want[i] = i * 7 + 3;
		CHECK(gt_hmap__put(&m, 0x7f0000000000ull + i * 64, want[i]) == 0);
	}
	CHECK_EQ_U(m.used, N);
	CHECK(m.cap >= 2 * N && !(m.cap & (m.cap - 1)));
	for (uint64_t i = 0; i < N; i += 2)
		CHECK(gt_hmap__put(&m, 0x7f0000000000ull + i * 64, want[i] = i) == 0);
	CHECK_EQ_U(m.used, N);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t *v = gt_hmap__get(&m, 0x7f0000000000ull + i * 64);

		CHECK(v);
		CHECK_EQ_U(*v, want[i]);
	}
	CHECK(gt_hmap__get(&m, 0x7f0000000000ull + N * 64) == NULL);
	CHECK(gt_hmap__get(&m, 0x7f0000000000ull + 32) == NULL);
	gt_hmap__fini(&m);
	CHECK(m.cap == 0 && gt_hmap__get(&m, 0x7f0000000000ull) == NULL);
}

static void test_zero_key(void)
{
	struct gt_hmap m = { 0 };

	CHECK(gt_hmap__put(&m, 0, 5) == -EINVAL);
	CHECK(gt_hmap__get(&m, 0) == NULL);
	CHECK_EQ_U(m.used, 0);
	CHECK(gt_hmap__put(&m, 1, 5) == 0);
	CHECK(gt_hmap__get(&m, 0) == NULL);
	gt_hmap__fini(&m);
}

TEST_MAIN(TEST_CASE(test_against_array), TEST_CASE(test_zero_key))
