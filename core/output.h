/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_OUTPUT_H
#define GT_CORE_OUTPUT_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "core/profile.h"

/*
 * Where a process's files go: GPUTOOL_OUTPUT, else gputool-<exe>-<job>
 * where <job> is the launcher's job id (so all ranks share one directory)
 * or this process's pid; a relative one against the working directory the
 * process had when the tool started. Files are <exe>-<rank>-<pid>.<ext>:
 * unique per process even when ranks share a directory.
 *
 * Nothing is overwritten and no link is followed: a directory another user
 * owns, or one others may write that is not sticky, is refused; every file
 * is created (O_EXCL, O_NOFOLLOW), and when a file of the name is there
 * already (the same pid in another container, a planted link) the stem
 * takes the next free -<n>.
 */
struct gt_output {
	char dir[PATH_MAX];
	char stem[PATH_MAX + 64]; /* dir/exe-rank-pid[-n] */
	char exe[256];
	int rank;
	int prof_fd; /* the claimed profile file; -1 before the claim, -2 once handed out */
};

/* Creates dir and its parents (mode 0755 where made); 0 when dir is a
 * directory then, else a negative errno (-ENOTDIR: a file of the name). */
int gt_output__mkdir_p(const char *dir);
/* Remembers the working directory: at the tool's start, once. */
void gt_output__remember_cwd(void);
int gt_output__init(struct gt_output *o, const char *configured_dir);
/*
 * Creates the file stem.<ext> (ext with its dot) for writing and returns it
 * (NULL, with errno, when it cannot). The first call claims the stem: the
 * next free name, the profile's file created with it.
 */
FILE *gt_output__create(struct gt_output *o, const char *ext);
/* The MPI rank from the usual launcher variables, 0 if none. */
int gt_output__rank(void);
/* The job's number of ranks from the launcher's environment; 0 outside a job. */
int gt_output__job_size(void);
/* The launcher's job id (every rank of a job sees the same), or NULL. */
const char *gt_output__job_id(void);
/*
 * Whether @exe (a file name, no directory) is an MPI or batch launcher's
 * process (mpirun, orted, prted, hydra_pmi_proxy, srun, ...: the list is
 * in core/output.c, and the same in docs/REPORT.md). Such a process starts
 * or serves ranks but is none: the tool stays inactive in it, so that it
 * is neither measured nor merged into the job's report.
 */
int gt_output__is_launcher(const char *exe);

/* Builds the profile of this process from every thread's tree (symbolized). */
int gt_output__build(struct gt_profile *p);

#endif
