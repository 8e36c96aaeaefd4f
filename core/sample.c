/* SPDX-License-Identifier: MIT */
#include "core/sample.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/modmap.h"
#include "core/region.h"
#include "core/thread.h"
#include "core/wall.h"

#define SAMPLE_FRAMES 256

/* The CPU-time and the wall-clock timers' signals (0: that kind is off). */
static int signo, wall_signo;
static uint64_t period_ns;
/* Written by init/fini (release), read by handlers and thread start (acquire). */
static atomic_int active;
static gt_sample_stitch_fn stitch_fn;
/* Release CAS by gt_sample__add_hook, acquire load by handlers: a hook's own
 * state, set up before, is visible to the handler that calls it. A slot,
 * once set, keeps its hook. */
#define SAMPLE_HOOKS 4
static _Atomic(gt_sample_hook_fn) hooks[SAMPLE_HOOKS];

/* The context of the code a sample interrupted, stitched; NULL when that
 * is the tool's own code (*tool set) or memory ran out. */
static struct gt_cct_node *sample__context(struct gt_thread *t, void *uc, int *tool)
{
	struct gt_frame frames[SAMPLE_FRAMES];
	struct gt_stitch st = { 0 };
	struct gt_cct_node *node;
	int n;

	/* Where the sample hangs says which frames matter: the walk, about
	 * 1 µs a frame, ends there. */
	gt_sample__stitch(t, &st);
	n = gt_unwind__sample_frames(uc, frames, SAMPLE_FRAMES, &st);
	/* In the tool's code outside its bracketed sections (a callback's
	 * entry or early return), or in a vendor's measurement library (CUPTI
	 * collecting PC samples inside a CUDA call, in libnvperf_host): the
	 * tool's time too, not the user's. What such code calls (libc, the
	 * driver) is passed over to the first frame of a library that is not
	 * a runtime's or the system's. */
	*tool = 0;
	for (int i = 0; i < n; i++) {
		enum gt_module_class c = gt_modmap__class(frames[i].ip);

		if (c == GT_MOD_SYSTEM || c == GT_MOD_RUNTIME)
			continue;
		*tool = c == GT_MOD_TOOL;
		break;
	}
	/* The tool's frames of a call it makes for the program (an MPI call
	 * through its profiling interface) are the program's time. */
	if (*tool && gt_region__in_call(t))
		*tool = 0;
	if (*tool)
		return NULL;
	node = gt_unwind__frames_context(t, frames, n, 1, &st, 1);
	return gt_sample__charged(t, node, &st, 1);
}

struct gt_cct_node *gt_sample__charged(struct gt_thread *t, struct gt_cct_node *node,
				       const struct gt_stitch *st, int signal_ctx)
{
	/* Only the runtime's frames under the construct: the runtime's own
	 * time, on a node that says so rather than on the construct's. */
	if (node && node == st->base && st->runtime != GT_PH_THREAD_ROOT)
		return gt_cct__child(&t->cct, node, GT_NODE_PLACEHOLDER, (uint64_t)st->runtime, signal_ctx);
	return node;
}

/*
 * CPU time, or (the wall-clock signal) WALLTIME where the thread is,
 * running or blocked in a wait that resumes after a handler (a futex, a
 * read). The wall-clock handler lets the CPU-time signal in and counts as
 * the tool's code meanwhile: CPU time spent sampling is the tool's.
 */
static void sample__handler(int sig, siginfo_t *si, void *uc)
{
	struct gt_thread *t = gt_thread__peek();
	struct gt_cct_node *node;
	gt_sample_hook_fn hook;
	int saved_errno = errno, wall = sig == wall_signo, tool;
	uint64_t weight;

	if (!t)
		goto out;
	/* A count: the CPU-time handler may run inside the wall-clock one. */
	atomic_fetch_add_explicit(&t->in_handler, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&active, memory_order_seq_cst))
		goto out_done;
	/* Expirations the kernel merged into this one are time too. */
	weight = period_ns * (1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0));
	if (t->in_tool) {
		*(wall ? &t->wall_tool_samples : &t->tool_samples) += 1;
		goto out_done;
	}
	if (wall)
		gt_thread__enter(t);
	node = sample__context(t, uc, &tool);
	if (tool) {
		*(wall ? &t->wall_tool_samples : &t->tool_samples) += 1;
	} else if (wall) {
		if (!node || gt_cct__add(&t->cct, node, GT_M_WALLTIME, weight, 1))
			t->dropped_samples++;
		else
			t->wall_samples++;
	} else if (!node || gt_cct__add(&t->cct, node, GT_M_CPUTIME, weight, 1) ||
		   gt_cct__add(&t->cct, node, GT_M_SAMPLES, 1, 1)) {
		t->dropped_samples++;
	} else {
		t->samples++;
		for (int i = 0; i < SAMPLE_HOOKS; i++) {
			hook = atomic_load_explicit(&hooks[i], memory_order_acquire);
			if (!hook)
				break;
			hook(t, node, weight);
		}
	}
	if (wall)
		gt_thread__leave(t);
out_done:
	atomic_fetch_sub_explicit(&t->in_handler, 1, memory_order_release);
out:
	errno = saved_errno;
}

/* A real-time signal the application is unlikely to use, from @from on,
 * with the handler installed (every signal blocked while it runs but
 * @let_in, when nonzero); 0 if none is free. If the application has a
 * handler on one, it is left alone. */
static int sample__take_signal(int from, const char *what, int let_in)
{
	struct sigaction sa, old;
	int s;

	for (s = from; s <= SIGRTMAX - 4; s++) {
		if (sigaction(s, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			break;
	}
	if (s > SIGRTMAX - 4) {
		gt_warn("sample", "no free real-time signal; %s sampling is off", what);
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sample__handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (let_in)
		sigdelset(&sa.sa_mask, let_in);
	if (sigaction(s, &sa, NULL)) {
		gt_warn("sample", "sigaction failed (%s); %s sampling is off", strerror(errno), what);
		return 0;
	}
	return s;
}

int gt_sample__init(unsigned hz, const char *what)
{
	int cpu = 1, wall = 0;

	if (!hz)
		return 0;
	if (what && *what) {
		cpu = strstr(what, "cpu") != NULL;
		wall = strstr(what, "wall") != NULL;
		if ((!cpu && !wall) || strspn(what, "cpuwal, ") != strlen(what)) {
			char q[GT_LOG_VALUE];

			gt_warn("sample", "GPUTOOL_SAMPLE=%s: expected cpu, wall or cpu,wall; sampling CPU time",
				gt_log__escape(what, q, sizeof(q)));
			cpu = 1;
			wall = 0;
		}
	}
	/* A wall-clock signal would cut sleeps, polls and waits short (they
	 * are not restarted after a handler): it needs the wrappers of
	 * core/wall.c in front of libc's, which only a preload gives. */
	if (wall && !gt_wall__interposed()) {
		gt_warn("sample", "wall-clock sampling needs the library preloaded (gputool run, or "
				  "LD_PRELOAD=libgputool.so with GPUTOOL_PRELOAD=1); sampling %s",
			cpu ? "CPU time only" : "nothing");
		wall = 0;
	}
	period_ns = 1000000000ull / hz;
	if (cpu)
		signo = sample__take_signal(SIGRTMIN + 4, "CPU", 0);
	if (wall)
		wall_signo = sample__take_signal((signo ? signo : SIGRTMIN + 3) + 1, "wall-clock", signo);
	if (!signo && !wall_signo)
		return -EBUSY;
	gt_wall__set_signals(signo, wall_signo);
	atomic_store_explicit(&active, 1, memory_order_release);
	return 0;
}

int gt_sample__active(void)
{
	/* Acquire: pairs with the release store of init, after the signals. */
	return atomic_load_explicit(&active, memory_order_acquire);
}

unsigned gt_sample__kinds(void)
{
	return (signo ? GT_SAMPLE_CPU : 0) | (wall_signo ? GT_SAMPLE_WALL : 0);
}

void gt_sample__set_stitch(gt_sample_stitch_fn fn)
{
	stitch_fn = fn;
}

int gt_sample__add_hook(gt_sample_hook_fn fn)
{
	for (int i = 0; i < SAMPLE_HOOKS; i++) {
		gt_sample_hook_fn none = NULL;

		if (atomic_compare_exchange_strong_explicit(&hooks[i], &none, fn, memory_order_release,
							    memory_order_acquire) ||
		    none == fn)
			return 0;
	}
	return -ENOSPC;
}

void gt_sample__stitch_model(struct gt_thread *t, struct gt_stitch *st)
{
	memset(st, 0, sizeof(*st));
	st->runtime = GT_PH_THREAD_ROOT;
	if (stitch_fn)
		stitch_fn(t, st);
}

void gt_sample__stitch(struct gt_thread *t, struct gt_stitch *st)
{
	gt_sample__stitch_model(t, st);
	gt_region__stitch(t, st);
}

/* A timer on clock that signals sig to t every period: 0, or -1. */
static int sample__timer(struct gt_thread *t, clockid_t clock, int sig, timer_t *out)
{
	struct sigevent sev;
	struct itimerspec its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev._sigev_un._tid = t->tid;
	if (timer_create(clock, &sev, out)) {
		gt_debug("sample", "timer_create failed for thread %u: %s", t->index, strerror(errno));
		return -1;
	}
	its.it_interval.tv_sec = (time_t)(period_ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(period_ns % 1000000000ull);
	its.it_value = its.it_interval;
	if (timer_settime(*out, 0, &its, NULL)) {
		timer_delete(*out);
		return -1;
	}
	return 0;
}

void gt_sample__thread_start(struct gt_thread *t)
{
	if (!atomic_load_explicit(&active, memory_order_acquire))
		return;
	if (signo && !t->has_timer)
		t->has_timer = !sample__timer(t, CLOCK_THREAD_CPUTIME_ID, signo, &t->timer);
	if (wall_signo && !t->has_wall_timer)
		t->has_wall_timer = !sample__timer(t, CLOCK_MONOTONIC, wall_signo, &t->wall_timer);
}

void gt_sample__thread_stop(struct gt_thread *t)
{
	if (t->has_timer)
		timer_delete(t->timer);
	if (t->has_wall_timer)
		timer_delete(t->wall_timer);
	t->has_timer = t->has_wall_timer = 0;
}

void gt_sample__fini(void)
{
	uint32_t n = gt_thread__count();

	if (!atomic_exchange_explicit(&active, 0, memory_order_seq_cst))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (!t)
			continue;
		/* timer_delete works from any thread of the process. */
		gt_sample__thread_stop(t);
		/* A handler that read `active` before the exchange may still run. */
		for (int spins = 0; atomic_load_explicit(&t->in_handler, memory_order_seq_cst) &&
				    spins < 100000;
		     spins++)
			sched_yield();
	}
	/* No timer is left to interrupt a wait: the wrappers pass calls on. */
	gt_wall__set_signals(0, 0);
}
