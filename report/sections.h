/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_SECTIONS_H
#define GT_REPORT_SECTIONS_H

/*
 * The sections of the text report that read one profile's tree: OpenMP
 * parallel regions, OpenACC constructs, GPU operations,
 * blame shifting, CPU time by calling context and by function, and waits.
 * `gputool report` and the report at exit print them over a run's merged
 * tree (flat.c). Sections with nothing to show are left out; each lists at
 * most top rows (0: 20). Metrics are looked up by class or name in the
 * profile, so a profile without, say, OpenMP metrics has no OpenMP section.
 * The profile must satisfy core/profile.h's invariants.
 */
#include <stdint.h>
#include <stdio.h>

struct gt_profile;

/* Rows per list and lines of a tree when not told (0), at exit and in `gputool report`. */
#define GT_REPORT_TOP 30

/* What the sections need to know of the run beyond the tree. */
struct gt_sections_run {
	uint64_t wall_ns; /* the longest process's wall time, what regions are measured against; 0: unknown */
	const char *gpu_busy; /* "D:NS D:NS ...": each device's busy time, summed over processes; NULL: none */
	uint64_t busy_wall_ns; /* the wall time gpu_busy is out of: summed over the same processes */
	/* How many threads measured metric m at node: the profile's values
	 * are sums over threads (the run's tree, report/flat.c). */
	uint64_t (*threads_at)(const void *ctx, uint32_t node, uint32_t metric);
	const void *ctx;
	/* PC sampling's set-up (the first process's meta pc_*; 0: unknown):
	 * the period in cycles, the SM clock, SMs, warp schedulers per SM. */
	uint64_t pc_period, pc_clock_khz, pc_sms, pc_schedulers;
	int pc_buffer_full; /* a process's hardware buffer filled (meta pc_buffer_full): later kernels have no samples */
	uint64_t dram_bytes_per_s; /* the first device's peak DRAM bandwidth (meta gpu_dram_bytes_per_s); 0: unknown */
	uint64_t warps_per_sm;     /* its warp slots per SM (meta gpu_warps_per_sm); 0: unknown */
	uint32_t processes;        /* merged; the advice's gains are per process */
	unsigned width;            /* columns of a line, at most (0: GT_PATHS_WIDTH) */
	int signatures;            /* C++ parameter lists in full; else "f(…)" */
};

/*
 * All of them, in the report's order. Returns 0, -ENOMEM, -EIO (writing f
 * failed) or -EINVAL (p breaks the invariants of core/profile.h).
 */
int gt_report__write_sections(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run);

/*
 * GPU operations: kernels, copies and memsets (device time), waits and
 * run-time compilation (host time), one row per calling context, by device
 * time, then host time. GPU source lines: the lines of kernels with the most
 * PC samples, their stall classes, kernel and launch site; per kernel
 * context, the rates derived from its samples (HPCToolkit ICS'20, equations 4-9):
 * warp issue rate, IPC, eligible rate, SM busy and GPU active rates; the
 * GPU loops, stall trees and the stalls by their cause. (Advice, OpenCL's
 * best-practice checks and pageable copies included, is report/next.h's.)
 * Returns 0, -ENOMEM or -EINVAL.
 */
int gt_report__gpu_sections(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run);

/*
 * Blame shifting (docs/BLAME.md): the totals of CPU_IDLE, CPU_IDLE_CAUSE,
 * CPU_IDLE_OVERHEAD and GPU_IDLE_CAUSE; each device's busy and idle time
 * (run->gpu_busy, out of run->busy_wall_ns); then, for each of CPU_IDLE,
 * CPU_IDLE_CAUSE and GPU_IDLE_CAUSE, the top contexts with seconds and
 * percent of the metric's total. Returns 0, -ENOMEM or -EINVAL.
 */
int gt_report__blame(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run);
/* Exclusive per-node totals of the named metric (zeros when absent), and
 * their sum in *total. NULL when out of memory or the profile is bad. */
uint64_t *gt_report__excl_of(const struct gt_profile *p, const char *name, uint64_t *total);
/* Under @title, the top contexts of v[] (a metric in ns by node), innermost
 * first, with seconds and percent of @total; nothing when total is 0. */
int gt_report__top_contexts(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run,
			    const char *title, const uint64_t *v, uint64_t total);

/*
 * MPI (docs/MPI.md): the time in MPI calls and how much of it waited for
 * other ranks (MPI_IDLE); the call sites by time with their counts, waits,
 * bytes and mean communicator size; where ranks waited, and the late ranks'
 * work they waited for (MPI_IDLE_CAUSE). Nothing without MPI calls.
 * Returns 0, -ENOMEM or -EINVAL.
 */
int gt_report__mpi(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run);

/* The OpenMP regions and the waits as the text lists them, for other
 * forms of the report (the JSON's "regions" and "waits"). */
#define GT_REGION_BODIES 3
struct gt_region_row {
	uint32_t node;		 /* the <omp parallel> */
	uint32_t kernel;	 /* the <omp kernel> it implements (offload to this CPU), else GT_NONE */
	const char *kernel_name; /* that kernel's name (borrowed from the profile), else NULL */
	uint64_t instances, time_ns, thread_instances, work_ns, wait_ns, cpu_ns;
	/* Instances whose team was timed as samples (OMP_PAR_TIME_SAMPLES):
	 * when not 0, work_ns and wait_ns are estimates. */
	uint64_t time_samples;
	uint32_t n_body, body[GT_REGION_BODIES]; /* the functions it ran (frames right under it) */
	char *where; /* where it was reached, outermost first, as the text shows it */
};
struct gt_wait_row {
	uint32_t node;
	uint64_t wait_ns, count;
	/* Waits timed as samples (OMP_WAIT_TIME_SAMPLES): when not 0,
	 * wait_ns is an estimate. */
	uint64_t time_samples;
	uint32_t threads;
	char *where; /* innermost first, as the text shows it */
};
struct gt_section_rows {
	struct gt_region_row *region; /* by time, the first `top` */
	uint32_t n_region, all_regions;
	struct gt_wait_row *wait; /* by wait, the first `top` */
	uint32_t n_wait, all_waits;
	uint64_t wait_total_ns;
};

/* Fills *out (release with gt_section_rows__fini; empty on error): 0,
 * -ENOMEM or -EINVAL. */
int gt_report__section_rows(const struct gt_profile *p, unsigned top, const struct gt_sections_run *run,
			    struct gt_section_rows *out);
void gt_section_rows__fini(struct gt_section_rows *s);

/* The next pair of a per-device list as facts hold them ("gpu_busy_ns":
 * "0:123 1:456"): 1 with *dev, *ns set and *s moved past it; 0 at the
 * list's end or at a malformed pair (util.c). */
int gt_device_list__next(const char **s, unsigned long *dev, uint64_t *ns);

#endif
