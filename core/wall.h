/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_WALL_H
#define GT_CORE_WALL_H

/*
 * Blocking waits under wall-clock sampling (core/wall.c). A signal handler
 * makes sleep, poll, select, epoll and a few other waits return early
 * (EINTR, or a short sleep), whatever SA_RESTART says. When the library is
 * preloaded its definitions of those functions come before libc's: while
 * wall-clock sampling is on they hold the wall-clock signal back for the
 * wait, measure the wait whole and add it to WALLTIME at the call site,
 * then drop the signal that came meanwhile. The program's waits last as
 * long as they would without the tool.
 */

/* Whether this library's wrappers come before libc's (a preload). */
int gt_wall__interposed(void);
/* The wall-clock sampling signal; 0: off (the wrappers pass calls on). */
void gt_wall__set_signal(int sig);

#endif
