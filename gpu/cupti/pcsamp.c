/* SPDX-License-Identifier: MIT */
/*
 * GPU PC sampling (GPUTOOL_PC_SAMPLING): CUPTI's PC Sampling API in its
 * continuous mode, per context. The hardware samples a warp of every SM
 * each 2^N cycles; CUPTI aggregates the samples per instruction (cubin,
 * function, PC offset) with a count per stall reason. Here:
 *
 *   context created      enable sampling on it, read its stall reasons
 *   module loaded        keep a copy of the cubin (for source lines)
 *   context destroyed,   take CUPTI's data: per PC, the samples per stall
 *   the backend's exit   class (struct pc_entry), the PC's source line from
 *                        the cubin (cuptiGetSassToSourceCorrelation)
 *   settle (after the    each kernel function's samples go to the kernel's
 *   monitor's finalizer) launch contexts in every thread's tree, shared in
 *                        proportion to the GPU time each context measured
 *                        (continuous mode does not say which launch a
 *                        sample came from), as nodes "file:line" under the
 *                        kernel's node, with GPC_* metrics
 *
 * Everything is under one lock: the callbacks of several threads, and the
 * exit. Nothing here runs in a signal handler.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/sass/sass.h"

/* PCs one GetData call hands over at most; more come in further calls. */
#define PCS_PER_CALL 4096
#define MAX_CONTEXTS 16
/* CUPTI's buffer for decoded samples: about 16 bytes per PC and reason. */
#define SCRATCH_BYTES (32u << 20)
/* Contexts of one vertex shared on the stack; more take the heap. */
#define MAX_CONTEXTS_PER_SHARE 64

enum pc_class {
	PC_MEMORY,
	PC_EXEC,
	PC_CONTROL,
	PC_SYNC,
	PC_ISSUED,
	PC_NOT_SELECTED,
	PC_OTHER,
	PC_LATENCY, /* samples of any reason in which no warp issued: counted again */
	PC__COUNT,
	PC_SKIP = -1, /* not a reason of a warp (the sample count, dropped samples) */
};

/* Every count kept per instruction: the classes above, then each stall
 * reason's (GPS_*), counted again. */
enum pc_counter {
	PR__FIRST = PC__COUNT - 1,
#define X(A, id, cls, desc) PR_##id,
	GT_GPU_STALL_REASONS(X, _)
#undef X
	PC__N
};

static const enum gt_metric class_metric[PC__N] = {
#define X(A, id, cls, desc) [PR_##id] = GT_M_GPS_##id,
	GT_GPU_STALL_REASONS(X, _)
#undef X
	[PC_MEMORY] = GT_M_GPC_MEMORY,	 [PC_EXEC] = GT_M_GPC_EXEC,
	[PC_CONTROL] = GT_M_GPC_CONTROL, [PC_SYNC] = GT_M_GPC_SYNC,
	[PC_ISSUED] = GT_M_GPC_ISSUED,	 [PC_NOT_SELECTED] = GT_M_GPC_NOT_SELECTED,
	[PC_OTHER] = GT_M_GPC_OTHER,	 [PC_LATENCY] = GT_M_GPC_LATENCY,
};

/* The metric of each instruction class's issued samples. */
static const enum gt_metric issue_metric[GT_SASS__CLASSES] = {
#define X(A, id, name, desc) GT_M_GPI_##id,
	GT_GPU_INSN_CLASSES(X, _)
#undef X
};

/* The metric of each kind of blamed stall. */
static const enum gt_metric blame_metric[GT_SASS__BLAMES] = {
#define X(A, id, desc) GT_M_GPB_##id,
	GT_GPU_BLAME_KINDS(X, _)
#undef X
};

/* Stall reasons by CUPTI's name, without "smsp__pcsamp_warps_issue_stalled_". */
static const struct {
	const char *reason;
	enum pc_class cls;
	int reason_counter; /* its GPS_* count; 0 for issued and not selected */
} reasons[] = {
	{ "long_scoreboard", PC_MEMORY, PR_LONG_SCOREBOARD },
	{ "short_scoreboard", PC_MEMORY, PR_SHORT_SCOREBOARD },
	{ "lg_throttle", PC_MEMORY, PR_LG_THROTTLE },
	{ "tex_throttle", PC_MEMORY, PR_TEX_THROTTLE },
	{ "mio_throttle", PC_MEMORY, PR_MIO_THROTTLE },
	{ "drain", PC_MEMORY, PR_DRAIN },
	{ "wait", PC_EXEC, PR_WAIT },
	{ "math_pipe_throttle", PC_EXEC, PR_MATH_PIPE },
	{ "dispatch_stall", PC_EXEC, PR_DISPATCH },
	{ "branch_resolving", PC_CONTROL, PR_BRANCH },
	{ "no_instructions", PC_CONTROL, PR_NO_INSTRUCTIONS },
	{ "imc_miss", PC_CONTROL, PR_IMC_MISS },
	{ "barrier", PC_SYNC, PR_BARRIER },
	{ "membar", PC_SYNC, PR_MEMBAR },
	{ "warpgroup_arrive", PC_SYNC, PR_WARPGROUP },
	{ "sleeping", PC_SYNC, PR_SLEEPING },
	{ "selected", PC_ISSUED, 0 },
	{ "not_selected", PC_NOT_SELECTED, 0 },
};

/* The GPS_* counter of a stall reason's name, 0 if none (not a stall). */
static int reason_counter_of(const char *name)
{
	static const char stalled[] = "smsp__pcsamp_warps_issue_stalled_";
	size_t len;

	if (!name || strncmp(name, stalled, sizeof(stalled) - 1))
		return 0;
	name += sizeof(stalled) - 1;
	len = strlen(name);
	if (len > 11 && !strcmp(name + len - 11, "_not_issued"))
		return 0;
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (!strcmp(name, reasons[i].reason))
			return reasons[i].reason_counter;
	return PR_OTHER;
}

int gt_cupti_pcsamp__class_of(const char *name)
{
	static const char stalled[] = "smsp__pcsamp_warps_issue_stalled_";
	size_t len;

	if (!name || strncmp(name, stalled, sizeof(stalled) - 1))
		return PC_SKIP; /* the sample count, dropped samples */
	name += sizeof(stalled) - 1;
	len = strlen(name);
	/* "_not_issued": the samples of the reason in which no warp of the
	 * scheduler issued (latency samples), counted in the reason already. */
	if (len > 11 && !strcmp(name + len - 11, "_not_issued"))
		return PC_LATENCY;
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (!strcmp(name, reasons[i].reason))
			return reasons[i].cls;
	return PC_OTHER;
}

/* One instruction's samples. */
struct pc_entry {
	uint64_t crc, pc;
	uint32_t function_index;
	const char *function; /* interned, as kernel nodes name the kernel */
	const char *symbol;   /* the function's symbol (mangled), interned */
	const char *line;     /* "file:line", or "pc 0x..." without line information */
	uint32_t cubin;	      /* at settle: index in pcs.cubins with its structure, or GT_SASS_NONE */
	uint32_t insn;	      /* at settle: the instruction in that structure, or GT_SASS_NONE */
	uint64_t n[PC__N];
};

struct pc_context {
	CUcontext ctx;
	CUpti_PCSamplingData data;
	uint32_t n_reasons;
	uint32_t *reason_index;
	int8_t *reason_class;	/* by position in reason_index */
	uint8_t *reason_counter; /* its GPS_* counter, 0 if none */
};

struct pc_cubin {
	uint64_t crc;
	uint8_t *bytes;
	size_t size;
	char *sass_text; /* its disassembly, when given (a replay) or read at settle */
	size_t sass_len;
	struct gt_sass *sass; /* its structure, at settle */
};

static struct {
	pthread_mutex_t lock;
	int off; /* could not start, or stopped */
	int structured; /* the cubins' structure read (structure()) */
	struct pc_context ctx[MAX_CONTEXTS];
	uint32_t n_ctx;
	struct pc_entry *e;
	uint32_t n_e, cap_e;
	struct gt_hmap by_pc;	/* mix(crc, function, pc) -> entry index + 1 */
	struct gt_hmap lines;	/* hash of a line's text -> char * (owned) */
	struct pc_cubin *cubins;
	uint32_t n_cubins;
	uint64_t dropped, unplaced;
	int buffer_full;
	/* For the derived metrics: the period in cycles (0: unknown), the
	 * device of the first context. */
	uint64_t period_cycles;
	int device;
} pcs = { .lock = PTHREAD_MUTEX_INITIALIZER };

int gt_cupti_pcsamp__on(void)
{
	return gt_config.pc_sampling > 0 && gt_cupti_lib.cuptiPCSamplingEnable &&
	       gt_cupti_lib.cuptiPCSamplingGetData && gt_cupti_lib.cuptiPCSamplingSetConfigurationAttribute &&
	       gt_cupti_lib.cuptiPCSamplingGetNumStallReasons && gt_cupti_lib.cuptiPCSamplingGetStallReasons &&
	       gt_cupti_lib.cuptiPCSamplingDisable;
}

static const char *error_of(CUptiResult r)
{
	const char *s = NULL;

	if (gt_cupti_lib.cuptiGetResultString)
		gt_cupti_lib.cuptiGetResultString(r, &s);
	return s ? s : "unknown CUPTI error";
}

/* Once per process, then PC sampling stays off; everything else measures on. */
static void switch_off(const char *what, CUptiResult r)
{
	if (pcs.off)
		return;
	pcs.off = 1;
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		gt_warn("cupti", "PC sampling off: %s needs profiling rights (NVIDIA's ERR_NVGPUCTRPERM: "
			"the driver restricts profiling to administrators)", what);
	else
		gt_warn("cupti", "PC sampling off: %s: %s (another profiler, or a GPU or MIG slice "
			"without PC sampling?)", what, error_of(r));
}

static int context__reasons(struct pc_context *c)
{
	CUpti_PCSamplingGetNumStallReasonsParams np = { .size = CUpti_PCSamplingGetNumStallReasonsParamsSize };
	CUpti_PCSamplingGetStallReasonsParams sp = { .size = CUpti_PCSamplingGetStallReasonsParamsSize };
	size_t n = 0;
	char **names;
	CUptiResult r;
	int err = 0;

	np.ctx = c->ctx;
	np.numStallReasons = &n;
	r = gt_cupti_lib.cuptiPCSamplingGetNumStallReasons(&np);
	if (r != CUPTI_SUCCESS || !n || n > 1024) {
		switch_off("the stall reasons", r);
		return -EIO;
	}
	names = calloc(n, sizeof(*names));
	c->reason_index = calloc(n, sizeof(*c->reason_index));
	c->reason_class = calloc(n, sizeof(*c->reason_class));
	c->reason_counter = calloc(n, sizeof(*c->reason_counter));
	if (!names || !c->reason_index || !c->reason_class || !c->reason_counter)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		if (!(names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
			err = -ENOMEM;
	if (!err) {
		sp.ctx = c->ctx;
		sp.numStallReasons = n;
		sp.stallReasonIndex = c->reason_index;
		sp.stallReasons = names;
		r = gt_cupti_lib.cuptiPCSamplingGetStallReasons(&sp);
		if (r != CUPTI_SUCCESS) {
			switch_off("the stall reasons", r);
			err = -EIO;
		}
	}
	for (size_t i = 0; !err && i < n; i++) {
		c->reason_class[i] = (int8_t)gt_cupti_pcsamp__class_of(names[i]);
		c->reason_counter[i] = (uint8_t)reason_counter_of(names[i]);
	}
	if (!err && gt_cupti_recording)
		gt_cupti_record__reasons(c->reason_index, names, (uint32_t)n);
	c->n_reasons = (uint32_t)n;
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

static int context__buffer(struct pc_context *c)
{
	CUpti_PCSamplingData *d = &c->data;

	d->size = sizeof(*d);
	d->collectNumPcs = PCS_PER_CALL;
	d->pPcData = calloc(PCS_PER_CALL, sizeof(*d->pPcData));
	if (!d->pPcData)
		return -ENOMEM;
	for (size_t i = 0; i < PCS_PER_CALL; i++) {
		d->pPcData[i].size = sizeof(d->pPcData[i]);
		d->pPcData[i].stallReason = calloc(c->n_reasons, sizeof(*d->pPcData[i].stallReason));
		if (!d->pPcData[i].stallReason)
			return -ENOMEM;
	}
	return 0;
}

static CUptiResult context__configure(struct pc_context *c)
{
	CUpti_PCSamplingConfigurationInfo cfg[4];
	CUpti_PCSamplingConfigurationInfoParams p = { .size = CUpti_PCSamplingConfigurationInfoParamsSize };
	size_t n = 0;

	memset(cfg, 0, sizeof(cfg));
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	cfg[n++].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	cfg[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->data;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	cfg[n++].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BYTES;
	if (gt_config.pc_sampling >= 5) {
		cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		cfg[n++].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)gt_config.pc_sampling;
	}
	p.ctx = c->ctx;
	p.numAttributes = n;
	p.pPCSamplingConfigurationInfo = cfg;
	return gt_cupti_lib.cuptiPCSamplingSetConfigurationAttribute(&p);
}

/* The first context's period and device, which the derived metrics need. */
static void context__setup(struct pc_context *c)
{
	CUpti_PCSamplingConfigurationInfo cfg = {
		.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD,
	};
	CUpti_PCSamplingConfigurationInfoParams p = { .size = CUpti_PCSamplingConfigurationInfoParamsSize };
	CUdevice dev;

	p.ctx = c->ctx;
	p.numAttributes = 1;
	p.pPCSamplingConfigurationInfo = &cfg;
	if (gt_config.pc_sampling >= 5)
		pcs.period_cycles = 1ull << gt_config.pc_sampling;
	else if (gt_cupti_lib.cuptiPCSamplingGetConfigurationAttribute &&
		 gt_cupti_lib.cuptiPCSamplingGetConfigurationAttribute(&p) == CUPTI_SUCCESS &&
		 cfg.attributeData.samplingPeriodData.samplingPeriod >= 5 &&
		 cfg.attributeData.samplingPeriodData.samplingPeriod <= 31)
		pcs.period_cycles = 1ull << cfg.attributeData.samplingPeriodData.samplingPeriod;
	pcs.device = gt_cupti_lib.cuCtxGetDevice && gt_cupti_lib.cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
				     dev >= 0 && dev < GT_CUPTI_MAX_DEVICES
			     ? (int)dev
			     : 0;
	gt_cupti_smclock__start(pcs.device);
}

void gt_cupti_pcsamp__context_created(CUcontext ctx)
{
	CUpti_PCSamplingEnableParams ep = { .size = CUpti_PCSamplingEnableParamsSize };
	struct pc_context *c;
	uint64_t t0;
	CUptiResult r;

	if (!gt_cupti_pcsamp__on() || !ctx)
		return;
	pthread_mutex_lock(&pcs.lock);
	t0 = gt_clock__now();
	if (pcs.off || pcs.n_ctx == MAX_CONTEXTS)
		goto out;
	c = &pcs.ctx[pcs.n_ctx];
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	ep.ctx = ctx;
	/* The stall reasons can be read only once sampling is enabled. */
	r = gt_cupti_lib.cuptiPCSamplingEnable(&ep);
	if (r != CUPTI_SUCCESS) {
		switch_off("cuptiPCSamplingEnable", r);
		goto out;
	}
	if (context__reasons(c) || context__buffer(c)) {
		switch_off("its buffers", CUPTI_ERROR_OUT_OF_MEMORY);
		goto out;
	}
	r = context__configure(c);
	if (r != CUPTI_SUCCESS) {
		switch_off("the configuration", r);
		goto out;
	}
	if (!pcs.n_ctx++)
		context__setup(c);
	gt_info("cupti", "PC sampling on (a sample every %llu cycles; set up in %.1f ms)",
		(unsigned long long)pcs.period_cycles, (double)(gt_clock__now() - t0) / 1e6);
out:
	pthread_mutex_unlock(&pcs.lock);
}

void gt_cupti_pcsamp__module_loaded(const void *cubin, size_t size)
{
	CUpti_GetCubinCrcParams cp = { .size = CUpti_GetCubinCrcParamsSize };
	struct pc_cubin *grown;

	if (!gt_cupti_pcsamp__on() || !cubin || !size || !gt_cupti_lib.cuptiGetCubinCrc)
		return;
	cp.cubin = cubin;
	cp.cubinSize = size;
	if (gt_cupti_lib.cuptiGetCubinCrc(&cp) != CUPTI_SUCCESS)
		return;
	if (gt_cupti_recording)
		gt_cupti_record__cubin(cp.cubinCrc, size);
	pthread_mutex_lock(&pcs.lock);
	for (uint32_t i = 0; i < pcs.n_cubins; i++)
		if (pcs.cubins[i].crc == cp.cubinCrc)
			goto out;
	grown = realloc(pcs.cubins, (pcs.n_cubins + 1) * sizeof(*grown));
	if (!grown)
		goto out;
	pcs.cubins = grown;
	memset(&grown[pcs.n_cubins], 0, sizeof(*grown));
	grown[pcs.n_cubins].bytes = malloc(size);
	if (grown[pcs.n_cubins].bytes) {
		memcpy(grown[pcs.n_cubins].bytes, cubin, size);
		grown[pcs.n_cubins].size = size;
		grown[pcs.n_cubins].crc = cp.cubinCrc;
		pcs.n_cubins++;
	}
out:
	pthread_mutex_unlock(&pcs.lock);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h | 1;
}

/* One copy of each line's text, for node keys that live to the end. */
static const char *line_intern(const char *text)
{
	uint64_t h = str_hash(text);
	const uint64_t *v;
	char *copy;

	/* Probing past a different text with the same hash. */
	while ((v = gt_hmap__get(&pcs.lines, h))) {
		if (!strcmp((const char *)(uintptr_t)*v, text))
			return (const char *)(uintptr_t)*v;
		h = mix(h) | 1;
	}
	copy = strdup(text);
	if (copy && gt_hmap__put(&pcs.lines, h, (uintptr_t)copy)) {
		free(copy);
		copy = NULL;
	}
	return copy;
}

/* The PC's source line from its cubin, or its offset. */
static const char *line_of(uint64_t crc, const char *function, uint64_t pc)
{
	CUpti_GetSassToSourceCorrelationParams sp = { .size = CUpti_GetSassToSourceCorrelationParamsSize };
	char text[512];
	const char *line = NULL;

	for (uint32_t i = 0; i < pcs.n_cubins && gt_cupti_lib.cuptiGetSassToSourceCorrelation; i++) {
		if (pcs.cubins[i].crc != crc)
			continue;
		sp.cubin = pcs.cubins[i].bytes;
		sp.cubinSize = pcs.cubins[i].size;
		sp.functionName = function;
		sp.pcOffset = pc;
		if (gt_cupti_lib.cuptiGetSassToSourceCorrelation(&sp) == CUPTI_SUCCESS && sp.fileName &&
		    sp.lineNumber) {
			snprintf(text, sizeof(text), "%s:%u", sp.fileName, sp.lineNumber);
			line = line_intern(text);
			if (gt_cupti_recording)
				gt_cupti_record__line(crc, pc, function, sp.fileName, sp.lineNumber);
		}
		free(sp.fileName);
		free(sp.dirName);
		break;
	}
	if (!line) {
		snprintf(text, sizeof(text), "pc 0x%llx", (unsigned long long)pc);
		line = line_intern(text);
	}
	return line;
}

static struct pc_entry *entry_of(const CUpti_PCSamplingPCData *d)
{
	uint64_t k = mix(d->cubinCrc ^ mix(d->pcOffset ^ ((uint64_t)d->functionIndex << 40))) | 1;
	const uint64_t *v;
	struct pc_entry *e;

	while ((v = gt_hmap__get(&pcs.by_pc, k))) {
		e = &pcs.e[*v - 1];
		if (e->crc == d->cubinCrc && e->pc == d->pcOffset && e->function_index == d->functionIndex)
			return e;
		k = mix(k) | 1;
	}
	if (pcs.n_e == pcs.cap_e) {
		uint32_t cap = pcs.cap_e ? pcs.cap_e * 2 : 1024;
		struct pc_entry *grown = realloc(pcs.e, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		pcs.e = grown;
		pcs.cap_e = cap;
	}
	e = &pcs.e[pcs.n_e];
	memset(e, 0, sizeof(*e));
	e->crc = d->cubinCrc;
	e->pc = d->pcOffset;
	e->function_index = d->functionIndex;
	/* CUPTI's string may be shared with its other records: kept, never
	 * freed (one per function). */
	e->function = gt_cupti__kernel_name(d->functionName);
	e->symbol = d->functionName ? line_intern(d->functionName) : NULL;
	e->line = d->functionName ? line_of(d->cubinCrc, d->functionName, d->pcOffset) : NULL;
	e->cubin = e->insn = GT_SASS_NONE;
	if (!e->function || !e->symbol || !e->line || gt_hmap__put(&pcs.by_pc, k, pcs.n_e + 1))
		return NULL;
	pcs.n_e++;
	return e;
}

/* What one GetData call (or Disable) left in the context's buffer. */
static void context__take(struct pc_context *c)
{
	CUpti_PCSamplingData *d = &c->data;

	if (gt_cupti_recording && d->totalNumPcs)
		gt_cupti_record__pcs(d);
	pcs.dropped += d->droppedSamples;
	pcs.buffer_full |= d->hardwareBufferFull;
	for (size_t i = 0; i < d->totalNumPcs && i < PCS_PER_CALL; i++) {
		const CUpti_PCSamplingPCData *p = &d->pPcData[i];
		struct pc_entry *e = entry_of(p);

		for (size_t k = 0; e && k < p->stallReasonCount && k < c->n_reasons; k++) {
			uint32_t idx = p->stallReason[k].pcSamplingStallReasonIndex;

			for (uint32_t j = 0; j < c->n_reasons; j++) {
				if (c->reason_index[j] != idx)
					continue;
				if (c->reason_class[j] != PC_SKIP)
					e->n[c->reason_class[j]] += p->stallReason[k].samples;
				if (c->reason_counter[j])
					e->n[c->reason_counter[j]] += p->stallReason[k].samples;
				break;
			}
		}
	}
	d->totalNumPcs = 0;
	d->totalSamples = 0;
	d->droppedSamples = 0;
}

/* Takes everything CUPTI holds for @c, then ends sampling on it. */
static void context__finish(struct pc_context *c)
{
	CUpti_PCSamplingGetDataParams gp = { .size = CUpti_PCSamplingGetDataParamsSize };
	CUpti_PCSamplingDisableParams dp = { .size = CUpti_PCSamplingDisableParamsSize };
	uint64_t t0 = gt_clock__now(), t1;
	uint32_t n0 = pcs.n_e;

	gp.ctx = c->ctx;
	gp.pcSamplingData = &c->data;
	for (int rounds = 0; rounds < 100000; rounds++) {
		if (gt_cupti_lib.cuptiPCSamplingGetData(&gp) != CUPTI_SUCCESS)
			break;
		context__take(c);
		if (!c->data.remainingNumPcs)
			break;
	}
	t1 = gt_clock__now();
	/* Disabling hands over what the last period sampled. */
	dp.ctx = c->ctx;
	if (gt_cupti_lib.cuptiPCSamplingDisable(&dp) == CUPTI_SUCCESS)
		context__take(c);
	c->ctx = NULL;
	/* Where the time at exit goes (GPUTOOL_VERBOSE=2). */
	gt_info("cupti", "PC samples taken in %.1f ms, sampling ended in %.1f ms; %u instructions, %u new",
		(double)(t1 - t0) / 1e6, (double)(gt_clock__now() - t1) / 1e6, pcs.n_e, pcs.n_e - n0);
}

void gt_cupti_pcsamp__context_ending(CUcontext ctx)
{
	pthread_mutex_lock(&pcs.lock);
	for (uint32_t i = 0; i < pcs.n_ctx; i++)
		if (pcs.ctx[i].ctx && pcs.ctx[i].ctx == ctx)
			context__finish(&pcs.ctx[i]);
	pthread_mutex_unlock(&pcs.lock);
}

static void structure(void);

void gt_cupti_pcsamp__finish(void)
{
	pthread_mutex_lock(&pcs.lock);
	for (uint32_t i = 0; i < pcs.n_ctx; i++)
		if (pcs.ctx[i].ctx)
			context__finish(&pcs.ctx[i]);
	gt_cupti_smclock__stop();
	/* Every sample is in: the kernels' structure now, while a recording
	 * is still open to keep the disassembly. */
	structure();
	pthread_mutex_unlock(&pcs.lock);
}

/* ---- settle: the samples into the trees ----------------------------------- */

/* A launch context of a kernel: its node in a thread's tree, its GPU time. */
struct target {
	struct gt_thread *t;
	struct gt_cct_node *node;
	uint64_t weight;
};

struct targets {
	struct gt_hmap by_function; /* interned kernel name -> list index + 1 */
	struct target **list;
	uint32_t *n;
	uint32_t n_lists;
};

static void targets__collect(struct targets *ts, struct gt_thread *t, struct gt_cct_node *n)
{
	for (struct gt_cct_node *c = n->children; c; c = c->sibling) {
		if (c->kind == GT_NODE_NAME && n->kind == GT_NODE_PLACEHOLDER && n->key == GT_PH_GPU_KERNEL) {
			const uint64_t *v = gt_hmap__get(&ts->by_function, c->key);
			uint64_t w = gt_cct__get(c, GT_M_GKER);

			if (v && w) {
				uint32_t i = (uint32_t)*v - 1;
				struct target *grown = realloc(ts->list[i], (ts->n[i] + 1) * sizeof(*grown));

				if (grown) {
					grown[ts->n[i]++] = (struct target){ t, c, w };
					ts->list[i] = grown;
				}
			}
		}
		targets__collect(ts, t, c);
	}
}

/* @v shared over the targets by weight; the remainders to the largest
 * fractional parts, so that the shares add up to @v exactly. */
static void share(const struct target *tg, uint32_t n, uint64_t total_w, uint64_t v, uint64_t *out)
{
	uint64_t given = 0;

	for (uint32_t i = 0; i < n; i++) {
		out[i] = (uint64_t)((unsigned __int128)v * tg[i].weight / total_w);
		given += out[i];
	}
	while (given < v) {
		uint32_t best = 0;
		unsigned __int128 best_rem = 0;

		for (uint32_t i = 0; i < n; i++) {
			unsigned __int128 rem = (unsigned __int128)v * tg[i].weight - (unsigned __int128)out[i] * total_w;

			if (rem > best_rem) {
				best_rem = rem;
				best = i;
			}
		}
		out[best]++;
		given++;
	}
}

/* @v shared by the weights @w (n of them, summing to @total); the
 * remainders to the largest fractional parts: the parts add up to @v. */
static void share_d(const double *w, uint32_t n, double total, uint64_t v, uint64_t *out)
{
	uint64_t given = 0;

	for (uint32_t i = 0; i < n; i++) {
		out[i] = total > 0 ? (uint64_t)((double)v * w[i] / total) : 0;
		given += out[i];
	}
	while (given > v) { /* rounding up by the floating point */
		for (uint32_t i = 0; i < n && given > v; i++)
			if (out[i]) {
				out[i]--;
				given--;
			}
	}
	while (given < v) {
		uint32_t best = 0;
		double best_rem = -1;

		for (uint32_t i = 0; i < n; i++) {
			double rem = (double)v * w[i] / total - (double)out[i];

			if (rem > best_rem) {
				best_rem = rem;
				best = i;
			}
		}
		out[best]++;
		given++;
	}
}

/* The names of the nodes between a kernel's node and an instruction's
 * line: a GPU calling context's call sites and callees, loops, the line. */
#define MAX_PATH 256

struct path {
	const char *name[MAX_PATH];
	uint32_t n;
};

static void path__add(struct path *p, const char *name)
{
	if (name && p->n < MAX_PATH)
		p->name[p->n++] = name;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static const char *sass_line(const struct gt_sass *s, uint32_t i, const char *fallback)
{
	const struct gt_sass_insn *in = &s->insns[i];
	char text[512];

	if (in->file == GT_SASS_NONE || !in->line)
		return fallback;
	snprintf(text, sizeof(text), "%s:%u", base_name(s->files[in->file]), in->line);
	return line_intern(text);
}

/* "loop at file:line" for each loop around instruction @i, outermost first. */
static void path__loops(struct path *p, const struct gt_sass *s, uint32_t i)
{
	uint32_t chain[64], n = 0;
	char text[512];

	for (uint32_t l = s->insns[i].loop; l != GT_SASS_NONE && n < 64; l = s->loops[l].parent)
		chain[n++] = l;
	while (n--) {
		uint32_t h = s->loops[chain[n]].header;
		const struct gt_sass_insn *in = &s->insns[h];

		if (in->file != GT_SASS_NONE && in->line)
			snprintf(text, sizeof(text), "loop at %s:%u", base_name(s->files[in->file]), in->line);
		else
			snprintf(text, sizeof(text), "loop at 0x%x", in->offset);
		path__add(p, line_intern(text));
	}
}

/* "inlined at file:line" for each call site instruction @i's code was
 * inlined at, outermost first. */
static void path__inlined(struct path *p, const struct gt_sass *s, uint32_t i)
{
	uint32_t chain[GT_SASS_MAX_INLINE], n = 0;
	char text[512];

	for (uint32_t k = s->insns[i].inl; k != GT_SASS_NONE && n < GT_SASS_MAX_INLINE; k = s->inlines[k].parent)
		chain[n++] = k;
	while (n--) {
		const struct gt_sass_inline *in = &s->inlines[chain[n]];

		snprintf(text, sizeof(text), "inlined at %s:%u", base_name(s->files[in->file]), in->line);
		path__add(p, line_intern(text));
	}
}

/* Instruction @i placed in a context running function @fn: the callee of
 * a cycle's other function first, then its loops, the call sites its code
 * was inlined at, and its line. */
static void path__insn(struct path *p, const struct gt_sass *s, uint32_t i, uint32_t fn, const char *fallback)
{
	if (s->insns[i].function != fn)
		path__add(p, gt_cupti__kernel_name(s->functions[s->insns[i].function].callee));
	path__loops(p, s, i);
	path__inlined(p, s, i);
	path__add(p, sass_line(s, i, fallback));
}

/* The names from the kernel down to context @c (excluded: its instructions). */
static void path__context(struct path *p, const struct gt_sass *s, const struct gt_sass_gcct *g, uint32_t c)
{
	uint32_t chain[MAX_PATH], n = 0;

	for (; c != GT_SASS_NONE && g->contexts[c].parent != GT_SASS_NONE && n < MAX_PATH; c = g->contexts[c].parent)
		chain[n++] = c;
	while (n--) {
		const struct gt_sass_context *x = &g->contexts[chain[n]];

		if (x->call != GT_SASS_NONE)
			path__insn(p, s, x->call, g->contexts[x->parent].function, NULL);
		path__add(p, gt_cupti__kernel_name(s->functions[x->function].callee));
	}
}

/* Each class's samples of @e, in @part[k], at @path under every launch
 * context of its kernel, shared by their GPU time. */
/* Counts at @path under every launch context of its kernel, shared by
 * their GPU time: @part[k] as metric @metric[k], k < @nk. A sample's counts
 * (@metric is class_metric) also add GPC_SAMPLES for the classes and, for
 * issued samples, the issuing instruction's class @cls (GPI_*). */
static void place(const uint64_t *part, int nk, const enum gt_metric *metric, const struct path *path, int cls,
		  const struct target *tg, uint32_t n)
{
	uint64_t total_w = 0, *each = calloc(n, sizeof(*each));
	int samples = metric == class_metric;

	for (uint32_t i = 0; i < n; i++)
		total_w += tg[i].weight;
	for (int k = 0; each && k < nk; k++) {
		if (!part[k])
			continue;
		share(tg, n, total_w, part[k], each);
		for (uint32_t i = 0; i < n; i++) {
			struct gt_cct *cct = &tg[i].t->cct;
			struct gt_cct_node *node = tg[i].node;

			if (!each[i])
				continue;
			for (uint32_t d = 0; node && d < path->n; d++)
				node = gt_cct__child(cct, node, GT_NODE_NAME, (uint64_t)(uintptr_t)path->name[d], 0);
			if (!node)
				continue;
			gt_cct__add(cct, node, metric[k], each[i], 0);
			if (samples && k < PC_LATENCY)
				gt_cct__add(cct, node, GT_M_GPC_SAMPLES, each[i], 0);
			if (samples && k == PC_ISSUED && cls >= 0)
				gt_cct__add(cct, node, issue_metric[cls], each[i], 0);
		}
	}
	free(each);
}

/* Without the kernel's structure: its lines right under the kernel. */
static void entry__place_flat(const struct pc_entry *e, const struct target *tg, uint32_t n)
{
	struct path p = { .n = 0 };

	path__add(&p, e->line);
	place(e->n, PC__N, class_metric, &p, -1, tg, n);
}

/* ---- the kernels' structure (nvdisasm) -------------------------------------- */

void gt_cupti_pcsamp__disassembly(uint64_t crc, const char *text, size_t len)
{
	pthread_mutex_lock(&pcs.lock);
	for (uint32_t i = 0; i < pcs.n_cubins; i++) {
		struct pc_cubin *c = &pcs.cubins[i];

		if (c->crc != crc || c->sass_text)
			continue;
		if ((c->sass_text = malloc(len + 1))) {
			memcpy(c->sass_text, text, len);
			c->sass_text[len] = 0;
			c->sass_len = len;
		}
	}
	pthread_mutex_unlock(&pcs.lock);
}

/* Each cubin that has samples is disassembled and read; each sample's
 * instruction found in it. */
static void structure(void)
{
	static int said;

	if (pcs.structured)
		return;
	pcs.structured = 1;
	for (uint32_t i = 0; i < pcs.n_cubins; i++) {
		struct pc_cubin *c = &pcs.cubins[i];
		int used = 0, err = 0;
		uint64_t t0 = gt_clock__now();

		for (uint32_t k = 0; k < pcs.n_e && !used; k++)
			used = pcs.e[k].crc == c->crc;
		if (!used)
			continue;
		if (!c->sass_text && c->size <= 16) /* not a module: a test's stand-in */
			continue;
		if (!c->sass_text)
			err = gt_sass__disassemble(gt_config.nvdisasm, c->bytes, c->size, &c->sass_text, &c->sass_len);
		if (err == -ECANCELED)
			continue; /* GPUTOOL_NVDISASM=0: as asked */
		if (err || !c->sass_text) {
			if (!said++)
				gt_warn("cupti", "GPU samples by source line only, without GPU calling contexts, loops or "
						 "instruction classes: %s (set GPUTOOL_NVDISASM to CUDA's nvdisasm)",
					err == -ENOENT	      ? "nvdisasm not found"
					: err == -ETIMEDOUT ? "nvdisasm took too long"
							      : "nvdisasm failed");
			continue;
		}
		if (gt_cupti_recording)
			gt_cupti_record__sass(c->crc, c->sass_text, c->sass_len);
		c->sass = gt_sass__parse(c->sass_text, c->sass_len);
		gt_info("cupti", "cubin %016llx: %u functions, %u instructions, %u loops (%.1f ms)",
			(unsigned long long)c->crc, c->sass ? c->sass->n_functions : 0, c->sass ? c->sass->n_insns : 0,
			c->sass ? c->sass->n_loops : 0, (double)(gt_clock__now() - t0) / 1e6);
	}
	for (uint32_t k = 0; k < pcs.n_e; k++) {
		struct pc_entry *e = &pcs.e[k];

		for (uint32_t i = 0; i < pcs.n_cubins; i++) {
			if (pcs.cubins[i].crc != e->crc || !pcs.cubins[i].sass)
				continue;
			e->insn = gt_sass__find(pcs.cubins[i].sass, e->symbol, e->pc);
			if (e->insn != GT_SASS_NONE)
				e->cubin = i;
			break;
		}
	}
}

static int by_place(const void *a, const void *b)
{
	const struct pc_entry *x = &pcs.e[*(const uint32_t *)a], *y = &pcs.e[*(const uint32_t *)b];

	if (x->cubin != y->cubin)
		return x->cubin < y->cubin ? -1 : 1;
	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

/* @vals[0..nv) shared over the contexts @cs[0..nc) of one vertex by their
 * factors (@v_sum: their sum): @part[j * nv + c]. @w: scratch for nc. */
static int share_contexts(const struct gt_sass_gcct *g, const uint32_t *cs, uint32_t nc, double v_sum,
			  const uint64_t *vals, int nv, double *w, uint64_t *part)
{
	uint64_t one[MAX_CONTEXTS_PER_SHARE], *to = nc <= MAX_CONTEXTS_PER_SHARE ? one : malloc(nc * sizeof(*to));

	if (!to)
		return -ENOMEM;
	for (uint32_t j = 0; j < nc; j++)
		w[j] = g->contexts[cs[j]].factor;
	for (int c = 0; c < nv; c++) {
		share_d(w, nc, v_sum, vals[c], to);
		for (uint32_t j = 0; j < nc; j++)
			part[(size_t)j * (size_t)nv + (size_t)c] = to[j];
	}
	if (to != one)
		free(to);
	return 0;
}

/* The instruction blamer over one section's entries: the dependency stalls
 * (long and short scoreboard, wait) moved to the instructions that produce
 * what the waiting ones read, as GPB_* at the producers' lines, in each
 * of their GPU calling contexts. */
static int blame__place(const struct gt_sass *s, uint32_t sec, const uint32_t *idx, uint32_t n,
			const struct gt_sass_gcct *g, const uint32_t *by_v, const uint32_t *v_start,
			const double *v_sum, double *w, uint64_t *part, const struct target *tg, uint32_t nt)
{
	const struct gt_sass_section *S = &s->sections[sec];
	uint32_t ns = S->end - S->first;
	uint64_t *stalls = calloc((size_t)ns * GT_SASS__WAITS, sizeof(*stalls)), *issued = calloc(ns, sizeof(*issued));
	double *blame = malloc((size_t)ns * GT_SASS__BLAMES * sizeof(*blame)), cum = 0;
	uint64_t emitted = 0;
	char text[32];
	int err = -ENOMEM;

	if (!stalls || !issued || !blame)
		goto out;
	for (uint32_t k = 0; k < n; k++) {
		const struct pc_entry *e = &pcs.e[idx[k]];
		uint64_t *st = &stalls[(size_t)(e->insn - S->first) * GT_SASS__WAITS];

		st[GT_SASS_WAIT_LONG] += e->n[PR_LONG_SCOREBOARD];
		st[GT_SASS_WAIT_SHORT] += e->n[PR_SHORT_SCOREBOARD];
		st[GT_SASS_WAIT_FIXED] += e->n[PR_WAIT];
		issued[e->insn - S->first] += e->n[PC_ISSUED];
	}
	if ((err = gt_sass__blame(s, sec, stalls, issued, blame)))
		goto out;
	for (uint32_t i = 0; i < ns; i++) {
		uint64_t counts[GT_SASS__BLAMES];
		uint32_t v = g->vertex[i], nc = v_start[v + 1] - v_start[v];
		int any = 0;

		/* Whole samples, rounded so that the sums stay exact. */
		for (int b = 0; b < GT_SASS__BLAMES; b++) {
			cum += blame[(size_t)i * GT_SASS__BLAMES + (size_t)b];
			counts[b] = (uint64_t)(cum + 0.5) - emitted;
			emitted += counts[b];
			any |= counts[b] != 0;
		}
		if (!any || !nc)
			continue;
		err = share_contexts(g, &by_v[v_start[v]], nc, v_sum[v], counts, GT_SASS__BLAMES, w, part);
		if (err)
			goto out;
		snprintf(text, sizeof(text), "pc 0x%x", s->insns[S->first + i].offset);
		for (uint32_t j = 0; j < nc; j++) {
			uint32_t c = by_v[v_start[v] + j];
			struct path p = { .n = 0 };

			path__context(&p, s, g, c);
			path__insn(&p, s, S->first + i, g->contexts[c].function, line_intern(text));
			place(&part[(size_t)j * GT_SASS__BLAMES], GT_SASS__BLAMES, blame_metric, &p, -1, tg, nt);
		}
	}
	err = 0;
out:
	free(stalls);
	free(issued);
	free(blame);
	return err;
}

/* One section's entries (@idx[0..n), same cubin, same section) through its
 * GPU calling contexts. Returns 0, or -ENOMEM (then nothing is placed). */
static int section__place(const uint32_t *idx, uint32_t n, const struct target *tg, uint32_t nt)
{
	const struct gt_sass *s = pcs.cubins[pcs.e[idx[0]].cubin].sass;
	uint32_t sec = s->functions[s->insns[pcs.e[idx[0]].insn].function].section;
	const struct gt_sass_section *S = &s->sections[sec];
	uint32_t ns = S->end - S->first, *by_v = NULL, *v_start = NULL;
	uint64_t *weight = calloc(2 * (size_t)ns, sizeof(*weight)), *issued = weight + ns, *part = NULL;
	double *v_sum = NULL, *w = NULL;
	struct gt_sass_gcct g;
	int err = -ENOMEM;

	if (!weight)
		return err;
	for (uint32_t k = 0; k < n; k++) {
		for (int c = 0; c < PC_LATENCY; c++)
			weight[pcs.e[idx[k]].insn - S->first] += pcs.e[idx[k]].n[c];
		issued[pcs.e[idx[k]].insn - S->first] += pcs.e[idx[k]].n[PC_ISSUED];
	}
	if (gt_sass__gcct(s, sec, weight, issued, &g)) {
		free(weight);
		return err;
	}
	/* The contexts of each vertex, and the sums of their factors. */
	if (!(v_start = calloc(g.n_vertices + 1, sizeof(*v_start))) || !(by_v = malloc(g.n_contexts * sizeof(*by_v))) ||
	    !(v_sum = calloc(g.n_vertices, sizeof(*v_sum))) || !(w = malloc(g.n_contexts * sizeof(*w))) ||
	    !(part = malloc((size_t)g.n_contexts * ((int)PC__N > (int)GT_SASS__BLAMES ? (int)PC__N : (int)GT_SASS__BLAMES) *
			    sizeof(*part))))
		goto out;
	for (uint32_t c = 0; c < g.n_contexts; c++) {
		v_start[g.contexts[c].vertex + 1]++;
		v_sum[g.contexts[c].vertex] += g.contexts[c].factor;
	}
	for (uint32_t v = 0; v < g.n_vertices; v++)
		v_start[v + 1] += v_start[v];
	{
		uint32_t *fill = calloc(g.n_vertices, sizeof(*fill));

		if (!fill)
			goto out;
		for (uint32_t c = 0; c < g.n_contexts; c++)
			by_v[v_start[g.contexts[c].vertex] + fill[g.contexts[c].vertex]++] = c;
		free(fill);
	}
	for (uint32_t k = 0; k < n; k++) {
		const struct pc_entry *e = &pcs.e[idx[k]];
		uint32_t v = g.vertex[e->insn - S->first], nc = v_start[v + 1] - v_start[v];
		const uint32_t *cs = &by_v[v_start[v]];

		if (!nc) { /* no context reaches it: its line under the kernel */
			entry__place_flat(e, tg, nt);
			continue;
		}
		if (share_contexts(&g, cs, nc, v_sum[v], e->n, PC__N, w, part))
			goto out;
		for (uint32_t j = 0; j < nc; j++) {
			const uint64_t *pj = &part[(size_t)j * PC__N];
			struct path p = { .n = 0 };
			int any = 0;

			for (int c = 0; c < PC__N; c++)
				any |= pj[c] != 0;
			if (!any)
				continue;
			path__context(&p, s, &g, cs[j]);
			path__insn(&p, s, e->insn, g.contexts[cs[j]].function, e->line);
			place(pj, PC__N, class_metric, &p, (int)s->insns[e->insn].cls, tg, nt);
		}
	}
	if (blame__place(s, sec, idx, n, &g, by_v, v_start, v_sum, w, part, tg, nt))
		goto out;
	err = 0;
out:
	free(weight);
	free(part);
	free(v_sum);
	free(w);
	free(by_v);
	free(v_start);
	gt_sass__gcct_fini(&g);
	return err;
}

static void fact_u64(const char *key, uint64_t v)
{
	char buf[32];

	if (!v)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	gt_tool__set_fact(key, buf);
}

static void facts(void)
{
	const struct gt_cupti_device *d = &gt_cupti_devices[pcs.device];
	uint64_t total = 0;
	char buf[192];

	/* What the report derives issue and active rates with (docs/CUDA.md). */
	fact_u64("pc_period_cycles", pcs.period_cycles);
	if (atomic_load_explicit(&d->ready, memory_order_acquire)) {
		uint64_t khz, readings;

		/* The SM clock measured while the device was busy, else its
		 * nominal clock (docs/CUDA.md). */
		if (!gt_cupti_smclock__mean_khz(&khz, &readings)) {
			fact_u64("pc_sm_clock_khz", khz);
			snprintf(buf, sizeof(buf), "measured: the mean of %llu readings while busy; nominal %d MHz",
				 (unsigned long long)readings, d->clock_khz / 1000);
		} else {
			fact_u64("pc_sm_clock_khz", (uint64_t)d->clock_khz);
			snprintf(buf, sizeof(buf), "nominal");
		}
		gt_tool__set_fact("pc_sm_clock", buf);
		fact_u64("pc_sm_count", (uint64_t)d->sm_count);
		/* Four warp schedulers per SM since Volta (compute capability 7). */
		fact_u64("pc_schedulers", d->cc_major >= 7 ? 4 : 0);
	}
	/* Counted from the PCs: CUPTI's own total covers one GetData call. */
	for (uint32_t i = 0; i < pcs.n_e; i++)
		for (int k = 0; k < PC_LATENCY; k++)
			total += pcs.e[i].n[k];
	snprintf(buf, sizeof(buf), "%llu samples, %llu dropped%s; %u instructions; %llu samples of kernels "
		 "without measured launches",
		 (unsigned long long)total, (unsigned long long)pcs.dropped,
		 pcs.buffer_full ? " (hardware buffer full)" : "", pcs.n_e, (unsigned long long)pcs.unplaced);
	gt_tool__set_fact("pc_sampling", buf);
}

void gt_cupti_pcsamp__settle(void)
{
	struct targets ts = { 0 };
	uint32_t nt = gt_thread__count(), *order = NULL, n_order = 0;

	pthread_mutex_lock(&pcs.lock);
	if (!pcs.n_e) {
		if (pcs.n_ctx)
			facts();
		goto out;
	}
	ts.list = calloc(pcs.n_e, sizeof(*ts.list));
	ts.n = calloc(pcs.n_e, sizeof(*ts.n));
	order = malloc(pcs.n_e * sizeof(*order));
	if (!ts.list || !ts.n || !order)
		goto out;
	for (uint32_t i = 0; i < pcs.n_e; i++) {
		uint64_t key = (uintptr_t)pcs.e[i].function;

		if (!gt_hmap__get(&ts.by_function, key) && !gt_hmap__put(&ts.by_function, key, ts.n_lists + 1))
			ts.n_lists++;
	}
	/* The trees are final (after the finalizer): read and written here only. */
	for (uint32_t i = 0; i < nt; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (t && t->cct.root)
			targets__collect(&ts, t, t->cct.root);
	}
	structure();
	for (uint32_t i = 0; i < pcs.n_e; i++) {
		const struct pc_entry *e = &pcs.e[i];
		const uint64_t *v = gt_hmap__get(&ts.by_function, (uintptr_t)e->function);
		uint32_t li = v ? (uint32_t)*v - 1 : 0;

		if (!v || !ts.n[li]) {
			for (int k = 0; k < PC_LATENCY; k++)
				pcs.unplaced += e->n[k];
			continue;
		}
		if (e->insn != GT_SASS_NONE)
			order[n_order++] = i;
		else
			entry__place_flat(e, ts.list[li], ts.n[li]);
	}
	/* With the structure: a section (a kernel and its callees) at a time. */
	if (n_order)
		qsort(order, n_order, sizeof(*order), by_place);
	for (uint32_t a = 0, b; a < n_order; a = b) {
		const struct pc_entry *e = &pcs.e[order[a]];
		const struct gt_sass *s = pcs.cubins[e->cubin].sass;
		uint32_t sec = s->functions[s->insns[e->insn].function].section;
		uint32_t li = (uint32_t)*gt_hmap__get(&ts.by_function, (uintptr_t)e->function) - 1;

		for (b = a + 1; b < n_order; b++) {
			const struct pc_entry *x = &pcs.e[order[b]];

			if (x->cubin != e->cubin || s->functions[s->insns[x->insn].function].section != sec)
				break;
		}
		if (section__place(&order[a], b - a, ts.list[li], ts.n[li]))
			for (uint32_t k = a; k < b; k++)
				entry__place_flat(&pcs.e[order[k]], ts.list[li], ts.n[li]);
	}
	facts();
out:
	for (uint32_t i = 0; ts.list && i < ts.n_lists; i++)
		free(ts.list[i]);
	free(ts.list);
	free(ts.n);
	free(order);
	gt_hmap__fini(&ts.by_function);
	/* The nodes name their paths by interned texts: the structure goes. */
	for (uint32_t i = 0; i < pcs.n_cubins; i++) {
		gt_sass__delete(pcs.cubins[i].sass);
		free(pcs.cubins[i].sass_text);
		pcs.cubins[i].sass = NULL;
		pcs.cubins[i].sass_text = NULL;
	}
	pcs.off = 1;
	pthread_mutex_unlock(&pcs.lock);
}
