/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_WSIG_H
#define GT_CORE_WSIG_H

#include <signal.h>

/*
 * The tool's own writes must not raise a signal in the program: a write
 * past RLIMIT_FSIZE raises SIGXFSZ (default action: the program dies, its
 * buffered stdout lost) and one to a pipe nobody reads raises SIGPIPE.
 * Around the tool's writes the calling thread blocks both; such a write then
 * fails with EFBIG or EPIPE, a failure the caller reports like any other.
 * The signal the kernel still generates is directed at the writing thread
 * and stays pending while blocked; gt_wsig__restore takes it (sigtimedwait)
 * before restoring the mask, so that it is never delivered. A signal of
 * either kind that was pending before the block is left pending.
 *
 * Nests (an inner pair restores what the outer set). Not for signal
 * handlers (sigtimedwait is not async-signal-safe).
 */
struct gt_wsig {
	sigset_t old;     /* the thread's mask before */
	sigset_t pending; /* pending before */
};

void gt_wsig__block(struct gt_wsig *w);
void gt_wsig__restore(const struct gt_wsig *w);

#endif
