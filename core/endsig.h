/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_ENDSIG_H
#define GT_CORE_ENDSIG_H

/*
 * A program ended by a termination signal (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1, SIGUSR2: a user's ^C, a batch scheduler's time limit,
 * mpirun ending the ranks of a job one of which failed) still writes its
 * profile and report, then dies of that same signal, exit status and core
 * dump as without the tool.
 *
 * Only signals whose disposition is the default when the tool starts are
 * taken: a handler the program installed, or SIG_IGN, stays; one the
 * program installs later replaces the tool's. The handler allocates nothing
 * and takes no lock: it wakes a thread of the tool's (started with every
 * signal blocked) that writes the output as at exit, waits for it at most
 * GT_ENDSIG_WAIT_MS, restores the default disposition and raises the
 * signal again. A second signal during the write ends the program at once.
 */
#define GT_ENDSIG_WAIT_MS 20000

/* Installs the handlers and starts the writer; 0 or a negative errno (after
 * one log line: the tool goes on without it). Normal context, once. */
int gt_endsig__init(void);

#endif
