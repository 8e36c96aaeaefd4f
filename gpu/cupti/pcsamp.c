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
 *   settle (after the    pcsamp-place.c: each kernel function's samples go
 *   monitor's finalizer) to the kernel's launch contexts in every thread's
 *                        tree, down its GPU calling contexts and loops
 *
 * Everything is under one lock: the callbacks of several threads, and the
 * exit. Nothing here runs in a signal handler.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/profile.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/pcsamp-internal.h"
#include "gpu/sass/sass.h"

/* The hardware buffer, CUPTI's default 512 MB, is allocated when sampling
 * starts, at the first kernel's launch: 290 ms of that launch on an H200,
 * against 90 ms with 64 MB and 65 ms with 16 MB (docs/PERFORMANCE.md). It
 * holds the run's samples until sampling ends: CUPTI hands them over only
 * at the disable (cuptiPCSamplingGetData during the run took a few hundred
 * PCs and freed nothing), takes none once the buffer is full, and the end
 * of sampling grows with what it holds (1.0-1.4 s for 50 million samples,
 * 41-54 ms for 5 million). Measured on an H200, 2026-11-28: 64 MB kept 4.5
 * to 6.5 million samples, 512 MB 50 million; shorter wakes of CUPTI's
 * threads kept fewer (10 ms: 4.3 million in 128 or 256 MB; 5 ms: 1.7
 * million in 64 MB). So the size is a budget of samples a run, traded
 * against the fixed cost above: twice what the period fills in PC_WAKE_NS,
 * at PC_SAMPLE_BYTES a sample (64 MB at 2^12 cycles, about 0.1 s of an
 * H200's busy SMs); a run that needs more gets the report's count of what
 * the samples cover and the period that keeps them all (report/advice.c). */
#define PC_WAKE_NS 25000000ull
#define PC_SAMPLE_BYTES 12
#define PC_HW_BUFFER_MIN (16ull << 20)
#define PC_HW_BUFFER_MAX (512ull << 20)

/* PCs one GetData call hands over at most; more come in further calls. */
#define PCS_PER_CALL 4096
/* CUPTI's buffer for decoded samples: about 16 bytes per PC and reason. */
#define SCRATCH_BYTES (32u << 20)

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

struct gt_pcs_state gt_pcs = { .lock = PTHREAD_MUTEX_INITIALIZER };

int gt_cupti_pcsamp__on(void)
{
	return gt_config.pc_sampling > 0 && gt_cupti_lib.cuptiPCSamplingEnable &&
	       gt_cupti_lib.cuptiPCSamplingGetData && gt_cupti_lib.cuptiPCSamplingSetConfigurationAttribute &&
	       gt_cupti_lib.cuptiPCSamplingGetNumStallReasons && gt_cupti_lib.cuptiPCSamplingGetStallReasons &&
	       gt_cupti_lib.cuptiPCSamplingDisable;
}

int gt_cupti_pcsamp__kept(void)
{
	return gt_cupti_pcsamp__on() || gt_cupti_sasscount__on();
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
	if (gt_pcs.off)
		return;
	gt_pcs.off = 1;
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

/* Samples a second of a device of @sms SMs at @khz, a sample per SM each
 * 2^@exponent cycles. */
static uint64_t rate_of(uint32_t exponent, uint32_t sms, uint32_t khz)
{
	return (uint64_t)sms * khz * 1000 >> exponent;
}

uint32_t gt_cupti_pcsamp__period_for(uint64_t rate, uint32_t sms, uint32_t khz)
{
	uint32_t k = 5;

	if (!sms || !khz)
		return 0;
	while (k < 31 && rate_of(k, sms, khz) > rate)
		k++;
	return k;
}

uint64_t gt_cupti_pcsamp__hw_buffer_for(uint32_t exponent, uint32_t sms, uint32_t khz)
{
	uint64_t want = rate_of(exponent, sms, khz) * PC_SAMPLE_BYTES * 2 / (1000000000ull / PC_WAKE_NS), size;

	for (size = PC_HW_BUFFER_MIN; size < want && size < PC_HW_BUFFER_MAX; size *= 2)
		;
	return size;
}

/* The period (2^N cycles) and the hardware buffer for the device of the
 * context being set up: GPUTOOL_PC_SAMPLING=N as asked, 1 for a budget of
 * GPUTOOL_PC_RATE samples a second (64 million: 2^12 cycles on an H100
 * or H200, half of CUPTI's choice, 2^11, and as fine as the advice on
 * sub-millisecond kernels needs; 4 million, 2^16, changed it). 0: CUPTI's
 * defaults (the device unknown). */
static void context__period(uint32_t *exponent, uint64_t *hw_bytes)
{
	const struct gt_cupti_device *d = NULL;
	CUdevice dev;

	if (gt_cupti_lib.cuCtxGetDevice && gt_cupti_lib.cuCtxGetDevice(&dev) == CUDA_SUCCESS && dev >= 0 &&
	    dev < GT_CUPTI_MAX_DEVICES && atomic_load_explicit(&gt_cupti_devices[dev].ready, memory_order_acquire))
		d = &gt_cupti_devices[dev];
	*exponent = gt_config.pc_sampling >= 5 ? (uint32_t)gt_config.pc_sampling
		    : d			       ? gt_cupti_pcsamp__period_for(gt_config.pc_rate, (uint32_t)d->sm_count,
										    (uint32_t)d->clock_khz)
						       : 0;
	*hw_bytes = d && *exponent ? gt_cupti_pcsamp__hw_buffer_for(*exponent, (uint32_t)d->sm_count,
								      (uint32_t)d->clock_khz)
				   : 0;
}

static CUptiResult context__configure(struct pc_context *c)
{
	CUpti_PCSamplingConfigurationInfo cfg[6];
	uint32_t exponent;
	uint64_t hw_bytes;
	CUpti_PCSamplingConfigurationInfoParams p = { .size = CUpti_PCSamplingConfigurationInfoParamsSize };
	size_t n = 0;

	memset(cfg, 0, sizeof(cfg));
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	cfg[n++].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	cfg[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->data;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	cfg[n++].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BYTES;
	context__period(&exponent, &hw_bytes);
	if (!gt_pcs.n_ctx) {
		gt_pcs.exponent = exponent;
		gt_pcs.hw_bytes = hw_bytes;
	}
	if (exponent) {
		cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		cfg[n++].attributeData.samplingPeriodData.samplingPeriod = exponent;
	}
	if (hw_bytes) {
		cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
		cfg[n++].attributeData.hardwareBufferSizeData.hardwareBufferSize = (size_t)hw_bytes;
		cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN;
		cfg[n++].attributeData.workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan =
			(uint32_t)(PC_WAKE_NS / 1000000);
	}
	p.ctx = c->ctx;
	p.numAttributes = n;
	p.pPCSamplingConfigurationInfo = cfg;
	return gt_cupti_lib.cuptiPCSamplingSetConfigurationAttribute(&p);
}

/*
 * CUPTI loads NVIDIA's profiler host library, libnvperf_host.so (32 MB
 * beside libcupti in CUDA 13), when sampling is enabled: inside the first
 * context's creation, on the program's thread. Loaded first on a thread
 * of the tool's, right after libcupti, it is mapped and relocated while
 * the program goes on to its context; CUPTI's own dlopen then finds it
 * loaded (the loader matches its soname). Kept to the end, as CUPTI keeps
 * it. Nothing is lost if it is not there: CUPTI looks for it its own way.
 */
static char preload_path[512];

static void *preload__main(void *arg)
{
	(void)arg;
	(void)dlopen(preload_path, RTLD_NOW | RTLD_LOCAL);
	return NULL;
}

void gt_cupti_pcsamp__preload(const char *cupti_path)
{
	const char *slash = cupti_path ? strrchr(cupti_path, '/') : NULL;
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;

	if (!gt_cupti_pcsamp__on() || !slash || slash - cupti_path > (long)sizeof(preload_path) - 32)
		return;
	snprintf(preload_path, sizeof(preload_path), "%.*s/libnvperf_host.so", (int)(slash - cupti_path),
		 cupti_path);
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The program's handlers run on its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&th, &attr, preload__main, NULL))
		gt_info("cupti", "no thread to load %s ahead of CUPTI", preload_path);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/*
 * A lazily loaded module (CUDA's default since 12.2) is loaded at its first
 * kernel's launch, and with PC sampling on CUPTI then spends a long time
 * (0.3 s for XSBench's module on an H100) inside that launch: a program
 * that times its kernels would see it as its own. Eager loading moves the
 * loads to the context's creation. The driver reads CUDA_MODULE_LOADING in
 * cuInit, which calls this library's InitializeInjection first; a program
 * that set the variable keeps its choice. Runs once, inside cuInit, and
 * only when PC sampling is asked for: like any setenv, it races with a
 * getenv another thread of the program makes at that moment.
 */
void gt_cupti_pcsamp__ask_eager(void)
{
	if (gt_config.pc_sampling <= 0 || getenv("CUDA_MODULE_LOADING"))
		return;
	gt_pcs.eager_asked = !setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

/* What the driver does: the report says it (facts()). */
static void loading__read(void)
{
	CUmoduleLoadingMode mode;

	if (!gt_cupti_lib.cuModuleGetLoadingMode || gt_cupti_lib.cuModuleGetLoadingMode(&mode) != CUDA_SUCCESS)
		return;
	gt_pcs.loading = mode == CU_MODULE_EAGER_LOADING ? PC_LOADING_EAGER : PC_LOADING_LAZY;
	if (gt_pcs.loading == PC_LOADING_LAZY) {
		const char *v = getenv("CUDA_MODULE_LOADING");
		char q[GT_LOG_VALUE];

		gt_warn("cupti", "modules load lazily (CUDA_MODULE_LOADING=%s): with PC sampling, each module's first "
				 "launch includes CUPTI's work on it; set CUDA_MODULE_LOADING=EAGER for the kernels' own times",
			v ? gt_log__escape(v, q, sizeof(q)) : "unset");
	} else
		gt_info("cupti", "modules load eagerly%s", gt_pcs.eager_asked ? " (asked for PC sampling)" : "");
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
	if (gt_pcs.exponent)
		gt_pcs.period_cycles = 1ull << gt_pcs.exponent;
	else if (gt_cupti_lib.cuptiPCSamplingGetConfigurationAttribute &&
		 gt_cupti_lib.cuptiPCSamplingGetConfigurationAttribute(&p) == CUPTI_SUCCESS &&
		 cfg.attributeData.samplingPeriodData.samplingPeriod >= 5 &&
		 cfg.attributeData.samplingPeriodData.samplingPeriod <= 31)
		gt_pcs.period_cycles = 1ull << cfg.attributeData.samplingPeriodData.samplingPeriod;
	gt_pcs.device = gt_cupti_lib.cuCtxGetDevice && gt_cupti_lib.cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
				     dev >= 0 && dev < GT_CUPTI_MAX_DEVICES
			     ? (int)dev
			     : 0;
	gt_cupti_smclock__start(gt_pcs.device);
	loading__read();
}

void gt_cupti_pcsamp__context_created(CUcontext ctx)
{
	CUpti_PCSamplingEnableParams ep = { .size = CUpti_PCSamplingEnableParamsSize };
	struct pc_context *c;
	uint64_t t0;
	CUptiResult r;

	if (!ctx)
		return;
	if (gt_cupti_sasscount__on())
		gt_cupti_sasscount__context_created(ctx);
	if (!gt_cupti_pcsamp__on())
		return;
	pthread_mutex_lock(&gt_pcs.lock);
	t0 = gt_clock__now();
	if (gt_pcs.off || gt_pcs.n_ctx == MAX_CONTEXTS)
		goto out;
	c = &gt_pcs.ctx[gt_pcs.n_ctx];
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
	if (!gt_pcs.n_ctx++)
		context__setup(c);
	gt_info("cupti", "PC sampling on (a sample every %llu cycles, a %llu MB hardware buffer; set up in %.1f ms)",
		(unsigned long long)gt_pcs.period_cycles, (unsigned long long)(gt_pcs.hw_bytes >> 20),
		(double)(gt_clock__now() - t0) / 1e6);
out:
	pthread_mutex_unlock(&gt_pcs.lock);
}

void gt_cupti_pcsamp__module_loaded(const void *cubin, size_t size)
{
	CUpti_GetCubinCrcParams cp = { .size = CUpti_GetCubinCrcParamsSize };
	struct pc_cubin *grown;
	const void *queued = NULL;
	uint64_t t0 = gt_clock__now();

	if (!gt_cupti_pcsamp__kept() || !cubin || !size || !gt_cupti_lib.cuptiGetCubinCrc)
		return;
	cp.cubin = cubin;
	cp.cubinSize = size;
	if (gt_cupti_lib.cuptiGetCubinCrc(&cp) != CUPTI_SUCCESS)
		return;
	if (gt_cupti_recording)
		gt_cupti_record__cubin(cp.cubinCrc, size);
	pthread_mutex_lock(&gt_pcs.lock);
	for (uint32_t i = 0; i < gt_pcs.n_cubins; i++)
		if (gt_pcs.cubins[i].crc == cp.cubinCrc)
			goto out;
	grown = realloc(gt_pcs.cubins, (gt_pcs.n_cubins + 1) * sizeof(*grown));
	if (!grown)
		goto out;
	gt_pcs.cubins = grown;
	memset(&grown[gt_pcs.n_cubins], 0, sizeof(*grown));
	grown[gt_pcs.n_cubins].bytes = malloc(size);
	if (grown[gt_pcs.n_cubins].bytes) {
		memcpy(grown[gt_pcs.n_cubins].bytes, cubin, size);
		grown[gt_pcs.n_cubins].size = size;
		grown[gt_pcs.n_cubins].crc = cp.cubinCrc;
		queued = grown[gt_pcs.n_cubins].bytes;
		gt_pcs.n_cubins++;
	}
out:
	pthread_mutex_unlock(&gt_pcs.lock);
	/* Its copy stays to the end of the run: the thread may read it. */
	if (queued)
		gt_cupti_pcsamp__bg_queue(cp.cubinCrc, queued, size);
	/* What a module's load costs here (GPUTOOL_VERBOSE=2). */
	gt_info("cupti", "module of %zu bytes kept for its PC samples in %.2f ms", size,
		(double)(gt_clock__now() - t0) / 1e6);
}

/* One copy of each line's text, for node keys that live to the end. */
const char *gt_cupti_pcsamp__intern(const char *text)
{
	uint64_t h = gt_hash__str(text) | 1;
	const uint64_t *v;
	char *copy;

	/* Probing past a different text with the same hash. */
	while ((v = gt_hmap__get(&gt_pcs.lines, h))) {
		if (!strcmp((const char *)(uintptr_t)*v, text))
			return (const char *)(uintptr_t)*v;
		h = gt_hash__mix64(h) | 1;
	}
	copy = strdup(text);
	if (copy && gt_hmap__put(&gt_pcs.lines, h, (uintptr_t)copy)) {
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

	for (uint32_t i = 0; i < gt_pcs.n_cubins && gt_cupti_lib.cuptiGetSassToSourceCorrelation; i++) {
		if (gt_pcs.cubins[i].crc != crc)
			continue;
		sp.cubin = gt_pcs.cubins[i].bytes;
		sp.cubinSize = gt_pcs.cubins[i].size;
		sp.functionName = function;
		sp.pcOffset = pc;
		if (gt_cupti_lib.cuptiGetSassToSourceCorrelation(&sp) == CUPTI_SUCCESS && sp.fileName &&
		    sp.lineNumber) {
			snprintf(text, sizeof(text), "%s:%u", sp.fileName, sp.lineNumber);
			line = gt_cupti_pcsamp__intern(text);
			if (gt_cupti_recording)
				gt_cupti_record__line(crc, pc, function, sp.fileName, sp.lineNumber);
		}
		free(sp.fileName);
		free(sp.dirName);
		break;
	}
	if (!line) {
		snprintf(text, sizeof(text), GT_GPU_NODE_PC "%llx", (unsigned long long)pc);
		line = gt_cupti_pcsamp__intern(text);
	}
	return line;
}

struct pc_entry *gt_cupti_pcsamp__entry(const CUpti_PCSamplingPCData *d)
{
	uint64_t k = gt_hash__mix64(d->cubinCrc ^ gt_hash__mix64(d->pcOffset ^ ((uint64_t)d->functionIndex << 40))) | 1;
	const uint64_t *v;
	struct pc_entry *e;

	while ((v = gt_hmap__get(&gt_pcs.by_pc, k))) {
		e = &gt_pcs.e[*v - 1];
		if (e->crc == d->cubinCrc && e->pc == d->pcOffset && e->function_index == d->functionIndex)
			return e;
		k = gt_hash__mix64(k) | 1;
	}
	if (gt_pcs.n_e == gt_pcs.cap_e) {
		uint32_t cap = gt_pcs.cap_e ? gt_pcs.cap_e * 2 : 1024;
		struct pc_entry *grown = realloc(gt_pcs.e, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		gt_pcs.e = grown;
		gt_pcs.cap_e = cap;
	}
	e = &gt_pcs.e[gt_pcs.n_e];
	memset(e, 0, sizeof(*e));
	e->crc = d->cubinCrc;
	e->pc = d->pcOffset;
	e->function_index = d->functionIndex;
	/* CUPTI's string may be shared with its other records: kept, never
	 * freed (one per function). */
	e->function = gt_cupti__kernel_name(d->functionName);
	e->symbol = d->functionName ? gt_cupti_pcsamp__intern(d->functionName) : NULL;
	e->line = d->functionName ? line_of(d->cubinCrc, d->functionName, d->pcOffset) : NULL;
	e->cubin = e->insn = GT_SASS_NONE;
	if (!e->function || !e->symbol || !e->line || gt_hmap__put(&gt_pcs.by_pc, k, gt_pcs.n_e + 1))
		return NULL;
	gt_pcs.n_e++;
	return e;
}

/* Whether @p holds issued ("selected") samples. */
static int pc_issued(const struct pc_context *c, const CUpti_PCSamplingPCData *p)
{
	for (size_t k = 0; k < p->stallReasonCount && k < c->n_reasons; k++)
		for (uint32_t j = 0; j < c->n_reasons; j++)
			if (c->reason_index[j] == p->stallReason[k].pcSamplingStallReasonIndex)
				if (c->reason_class[j] == PC_ISSUED && p->stallReason[k].samples)
					return 1;
	return 0;
}

/* The index in gt_pcs.e of the entry of @p's PC less @back bytes (made if
 * new), or GT_SASS_NONE without memory. An index, not a pointer: making
 * an entry may move them all. */
static uint32_t pc_entry_index(const CUpti_PCSamplingPCData *p, uint64_t back)
{
	CUpti_PCSamplingPCData q = *p;
	struct pc_entry *e;

	q.pcOffset -= back;
	e = gt_cupti_pcsamp__entry(&q);
	return e ? (uint32_t)(e - gt_pcs.e) : GT_SASS_NONE;
}

/* What one GetData call (or Disable) left in the context's buffer. A
 * sample's PC is the warp's next instruction to issue: a stalled warp's is
 * the instruction that waits (the consumer of a load, the instruction a
 * fixed latency holds back, a branch's target while it resolves, the
 * instruction after EXIT while stores drain), but an issuing ("selected")
 * warp's PC has already moved past the instruction it issued, to the next
 * one in memory whether or not that was a taken branch. Its issued samples
 * therefore go to the instruction GT_CUPTI_PC_ISSUE_SHIFT bytes before (the
 * evidence: docs/CUDA.md, "PC sampling"). */
static void context__take(struct pc_context *c)
{
	CUpti_PCSamplingData *d = &c->data;

	if (gt_cupti_recording && d->totalNumPcs)
		gt_cupti_record__pcs(d);
	gt_pcs.dropped += d->droppedSamples;
	gt_pcs.buffer_full |= d->hardwareBufferFull;
	for (size_t i = 0; i < d->totalNumPcs && i < PCS_PER_CALL; i++) {
		const CUpti_PCSamplingPCData *p = &d->pPcData[i];
		uint32_t at = pc_entry_index(p, 0), issuer = at;

		if (at != GT_SASS_NONE && p->pcOffset >= GT_CUPTI_PC_ISSUE_SHIFT && pc_issued(c, p))
			issuer = pc_entry_index(p, GT_CUPTI_PC_ISSUE_SHIFT);
		for (size_t k = 0; at != GT_SASS_NONE && k < p->stallReasonCount && k < c->n_reasons; k++) {
			uint32_t idx = p->stallReason[k].pcSamplingStallReasonIndex;

			for (uint32_t j = 0; j < c->n_reasons; j++) {
				struct pc_entry *e;

				if (c->reason_index[j] != idx)
					continue;
				e = &gt_pcs.e[c->reason_class[j] == PC_ISSUED && issuer != GT_SASS_NONE ? issuer : at];
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
	uint32_t n0 = gt_pcs.n_e;

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
		(double)(t1 - t0) / 1e6, (double)(gt_clock__now() - t1) / 1e6, gt_pcs.n_e, gt_pcs.n_e - n0);
}

void gt_cupti_pcsamp__context_ending(CUcontext ctx)
{
	pthread_mutex_lock(&gt_pcs.lock);
	for (uint32_t i = 0; i < gt_pcs.n_ctx; i++)
		if (gt_pcs.ctx[i].ctx && gt_pcs.ctx[i].ctx == ctx)
			context__finish(&gt_pcs.ctx[i]);
	pthread_mutex_unlock(&gt_pcs.lock);
	gt_cupti_sasscount__context_ending(ctx);
}

void gt_cupti_pcsamp__finish(void)
{
	gt_cupti_sasscount__finish();
	pthread_mutex_lock(&gt_pcs.lock);
	for (uint32_t i = 0; i < gt_pcs.n_ctx; i++)
		if (gt_pcs.ctx[i].ctx)
			context__finish(&gt_pcs.ctx[i]);
	gt_cupti_smclock__stop();
	/* Every sample is in: the kernels' structure now, while a recording
	 * is still open to keep the disassembly. */
	gt_cupti_pcsamp__structure();
	pthread_mutex_unlock(&gt_pcs.lock);
	gt_cupti_pcsamp__bg_stop();
}
