/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "tests/unit/test.h"

static void defaults(void)
{
	char *env[] = { "PATH=/bin", NULL };

	CHECK(gt_config__load(env) == 0);
	CHECK_EQ_U(gt_config.sample_hz, 200);
	CHECK_EQ_U(gt_config.disable, 0);
	CHECK(gt_config.output == NULL);
	CHECK_EQ_U(gt_config.report_top, 30);
}

static void valid_values(void)
{
	char *env[] = { "GPUTOOL_SAMPLE_HZ=1000", "GPUTOOL_DISABLE=yes", "GPUTOOL_OUTPUT=/tmp/x",
			"GPUTOOL_VERBOSE=3", NULL };

	CHECK(gt_config__load(env) == 0);
	CHECK_EQ_U(gt_config.sample_hz, 1000);
	CHECK_EQ_U(gt_config.disable, 1);
	CHECK(!strcmp(gt_config.output, "/tmp/x"));
	CHECK_EQ_U(gt_config.verbose, 3);
}

static void zero_disables_sampling(void)
{
	char *env[] = { "GPUTOOL_SAMPLE_HZ=0", NULL };

	CHECK(gt_config__load(env) == 0);
	CHECK_EQ_U(gt_config.sample_hz, 0);
}

static void malformed_values_use_defaults(void)
{
	char *env[] = { "GPUTOOL_SAMPLE_HZ=abc", "GPUTOOL_DISABLE=maybe", "GPUTOOL_REPORT_TOP=0",
			"GPUTOOL_VERBOSE=-1", "GPUTOOL_MAX_DEPTH=99999", "GPUTOOL_SAMPLE_HZ2=1", NULL };

	/* Five bad values and one unknown name. */
	CHECK_EQ_U(gt_config__load(env), 6);
	CHECK_EQ_U(gt_config.sample_hz, 200);
	CHECK_EQ_U(gt_config.disable, 0);
	CHECK_EQ_U(gt_config.report_top, 30);
	CHECK_EQ_U(gt_config.verbose, 1);
	CHECK_EQ_U(gt_config.max_depth, 256);
}

static void out_of_range(void)
{
	char *env[] = { "GPUTOOL_SAMPLE_HZ=10001", NULL };
	char *env2[] = { "GPUTOOL_SAMPLE_HZ=12x", NULL };
	char *env3[] = { "GPUTOOL_SAMPLE_HZ=", NULL };

	CHECK_EQ_U(gt_config__load(env), 1);
	CHECK_EQ_U(gt_config.sample_hz, 200);
	CHECK_EQ_U(gt_config__load(env2), 1);
	CHECK_EQ_U(gt_config__load(env3), 1);
}

static void unknown_names(void)
{
	char *env[] = { "GPUTOOL_BOGUS=1", "GPUTOOLX=1", "XGPUTOOL_SAMPLE_HZ=5", NULL };

	CHECK_EQ_U(gt_config__load(env), 1);
}

static void escaped(void)
{
	char b[16];

	CHECK(!strcmp(gt_log__escape("a\nb\tc\\d", b, sizeof(b)), "a\\nb\\tc\\\\d"));
	CHECK(!strcmp(gt_log__escape("\x1b[2J\x7f", b, sizeof(b)), "\\x1b[2J\\x7f"));
	/* Cut at an escape's boundary, said with "...", within the buffer. */
	CHECK(!strcmp(gt_log__escape("0123456789\n12345", b, sizeof(b)), "0123456789\\n..."));
	CHECK(!strcmp(gt_log__escape("0123456789ab\n123", b, sizeof(b)), "0123456789ab..."));
	CHECK(!strcmp(gt_log__escape("0123456789abcde", b, sizeof(b)), "0123456789abcde"));
	CHECK(!strcmp(gt_log__escape("0123456789abcdef", b, sizeof(b)), "0123456789ab..."));
	CHECK(!strcmp(gt_log__escape(NULL, b, sizeof(b)), ""));
}

TEST_MAIN({ "defaults", defaults }, { "escaped", escaped }, { "valid values", valid_values },
	  { "zero disables sampling", zero_disables_sampling },
	  { "malformed values use defaults", malformed_values_use_defaults },
	  { "out of range", out_of_range }, { "unknown names", unknown_names })
