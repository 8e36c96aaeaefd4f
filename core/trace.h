/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_TRACE_H
#define GT_CORE_TRACE_H

/*
 * The trace recorder (GPUTOOL_TRACE=1): timed spans on CPU-thread tracks
 * and device operations on GPU-stream tracks, written at exit to
 * <stem>.gttrace in the format of docs/REPORT.md ("The trace format,
 * version 1"), which core/trace-read.c reads.
 *
 * Who writes what:
 *   application thread T   gt_tracer__span*, into T's own buffer only
 *   monitor thread         gt_tracer__device, into the monitor's buffer only
 *   the stopper            gt_tracer__write, after the monitor has stopped
 *                          and gt_output__build has numbered the nodes
 *
 * A buffer is a list of 64 KiB chunks, at most GT_TRACE_CAP_BYTES per
 * buffer; records past the cap are dropped and counted (the count is
 * logged and kept in the profile's meta). Nothing here runs in a signal
 * handler. Contexts are recorded as CCT node pointers and written as the
 * profile node ids that gt_output__build left in each node's aux.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "core/cct.h"
#include "core/thread.h"

#define GT_TRACE_CHUNK_BYTES (64u << 10)
#define GT_TRACE_CAP_BYTES (64ull << 20)

struct gt_profile;

/* 1 when GPUTOOL_TRACE is on; set once at start. */
extern atomic_int gt_tracer_enabled;

static inline int gt_tracer__on(void)
{
	return atomic_load_explicit(&gt_tracer_enabled, memory_order_relaxed);
}

/* Reads gt_config.trace; called once at tool start. */
void gt_tracer__init(void);
/* In a child forked without exec: the parent's events are not its own. */
void gt_tracer__atfork_child(void);

/*
 * A span on t's track: kind is an enum gt_event_kind of core/trace-format.h,
 * name a string that lives until exit (NULL: none), node a node of t's
 * tree (NULL: none), times gt_clock__now() ns, corr a correlation id or 0.
 */
void gt_tracer__span(struct gt_thread *t, uint32_t kind, const char *name,
		     const struct gt_cct_node *node, uint64_t start_ns, uint64_t end_ns, uint64_t corr);
/* The same with times in gt_clock__ticks(), converted against a clock read
 * taken now, so the error is the tick rate's over the span, not the run. */
void gt_tracer__span_ticks(struct gt_thread *t, uint32_t kind, const char *name,
			   const struct gt_cct_node *node, uint64_t start_ticks, uint64_t end_ticks);

/*
 * What device @device is, for its tracks' names ("OpenCL CPU 0: pthread"):
 * by default a device's tracks are "GPU d stream s". The first label of a
 * device stays; @label is copied. Any thread.
 */
void gt_tracer__device_label(uint32_t device, const char *label);

/* A device operation, on the track of (device, stream). Monitor thread
 * only. node: where it was issued (any thread's tree) or NULL. */
void gt_tracer__device(uint32_t kind, const char *name, const struct gt_cct_node *node, uint64_t start_ns,
		       uint64_t end_ns, uint64_t corr, uint32_t device, uint64_t stream);

/* Writes the trace into of, a temporary file of o (finished, not yet
 * published: the profile takes its name first), and notes what it wrote in
 * p's meta; of->tmp is empty when there is none. After gt_output__build(p),
 * before anything else uses the nodes' aux. */
struct gt_output;
struct gt_output_file;
int gt_tracer__write(struct gt_output *o, struct gt_profile *p, struct gt_output_file *of);

#endif
