/* SPDX-License-Identifier: MIT */
#ifndef GT_ANALYSIS_ANALYSIS_H
#define GT_ANALYSIS_ANALYSIS_H

/* The gputool command's subcommands: run (launch.c) and report (report.c). */
#include "report/report.h"

int gt_launch__main(int argc, char **argv);
int gt_report__main(int argc, char **argv, struct gt_team *team);
/* Memory settings for reading many profiles in a row; call first. */
void gt_report__tune_malloc(void);

#endif
