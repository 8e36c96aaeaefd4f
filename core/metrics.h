/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_METRICS_H
#define GT_CORE_METRICS_H

/*
 * Every metric the tool records, written once:
 * X(ID, "NAME", unit, description). Values are unsigned 64-bit integers
 * (ns, bytes or counts), stored sparsely per calling-context node and summed
 * when threads and ranks are merged. The profile carries the names, units and
 * descriptions, so readers need no copy of this table.
 */
#define GT_METRICS(X)                                                                  \
	X(CPUTIME, "CPUTIME", "ns", "CPU time, from per-thread CPU-time samples")      \
	X(SAMPLES, "SAMPLES", "count", "CPU-time samples taken")                       \
	X(OMP_PAR_TIME, "OMP_PAR_TIME", "ns",                                          \
	  "wall time of parallel region instances, on the thread that started them")   \
	X(OMP_PAR_COUNT, "OMP_PAR_COUNT", "count", "parallel region instances")        \
	X(OMP_PAR_THREADS, "OMP_PAR_THREADS", "count",                                 \
	  "team members summed over instances (divide by OMP_PAR_COUNT for the mean)")  \
	X(OMP_TASK_TIME, "OMP_TASK_TIME", "ns",                                        \
	  "time threads spent in a region's implicit tasks (work + wait)")             \
	X(OMP_WORK, "OMP_WORK", "ns",                                                  \
	  "time threads spent in a region's implicit tasks, not waiting")              \
	X(OMP_WAIT, "OMP_WAIT", "ns",                                                  \
	  "time threads spent waiting at barriers, taskwaits and taskgroups")          \
	X(OMP_WAIT_COUNT, "OMP_WAIT_COUNT", "count", "waits at barriers, taskwaits and taskgroups") \
	X(OMP_EXPLICIT_TASK_TIME, "OMP_EXPLICIT_TASK_TIME", "ns",                      \
	  "time spent executing explicit tasks")                                       \
	X(OMP_EXPLICIT_TASKS, "OMP_EXPLICIT_TASKS", "count", "explicit tasks created")  \
	X(OMP_WS_TIME, "OMP_WS_TIME", "ns", "time in worksharing constructs (loop, sections, single)") \
	X(OMP_WS_COUNT, "OMP_WS_COUNT", "count", "worksharing constructs entered")      \
	X(OMP_MASKED_COUNT, "OMP_MASKED_COUNT", "count", "masked/master constructs executed") \
	X(OMP_REDUCTION_TIME, "OMP_REDUCTION_TIME", "ns", "time combining reduction results")     \
	X(OMP_REDUCTION_COUNT, "OMP_REDUCTION_COUNT", "count", "reductions")

enum gt_metric {
#define X(id, name, unit, desc) GT_M_##id,
	GT_METRICS(X)
#undef X
	GT_M__COUNT
};

struct gt_metric_desc {
	const char *name;
	const char *unit;
	const char *desc;
};

extern const struct gt_metric_desc gt_metric_descs[GT_M__COUNT];

#endif
