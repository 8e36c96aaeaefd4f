/* SPDX-License-Identifier: MIT */
#include "core/wsig.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static const int write_signals[] = { SIGXFSZ, SIGPIPE };

void gt_wsig__block(struct gt_wsig *w)
{
	sigset_t s;

	sigemptyset(&s);
	for (size_t i = 0; i < sizeof(write_signals) / sizeof(*write_signals); i++)
		sigaddset(&s, write_signals[i]);
	pthread_sigmask(SIG_BLOCK, &s, &w->old);
	sigpending(&w->pending);
}

void gt_wsig__restore(const struct gt_wsig *w)
{
	static const struct timespec now = { 0, 0 };
	sigset_t pending;
	int saved = errno;

	sigpending(&pending);
	for (size_t i = 0; i < sizeof(write_signals) / sizeof(*write_signals); i++) {
		int sig = write_signals[i];
		sigset_t one;

		/* Raised while blocked, so by a write of this thread (the kernel
		 * takes the thread's own pending signal before the process's). */
		if (!sigismember(&pending, sig) || sigismember(&w->pending, sig))
			continue;
		sigemptyset(&one);
		sigaddset(&one, sig);
		while (sigtimedwait(&one, NULL, &now) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &w->old, NULL);
	errno = saved;
}
