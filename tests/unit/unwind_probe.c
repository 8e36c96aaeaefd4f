/* SPDX-License-Identifier: MIT */
/*
 * The tool side of the unwinder tests and benchmark: built into a shared
 * library together with the core, so that the tool's own frames are those of
 * this library and are elided like libgputool's.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/modmap.h"
#include "core/region.h"
#include "core/symbolize.h"
#include "core/thread.h"
#include "core/unwind.h"
#include "core/unwind-memo.h"
#include "tests/unit/unwind_probe.h"

static struct gt_thread *thread;
static struct gt_cct_node *last;
static int use_memo = 1;
static struct gt_cct_node *stitch_base;
static uintptr_t stitch_boundary;

void probe_init(int memo)
{
	char *env[] = { NULL };

	gt_config__load(env);
	gt_modmap__init();
	gt_unwind__init();
	thread = gt_thread__self(GT_THREAD_INITIAL);
	use_memo = memo;
}

void probe_context(void *ra, int depth)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_stitch st = { 0 };
	struct gt_cct_node *n = NULL;

	(void)depth;
	gt_thread__enter(thread);
	if (use_memo)
		n = gt_unwind__memo_lookup(thread, (uintptr_t)ra, key, &st);
	if (!n)
		n = gt_unwind__context(thread, (uintptr_t)ra, key, &st);
	last = n;
	gt_thread__leave(thread);
}

/* The context through gt_unwind__memo_context, as OpenMP's task callbacks
 * ask for it. */
void probe_memo_context(void *ra, int depth)
{
	uintptr_t key = GT_UNWIND_KEY();

	(void)depth;
	gt_thread__enter(thread);
	last = gt_unwind__memo_context(thread, (uintptr_t)ra, key, NULL, 0);
	gt_thread__leave(thread);
}

void probe_set_stitch(int base, void *boundary)
{
	/* A node of its own per number: a frame no code has. */
	stitch_base = base ? gt_cct__child(&thread->cct, thread->cct.root, GT_NODE_FRAME, (uintptr_t)base, 0)
			   : NULL;
	stitch_boundary = (uintptr_t)boundary;
}

void probe_stitched(void *ra, int depth)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct gt_stitch st = { .base = stitch_base, .boundary = stitch_boundary };

	(void)depth;
	gt_thread__enter(thread);
	if (use_memo)
		last = gt_unwind__memo_context(thread, (uintptr_t)ra, key, stitch_base, stitch_boundary);
	else
		last = gt_unwind__context(thread, (uintptr_t)ra, key, &st);
	gt_thread__leave(thread);
}

static struct gt_frame sample_f[64];
static int sample_n;
static volatile int samples_taken;

static void probe__on_sample(int sig, siginfo_t *si, void *uc)
{
	struct gt_stitch st = { .base = stitch_base, .boundary = stitch_boundary };

	(void)sig, (void)si;
	sample_n = gt_unwind__sample_frames(uc, sample_f, 64, &st);
	samples_taken = samples_taken + 1;
}

int probe_samples_taken(void)
{
	return samples_taken;
}

void probe_arm_sample(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = probe__on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
}

int probe_sample_frames(uintptr_t *ip, uintptr_t *sp, int max)
{
	for (int i = 0; i < sample_n && i < max; i++) {
		ip[i] = sample_f[i].ip;
		sp[i] = sample_f[i].sp;
	}
	return sample_n;
}

/* A copy of the memo's path for the last probe_copied lookup, as OpenMP's
 * construct cache keeps one (ompt__construct_fill). */
static struct gt_memo_slot copy_slots[16];
static uint32_t copy_n;
static uintptr_t copy_ra, copy_depth;
static int copy_taken, copy_holds, copy_mode;

void probe_set_copy(int mode)
{
	copy_mode = mode;
}

int probe_copy_taken(void)
{
	return copy_taken;
}

int probe_copy_holds(void)
{
	return copy_holds;
}

/* mode 1: looks the context up under the stitch and copies the path of the
 * recent entry that answered; mode 0: checks the copy against this stack,
 * as ompt__construct_hit does. */
void probe_copied(void *ra, int depth)
{
	uintptr_t key = GT_UNWIND_KEY(), d = gt_memo__depth(key, stitch_boundary);
	const struct gt_memo_entry *e;

	(void)depth;
	gt_thread__enter(thread);
	if (copy_mode) {
		last = gt_unwind__memo_context(thread, (uintptr_t)ra, key, stitch_base, stitch_boundary);
		e = gt_memo__recent_entry(thread->memo, (uintptr_t)ra, d, stitch_base, last);
		copy_taken = e && e->nslots <= 16;
		if (copy_taken) {
			memcpy(copy_slots, e->slots, e->nslots * sizeof(*copy_slots));
			copy_n = e->nslots;
			copy_ra = (uintptr_t)ra;
			copy_depth = d;
		}
	} else {
		copy_holds = copy_ra == (uintptr_t)ra && copy_depth == d;
		for (uint32_t i = 0; i < copy_n && copy_holds; i++)
			copy_holds = *(const uintptr_t *)(key + copy_slots[i].off) == copy_slots[i].val;
	}
	gt_thread__leave(thread);
}

uint64_t probe_predicted(void)
{
	struct gt_unwind_stats st;

	gt_unwind__stats(thread, &st);
	return st.predicted;
}

uint64_t probe_derived(void)
{
	struct gt_unwind_stats st;

	gt_unwind__stats(thread, &st);
	return st.derived;
}

/* Opens and closes a region where the runtime called: its node is last. */
void probe_region(void *ra, int depth)
{
	(void)depth;
	gt_thread__enter(thread);
	last = gt_region__open(thread, GT_REGION_USER, "<test region>", 0, 0, (uintptr_t)ra, GT_UNWIND_KEY());
	gt_region__close(thread, GT_REGION_USER, 0, NULL);
	gt_thread__leave(thread);
}

void probe_region_stats(uint64_t *hits, uint64_t *misses)
{
	gt_region__stats(thread, hits, misses);
}

void probe_ips_context(void *ra, int depth)
{
	struct gt_stitch st = { 0 };

	(void)ra, (void)depth;
	gt_thread__enter(thread);
	last = gt_unwind__ips_context(thread, &st);
	gt_thread__leave(thread);
}

void *probe_last(void)
{
	return last;
}

int probe_path(void *node, char *buf, size_t len)
{
	struct gt_symbolizer *s = gt_symbolizer__new();
	struct gt_cct_node *path[256];
	int n = 0, off = 0;

	for (struct gt_cct_node *p = node; p && p->kind != GT_NODE_ROOT && n < 256; p = p->parent)
		path[n++] = p;
	buf[0] = 0;
	while (n-- > 0) {
		struct gt_symbol sym;

		gt_symbolizer__lookup(s, (uintptr_t)path[n]->key, &sym);
		off += snprintf(buf + off, len - (size_t)off, "%s%s", off ? "/" : "",
				sym.function ? sym.function : "?");
		if ((size_t)off >= len)
			break;
	}
	gt_symbolizer__delete(s);
	return 0;
}

void probe_stats(uint64_t *hits, uint64_t *misses, uint64_t *full)
{
	struct gt_unwind_stats st;

	gt_unwind__stats(thread, &st);
	*hits = st.memo_hits;
	*misses = st.memo_misses;
	*full = st.full_unwinds;
}
