/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_OUTPUT_H
#define GT_CORE_OUTPUT_H

#include <stddef.h>

#include "core/profile.h"

/*
 * Where a process's files go: GPUTOOL_OUTPUT, else gputool-<exe>-<job>
 * where <job> is the launcher's job id (so all ranks share one directory)
 * or this process's pid. Files are <exe>-<rank>-<pid>.<ext>: unique per
 * process even when ranks share a directory.
 */
struct gt_output {
	char dir[1024];
	char stem[512]; /* dir/exe-rank-pid */
	char exe[256];
	int rank;
};

int gt_output__init(struct gt_output *o, const char *configured_dir);
/* The MPI rank from the usual launcher variables, 0 if none. */
int gt_output__rank(void);
/* The job's number of ranks from the launcher's environment; 0 outside a job. */
int gt_output__job_size(void);
/* The launcher's job id (every rank of a job sees the same), or NULL. */
const char *gt_output__job_id(void);

/* Builds the profile of this process from every thread's tree (symbolized). */
int gt_output__build(struct gt_profile *p);

#endif
