/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_CUPTI_PCSAMP_INTERNAL_H
#define GT_GPU_CUPTI_PCSAMP_INTERNAL_H

/*
 * What the two halves of GPU PC sampling share: pcsamp.c takes the samples
 * from CUPTI (one entry per instruction), pcsamp-place.c reads the
 * kernels' structure and places the samples in the trees at settle.
 * gt_pcs is under its lock, always.
 */
#include <pthread.h>

#include "core/hmap.h"
#include "core/metrics.h"
#include "gpu/cupti/cupti-internal.h"

#define MAX_CONTEXTS 16
/* How far back of its sampled PC an issued sample's instruction lies: one
 * instruction, 16 bytes on every architecture CUPTI's PC sampling API
 * supports (Volta and later). */
#define GT_CUPTI_PC_ISSUE_SHIFT 16u

struct gt_sass;

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
	/* The executions counted by SASS metrics (sasscount.c), not samples. */
	PI_INST,
	PI_THREAD_INST,
	PC__N
};

/* One instruction's samples, or its counted executions. */
struct pc_entry {
	uint64_t crc, pc;
	uint32_t function_index;
	const char *function; /* interned, as kernel nodes name the kernel */
	const char *symbol;   /* the function's symbol (mangled), interned */
	const char *line;     /* "file:line", or "pc 0x..." without line information */
	uint32_t cubin;	      /* at settle: index in gt_pcs.cubins with its structure, or GT_SASS_NONE */
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

enum pc_loading { PC_LOADING_UNKNOWN, PC_LOADING_LAZY, PC_LOADING_EAGER };

struct gt_pcs_state {
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
	/* The symbols of the kernels launched (gt_cupti_pcsamp__launched). */
	char **launched;
	uint32_t n_launched;
	uint64_t dropped, unplaced;
	int buffer_full;
	/* For the derived metrics: the period in cycles (0: unknown), the
	 * device of the first context. */
	uint64_t period_cycles;
	int device;
	/* The first context's period (2^exponent cycles) and hardware buffer
	 * as chosen (context__period; 0: CUPTI's own). */
	uint32_t exponent;
	uint64_t hw_bytes;
	/* How the driver loads modules (enum pc_loading), and whether this
	 * library asked for eager loading (gt_cupti_pcsamp__ask_eager). */
	int loading;
	int eager_asked;
	uint64_t counted; /* SASS metrics' instruction records taken (sasscount.c) */
};

extern struct gt_pcs_state gt_pcs;

/* The entry of an instruction (the PC data's CRC, PC, function index
 * and name), made on first use; NULL without memory (under the lock). */
struct pc_entry *gt_cupti_pcsamp__entry(const CUpti_PCSamplingPCData *d);

/* SASS metrics (sasscount.c), never under the lock (they take their own,
 * then this one to add their counts): counting starts on a new context
 * (one at a time), and its counts are taken into the entries at
 * synchronizations, when it ends, or at the end (which also undoes the
 * devices' configuration). */
void gt_cupti_sasscount__context_created(CUcontext ctx);
void gt_cupti_sasscount__context_ending(CUcontext ctx);
void gt_cupti_sasscount__finish(void);

/* One copy of each text, for node keys that live to the end (under the lock). */
const char *gt_cupti_pcsamp__intern(const char *text);
/* Each sampled cubin disassembled and read, each entry's instruction found
 * in it; once (under the lock). */
void gt_cupti_pcsamp__structure(void);

#endif
