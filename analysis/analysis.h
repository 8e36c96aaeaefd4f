/* SPDX-License-Identifier: MIT */
#ifndef GT_ANALYSIS_ANALYSIS_H
#define GT_ANALYSIS_ANALYSIS_H

/* The gputool command's subcommands: run (launch.c) and report (report.c). */
#include "report/report.h"

/* The exit status of a command line gputool cannot take. */
#define GT_EXIT_USAGE 2
/* What a subcommand's parser returns for --help: the caller prints the
 * subcommand's help and exits 0 (not an exit status). */
#define GT_HELP_ASKED 256

/* Says why on stderr, and which help to read (topic: "run", "report", or
 * NULL for the command's); returns GT_EXIT_USAGE. */
__attribute__((format(printf, 2, 3))) int gt_usage_error(const char *topic, const char *fmt, ...);

int gt_launch__main(int argc, char **argv);
/*
 * The id of the run `gputool run` starts (claim.c): the one inherited in
 * GPUTOOL_RUN, else the launcher's job id (every rank of a job agrees), else
 * a new one for this process. 0, or -1 for the ranks of a launcher that
 * names no job: they have none.
 */
int gt_claim__run_id(char *buf, size_t len);
/*
 * Claims the existing directory @dir for run @run (NULL: none): 0, or the
 * exit status after one line on stderr saying why not: another run's
 * profiles are there, or another run that is still going claimed it.
 * @force: no claim, no check.
 */
int gt_claim__dir(const char *dir, const char *run, int force);
int gt_report__main(int argc, char **argv, struct gt_team *team);
/* Memory settings for reading many profiles in a row; call first. */
void gt_report__tune_malloc(void);

#endif
