/* SPDX-License-Identifier: MIT */
/*
 * GPUTOOL_SASS_COUNTS: every SASS instruction's executions, counted by
 * warps (smsp__sass_inst_executed) and by threads
 * (smsp__sass_thread_inst_executed) through CUPTI's SASS metrics API.
 * CUPTI patches the kernels, which then run many times slower, and the
 * kernels' activity records are of the serial kind (activity.c); the
 * counts are exact. What was counted is taken at every synchronization
 * that returns, while the context surely lives. They go into the PC sampling's
 * entries (pcsamp-internal.h, counters PI_INST and PI_THREAD_INST) and are
 * placed with them at settle, under the kernels' launch contexts, GPU
 * calling contexts and source lines (GSC_INST, GSC_THREAD_INST). Their
 * ratio over 32 is a line's thread efficiency: below 1, the warps ran
 * there with threads idle (divergence, or partial warps).
 *
 * Everything here runs under gt_pcs.lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/pcsamp-internal.h"

static const char *const metric_names[2] = {
	"smsp__sass_inst_executed",
	"smsp__sass_thread_inst_executed",
};

/* 1 once counting started: written under the lock, read without it by
 * gt_cupti_sasscount__synced (relaxed: a sync that reads 0 late leaves
 * the counts to the next one, or to the end). */
static atomic_int started;

int gt_cupti_sasscount__on(void)
{
	return gt_config.sass_counts && gt_cupti_lib.cuptiProfilerInitialize &&
	       gt_cupti_lib.cuptiDeviceGetChipName && gt_cupti_lib.cuptiSassMetricsGetProperties &&
	       gt_cupti_lib.cuptiSassMetricsSetConfig && gt_cupti_lib.cuptiSassMetricsUnsetConfig &&
	       gt_cupti_lib.cuptiSassMetricsEnable && gt_cupti_lib.cuptiSassMetricsDisable &&
	       gt_cupti_lib.cuptiSassMetricsGetDataProperties && gt_cupti_lib.cuptiSassMetricsFlushData &&
	       gt_cupti_lib.cuptiGetDeviceId;
}

/* Once per process; then no counting, everything else measured on. */
static void count_off(const char *what, CUptiResult r)
{
	const char *s = NULL;

	if (gt_pcs.count_off)
		return;
	gt_pcs.count_off = 1;
	if (gt_cupti_lib.cuptiGetResultString)
		gt_cupti_lib.cuptiGetResultString(r, &s);
	gt_warn("cupti", "instruction counts off: %s: %s", what, s ? s : "unknown CUPTI error");
}

/* The device's configuration: the two metrics, counted over the whole GPU. */
static CUptiResult device__configure(uint32_t dev)
{
	CUpti_Device_GetChipName_Params cp = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	CUpti_SassMetricsSetConfig_Params sp = { .structSize = CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE };
	CUpti_SassMetrics_Config cfg[2];
	CUptiResult r;

	cp.deviceIndex = dev;
	r = gt_cupti_lib.cuptiDeviceGetChipName(&cp);
	if (r != CUPTI_SUCCESS)
		return r;
	for (int i = 0; i < 2; i++) {
		CUpti_SassMetrics_GetProperties_Params pp = {
			.structSize = CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE,
			.pChipName = cp.pChipName,
			.pMetricName = metric_names[i],
		};

		r = gt_cupti_lib.cuptiSassMetricsGetProperties(&pp);
		if (r != CUPTI_SUCCESS)
			return r;
		gt_pcs.count_metric[i] = pp.metric.metricId;
		cfg[i].metricId = pp.metric.metricId;
		cfg[i].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
	}
	sp.numOfMetricConfig = 2;
	sp.pConfigs = cfg;
	sp.deviceIndex = dev;
	return gt_cupti_lib.cuptiSassMetricsSetConfig(&sp);
}

/*
 * Lazy patching: each kernel is patched at its first execution from here
 * on, and counted at every launch after. Patching every function at once
 * at a context's creation patches nothing: the modules load later (CUDA's
 * lazy loading).
 */
static void enable(CUcontext ctx)
{
	CUpti_SassMetricsEnable_Params ep = { .structSize = CUpti_SassMetricsEnable_Params_STRUCT_SIZE };
	CUptiResult r;

	if (gt_pcs.counting)
		return; /* one context at a time */
	ep.ctx = ctx;
	ep.enableLazyPatching = 1;
	r = gt_cupti_lib.cuptiSassMetricsEnable(&ep);
	if (r != CUPTI_SUCCESS) {
		count_off("cuptiSassMetricsEnable", r);
		return;
	}
	gt_pcs.counting = ctx;
	atomic_store_explicit(&started, 1, memory_order_relaxed);
	gt_info("cupti", "instruction counts on: the kernels run patched");
}

void gt_cupti_sasscount__context_created(CUcontext ctx)
{
	static int initialized;
	uint32_t dev = 0;
	CUptiResult r;

	if (gt_pcs.count_off)
		return;
	if (!initialized) {
		CUpti_Profiler_Initialize_Params ip = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };

		r = gt_cupti_lib.cuptiProfilerInitialize(&ip);
		if (r != CUPTI_SUCCESS) {
			count_off("cuptiProfilerInitialize", r);
			return;
		}
		initialized = 1;
	}
	r = gt_cupti_lib.cuptiGetDeviceId(ctx, &dev);
	if (r != CUPTI_SUCCESS || dev >= 64) {
		count_off("the context's device", r);
		return;
	}
	if (gt_pcs.count_devices & (1ull << dev)) {
		enable(ctx);
		return;
	}
	r = device__configure(dev);
	if (r != CUPTI_SUCCESS) {
		count_off("the SASS metrics' configuration", r);
		return;
	}
	gt_pcs.count_devices |= 1ull << dev;
	enable(ctx);
}


/*
 * The index that tells a record's function from the module's others. The
 * records give every function of a module the same index (CUDA 13.0: two
 * kernels' counts fell on one), so the name decides: its hash, mixed with
 * the index given.
 */
static uint32_t name_index(const char *name, uint32_t index)
{
	uint32_t h = 2166136261u;

	while (name && *name)
		h = (h ^ (unsigned char)*name++) * 16777619u;
	return h ^ index;
}

/* What CUPTI counted in @ctx so far, into the entries (CUPTI starts
 * again from zero). */
static void context__flush(CUcontext ctx)
{
	CUpti_SassMetricsGetDataProperties_Params dp = {
		.structSize = CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE, .ctx = ctx,
	};
	CUpti_SassMetricsFlushData_Params fp = { .structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE };
	CUpti_SassMetrics_Data *d = NULL;
	CUpti_SassMetrics_InstanceValue *v = NULL;
	size_t n, per;

	if (gt_cupti_lib.cuptiSassMetricsGetDataProperties(&dp) != CUPTI_SUCCESS)
		goto out;
	n = dp.numOfPatchedInstructionRecords;
	/* Values per record: each metric's, once per instance. */
	per = 2 * (dp.numOfInstances ? dp.numOfInstances : 1);
	if (!n || !(d = calloc(n, sizeof(*d))) || !(v = calloc(n * per, sizeof(*v))))
		goto out;
	for (size_t i = 0; i < n; i++) {
		d[i].structSize = sizeof(d[i]);
		d[i].pInstanceValues = &v[i * per];
	}
	fp.ctx = ctx;
	fp.numOfPatchedInstructionRecords = n;
	fp.numOfInstances = dp.numOfInstances;
	fp.pMetricsData = d;
	if (gt_cupti_lib.cuptiSassMetricsFlushData(&fp) != CUPTI_SUCCESS)
		goto out;
	for (size_t i = 0; i < n; i++) {
		CUpti_PCSamplingPCData pc = {
			.cubinCrc = d[i].cubinCrc,
			.pcOffset = d[i].pcOffset,
			.functionIndex = name_index(d[i].functionName, d[i].functionIndex),
			.functionName = (char *)(uintptr_t)d[i].functionName,
		};
		struct pc_entry *e = gt_cupti_pcsamp__entry(&pc);

		for (size_t k = 0; e && k < per; k++) {
			if (d[i].pInstanceValues[k].metricId == gt_pcs.count_metric[0])
				e->n[PI_INST] += d[i].pInstanceValues[k].value;
			else if (d[i].pInstanceValues[k].metricId == gt_pcs.count_metric[1])
				e->n[PI_THREAD_INST] += d[i].pInstanceValues[k].value;
		}
	}
	gt_pcs.counted += n;
out:
	free(v);
	free(d);
}

/* The last counts of @ctx; then counting ends there. */
static void context__take(CUcontext ctx)
{
	CUpti_SassMetricsDisable_Params xp = { .structSize = CUpti_SassMetricsDisable_Params_STRUCT_SIZE };

	context__flush(ctx);
	xp.ctx = ctx;
	gt_cupti_lib.cuptiSassMetricsDisable(&xp);
}

void gt_cupti_sasscount__synced(void)
{
	if (!atomic_load_explicit(&started, memory_order_relaxed))
		return;
	pthread_mutex_lock(&gt_pcs.lock);
	if (gt_pcs.counting)
		context__flush(gt_pcs.counting);
	pthread_mutex_unlock(&gt_pcs.lock);
}

void gt_cupti_sasscount__context_ending(CUcontext ctx)
{
	if (!gt_pcs.counting || gt_pcs.counting != ctx)
		return;
	context__take(ctx);
	gt_pcs.counting = NULL;
}

void gt_cupti_sasscount__finish(void)
{
	if (gt_pcs.counting)
		gt_cupti_sasscount__context_ending(gt_pcs.counting);
	for (uint32_t dev = 0; dev < 64; dev++) {
		CUpti_SassMetricsUnsetConfig_Params up = {
			.structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE, .deviceIndex = dev,
		};

		if (!(gt_pcs.count_devices & (1ull << dev)))
			continue;
		gt_cupti_lib.cuptiSassMetricsUnsetConfig(&up);
		gt_pcs.count_devices &= ~(1ull << dev);
	}
}
