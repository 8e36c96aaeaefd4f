/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_TRACE_FORMAT_H
#define GT_CORE_TRACE_FORMAT_H

/*
 * The trace of one process: timed events on CPU-thread and GPU-stream
 * tracks, in the file <exe>-<rank>-<pid>.gttrace next to the process's
 * profile. docs/REPORT.md describes the format byte by byte; core/trace.c
 * writes it, core/trace-read.c reads it, report/fmt-chrome.c turns traces
 * into Chrome trace-event JSON.
 */
#include <stdint.h>
#include <stdio.h>

#define GT_TRACE_MAGIC "GTTRACE\0"
#define GT_TRACE_VERSION 1u
#define GT_TRACE_SUFFIX ".gttrace"
/* A reader reads at most this much of a trace; a larger one is read as if
 * cut there (gt_trace.truncated says so). */
#define GT_TRACE_READ_MAX (1ull << 30)

enum gt_track_kind { GT_TRACK_CPU = 0, GT_TRACK_GPU = 1 };

enum gt_event_kind {
	GT_EV_REGION = 0, /* CPU: a region of the program (OpenMP construct, …) */
	GT_EV_API = 1,    /* CPU: a GPU API call (launch, copy, sync, …) */
	GT_EV_KERNEL = 2,
	GT_EV_COPY_H2D = 3,
	GT_EV_COPY_D2H = 4,
	GT_EV_COPY_D2D = 5,
	GT_EV_COPY_OTHER = 6,
	GT_EV_MEMSET = 7,
	GT_EV_ALLOC = 8,
	GT_EV_SYNC = 9,
	GT_EV_OTHER = 10,
	GT_EV__COUNT
};

struct gt_trace_track {
	uint32_t id;
	uint32_t kind;  /* enum gt_track_kind */
	uint64_t a, b;  /* CPU: tool thread index, OS tid; GPU: device, stream or queue */
	uint32_t name;  /* string, or UINT32_MAX */
};

struct gt_trace_event {
	uint64_t start, dur; /* ns, CLOCK_MONOTONIC of the process's host */
	uint64_t corr;       /* correlation id: an API call and the device work it started; 0 none */
	uint32_t track;      /* index into tracks[] */
	uint32_t kind;       /* enum gt_event_kind (later kinds read as GT_EV_OTHER) */
	uint32_t name;       /* string, or UINT32_MAX */
	uint32_t node;       /* node index in the process's profile, or UINT32_MAX */
};

struct gt_trace {
	char **strings;
	uint32_t n_strings;
	struct gt_trace_track *tracks;
	uint32_t n_tracks;
	struct gt_trace_event *events;
	uint64_t n_events;
	int truncated; /* the file ended early or was damaged: what came before is kept */
	char why[160];  /* why, when truncated */
};

/* Reads a whole trace. 0: read (possibly truncated, see t->truncated);
 * -EINVAL with a reason in err: not a trace, or a newer version; -ENOMEM,
 * -EIO. */
int gt_trace__read(struct gt_trace *t, FILE *f, char *err, size_t errlen);
void gt_trace__fini(struct gt_trace *t);
const char *gt_trace__event_kind_name(uint32_t kind);

#endif
