/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_WALL_H
#define GT_CORE_WALL_H

/*
 * Blocking waits under wall-clock sampling (core/wall.c). A signal handler
 * makes sleep, poll, select, epoll and a few other waits return early
 * (EINTR, or a short sleep), whatever SA_RESTART says. When the library is
 * preloaded its definitions of those functions come before libc's: while
 * a thread is sampled they hold its sampling signals back for the wait;
 * with wall-clock sampling on they measure the wait whole, add it to
 * WALLTIME at the call site and drop the wall-clock signal that came
 * meanwhile. The program's waits last as long as they would without the
 * tool.
 */

/* Whether this library's wrappers come before libc's (a preload). */
int gt_wall__interposed(void);
/* The CPU-time and wall-clock sampling signals (0: that kind is off; both
 * 0: the wrappers pass calls on). */
void gt_wall__set_signals(int cpu, int wall);

#endif
