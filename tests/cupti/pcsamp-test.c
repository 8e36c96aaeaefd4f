/* SPDX-License-Identifier: MIT */
/*
 * PC sampling without a GPU (gpu/cupti/pcsamp.c): a stand-in CUPTI hands
 * the backend two sampled PCs of one kernel launched from two call sites;
 * the samples land at their source lines, in their stall classes, shared
 * between the launch sites by the GPU time each measured.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/config.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/pcsamp-internal.h"
#include "tests/cupti/cupti-test.h"
#include "tests/unit/test.h"

/* A CUPTI with two PCs of one kernel sampled: 0x10 (line 10) stalled on a
 * load 400 times, 0x20 (line 11) waiting on a result 200 times and, as
 * CUPTI reports an issuing warp at its next instruction, 0x10 issuing 40
 * times (reported at 0x20); the not-issued subset of the load's samples
 * (300) counts as latency samples only, and the sample count not at all. */
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
	static const uint32_t load[][2] = { { 11, 400 }, { 12, 300 }, { 10, 700 } };
	static const uint32_t wait[][2] = { { 13, 200 }, { 14, 40 } };

	CUpti_PCSamplingData *pc_buf = pc_fake_buffer();

	CHECK(p->pcSamplingData == pc_buf);
	if (pc_calls++ == 0) {
		pc_set(&pc_buf->pPcData[0], 0x10, load, 3);
		pc_set(&pc_buf->pPcData[1], 0x20, wait, 2);
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
	/* 0x10's issued samples, reported at 0x20: none stay there. */
	CHECK_EQ_U(metric_at(l, GT_M_GPC_ISSUED), 0);
	CHECK_EQ_U(metric_at(l, GT_M_GPC_SAMPLES), 150);
	CHECK_EQ_U(metric_at(pc_line_node(b, "k.cu:11"), GT_M_GPC_SAMPLES), 50);
	/* The kernel's own metrics are untouched. */
	CHECK_EQ_U(metric_at(a, GT_M_GKER), 3000);
	CHECK_EQ_U(metric_at(a, GT_M_GPC_SAMPLES), 0);
	/* The header's count is the samples placed, latency not counted twice. */
	CHECK(gt_tool__fact("pc_sampling") && !strncmp(gt_tool__fact("pc_sampling"), "640 samples, 0 dropped", 22));
}

/* ---- instruction counts (gpu/cupti/sasscount.c) ---- */

/* A CUPTI whose SASS metrics counted two instructions of the kernel: 0x10
 * (line 10) 400 times by warps, by 16 threads each; 0x20 (line 11) 100
 * times by full warps. */
enum { SC_INST = 7, SC_THREADS = 9 };
static int sc_enabled, sc_disabled, sc_unsets, sc_flushes;

static CUptiResult CUPTIAPI sc_init(CUpti_Profiler_Initialize_Params *p)
{
	(void)p;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_chip(CUpti_Device_GetChipName_Params *p)
{
	p->pChipName = "GH100";
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_props(CUpti_SassMetrics_GetProperties_Params *p)
{
	CHECK(!strcmp(p->pChipName, "GH100"));
	p->metric.metricId = !strcmp(p->pMetricName, "smsp__sass_inst_executed") ? SC_INST : SC_THREADS;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_set(CUpti_SassMetricsSetConfig_Params *p)
{
	CHECK(p->numOfMetricConfig == 2 && p->deviceIndex == 0);
	CHECK(p->pConfigs[0].outputGranularity == CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU);
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_unset(CUpti_SassMetricsUnsetConfig_Params *p)
{
	CHECK(p->deviceIndex == 0);
	sc_unsets++;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_enable(CUpti_SassMetricsEnable_Params *p)
{
	CHECK(p->ctx == (CUcontext)0x1 && p->enableLazyPatching);
	sc_enabled++;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_disable(CUpti_SassMetricsDisable_Params *p)
{
	CHECK(p->ctx == (CUcontext)0x1);
	sc_disabled++;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_data_props(CUpti_SassMetricsGetDataProperties_Params *p)
{
	/* Everything was counted before the first flush; CUPTI starts from
	 * nothing after it. */
	p->numOfPatchedInstructionRecords = sc_flushes ? 0 : 3;
	p->numOfInstances = 1;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_flush(CUpti_SassMetricsFlushData_Params *p)
{
	static const uint64_t v[2][2] = { { 400, 400 * 16 }, { 100, 100 * 32 } };

	CHECK(p->numOfPatchedInstructionRecords == 3 && p->numOfInstances == 1);
	sc_flushes++;
	/* CUPTI's own driver calls come back to the backend's callbacks from
	 * inside the flush: a synchronization, a context's end. They must
	 * return at once (the counting lock is this thread's). */
	gt_cupti_sasscount__synced();
	gt_cupti_sasscount__context_ending((CUcontext)0x1);
	/* Another kernel of the module at the same offset, with the same
	 * function index (as CUDA 13.0 gives them): counted apart. */
	p->pMetricsData[2].cubinCrc = 42;
	p->pMetricsData[2].functionIndex = 3;
	p->pMetricsData[2].functionName = "_Z5otherPf";
	p->pMetricsData[2].pcOffset = 0x10;
	p->pMetricsData[2].pInstanceValues[0] = (CUpti_SassMetrics_InstanceValue){ SC_INST, 1000 };
	for (int i = 0; i < 2; i++) {
		CUpti_SassMetrics_Data *d = &p->pMetricsData[i];

		d->cubinCrc = 42;
		d->functionIndex = 3;
		d->functionName = pc_function;
		d->pcOffset = i ? 0x20 : 0x10;
		/* The thread count first: records name their metrics. */
		d->pInstanceValues[0] = (CUpti_SassMetrics_InstanceValue){ SC_THREADS, v[i][1] };
		d->pInstanceValues[1] = (CUpti_SassMetrics_InstanceValue){ SC_INST, v[i][0] };
	}
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_line(CUpti_GetSassToSourceCorrelationParams *p)
{
	if (strcmp(p->functionName, "_Z5otherPf"))
		return pc_line(p);
	p->fileName = strdup("k.cu");
	p->dirName = strdup("/src");
	p->lineNumber = 20;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sc_device(CUcontext ctx, uint32_t *dev)
{
	(void)ctx;
	*dev = 0;
	return CUPTI_SUCCESS;
}

/* The stand-in CUPTI's SASS metrics API, above. */
static void sc_fake_install(void)
{
	gt_cupti_lib.cuptiProfilerInitialize = sc_init;
	gt_cupti_lib.cuptiDeviceGetChipName = sc_chip;
	gt_cupti_lib.cuptiSassMetricsGetProperties = sc_props;
	gt_cupti_lib.cuptiSassMetricsSetConfig = sc_set;
	gt_cupti_lib.cuptiSassMetricsUnsetConfig = sc_unset;
	gt_cupti_lib.cuptiSassMetricsEnable = sc_enable;
	gt_cupti_lib.cuptiSassMetricsDisable = sc_disable;
	gt_cupti_lib.cuptiSassMetricsGetDataProperties = sc_data_props;
	gt_cupti_lib.cuptiSassMetricsFlushData = sc_flush;
	gt_cupti_lib.cuptiGetDeviceId = sc_device;
}

/* Counting starts on the first context; the counts land at their lines,
 * shared among the launch sites by GPU time (3:1), exactly; counting ends
 * and the device's configuration is undone. */
void test_sass_counts(void)
{
	static const uint8_t cubin[16] = { 0x7f, 'E', 'L', 'F' };
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *a, *b;

	gt_cupti_lib.cuptiGetCubinCrc = pc_crc;
	gt_cupti_lib.cuptiGetSassToSourceCorrelation = sc_line;
	gt_cupti_lib.cuptiGetDeviceId = sc_device;
	sc_fake_install();
	CHECK(!gt_cupti_sasscount__on() && !gt_cupti_pcsamp__kept());
	gt_config.sass_counts = 1;
	CHECK(gt_cupti_sasscount__on() && gt_cupti_pcsamp__kept() && !gt_cupti_pcsamp__on());
	a = pc_kernel_launch(t, 0xa, pc_function, 3000);
	b = pc_kernel_launch(t, 0xb, pc_function, 1000);
	CHECK(a && b);
	gt_cupti_pcsamp__context_created((CUcontext)0x1);
	CHECK_EQ_U(sc_enabled, 1);
	/* A second context waits: one counts at a time. */
	gt_cupti_pcsamp__context_created((CUcontext)0x2);
	CHECK_EQ_U(sc_enabled, 1);
	gt_cupti_pcsamp__module_loaded(cubin, sizeof(cubin));
	/* A synchronization returned: the counts so far are taken. */
	gt_cupti_sasscount__synced();
	CHECK_EQ_U(sc_flushes, 1);
	CHECK_EQ_U(sc_disabled, 0);
	gt_cupti_pcsamp__finish();
	CHECK_EQ_U(sc_disabled, 1);
	CHECK_EQ_U(sc_unsets, 1);
	gt_cupti_pcsamp__settle();

	CHECK_EQ_U(metric_at(pc_line_node(a, "k.cu:10"), GT_M_GSC_INST), 300);
	CHECK_EQ_U(metric_at(pc_line_node(a, "k.cu:10"), GT_M_GSC_THREAD_INST), 300 * 16);
	CHECK_EQ_U(metric_at(pc_line_node(b, "k.cu:10"), GT_M_GSC_INST), 100);
	CHECK_EQ_U(metric_at(pc_line_node(a, "k.cu:11"), GT_M_GSC_THREAD_INST), 75 * 32);
	CHECK_EQ_U(metric_at(pc_line_node(b, "k.cu:11"), GT_M_GSC_INST), 25);
	/* Counts are not samples. */
	CHECK_EQ_U(metric_at(pc_line_node(a, "k.cu:10"), GT_M_GPC_SAMPLES), 0);
	CHECK(!gt_tool__fact("pc_sampling"));
	CHECK(gt_tool__fact("sass_counts") &&
	      !strncmp(gt_tool__fact("sass_counts"), "1500 warp and 9600 thread instructions counted", 46));
}

static int kinds_enabled[64];

static CUptiResult CUPTIAPI ak_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	(void)req;
	(void)done;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI ak_enable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind < 64)
		kinds_enabled[kind]++;
	return CUPTI_SUCCESS;
}

/* Counting instructions, the kernels' activity is of the serial kind (with
 * the concurrent kind CUPTI counted zeros); without it, the concurrent. */
void test_counts_serial_kind(void)
{
	gt_cupti_lib.cuptiActivityRegisterCallbacks = ak_register;
	gt_cupti_lib.cuptiActivityRegisterTimestampCallback = NULL;
	gt_cupti_lib.cuptiGetTimestamp = NULL;
	gt_cupti_lib.cuptiActivityEnable = ak_enable;
	gt_cupti_lib.cuptiActivityFlushPeriod = NULL;
	gt_config.sass_counts = 0;
	CHECK(gt_cupti_activity__start() == 0);
	CHECK(kinds_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] == 1 && !kinds_enabled[CUPTI_ACTIVITY_KIND_KERNEL]);
	memset(kinds_enabled, 0, sizeof(kinds_enabled));
	gt_config.sass_counts = 1;
	sc_fake_install();
	gt_cupti_lib.cuptiGetDeviceId = sc_device;
	CHECK(gt_cupti_sasscount__on());
	CHECK(gt_cupti_activity__start() == 0);
	CHECK(kinds_enabled[CUPTI_ACTIVITY_KIND_KERNEL] == 1 && !kinds_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	CHECK(kinds_enabled[CUPTI_ACTIVITY_KIND_MEMCPY] == 1 && kinds_enabled[CUPTI_ACTIVITY_KIND_MEMSET] == 1);
}

/* The period for a budget of samples a second, and the hardware buffer
 * for a period, on an H100's or H200's 132 SMs at 1,980 MHz. */
void test_pc_period(void)
{
	CHECK_EQ_U(gt_cupti_pcsamp__period_for(64000000, 132, 1980000), 12);
	CHECK_EQ_U(gt_cupti_pcsamp__period_for(4000000, 132, 1980000), 16);
	CHECK_EQ_U(gt_cupti_pcsamp__period_for(1, 132, 1980000), 31);
	CHECK_EQ_U(gt_cupti_pcsamp__period_for(4000000000ull, 132, 1980000), 7);
	CHECK_EQ_U(gt_cupti_pcsamp__period_for(64000000, 0, 1980000), 0);
	/* Twice what 25 ms fill: 64 MB held the samples of an H200 at 2^12
	 * cycles, 32 MB did not; 512 MB at 2^9, 256 MB did not. */
	CHECK_EQ_U(gt_cupti_pcsamp__hw_buffer_for(12, 132, 1980000), 64u << 20);
	CHECK_EQ_U(gt_cupti_pcsamp__hw_buffer_for(11, 132, 1980000), 128u << 20);
	CHECK_EQ_U(gt_cupti_pcsamp__hw_buffer_for(9, 132, 1980000), 512u << 20);
	CHECK_EQ_U(gt_cupti_pcsamp__hw_buffer_for(16, 132, 1980000), 16u << 20);
	CHECK_EQ_U(gt_cupti_pcsamp__hw_buffer_for(5, 132, 1980000), 512u << 20);
}

/* CUPTI's profiler library, beside libcupti, loaded ahead on a thread of
 * the tool's (a stand-in, fake_nvperf.c). */
void test_pc_preload(void)
{
	const struct timespec ms = { 0, 1000000 };
	int was = gt_config.pc_sampling;
	char lib[600];
	void *h = NULL;

	pc_fake_install(&(const struct pc_fake){ .num_reasons = pc_num_reasons, .get_reasons = pc_get_reasons,
						 .get_data = pc_get_data, .cubin_crc = pc_crc, .sass_line = pc_line });
	CHECK(gt_cupti_pcsamp__on());
	snprintf(lib, sizeof(lib), "%s/libnvperf_host.so", GT_FAKE_CUPTI_DIR);
	CHECK(!dlopen(lib, RTLD_NOW | RTLD_NOLOAD));
	gt_cupti_pcsamp__preload(GT_FAKE_CUPTI_DIR "/libcupti.so");
	for (int i = 0; i < 10000 && !(h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)); i++)
		nanosleep(&ms, NULL);
	CHECK(h);
	dlclose(h);
	/* No libcupti path with a folder: nothing to load. */
	gt_cupti_pcsamp__preload("libcupti.so");
	gt_config.pc_sampling = was;
}

/* Runs of the stand-in nvdisasm of test_pc_bg so far. */
static int bg_runs(const char *dir)
{
	char path[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/runs", dir);
	if ((f = fopen(path, "r"))) {
		while (fgetc(f) != EOF)
			n++;
		fclose(f);
	}
	return n;
}

/* Modules disassembled while the program runs (pcsamp-bg.c): one being
 * disassembled at exit is waited for when asked, and read; one not begun is left to
 * the caller, and the thread never runs it; a module queued twice runs
 * once; nothing is queued after the stop. The stand-in nvdisasm holds its
 * first run until the test lets it go. */
int test_pc_bg(void)
{
	char dir[] = "/tmp/gputool-pcbg-XXXXXX", prog[256], path[512], *text = NULL;
	static const uint8_t a[32] = { 0x7f, 'E', 'L', 'F', 0xa }, b[32] = { 0x7f, 'E', 'L', 'F', 0xb };
	size_t len = 0;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/nvdisasm", dir);
	test__script(prog,
		"#!/bin/sh\nprintf x >> %s/runs\n"
		"i=0; while [ ! -e %s/go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
		"echo \"  /*0000*/  EXIT ; // $(od -An -tx1 -N5 \"$4\" | tr -d ' ')\"\n",
		dir, dir);
	gt_config.nvdisasm = prog;
	gt_config.cache = "0";
	gt_cupti_pcsamp__bg_queue(1, a, sizeof(a));
	gt_cupti_pcsamp__bg_queue(2, b, sizeof(b));
	gt_cupti_pcsamp__bg_queue(1, a, sizeof(a));
	for (int i = 0; i < 1000 && bg_runs(dir) < 1; i++)
		usleep(10000);
	CHECK_EQ_U(bg_runs(dir), 1);
	/* b waits behind a: the caller's to run. */
	CHECK(gt_cupti_pcsamp__bg_take(2, 1, &text, &len) == -ENOENT && !text);
	/* a is being disassembled: not waited for unless asked. */
	CHECK(gt_cupti_pcsamp__bg_take(1, 0, &text, &len) == -EINPROGRESS && !text);
	snprintf(path, sizeof(path), "%s/go", dir);
	f = fopen(path, "w");
	CHECK(f);
	fclose(f);
	CHECK(gt_cupti_pcsamp__bg_take(1, 1, &text, &len) == 0);
	CHECK(text && len == strlen(text) && !strcmp(text, "  /*0000*/  EXIT ; // 7f454c460a\n"));
	free(text);
	CHECK(gt_cupti_pcsamp__bg_take(3, 1, &text, &len) == -ENOENT && !text);
	gt_cupti_pcsamp__bg_stop();
	gt_cupti_pcsamp__bg_queue(4, b, sizeof(b));
	CHECK(gt_cupti_pcsamp__bg_take(4, 1, &text, &len) == -ENOENT && !text);
	usleep(200000);
	CHECK_EQ_U(bg_runs(dir), 1);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
	printf("ok\n");
	return 0;
}
