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
 * Everything here runs under its own lock, `sc.lock`, and never under
 * gt_pcs.lock, which it takes after its own to add the counts: CUPTI's
 * calls made here may call back into the backend (a module loads, a
 * synchronization returns), and those callbacks take gt_pcs.lock, or come
 * back here, where `inside` turns them away.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/log.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/pcsamp-internal.h"

static struct {
	pthread_mutex_t lock;
	CUcontext counting; /* the context counting; NULL: none */
	uint64_t devices;   /* configured: bit per CUPTI device index */
	uint64_t metric[2]; /* the metrics' ids */
	int off;
} sc = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* 1 while this thread holds sc.lock: CUPTI's callbacks from inside the
 * calls made here return at once. */
static __thread int inside;

static void sc_lock(void)
{
	pthread_mutex_lock(&sc.lock);
	inside = 1;
}

static void sc_unlock(void)
{
	inside = 0;
	pthread_mutex_unlock(&sc.lock);
}

static const char *const metric_names[2] = {
	"smsp__sass_inst_executed",
	"smsp__sass_thread_inst_executed",
};

/* 1 once counting started: written under sc.lock, read without it by
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

	if (sc.off)
		return;
	sc.off = 1;
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
		sc.metric[i] = pp.metric.metricId;
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

	if (sc.counting)
		return; /* one context at a time */
	ep.ctx = ctx;
	ep.enableLazyPatching = 1;
	r = gt_cupti_lib.cuptiSassMetricsEnable(&ep);
	if (r != CUPTI_SUCCESS) {
		count_off("cuptiSassMetricsEnable", r);
		return;
	}
	sc.counting = ctx;
	atomic_store_explicit(&started, 1, memory_order_relaxed);
	gt_info("cupti", "instruction counts on: the kernels run patched");
}

static void context__created(CUcontext ctx)
{
	static int initialized;
	uint32_t dev = 0;
	CUptiResult r;

	if (sc.off)
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
	if (sc.devices & (1ull << dev)) {
		enable(ctx);
		return;
	}
	r = device__configure(dev);
	if (r != CUPTI_SUCCESS) {
		count_off("the SASS metrics' configuration", r);
		return;
	}
	sc.devices |= 1ull << dev;
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

void gt_cupti_sasscount__context_created(CUcontext ctx)
{
	if (inside)
		return;
	sc_lock();
	context__created(ctx);
	sc_unlock();
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
	pthread_mutex_lock(&gt_pcs.lock);
	for (size_t i = 0; i < n; i++) {
		CUpti_PCSamplingPCData pc = {
			.cubinCrc = d[i].cubinCrc,
			.pcOffset = d[i].pcOffset,
			.functionIndex = name_index(d[i].functionName, d[i].functionIndex),
			.functionName = (char *)(uintptr_t)d[i].functionName,
		};
		struct pc_entry *e = gt_cupti_pcsamp__entry(&pc);

		for (size_t k = 0; e && k < per; k++) {
			if (d[i].pInstanceValues[k].metricId == sc.metric[0])
				e->n[PI_INST] += d[i].pInstanceValues[k].value;
			else if (d[i].pInstanceValues[k].metricId == sc.metric[1])
				e->n[PI_THREAD_INST] += d[i].pInstanceValues[k].value;
		}
	}
	gt_pcs.counted += n;
	pthread_mutex_unlock(&gt_pcs.lock);
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
	/* Busy: another thread takes the counts, or this one is inside
	 * CUPTI's flush, whose own driver calls come back here. The next
	 * synchronization, or the end, takes them. */
	if (inside || pthread_mutex_trylock(&sc.lock))
		return;
	inside = 1;
	if (sc.counting)
		context__flush(sc.counting);
	sc_unlock();
}

void gt_cupti_sasscount__context_ending(CUcontext ctx)
{
	if (inside)
		return;
	sc_lock();
	if (sc.counting && sc.counting == ctx) {
		context__take(ctx);
		sc.counting = NULL;
	}
	sc_unlock();
}

void gt_cupti_sasscount__finish(void)
{
	int tries = 0;

	if (inside)
		return;
	/* The end may come from a signal while a thread is inside CUPTI's
	 * flush: wait a second at most, then leave the counts. */
	while (pthread_mutex_trylock(&sc.lock)) {
		struct timespec ts = { 0, 10000000 };

		if (++tries == 100) {
			gt_warn("cupti", "instruction counts not taken at the end: a flush is in progress");
			return;
		}
		nanosleep(&ts, NULL);
	}
	inside = 1;
	if (sc.counting) {
		context__take(sc.counting);
		sc.counting = NULL;
	}
	for (uint32_t dev = 0; dev < 64; dev++) {
		CUpti_SassMetricsUnsetConfig_Params up = {
			.structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE, .deviceIndex = dev,
		};

		if (!(sc.devices & (1ull << dev)))
			continue;
		gt_cupti_lib.cuptiSassMetricsUnsetConfig(&up);
		sc.devices &= ~(1ull << dev);
	}
	sc_unlock();
}
