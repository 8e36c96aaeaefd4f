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
 * program installs later replaces the tool's. The handler allocates nothing,
 * takes no lock and does not wait: it wakes a thread of the tool's (started
 * with every signal blocked) and returns, so that the thread it interrupted
 * goes on and releases what it holds (the loader's lock, malloc's) while the
 * writer writes the output as at exit; the writer then restores the default
 * disposition and sends the signal again, which ends the program. A second
 * signal meanwhile ends the program at once; a program that exits
 * meanwhile waits for the write (gt_tool__stop) and then dies of the
 * signal all the same (gt_endsig__exiting): its exit status is the one it
 * would have had without the tool.
 */

/* Installs the handlers and starts the writer; 0 or a negative errno (after
 * one log line: the tool goes on without it). Normal context, once. */
int gt_endsig__init(void);

/* At the program's exit (or exec), after the write: the tool's handlers
 * give way to the default action, so that a signal from here on ends the
 * program as without the tool; then, if a termination signal was taken
 * before (the program went on to exit before the writer sent it again), the
 * program dies of it here, as it would have without the tool. Returns
 * otherwise. */
void gt_endsig__exiting(void);

/* Crashes (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL), when their disposition
 * is the default: the faulting thread waits for the writer at most this
 * long (the heap or a lock may be what broke), then dies of the signal. */
#define GT_ENDSIG_CRASH_MS 10000

#endif
