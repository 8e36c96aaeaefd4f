/* SPDX-License-Identifier: MIT */
/*
 * PC sampling without a GPU (gpu/cupti/pcsamp.c): a stand-in CUPTI hands
 * the backend two sampled PCs of one kernel launched from two call sites;
 * the samples land at their source lines, in their stall classes, shared
 * between the launch sites by the GPU time each measured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/cupti/cupti-internal.h"
#include "tests/cupti/cupti-test.h"
#include "tests/unit/test.h"

/* A CUPTI with two PCs of one kernel sampled: 0x10 (line 10) stalled on a
 * load 400 times and issuing 40 times, 0x20 (line 11) waiting on a result
 * 200 times; the not-issued subset of the load's samples (300) counts as
 * latency samples only, and the sample count not at all. */
static const char *const pc_reasons[] = {
	"smsp__pcsamp_sample_count", "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued", "smsp__pcsamp_warps_issue_stalled_wait",
	"smsp__pcsamp_warps_issue_stalled_selected",
};
static char pc_function[] = "_Z6kernelPf";
static int pc_calls;

static CUptiResult CUPTIAPI pc_num_reasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
	*p->numStallReasons = sizeof(pc_reasons) / sizeof(pc_reasons[0]);
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI pc_get_reasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
	for (size_t i = 0; i < p->numStallReasons; i++) {
		/* Indices need not be positions. */
		p->stallReasonIndex[i] = (uint32_t)(10 + i);
		snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", pc_reasons[i]);
	}
	return CUPTI_SUCCESS;
}

static void pc_set(CUpti_PCSamplingPCData *d, uint64_t pc, const uint32_t (*r)[2], size_t n)
{
	d->cubinCrc = 42;
	d->pcOffset = pc;
	d->functionIndex = 3;
	d->functionName = pc_function;
	d->stallReasonCount = n;
	for (size_t k = 0; k < n; k++) {
		d->stallReason[k].pcSamplingStallReasonIndex = r[k][0];
		d->stallReason[k].samples = r[k][1];
	}
}

static CUptiResult CUPTIAPI pc_get_data(CUpti_PCSamplingGetDataParams *p)
{
	static const uint32_t load[][2] = { { 11, 400 }, { 12, 300 }, { 14, 40 }, { 10, 740 } };
	static const uint32_t wait[][2] = { { 13, 200 } };

	CUpti_PCSamplingData *pc_buf = pc_fake_buffer();

	CHECK(p->pcSamplingData == pc_buf);
	if (pc_calls++ == 0) {
		pc_set(&pc_buf->pPcData[0], 0x10, load, 4);
		pc_set(&pc_buf->pPcData[1], 0x20, wait, 1);
		pc_buf->totalNumPcs = 2;
		pc_buf->totalSamples = 640;
	}
	pc_buf->remainingNumPcs = 0;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI pc_crc(CUpti_GetCubinCrcParams *p)
{
	p->cubinCrc = 42;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI pc_line(CUpti_GetSassToSourceCorrelationParams *p)
{
	CHECK(!strcmp(p->functionName, pc_function) && p->cubinSize == 16);
	p->fileName = strdup("k.cu");
	p->dirName = strdup("/src");
	p->lineNumber = p->pcOffset == 0x10 ? 10 : 11;
	return CUPTI_SUCCESS;
}

static struct gt_cct_node *pc_line_node(struct gt_cct_node *kernel, const char *line)
{
	for (struct gt_cct_node *c = kernel ? kernel->children : NULL; c; c = c->sibling)
		if (c->kind == GT_NODE_NAME && !strcmp((const char *)(uintptr_t)c->key, line))
			return c;
	return NULL;
}

/* Classes, source lines, and each kernel's samples shared among its launch
 * sites by the GPU time each measured (3:1), exactly. */
void test_pc_sampling(void)
{
	static const uint8_t cubin[16] = { 0x7f, 'E', 'L', 'F' };
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *a, *b, *l;

	CHECK(gt_cupti_pcsamp__class_of(pc_reasons[1]) == 0 && gt_cupti_pcsamp__class_of(pc_reasons[2]) == 7 &&
	      gt_cupti_pcsamp__class_of(pc_reasons[0]) < 0 &&
	      gt_cupti_pcsamp__class_of("smsp__pcsamp_warps_issue_stalled_something_new") == 6);
	pc_fake_install(&(const struct pc_fake){ .num_reasons = pc_num_reasons, .get_reasons = pc_get_reasons,
						 .get_data = pc_get_data, .cubin_crc = pc_crc, .sass_line = pc_line });
	CHECK(gt_cupti_pcsamp__on());
	a = pc_kernel_launch(t, 0xa, pc_function, 3000);
	b = pc_kernel_launch(t, 0xb, pc_function, 1000);
	CHECK(a && b);
	gt_cupti_pcsamp__context_created((CUcontext)0x1);
	CHECK(pc_fake_buffer() && pc_fake_buffer()->collectNumPcs > 2);
	gt_cupti_pcsamp__module_loaded(cubin, sizeof(cubin));
	gt_cupti_pcsamp__finish();
	gt_cupti_pcsamp__settle();

	l = pc_line_node(a, "k.cu:10");
	CHECK_EQ_U(metric_at(l, GT_M_GPC_SAMPLES), 330);
	CHECK_EQ_U(metric_at(l, GT_M_GPC_MEMORY), 300);
	CHECK_EQ_U(metric_at(l, GT_M_GPC_ISSUED), 30);
	/* The load's latency samples: counted apart, not in GPC_SAMPLES again. */
	CHECK_EQ_U(metric_at(l, GT_M_GPC_LATENCY), 225);
	l = pc_line_node(b, "k.cu:10");
	CHECK_EQ_U(metric_at(l, GT_M_GPC_SAMPLES), 110);
	CHECK_EQ_U(metric_at(l, GT_M_GPC_MEMORY), 100);
	l = pc_line_node(a, "k.cu:11");
	CHECK_EQ_U(metric_at(l, GT_M_GPC_EXEC), 150);
	CHECK_EQ_U(metric_at(pc_line_node(b, "k.cu:11"), GT_M_GPC_SAMPLES), 50);
	/* The kernel's own metrics are untouched. */
	CHECK_EQ_U(metric_at(a, GT_M_GKER), 3000);
	CHECK_EQ_U(metric_at(a, GT_M_GPC_SAMPLES), 0);
	/* The header's count is the samples placed, latency not counted twice. */
	CHECK(gt_tool__fact("pc_sampling") && !strncmp(gt_tool__fact("pc_sampling"), "640 samples, 0 dropped", 22));
}
