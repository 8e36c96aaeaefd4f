/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_REPORT_H
#define GT_CORE_REPORT_H

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

#endif
