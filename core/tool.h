/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_TOOL_H
#define GT_CORE_TOOL_H

#include <stdint.h>
#include <stdio.h>

/*
 * The tool's life: every entry point (OMPT, OpenACC, OpenCL, CUDA injection)
 * calls gt_tool__start(); the first call configures everything, later ones
 * return its result. A preloaded library (GPUTOOL_PRELOAD=1, as `gputool
 * run` sets) has already started at load, from its constructor, and sampled
 * the initial thread since: the entry points then find it started.
 * gt_tool__stop() runs once, at the first of: the runtime's finalize,
 * process exit. It stops sampling, gives every registered finalizer
 * (backends, in reverse order of registration) a chance to flush, then
 * builds the profile and writes the output; a process that only the preload
 * started and that recorded no sample writes nothing.
 */

/* Returns 0 when the tool runs, -1 when it is disabled or cannot start. */
int gt_tool__start(void);
void gt_tool__stop(void);
int gt_tool__stopping(void);
/* Before an exec replaces the process: writes the output when this is the
 * process the tool measures (not a vfork child sharing its memory). */
void gt_tool__before_exec(void);

typedef void (*gt_tool_flush_fn)(void);
/* Called at stop, before the profile is built, in reverse order. */
void gt_tool__on_stop(gt_tool_flush_fn fn);

struct gt_profile;
/*
 * The text report of the process, written at stop beside the profile
 * (path: the profile's file). The report library renders it; core links
 * nothing above itself, so the library registers its writer when it is
 * loaded (report/exit.c). Without one, only the profile is written.
 */
typedef int (*gt_tool_report_fn)(const struct gt_profile *p, const char *path, FILE *f, unsigned top);
void gt_tool__set_report(gt_tool_report_fn fn);

/* Facts for the profile header, set by the backends (e.g. "omp_runtime"). */
void gt_tool__set_fact(const char *key, const char *value);
/* The value of a fact set so far, or NULL. */
const char *gt_tool__fact(const char *key);
/* Device operations a backend could not measure (bounded queues full,
 * still running at exit, records lost): counted into the profile's
 * `ops_unmeasured` and said in the report's header. */
void gt_tool__unmeasured_ops(uint64_t n);

#endif
