/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_REPORT_ADVICE_H
#define GT_CORE_REPORT_ADVICE_H

#include <stdio.h>

struct gt_profile;

/*
 * Two sections of the text report, over any backend's GPU metrics:
 *
 *   GPU operations  kernels, copies and memsets (device time), waits and
 *                   run-time compilation (host time), one row per calling
 *                   context, by device time, then host time;
 *   OpenCL advice   for each best-practice metric the OpenCL layer recorded
 *                   (SINGLE_DEVICE_USE_AOT_COMPILATION, ...), one line of
 *                   advice and the contexts where it showed.
 *
 * Each section is left out when the profile has nothing for it; at most top
 * rows each (0: 20). The profile must satisfy core/profile.h's invariants
 * (gt_report__write_text checks them first). Returns 0, -ENOMEM or -EINVAL.
 */
int gt_report__gpu_sections(const struct gt_profile *p, FILE *f, unsigned top);

#endif
