/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_PROFILE_TEST_H
#define GT_TESTS_PROFILE_TEST_H

/* Shared by the profile tests (harness: tests/unit/test.h): the sample
 * profile and its node ids, and the helpers that write and read profiles in
 * memory. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/profile.h"
#include "tests/unit/test.h"

#define MS 1000000ull /* ns */

extern const char weird_name[];

/* The sample profile's nodes, in the order build_sample makes them. */
enum {
	N_ROOT, N_MAIN, N_RUN_A, N_PAR_A, N_COMPUTE, N_IBAR_A, N_PAR_NESTED, N_INNER, N_BAR_NESTED,
	N_RUN_B, N_PAR_B, N_ANON, N_WEIRD, N_LONG, N__COUNT
};

uint32_t frame(struct gt_profile *p, uint32_t parent, const char *fn, const char *file, uint32_t line,
	       uint32_t module, uint64_t offset);
int build_sample(struct gt_profile *p);
int to_memory(const struct gt_profile *p, char **data, size_t *len);
int from_memory(struct gt_profile *p, const void *data, size_t len, char *why, size_t whylen);
int streq(const char *a, const char *b);
int same_profile(const struct gt_profile *a, const struct gt_profile *b);
uint32_t crc32_of(const uint8_t *d, size_t n);
void fix_crc(uint8_t *d, size_t len);
uint64_t rng(void);
int exercise(const struct gt_profile *p);

void test_build(void);
void test_totals(void);
void test_roundtrip(void);
void test_write_rejects_broken(void);
void test_truncated(void);
void test_flips(void);
void test_hostile(void);
void test_report(void);
void test_report_sparse(void);
void test_classes_and_linkage(void);

#endif
