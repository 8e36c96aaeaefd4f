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
#include "core/thread.h"

#define SAMPLE_FRAMES 256

static int signo;
static uint64_t period_ns;
/* Written by init/fini (release), read by handlers and thread start (acquire). */
static atomic_int active;
static gt_sample_stitch_fn stitch_fn;
/* Release store by the setter, acquire load by handlers: the hook's own
 * state, set up before, is visible to the handler that calls it. */
static _Atomic(gt_sample_hook_fn) hook_fn;

static void sample__handler(int sig, siginfo_t *si, void *uc)
{
	struct gt_thread *t = gt_thread__peek();
	struct gt_frame frames[SAMPLE_FRAMES];
	struct gt_stitch st = { 0 };
	struct gt_cct_node *node;
	gt_sample_hook_fn hook;
	int saved_errno = errno;
	uint64_t weight;
	int n;

	(void)sig;
	if (!t)
		goto out;
	atomic_store_explicit(&t->in_handler, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&active, memory_order_seq_cst))
		goto out_done;
	/* Expirations the kernel merged into this one are CPU time too. */
	weight = period_ns * (1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0));
	if (t->in_tool) {
		t->tool_samples++;
		goto out_done;
	}
	n = gt_unwind__ips(uc, frames, SAMPLE_FRAMES);
	/* In the tool's code outside its bracketed sections (a callback's
	 * entry or early return): the tool's time too, not the user's. */
	if (n > 0 && gt_modmap__class(frames[0].ip) == GT_MOD_TOOL) {
		t->tool_samples++;
		goto out_done;
	}
	gt_sample__stitch(t, &st);
	node = gt_unwind__frames_context(t, frames, n, 1, &st, 1);
	if (!node || gt_cct__add(&t->cct, node, GT_M_CPUTIME, weight, 1) ||
	    gt_cct__add(&t->cct, node, GT_M_SAMPLES, 1, 1)) {
		t->dropped_samples++;
		goto out_done;
	}
	t->samples++;
	hook = atomic_load_explicit(&hook_fn, memory_order_acquire);
	if (hook)
		hook(t, node, weight);
out_done:
	atomic_store_explicit(&t->in_handler, 0, memory_order_release);
out:
	errno = saved_errno;
}

int gt_sample__init(unsigned hz)
{
	struct sigaction sa, old;

	if (!hz)
		return 0;
	period_ns = 1000000000ull / hz;
	/* A real-time signal the application is unlikely to use; if it has a
	 * handler there, leave it alone. */
	for (signo = SIGRTMIN + 4; signo <= SIGRTMAX - 4; signo++) {
		if (sigaction(signo, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			break;
	}
	if (signo > SIGRTMAX - 4) {
		gt_warn("sample", "no free real-time signal; CPU sampling is off");
		return -EBUSY;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sample__handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL)) {
		gt_warn("sample", "sigaction failed (%s); CPU sampling is off", strerror(errno));
		return -errno;
	}
	atomic_store_explicit(&active, 1, memory_order_release);
	return 0;
}

void gt_sample__set_stitch(gt_sample_stitch_fn fn)
{
	stitch_fn = fn;
}

void gt_sample__set_hook(gt_sample_hook_fn fn)
{
	atomic_store_explicit(&hook_fn, fn, memory_order_release);
}

void gt_sample__stitch(struct gt_thread *t, struct gt_stitch *st)
{
	st->base = NULL;
	st->boundary = 0;
	if (stitch_fn)
		stitch_fn(t, st);
}

void gt_sample__thread_start(struct gt_thread *t)
{
	struct sigevent sev;
	struct itimerspec its;

	if (t->has_timer || !atomic_load_explicit(&active, memory_order_acquire))
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = signo;
	sev._sigev_un._tid = t->tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer)) {
		gt_debug("sample", "timer_create failed for thread %u: %s", t->index, strerror(errno));
		return;
	}
	its.it_interval.tv_sec = (time_t)(period_ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(period_ns % 1000000000ull);
	its.it_value = its.it_interval;
	if (timer_settime(t->timer, 0, &its, NULL)) {
		timer_delete(t->timer);
		return;
	}
	t->has_timer = 1;
}

void gt_sample__thread_stop(struct gt_thread *t)
{
	if (!t->has_timer)
		return;
	timer_delete(t->timer);
	t->has_timer = 0;
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
		if (t->has_timer)
			timer_delete(t->timer);
		t->has_timer = 0;
		/* A handler that read `active` before the exchange may still run. */
		for (int spins = 0; atomic_load_explicit(&t->in_handler, memory_order_seq_cst) &&
				    spins < 100000;
		     spins++)
			sched_yield();
	}
}
