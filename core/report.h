/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_REPORT_H
#define GT_CORE_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct gt_profile;

/*
 * The per-region text report a person reads at exit, and what `gputool
 * report` prints: a header (program, process, wall time, threads, sampling),
 * then OpenMP parallel regions, CPU time by calling context and by function,
 * waits, and a short top-down tree. Sections with nothing to show are left
 * out; each lists at most top rows (0: 20). Metrics are looked up by name in
 * the profile, so a profile without, say, OpenMP metrics simply has no
 * OpenMP section.
 *
 * Returns 0, -ENOMEM, -EIO (writing f failed) or -EINVAL (p breaks the
 * invariants of core/profile.h).
 */
int gt_report__write_text(const struct gt_profile *p, FILE *f, unsigned top);
/*
 * The sections of that report between its header and its top-down tree
 * (regions, OpenACC constructs, GPU operations, blame, CPU time by context
 * and by function, waits), for a report that has a header and views of its
 * own: `gputool report` of a run, over the run's merged tree; wall_ns is
 * what the regions are measured against (0: unknown).
 */
int gt_report__write_sections(const struct gt_profile *p, FILE *f, unsigned top, uint64_t wall_ns);

#endif
