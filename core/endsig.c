/* SPDX-License-Identifier: MIT */
#include "core/endsig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/thread.h"
#include "core/tool.h"

static const int taken[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU };
/* Crashes: the thread cannot go on; it waits for the write, a bounded time. */
static const int crashes[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

/* handler -> writer: the signal's number; writer -> a crashed thread: done. */
static int request[2] = { -1, -1 }, done[2] = { -1, -1 };
/*
 * The first signal taken: 0 until then. The handler's exchange (seq_cst,
 * lock-free, async-signal-safe) lets exactly one signal ask for the write.
 */
static atomic_int first;
/* 1 while a writer thread exists in this process: a forked child has none
 * (relaxed: set before the handlers are installed, cleared in the child). */
static atomic_int writer_alive;

static void endsig__die(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* Pending until the handler returns (the signal is blocked while it
	 * runs), then the default action: the program ends of it. */
	raise(sig);
}

static int is_crash(int sig)
{
	for (size_t i = 0; i < sizeof(crashes) / sizeof(*crashes); i++)
		if (crashes[i] == sig)
			return 1;
	return 0;
}

/*
 * A crash: the faulting thread waits (poll, async-signal-safe) while the
 * writer writes what it can, at most GT_ENDSIG_CRASH_MS, then dies of the
 * signal (the default action, core dump included). Not when the fault is in
 * the tool's own code (the tool's state may be what broke) or when the
 * writer itself faults (first is set then).
 */
static void endsig__crash(int sig)
{
	struct gt_thread *t = gt_thread__peek();
	int expected = 0;

	/* Seq_cst: as in endsig__handler. */
	if (!(t && t->in_tool) &&
	    atomic_compare_exchange_strong_explicit(&first, &expected, sig, memory_order_seq_cst,
						    memory_order_seq_cst) &&
	    atomic_load_explicit(&writer_alive, memory_order_relaxed)) {
		unsigned char b = (unsigned char)sig;

		if (write(request[1], &b, 1) == 1) {
			struct pollfd pfd = { .fd = done[0], .events = POLLIN };

			while (poll(&pfd, 1, GT_ENDSIG_CRASH_MS) < 0 && errno == EINTR)
				;
		}
	}
	endsig__die(sig);
}

static void endsig__handler(int sig)
{
	int saved = errno;
	int expected = 0;

	/* Seq_cst: the one total order of the signals of all threads picks
	 * the one that asks for the write. */
	if (atomic_compare_exchange_strong_explicit(&first, &expected, sig, memory_order_seq_cst,
						    memory_order_seq_cst) &&
	    atomic_load_explicit(&writer_alive, memory_order_relaxed)) {
		unsigned char b = (unsigned char)sig;

		if (write(request[1], &b, 1) == 1) {
			errno = saved;
			return; /* the writer ends the program */
		}
	}
	endsig__die(sig);
	errno = saved;
}

static void *endsig__writer(void *arg)
{
	unsigned char b;
	ssize_t n;

	(void)arg;
	while ((n = read(request[0], &b, 1)) < 0 && errno == EINTR)
		;
	if (n == 1 && is_crash(b)) {
		gt_warn("exit", "%s: writing what can be written before the program ends of it", strsignal(b));
		gt_tool__stop();
		n = write(done[1], &b, 1);
		(void)n;
	} else if (n == 1) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		gt_info("exit", "%s: writing the profile before the program ends of it", strsignal(b));
		gt_tool__stop();
		/* The program ends of the signal, as it would have: the writer
		 * blocks every signal, another thread takes it. */
		sigemptyset(&dfl.sa_mask);
		sigaction(b, &dfl, NULL);
		kill(getpid(), b);
	}
	return NULL;
}

/* The handlers still the tool's back to the default action: the program's
 * own, or ignored, were never replaced. */
static void endsig__restore(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction now;

		if (!sigaction(sig, NULL, &now) &&
		    (now.sa_handler == endsig__handler || now.sa_handler == endsig__crash)) {
			struct sigaction dfl = { .sa_handler = SIG_DFL };

			sigemptyset(&dfl.sa_mask);
			sigaction(sig, &dfl, NULL);
		}
	}
}

void gt_endsig__exiting(void)
{
	int sig;
	sigset_t one;

	/* The output is written: from here a signal ends the program as it
	 * would without the tool, by its default action. Restored first, so
	 * that a signal comes either before (taken, seen below) or after (the
	 * default action ends the program): none falls between the two and
	 * lets the exit finish with the program's own status. */
	endsig__restore();
	/* Seq_cst: pairs with the handler's exchange, in the same total order. */
	sig = atomic_load_explicit(&first, memory_order_seq_cst);
	if (!sig || is_crash(sig))
		return;
	/* Ends the program now, even if this thread blocks the signal. */
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	endsig__die(sig);
}

static void endsig__atfork_child(void)
{
	/* No writer here: a signal ends the child as if no tool were there,
	 * and one the parent took before the fork is not the child's. */
	atomic_store_explicit(&writer_alive, 0, memory_order_relaxed);
	atomic_store_explicit(&first, 0, memory_order_seq_cst);
	endsig__restore();
}

int gt_endsig__init(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;
	int err;

	if (pipe2(request, O_CLOEXEC) || pipe2(done, O_CLOEXEC)) {
		err = -errno;
		goto out_warn;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = -pthread_create(&th, &attr, endsig__writer, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto out_warn;
	atomic_store_explicit(&writer_alive, 1, memory_order_relaxed);
	pthread_atfork(NULL, NULL, endsig__atfork_child);
	for (size_t i = 0; i < sizeof(taken) / sizeof(*taken) + sizeof(crashes) / sizeof(*crashes); i++) {
		int crash = i >= sizeof(taken) / sizeof(*taken);
		int sig = crash ? crashes[i - sizeof(taken) / sizeof(*taken)] : taken[i];
		struct sigaction now, sa = { .sa_handler = crash ? endsig__crash : endsig__handler };

		if (sigaction(sig, NULL, &now) || now.sa_handler != SIG_DFL || (now.sa_flags & SA_SIGINFO))
			continue; /* the program's own (or a sanitizer's), or ignored: left alone */
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(sig, &sa, NULL);
	}
	return 0;

out_warn:
	gt_warn("exit", "no profile if a signal ends the program (%s)", strerror(-err));
	return err;
}
