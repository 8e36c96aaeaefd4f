/* SPDX-License-Identifier: MIT */
/*
 * The waits a signal handler interrupts for good (signal(7): sleeps,
 * poll/ppoll, select/pselect, epoll_wait/epoll_pwait, pause, sigsuspend,
 * sigtimedwait/sigwaitinfo, semop/semtimedop, msgrcv) go through here when
 * the library is preloaded. While a thread is sampled, a wait that can
 * block runs with its sampling signals blocked (a CPU-time expiration just
 * at the wait's entry would end it too). With wall-clock sampling on, the
 * pending wall-clock signal is then taken off without a handler, the whole
 * wait is added to WALLTIME at its call site, and the mask is restored.
 * The variants that install a signal mask of their own for the wait get
 * the sampling signals added to it. In a thread the tool does not sample,
 * each wrapper costs two loads and a call.
 *
 * Waits not listed here are restarted after a handler (SA_RESTART: futex,
 * read, write, wait, connect, ...), so a wall-clock sample may interrupt
 * them; those on sockets with a receive or send timeout are not, and are
 * not wrapped (docs/REPORT.md says so).
 */
#include "core/wall.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/unwind.h"

#define EXPORT __attribute__((visibility("default")))

/* The sampling signals (0: that kind is off): stored by the sampler before
 * its `active` flag (release), loaded here with acquire: a thread whose
 * timers run sees them. */
static atomic_int cpu_sig, wall_sig;

void gt_wall__set_signals(int cpu, int wall)
{
	atomic_store_explicit(&cpu_sig, cpu, memory_order_release);
	atomic_store_explicit(&wall_sig, wall, memory_order_release);
}

struct wall_wait {
	struct gt_thread *t;
	int sig;       /* the wall-clock signal, when this wait is timed */
	sigset_t held; /* the sampling signals held back for the wait */
	sigset_t old;
	uint64_t t0;
};

/* Starts a wait: 1 when the sampling signals of the thread are held back
 * for it (w->sig set when it is timed for WALLTIME too). A CPU-time
 * expiration right at the wait's entry would end it early as well. */
static int wall__begin(struct wall_wait *w)
{
	int cpu = atomic_load_explicit(&cpu_sig, memory_order_acquire);
	int wall = atomic_load_explicit(&wall_sig, memory_order_acquire);

	if (!cpu && !wall)
		return 0;
	w->t = gt_thread__peek();
	if (!w->t || w->t->in_tool || !(w->t->has_timer || w->t->has_wall_timer))
		return 0;
	sigemptyset(&w->held);
	if (cpu && w->t->has_timer)
		sigaddset(&w->held, cpu);
	if (wall && w->t->has_wall_timer)
		sigaddset(&w->held, wall);
	if (pthread_sigmask(SIG_BLOCK, &w->held, &w->old))
		return 0;
	/* Held back already (a wait inside a wait): the outer one times it. */
	w->sig = wall && w->t->has_wall_timer && !sigismember(&w->old, wall) ? wall : 0;
	w->t0 = w->sig ? gt_clock__now() : 0;
	return 1;
}

/* Ends a wait begun by wall__begin, made from return address ra, in the
 * wrapper whose frame is key. errno is kept. A CPU-time signal that came
 * meanwhile is delivered when the mask is restored. */
static void wall__end(struct wall_wait *w, uintptr_t ra, uintptr_t key)
{
	struct gt_thread *t = w->t;
	static const struct timespec zero;
	struct gt_stitch st = { 0 };
	struct gt_cct_node *node;
	int saved_errno = errno;
	uint64_t dt;
	sigset_t set;

	if (!w->sig)
		goto out;
	dt = gt_clock__now() - w->t0;
	gt_thread__enter(t);
	gt_sample__stitch(t, &st);
	node = gt_unwind__memo_lookup(t, ra, key, &st);
	if (!node)
		node = gt_unwind__context(t, ra, key, &st);
	node = gt_sample__charged(t, node, &st, 0);
	if (!node || gt_cct__add(&t->cct, node, GT_M_WALLTIME, dt, 0))
		t->dropped_samples++;
	gt_thread__leave(t);
	/* The expirations during the wait are in dt (those while it was
	 * charged, the tool's time): take the signal off, last, so that none
	 * comes between this and the mask's restore but by a microsecond. */
	sigemptyset(&set);
	sigaddset(&set, w->sig);
	while (syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, (size_t)(_NSIG / 8)) == w->sig)
		;
out:
	pthread_sigmask(SIG_SETMASK, &w->old, NULL);
	errno = saved_errno;
}

/* The mask a wait installs, with the sampling signals held back (into copy). */
static const sigset_t *wall__mask(const struct wall_wait *w, int measured, const sigset_t *mask, sigset_t *copy)
{
	if (!measured || !mask)
		return mask;
	sigorset(copy, mask, &w->held);
	return copy;
}

static int zero_ts(const struct timespec *ts)
{
	return ts && !ts->tv_sec && !ts->tv_nsec;
}

/* The next definition of name (libc's), looked up once. */
static void *wall__real(_Atomic(void *) *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_relaxed);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		atomic_store_explicit(slot, f, memory_order_relaxed);
	}
	return f;
}

/*
 * One wrapper: ret name(params), calling libc's with args, measured unless
 * quick (a wait that cannot block: a zero timeout). In args, MASK(m) is the
 * wait's own signal mask m with the sampling signals held back added.
 */
#define WALL_WRAP(ret, fail, name, params, args, quick)                                  \
	EXPORT ret name params;                                                           \
	ret name params                                                                   \
	{                                                                                 \
		static _Atomic(void *) slot;                                              \
		ret(*real) params = (ret(*) params)wall__real(&slot, #name);              \
		struct wall_wait w;                                                       \
		sigset_t copy;                                                            \
		int measured;                                                             \
		ret r;                                                                    \
                                                                                          \
		if (!real) {                                                              \
			errno = ENOSYS;                                                   \
			return fail;                                                      \
		}                                                                         \
		measured = !(quick) && wall__begin(&w);                                   \
		(void)copy;                                                               \
		r = real args;                                                            \
		if (measured)                                                             \
			wall__end(&w, (uintptr_t)__builtin_return_address(0), GT_UNWIND_KEY()); \
		return r;                                                                 \
	}

#define MASK(m) wall__mask(&w, measured, (m), &copy)

WALL_WRAP(int, -1, nanosleep, (const struct timespec *req, struct timespec *rem), (req, rem), zero_ts(req))
WALL_WRAP(int, ENOSYS, clock_nanosleep, (clockid_t c, int flags, const struct timespec *req, struct timespec *rem),
	  (c, flags, req, rem), !flags && zero_ts(req))
WALL_WRAP(int, -1, usleep, (useconds_t us), (us), !us)
WALL_WRAP(unsigned, seconds, sleep, (unsigned seconds), (seconds), !seconds)
WALL_WRAP(int, -1, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout), !timeout)
WALL_WRAP(int, -1, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask),
	  (fds, n, tmo, MASK(mask)), zero_ts(tmo))
WALL_WRAP(int, -1, select, (int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv), (n, rd, wr, ex, tv),
	  tv && !tv->tv_sec && !tv->tv_usec)
WALL_WRAP(int, -1, pselect,
	  (int n, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *tmo, const sigset_t *mask),
	  (n, rd, wr, ex, tmo, MASK(mask)), zero_ts(tmo))
WALL_WRAP(int, -1, epoll_wait, (int fd, struct epoll_event *ev, int max, int timeout), (fd, ev, max, timeout),
	  !timeout)
WALL_WRAP(int, -1, epoll_pwait, (int fd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask),
	  (fd, ev, max, timeout, MASK(mask)), !timeout)
WALL_WRAP(int, -1, pause, (void), (), 0)
WALL_WRAP(int, -1, sigsuspend, (const sigset_t *mask), (MASK(mask)), 0)
WALL_WRAP(int, -1, sigtimedwait, (const sigset_t *set, siginfo_t *info, const struct timespec *tmo),
	  (set, info, tmo), zero_ts(tmo))
WALL_WRAP(int, -1, sigwaitinfo, (const sigset_t *set, siginfo_t *info), (set, info), 0)
WALL_WRAP(int, -1, semop, (int id, struct sembuf *ops, size_t n), (id, ops, n), 0)
WALL_WRAP(int, -1, semtimedop, (int id, struct sembuf *ops, size_t n, const struct timespec *tmo),
	  (id, ops, n, tmo), zero_ts(tmo))
WALL_WRAP(ssize_t, -1, msgrcv, (int id, void *msg, size_t size, long type, int flags),
	  (id, msg, size, type, flags), flags & IPC_NOWAIT)

/* The library's own nanosleep, whatever the program's calls reach. */
extern __typeof__(nanosleep) wall__own_nanosleep __attribute__((alias("nanosleep"), visibility("hidden")));

int gt_wall__interposed(void)
{
	return dlsym(RTLD_DEFAULT, "nanosleep") == (void *)wall__own_nanosleep;
}
