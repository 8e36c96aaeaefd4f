/* SPDX-License-Identifier: MIT */
#define UNW_LOCAL_ONLY
#include "core/unwind.h"

#include <libunwind.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <ucontext.h>

#include "core/config.h"
#include "core/modmap.h"
#include "core/thread.h"

#define MAX_FRAMES 512
#define MEMO_ENTRIES 64 /* a power of two */
#define MEMO_SLOTS 32

/*
 * The memo remembers, per (ra, key, base), the node of the last context and
 * the return-address slots of the user frames above the call site. A hit
 * requires every slot to still hold its return address: the caller chain is
 * then the same, and the context costs a few loads instead of an unwind.
 * The key pins the stack position of the call site; the slots pin the
 * callers. x86-64 only (the return address is at sp - 8 of the caller's
 * frame); elsewhere every lookup misses.
 */
struct memo_entry {
	uintptr_t ra, key;
	struct gt_cct_node *base, *node;
	uint32_t nslots;
	struct {
		uintptr_t addr, val;
	} slots[MEMO_SLOTS];
};

struct gt_unwind_memo {
	struct memo_entry e[MEMO_ENTRIES];
	struct gt_unwind_stats stats;
};

static uintptr_t entry_point;

int gt_unwind__init(void)
{
	entry_point = (uintptr_t)getauxval(AT_ENTRY);
	return unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD) ? -1 : 0;
}

struct gt_unwind_memo *gt_unwind__memo_new(void)
{
	return calloc(1, sizeof(struct gt_unwind_memo));
}

void gt_unwind__stats(const struct gt_thread *t, struct gt_unwind_stats *s)
{
	if (t->memo)
		*s = t->memo->stats;
	else
		memset(s, 0, sizeof(*s));
}

int gt_unwind__raw(void *uc, struct gt_frame *out, int max)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	int n = 0;

	if (uc) {
		if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
			return 0;
	} else {
		unw_getcontext(&ctx);
		if (unw_init_local(&cur, &ctx) < 0)
			return 0;
	}
	do {
		unw_word_t ip, sp;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		unw_get_reg(&cur, UNW_REG_SP, &sp);
		out[n].ip = ip;
		out[n].sp = sp;
		n++;
	} while (n < max && unw_step(&cur) > 0);
	return n;
}

void gt_unwind__thread_init(void)
{
	void *ips[4];

	unw_backtrace(ips, 4);
}

int gt_unwind__ips(void *uc, struct gt_frame *f, int max)
{
	void *ips[MAX_FRAMES];
	int n, k = 0;

	if (max > MAX_FRAMES)
		max = MAX_FRAMES;
	n = unw_backtrace(ips, max);
	if (uc) {
		/* Drop the handler's frames and the signal trampoline: start at
		 * the interrupted instruction. */
		uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];

		while (k < n && (uintptr_t)ips[k] != pc)
			k++;
		if (k == n) {
			/* The fast path did not cross the signal frame. */
			int m = gt_unwind__raw(uc, f, max);

			for (int i = 0; i < m; i++)
				f[i].sp = 0;
			return m;
		}
	}
	for (int i = k; i < n; i++) {
		f[i - k].ip = (uintptr_t)ips[i];
		f[i - k].sp = 0;
	}
	return n - k;
}

struct gt_cct_node *gt_unwind__ips_context(struct gt_thread *t, const struct gt_stitch *st)
{
	struct gt_frame f[MAX_FRAMES];
	int max = (int)gt_config.max_depth;
	int n;

	if (max <= 0 || max > MAX_FRAMES)
		max = MAX_FRAMES;
	if (gt_modmap__stale())
		gt_modmap__refresh();
	n = gt_unwind__ips(NULL, f, max);
	return gt_unwind__frames_context(t, f, n, 0, st, 0);
}

/* Written once by a backend at its start (release), read by every unwind
 * including signal handlers (acquire). */
static int (*_Atomic elide_hook)(uintptr_t pc);

void gt_unwind__set_elide_hook(int (*covers)(uintptr_t pc))
{
	atomic_store_explicit(&elide_hook, covers, memory_order_release);
}

static int elided_class(enum gt_module_class c)
{
	return c == GT_MOD_TOOL || c == GT_MOD_RUNTIME;
}

/* A frame of the tool or of a runtime: left out of contexts. */
static int elided(uintptr_t pc)
{
	int (*hook)(uintptr_t) = atomic_load_explicit(&elide_hook, memory_order_acquire);

	return elided_class(gt_modmap__class(pc)) || (hook && hook(pc));
}

/*
 * Chooses the user frames of f[0..n) (leaf first) for a context under st.
 * Writes their indices into keep[] root first and returns how many.
 * *call_site gets the index of the frame that made the call (-1 if none).
 */
static int select_frames(const struct gt_frame *f, int n, uintptr_t ra, const struct gt_stitch *st,
			 int *keep, int *call_site)
{
	int i = 0, m = 0, lo, hi;

	*call_site = -1;
	if (st->base && !st->boundary)
		return 0;
	if (ra) {
		while (i < n && f[i].ip != ra)
			i++;
		if (i == n)
			i = 0;
	}
	if (!ra || i == 0) {
		/* Skip the tool's and the runtimes' frames at the leaf, and the
		 * system frames they called (a runtime's ioctl is not the
		 * user's); system frames the user called directly stay. */
		int u = i, runtime = 0;

		for (; u < n; u++) {
			if (!elided(f[u].ip) && gt_modmap__class(f[u].ip) == GT_MOD_USER)
				break;
			runtime |= elided(f[u].ip);
		}
		if (runtime)
			i = u;
	}
	for (; i < n; i++) {
		if (st->boundary && f[i].sp && f[i].sp >= st->boundary)
			break;
		if (elided(f[i].ip)) {
			/* Without stack pointers, the runtime frame that called
			 * the task's body is its boundary. */
			if (st->boundary && !f[i].sp && m > 0)
				break;
			continue;
		}
		if (*call_site < 0)
			*call_site = i;
		keep[m++] = i;
	}
	if (!st->base) {
		/* Trim the start routines: _start, then libc and loader frames. */
		while (m > 0 && f[keep[m - 1]].ip - entry_point < 256)
			m--;
		while (m > 1 && gt_modmap__class(f[keep[m - 1]].ip) == GT_MOD_SYSTEM)
			m--;
	}
	/* Reverse into root-first order. */
	for (lo = 0, hi = m - 1; lo < hi; lo++, hi--) {
		int tmp = keep[lo];

		keep[lo] = keep[hi];
		keep[hi] = tmp;
	}
	return m;
}

static struct gt_cct_node *insert_frames(struct gt_thread *t, const struct gt_frame *f,
					 const int *keep, int m, int exact_leaf,
					 const struct gt_stitch *st, int signal_ctx)
{
	struct gt_cct_node *node = st->base ? st->base : t->cct.root;

	for (int j = 0; j < m && node; j++) {
		int i = keep[j];
		/* A return address points after its call: ip - 1 is in the call,
		 * and on the call's line. */
		uintptr_t pc = (i == 0 && exact_leaf) ? f[i].ip : f[i].ip - 1;

		node = gt_cct__child(&t->cct, node, GT_NODE_FRAME, pc, signal_ctx);
	}
	return node;
}

struct gt_cct_node *gt_unwind__frames_context(struct gt_thread *t, const struct gt_frame *f,
					      int n, int exact_leaf, const struct gt_stitch *st,
					      int signal_ctx)
{
	int keep[MAX_FRAMES];
	int call_site, m;

	m = select_frames(f, n, 0, st, keep, &call_site);
	return insert_frames(t, f, keep, m, exact_leaf, st, signal_ctx);
}

static uint32_t memo_hash(uintptr_t ra, uintptr_t key, const struct gt_cct_node *base)
{
	uint64_t x = ra * 0x9e3779b97f4a7c15ull ^ key * 0xc2b2ae3d27d4eb4full ^ (uintptr_t)base;

	x ^= x >> 29;
	return (uint32_t)x & (MEMO_ENTRIES - 1);
}

struct gt_cct_node *gt_unwind__memo_lookup(struct gt_thread *t, uintptr_t ra, uintptr_t key,
					   struct gt_cct_node *base)
{
#if defined(__x86_64__)
	struct gt_unwind_memo *memo = t->memo;
	struct memo_entry *e;

	if (!memo || !ra)
		return NULL;
	e = &memo->e[memo_hash(ra, key, base)];
	if (e->ra != ra || e->key != key || e->base != base || !e->node)
		goto out_miss;
	for (uint32_t i = 0; i < e->nslots; i++)
		if (*(const uintptr_t *)e->slots[i].addr != e->slots[i].val)
			goto out_miss;
	memo->stats.memo_hits++;
	return e->node;
out_miss:
	memo->stats.memo_misses++;
#else
	(void)t, (void)ra, (void)key, (void)base;
#endif
	return NULL;
}

struct gt_cct_node *gt_unwind__context(struct gt_thread *t, uintptr_t ra, uintptr_t key,
				       const struct gt_stitch *st)
{
	struct gt_frame f[MAX_FRAMES];
	int keep[MAX_FRAMES];
	int n, m, call_site;
	int max = (int)gt_config.max_depth;
	struct gt_cct_node *node;

	if (max <= 0 || max > MAX_FRAMES)
		max = MAX_FRAMES;
	if (gt_modmap__stale())
		gt_modmap__refresh();
	n = gt_unwind__raw(NULL, f, max);
	if (t->memo)
		t->memo->stats.full_unwinds++;
	m = select_frames(f, n, ra, st, keep, &call_site);
	node = insert_frames(t, f, keep, m, 0, st, 0);
#if defined(__x86_64__)
	if (node && ra && t->memo && call_site >= 0 && f[call_site].ip == ra && m <= MEMO_SLOTS + 1 &&
	    n < max) {
		struct memo_entry *e = &t->memo->e[memo_hash(ra, key, st->base)];

		/* keep[m-1] is the call site; the callers above it are keep[0..m-1). */
		e->nslots = 0;
		for (int j = m - 2; j >= 0; j--) {
			const struct gt_frame *fr = &f[keep[j]];

			e->slots[e->nslots].addr = fr->sp - sizeof(uintptr_t);
			e->slots[e->nslots].val = fr->ip;
			e->nslots++;
		}
		e->ra = ra;
		e->key = key;
		e->base = st->base;
		e->node = node;
	}
#endif
	return node;
}
