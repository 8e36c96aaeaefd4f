/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_CUPTI_INTERNAL_H
#define GT_GPU_CUPTI_INTERNAL_H

/*
 * What the files of gpu/cupti/ share. See docs/CUDA.md for the design.
 *
 *   cupti.c          loading libcupti and libcuda, start, flush, stop, fork,
 *                    InitializeInjection, devices and report facts
 *   callback.c       the API callbacks: calling context, placeholder,
 *                    correlation
 *   corr.c           the correlation table (CUPTI id -> the tool's id) and
 *                    the executable graphs' activity counts
 *   activity.c       activity buffers: conversion to struct gt_device_op,
 *                    kernel names, occupancy
 *   elide.c          the static CUDA runtime's frames inside the application
 *   record.c         GPUTOOL_CUPTI_RECORD: raw buffers to a file, and reading
 *                    them back (tests/cupti replays them)
 *   pcsamp.c         GPUTOOL_PC_SAMPLING: PC samples per instruction, from
 *                    CUPTI (pcsamp-internal.h is what it shares with ...)
 *   pcsamp-place.c   ... placing them under the kernels' launch contexts
 *   sasscount.c      GPUTOOL_SASS_COUNTS: executions of each instruction
 *   smclock.c        the SM clock while kernels run (NVML), for PC sample rates
 *   off.c            the entry point when the backend is not built in
 */

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cct.h"
#include "core/hash.h"
#include "core/unwind.h"
#include "gpu/cupti/cupti-apis.h"
#include "gpu/device-op.h"

struct gt_thread;

/* Two-level, so that a name cuda.h defines as a macro (cuMemAlloc →
 * cuMemAlloc_v2) is looked up by the symbol it stands for. */
#define GT_CUPTI_STR2(x) #x
#define GT_CUPTI_STR(x) GT_CUPTI_STR2(x)

/* Entry points resolved with dlsym; optional ones may stay NULL. */
#define GT_CUPTI_FNS(X)                         \
	X(cuptiGetVersion, 1)                   \
	X(cuptiGetResultString, 1)              \
	X(cuptiSubscribe, 1)                    \
	X(cuptiUnsubscribe, 1)                  \
	X(cuptiEnableCallback, 1)               \
	X(cuptiActivityEnable, 1)               \
	X(cuptiActivityDisable, 1)              \
	X(cuptiActivityRegisterCallbacks, 1)    \
	X(cuptiActivityRegisterTimestampCallback, 0) \
	X(cuptiActivityFlushAll, 1)             \
	X(cuptiActivityGetNextRecord, 1)        \
	X(cuptiActivityGetNumDroppedRecords, 1) \
	X(cuptiActivityFlushPeriod, 0)          \
	X(cuptiGetDeviceId, 0)                  \
	X(cuptiGetStreamId, 0)                  \
	X(cuptiGetTimestamp, 0)                 \
	X(cuptiFinalize, 0)                     \
	X(cuptiPCSamplingEnable, 0)             \
	X(cuptiPCSamplingDisable, 0)            \
	X(cuptiPCSamplingGetData, 0)            \
	X(cuptiPCSamplingSetConfigurationAttribute, 0) \
	X(cuptiPCSamplingGetConfigurationAttribute, 0) \
	X(cuptiPCSamplingGetNumStallReasons, 0) \
	X(cuptiPCSamplingGetStallReasons, 0)    \
	X(cuptiGetSassToSourceCorrelation, 0)   \
	X(cuptiGetCubinCrc, 0)                  \
	X(cuptiProfilerInitialize, 0)           \
	X(cuptiDeviceGetChipName, 0)            \
	X(cuptiSassMetricsGetProperties, 0)     \
	X(cuptiSassMetricsSetConfig, 0)         \
	X(cuptiSassMetricsUnsetConfig, 0)       \
	X(cuptiSassMetricsEnable, 0)            \
	X(cuptiSassMetricsDisable, 0)           \
	X(cuptiSassMetricsGetDataProperties, 0) \
	X(cuptiSassMetricsFlushData, 0)

#define GT_CUDA_FNS(X)                      \
	X(cuInit, 1)                        \
	X(cuDriverGetVersion, 1)            \
	X(cuDeviceGetCount, 1)              \
	X(cuDeviceGet, 1)                   \
	X(cuDeviceGetName, 1)               \
	X(cuDeviceGetAttribute, 1)          \
	X(cuCtxGetDevice, 1)                \
	X(cuModuleGetLoadingMode, 0)        \
	X(cuStreamGetCtx, 0)                \
	X(cuGetErrorString, 0)              \
	X(cuGraphGetNodes, 0)               \
	X(cuGraphNodeGetType, 0)            \
	X(cuGraphChildGraphNodeGetGraph, 0)

struct gt_cupti_lib {
#define X(f, required) __typeof__(&f) f;
	GT_CUPTI_FNS(X)
	GT_CUDA_FNS(X)
#undef X
	/* __cxa_demangle, when the process has a C++ runtime; else NULL. */
	char *(*demangle)(const char *, char *, size_t *, int *);
};
extern struct gt_cupti_lib gt_cupti_lib;

/* What each intercepted function does (cupti-apis.h). */
enum gt_cupti_class {
	GT_CUPTI_NONE = 0,
	GT_CUPTI_LAUNCH,
	GT_CUPTI_GRAPH_LAUNCH,
	GT_CUPTI_GRAPH_INSTANTIATE,
	GT_CUPTI_CAPTURE_BEGIN, /* a stream capture: launches build a graph */
	GT_CUPTI_CAPTURE_END,
	GT_CUPTI_COPY_KIND, /* direction from a cudaMemcpyKind parameter */
	GT_CUPTI_COPY_H2D,
	GT_CUPTI_COPY_D2H,
	GT_CUPTI_COPY_D2D,
	GT_CUPTI_COPY, /* direction known only from the activity */
	GT_CUPTI_MEMSET,
	GT_CUPTI_ALLOC_SIZE, /* an allocation whose size is a parameter */
	GT_CUPTI_ALLOC,
	GT_CUPTI_FREE,
	GT_CUPTI_SYNC,
};

/* ---- devices (cupti.c) ------------------------------------------------- */

#define GT_CUPTI_MAX_DEVICES 64

/* Written once per device before ready is set (release); readers load ready
 * with acquire. Indexed by the CUDA device ordinal, as activity records
 * number devices. */
struct gt_cupti_device {
	atomic_int ready;
	int cc_major, cc_minor;
	int sm_count, warp_size;
	int max_threads_per_sm, max_blocks_per_sm;
	int regs_per_sm, regs_per_block;
	int smem_per_sm, smem_reserved_per_block;
	int clock_khz, mem_clock_khz;
	char name[96];
	int mem_bus_bits; /* last: recordings made before it have none (0) */
};
extern struct gt_cupti_device gt_cupti_devices[GT_CUPTI_MAX_DEVICES];

/* Fills devices[ordinal] through libcuda, once. */
void gt_cupti__device_probe(int ordinal);
/* The facts of the devices probed: cuda_devices, gpu_dram_bytes_per_s. */
void gt_cupti__devices_fact(void);

/* ---- counters ---------------------------------------------------------- */

/* Relaxed counters, summed for the report header at stop. */
struct gt_cupti_stats {
	atomic_uint_least64_t buffers;	   /* buffers CUPTI completed */
	atomic_uint_least64_t records;	   /* records handed to the monitor */
	atomic_uint_least64_t untracked;   /* records of calls the tool did not see */
	atomic_uint_least64_t overwritten; /* correlations evicted from the table */
	atomic_uint_least64_t dropped;	   /* records CUPTI dropped (no buffer space) */
	atomic_uint_least64_t api_calls;   /* intercepted calls that issued an operation */
	atomic_uint_least64_t failed_calls; /* of those, calls that returned an error */
};
extern struct gt_cupti_stats gt_cupti_stats;

/* 1 while callbacks and buffers are processed; 0 before start, after stop
 * and in a forked child. Acquire loads; release stores. */
extern atomic_int gt_cupti_live;
/* No more polls from the monitor (a context is being destroyed, or the
 * backend stops); waits for a poll in progress. */
void gt_cupti__poll_off(void);

/* ---- callback.c -------------------------------------------------------- */

void CUPTIAPI gt_cupti__callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data);
/* Enables every callback of cupti-apis.h (and the resource callbacks) for
 * @sub; returns the first error. */
CUptiResult gt_cupti__enable_callbacks(CUpti_SubscriberHandle sub);
enum gt_cupti_class gt_cupti__class(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

/*
 * The correlation table: CUPTI's correlation id of an API call → the
 * monitor's id of the operation it issued. Written by the application thread
 * in the API callback; read by whichever thread converts the activity.
 * Fixed size (GT_CUPTI_CORR_SLOTS), indexed by the CUPTI id: a slot is
 * reused by the id GT_CUPTI_CORR_SLOTS later, so an operation is lost only
 * if that many API calls were issued while its record was still in CUPTI's
 * buffers (counted in gt_cupti_stats.overwritten).
 *
 * @parts: the activities expected for this id (a graph launch: its kernels,
 * copies and memsets), 1 otherwise. get() takes one part and sets *more
 * while others remain.
 */
#define GT_CUPTI_CORR_SLOTS (1u << 18)
void gt_cupti_corr__put(uint32_t cupti_id, uint64_t id, int32_t parts);
int gt_cupti_corr__get(uint32_t cupti_id, uint64_t *id, int *more);


/* A graph was instantiated (the API's parameters): counts the activities
 * one launch of it produces. parts(): that count for an executable graph,
 * 1 when unknown. */
void gt_cupti_graph__instantiated(const void *params);
int gt_cupti_graph__parts(uintptr_t exec);

/* An operation issued by @t under @ctx (its placeholder @ph made there
 * first; GT_PH__COUNT: @ctx itself) at @issued_ns (0: now): correlated
 * with the monitor, on @device when it produces activities (@cupti_id !=
 * 0), whose CUPTI id is filed in the table. Returns the monitor's id or 0.
 * Shared by the callback and the replay test. */
uint64_t gt_cupti__issue(struct gt_thread *t, struct gt_cct_node *ctx, enum gt_placeholder ph,
			 uint32_t cupti_id, int32_t parts, int device, uint64_t issued_ns);

/* ---- activity.c -------------------------------------------------------- */

#define GT_CUPTI_BUFFER_SIZE (2u << 20)

int gt_cupti_activity__start(void);
void gt_cupti_activity__stop(void);
/* Converts @r; returns 1 when *op is to be handed to the monitor. */
int gt_cupti__convert(const CUpti_Activity *r, struct gt_device_op *op);
/* Converts every record of a completed buffer on the calling thread and
 * hands them to the monitor; @next iterates the records. */
typedef int (*gt_cupti_next_fn)(uint8_t *buf, size_t valid, CUpti_Activity **rec);
void gt_cupti_activity__deliver(uint8_t *buf, size_t valid, gt_cupti_next_fn next);
/* The tool's clock minus CUPTI's timestamps (0 when CUPTI reads the tool's). */
int64_t gt_cupti_activity__offset(void);
/* Theoretical occupancy in 1/1000 of the device's thread slots; lim (or
 * NULL): what each bound alone allows (activity.c). */
uint32_t gt_cupti__occupancy(const struct gt_cupti_device *d, uint32_t threads, uint32_t regs,
			     uint32_t smem, uint32_t lim[GT_OCC_LIMITS]);
/* One interned, demangled copy of a kernel name, keyed by CUPTI's pointer. */
const char *gt_cupti__kernel_name(const char *cupti_name);
/* The interned name of a copy from device src to device dst ("device 0 ->
 * device 1"), the name a peer copy gets under its <gpu copy d2d>; NULL for
 * devices past PEER_DEVICES. */
#define PEER_DEVICES 16
const char *gt_cupti__peer_name(uint32_t src, uint32_t dst);
/* Whether a kernel of this (readable) name has run; a name without
 * parameters ("add_kernel<double>", as DWARF names functions) matches the
 * kernel's name without return type and parameters. At the end of the run. */
int gt_cupti__kernel_seen(const char *text);

/* ---- elide.c ----------------------------------------------------------- */

/* Scans the application's load modules for a statically linked CUDA
 * runtime and for nvcc's launch stubs. Normal context, once at start. */
void gt_cupti_elide__build(void);
/* Removes their frames from f[0..n); returns the new n. Wait-free. */
int gt_cupti_elide__filter(struct gt_frame *f, int n);
/* Tests: the ranges of one ELF file, at its link-time addresses. */
int gt_cupti_elide__build_file(const char *path);
/* Address ranges found, for tests and the log. */
unsigned gt_cupti_elide__ranges(void);
/* 1 if pc lies in a range: exposed for tests. */
int gt_cupti_elide__covers(uintptr_t pc);
/* Inlined CUDA runtime code (gt_symbolizer__set_runtime_inline). */
int gt_cupti_elide__inline(const char *function, const char *file);

/* ---- pcsamp.c ---------------------------------------------------------- */

/* 1 when GPUTOOL_PC_SAMPLING asks for it and libcupti has the API. */
int gt_cupti_pcsamp__on(void);
/* 1 when GPUTOOL_SASS_COUNTS asks for instruction counts and libcupti has
 * the SASS metrics API (sasscount.c). */
int gt_cupti_sasscount__on(void);
/* Either: the modules are kept, and what they measure placed at settle. */
int gt_cupti_pcsamp__kept(void);
/* The sampling period, as 2^N cycles, that keeps a device of @sms SMs at
 * @khz under @rate samples a second (0 for an unknown device), and the
 * hardware buffer for period 2^@exponent (pcsamp.c says why). */
uint32_t gt_cupti_pcsamp__period_for(uint64_t rate, uint32_t sms, uint32_t khz);
uint64_t gt_cupti_pcsamp__hw_buffer_for(uint32_t exponent, uint32_t sms, uint32_t khz);
/* A synchronization returned: what was counted so far is taken while the
 * context surely lives (at exit CUPTI hands over only zeros). */
void gt_cupti_sasscount__synced(void);
/* The resource callbacks: a context (sampling starts on it), a module (its
 * cubin kept for source lines), a context about to go (its samples taken). */
void gt_cupti_pcsamp__context_created(CUcontext ctx);
/* Before cuInit reads the environment: modules loaded eagerly when PC
 * sampling is on and the program did not choose (pcsamp.c). */
void gt_cupti_pcsamp__ask_eager(void);
/* With PC sampling on: CUPTI's profiler library loaded ahead, on a thread. */
void gt_cupti_pcsamp__preload(const char *cupti_path);
void gt_cupti_pcsamp__module_loaded(const void *cubin, size_t size);
void gt_cupti_pcsamp__context_ending(CUcontext ctx);
/* Each module's disassembly begun when it loads, on a thread of the
 * tool's (pcsamp-bg.c); taken at exit: its text (the caller frees it), or
 * -ENOENT when the caller is to disassemble it itself, -EINPROGRESS when
 * it is not done and @wait is 0, or nvdisasm's error. */
void gt_cupti_pcsamp__bg_queue(uint64_t crc, const void *bytes, size_t size);
int gt_cupti_pcsamp__bg_take(uint64_t crc, int wait, char **text, size_t *len);
void gt_cupti_pcsamp__bg_stop(void);
/* A kernel launched, by its symbol: at exit a large module's part holds
 * the kernels launched as well as those sampled (pcsamp-place.c). */
void gt_cupti_pcsamp__launched(const char *symbol);
/* At the backend's exit, while CUPTI still works: every context's samples. */
void gt_cupti_pcsamp__finish(void);
/* The backend's settle: the samples into the trees (struct gt_backend). */
void gt_cupti_pcsamp__settle(void);
/* A cubin's disassembly known already (a replay): used instead of running
 * nvdisasm at settle. */
void gt_cupti_pcsamp__disassembly(uint64_t crc, const char *text, size_t len);
/* The class (GPC_* metric, as an index) of a CUPTI stall reason's name;
 * -1 for a name that is not a reason of its own. For tests. */
int gt_cupti_pcsamp__class_of(const char *name);

/* ---- smclock.c --------------------------------------------------------- */

/* The SM clock of @ordinal read through NVML while it is busy, from start
 * to stop (PC sampling's first context to its end); the mean in kHz and
 * the readings, or -1 if none. */
void gt_cupti_smclock__start(int ordinal);
void gt_cupti_smclock__stop(void);
int gt_cupti_smclock__mean_khz(uint64_t *khz, uint64_t *readings);

/* ---- record.c ---------------------------------------------------------- */

/* 1 while GPUTOOL_CUPTI_RECORD writes a recording. */
extern int gt_cupti_recording;
int gt_cupti_record__open(const char *dir);
/* @issued_ns: when the operation was issued (gt_clock__now() time; 0:
 * not known); written on CUPTI's clock. */
void gt_cupti_record__api(uint32_t cupti_id, uint64_t id, int32_t parts, enum gt_placeholder ph,
			  uintptr_t site, uint64_t issued_ns);
void gt_cupti_record__op(const struct gt_device_op *op);
/* A host wait, as the backend blamed it. */
struct gt_cupti_wait {
	uint64_t id;	       /* the monitor id of the call that waited */
	uint64_t begin_ns;     /* on the tool's clock */
	uint64_t end_ns;
	uint64_t stream;       /* as gt_blame__sync takes it */
	int64_t cupti_offset;  /* the tool's clock minus CUPTI's, then */
	int32_t device;
	uint32_t pad;
};
void gt_cupti_record__wait(const struct gt_cupti_wait *w);
void gt_cupti_record__buffer(uint8_t *buf, size_t valid, gt_cupti_next_fn next);
void gt_cupti_record__device(int ordinal, const struct gt_cupti_device *d);
/* PC sampling (pcsamp.c): a module's CRC and size, a context's stall
 * reasons, what one GetData call gave, a source line found. */
void gt_cupti_record__cubin(uint64_t crc, uint64_t size);
void gt_cupti_record__reasons(const uint32_t *index, char *const *names, uint32_t n);
void gt_cupti_record__pcs(const CUpti_PCSamplingData *d);
void gt_cupti_record__line(uint64_t crc, uint64_t pc, const char *function, const char *file, uint32_t line);
/* A cubin's disassembly, as nvdisasm gave it at settle. */
void gt_cupti_record__sass(uint64_t crc, const char *text, size_t len);
void gt_cupti_record__close(void);

/* Reading a recording back: one call per chunk, in file order. */
struct gt_cupti_replay {
	/* @issued_ns: on the recorded buffers' clock (CUPTI's); 0 in
	 * recordings older than the field. */
	void (*api)(void *arg, uint32_t cupti_id, uint64_t id, int32_t parts,
		    enum gt_placeholder ph, const char *site, uint64_t issued_ns);
	void (*op)(void *arg, const struct gt_device_op *op);
	/* @rec: the records' offsets in @buf, names already patched in. */
	void (*buffer)(void *arg, uint8_t *buf, size_t valid, const uint32_t *rec, size_t n);
	void (*device)(void *arg, int ordinal, const struct gt_cupti_device *d);
	void (*wait)(void *arg, const struct gt_cupti_wait *w);
	/* PC sampling: a module, a context's stall reasons, one GetData's PCs
	 * (function names interned for the replay's life), a source line. */
	void (*cubin)(void *arg, uint64_t crc, uint64_t size);
	void (*reasons)(void *arg, const uint32_t *index, char *const *names, uint32_t n);
	void (*pcs)(void *arg, const CUpti_PCSamplingData *d);
	void (*line)(void *arg, uint64_t crc, uint64_t pc, const char *function, const char *file, uint32_t line);
	void (*sass)(void *arg, uint64_t crc, const char *text, size_t len);
	void *arg;
};
int gt_cupti_record__replay(const char *path, const struct gt_cupti_replay *r);

#endif
