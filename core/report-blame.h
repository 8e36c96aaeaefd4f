/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_REPORT_BLAME_H
#define GT_CORE_REPORT_BLAME_H

#include <stdio.h>

struct gt_profile;

/*
 * The "Blame shifting" section of the text report (docs/BLAME.md): the
 * totals of CPU_IDLE, CPU_IDLE_CAUSE, CPU_IDLE_OVERHEAD and GPU_IDLE_CAUSE;
 * each device's busy and idle time over the run's wall time (from the
 * "gpu_busy_ns" and "wall_ns" meta keys); then, for each of CPU_IDLE,
 * CPU_IDLE_CAUSE and GPU_IDLE_CAUSE, the top contexts (at most top rows; 0:
 * 20) with seconds and percent of the metric's total. Left out when the
 * profile has none of these. The profile must satisfy core/profile.h's
 * invariants (gt_report__write_text checks them first). Returns 0, -ENOMEM
 * or -EINVAL.
 */
int gt_report__blame(const struct gt_profile *p, FILE *f, unsigned top);

#endif
