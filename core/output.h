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
 * owns, or one others may write that is not sticky, is refused. No file is
 * ever seen partly written under its name: each is written under a
 * temporary name in the same directory (.<exe>-<rank>-<pid><ext>.<hex>.part,
 * created with O_EXCL, so never through a link; `gputool report` reads only
 * *.gtprof), made durable (fsync), then given its name in one step that
 * fails if the name exists (renameat2 RENAME_NOREPLACE, else link()).
 * The profile is published first and claims the stem: when a file of its
 * name is there already (the same pid in another container, a planted
 * link) the stem takes the next free -<n>; the other files follow it.
 */
struct gt_output {
	char dir[PATH_MAX];
	char stem[PATH_MAX + 64]; /* dir/exe-rank-pid[-n] */
	char exe[256];
	int rank;
	size_t stem_len; /* of dir/exe-rank-pid, before any -<n> */
	int claimed;     /* 1 once the profile took its name, and with it the stem */
};

/* A file being written: under its temporary name until published. */
struct gt_output_file {
	FILE *f;          /* open for writing until finished */
	char ext[16];
	char tmp[PATH_MAX + 192];
};

/* Creates dir and its parents (mode 0755 where made); 0 when dir is a
 * directory then, else a negative errno (-ENOTDIR: a file of the name). */
int gt_output__mkdir_p(const char *dir);
/* Remembers the working directory: at the tool's start, once. */
void gt_output__remember_cwd(void);
int gt_output__init(struct gt_output *o, const char *configured_dir);
/*
 * Creates the temporary file of stem<ext> (ext with its dot, as ".gtprof")
 * and opens of->f on it: 0, or a negative errno (nothing left behind).
 */
int gt_output__open(struct gt_output *o, const char *ext, struct gt_output_file *of);
/* Flushes, syncs and closes of->f: 0 when every byte reached the file,
 * else a negative errno (EFBIG, ENOSPC, EPIPE, ...) and the temporary file
 * is removed. */
int gt_output__finish(struct gt_output_file *of);
/*
 * Gives a finished file its name, never replacing a file: the profile
 * claims the stem (the next free -<n>); any other file needs the profile
 * published first. 0, with the name in path (when path), or a negative
 * errno, the temporary file removed either way.
 */
int gt_output__publish(struct gt_output *o, struct gt_output_file *of, char *path, size_t n);
/* Closes (if open) and removes a file not to be published. */
void gt_output__discard(struct gt_output_file *of);
/* The MPI rank from the usual launcher variables, 0 if none. */
int gt_output__rank(void);
/* The job's number of ranks from the launcher's environment; 0 outside a job. */
int gt_output__job_size(void);
/* The launcher's job id (every rank of a job sees the same), or NULL. */
const char *gt_output__job_id(void);
/*
 * This process's executable name (links resolved) when it is an MPI or
 * batch launcher's process (mpirun, orted, prted, hydra_pmi_proxy, srun,
 * ...: the list is in core/output.c, and the same in docs/REPORT.md); NULL
 * otherwise. Such a process starts or serves ranks but is none: the tool
 * stays inactive in it, so that it is neither measured nor merged into the
 * job's report.
 */
const char *gt_output__launcher(void);

/* Builds the profile of this process from every thread's tree (symbolized). */
int gt_output__build(struct gt_profile *p);

#endif
