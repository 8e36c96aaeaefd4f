/* SPDX-License-Identifier: MIT */
#define UNW_LOCAL_ONLY
#include "core/unwind.h"
#include "core/unwind-memo.h"

#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <ucontext.h>
#include <unwind.h>

#include "core/config.h"
#include "core/modmap.h"
#include "core/thread.h"

#define MAX_FRAMES 512
#define MEMO_MIN_CAP 64u        /* entries, a power of two */
#define MEMO_MAX_CAP (1u << 20) /* beyond, variants are replaced in place */
#define MEMO_VARIANTS 4         /* entries per (ra, key, base) */

/*
 * The memo remembers, per (ra, base, depth), the node of a context and the
 * return-address slots of its user frames: the call site's own slot and
 * those of its callers up to the root (or to the stitch boundary). A hit
 * requires every slot to still hold its return address: the call chain is
 * then the same, and the context costs a hash probe and a few loads instead
 * of an unwind. x86-64 only (a frame's return address is at its callee's
 * canonical frame address - 8); elsewhere every lookup misses.
 *
 * depth pins where the calling handler's frame (key) is: for a stitched
 * context, its distance below the boundary (the outlined body's entry), so
 * that a task body run deeper in the stack, inside another task's wait,
 * finds the same entry; otherwise key itself. Slots are kept as offsets
 * from key, so they lie between key and the boundary, or at the very
 * addresses of the first unwind: always in the live stack.
 *
 * One (ra, base, depth) can stand for several contexts: the same construct
 * reached through other callers at the same depth. Up to MEMO_VARIANTS of
 * them live side by side in the table, so alternating callers do not evict
 * each other. The table is an open-addressed hash (linear probing, entries
 * never removed) that doubles at half load up to MEMO_MAX_CAP: its size
 * follows the program's number of contexts, not a fixed guess.
 *
 * A context's frames under one base are its frames under any other: the
 * same slots, the same return addresses, inserted under the other base.
 * So each unwind under a base also leaves a shape, an entry of the frames
 * alone (base MEMO_SHAPE, which no node is), and a lookup that misses
 * under a new base makes its context from a shape whose slots hold
 * (memo__derive), without an unwind. A recursive task tree reaches one
 * construct under as many bases as it has contexts (one per path from the
 * root, 2^levels for a binary tree), all with the frames of a few shapes.
 *
 * Owned by one thread, used only in normal context (not by the sampling
 * handler), so nothing here is atomic.
 */
/* The base of shapes: an address that is no node's. */
static const char memo_shape_base;
#define MEMO_SHAPE ((const struct gt_cct_node *)(const void *)&memo_shape_base)

static uintptr_t entry_point;

/*
 * Normal-context unwinds that need each frame's stack address (memo slots,
 * stitch boundaries) go through GCC's unwinder in libgcc_s, the one C++
 * exceptions use: it finds unwind tables through the loader's
 * _dl_find_object, without a system call or a lock. libunwind's validated
 * step, as distributions build it (no per-thread cache), takes a global
 * lock and masks signals twice per frame, about 1 us a frame. libunwind
 * stays for signal handlers (unw_backtrace) and where libgcc_s is missing.
 */
static __typeof__(&_Unwind_Backtrace) gcc_backtrace;
static __typeof__(&_Unwind_GetIP) gcc_get_ip;
static __typeof__(&_Unwind_GetCFA) gcc_get_cfa;

static void gcc_unwinder__init(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		h = dlopen("libgcc_s.so.1", RTLD_NOW);
	if (!h)
		return;
	gcc_get_ip = (__typeof__(gcc_get_ip))dlsym(h, "_Unwind_GetIP");
	gcc_get_cfa = (__typeof__(gcc_get_cfa))dlsym(h, "_Unwind_GetCFA");
	if (gcc_get_ip && gcc_get_cfa)
		gcc_backtrace = (__typeof__(gcc_backtrace))dlsym(h, "_Unwind_Backtrace");
}

/*
 * libunwind's per-thread frame cache is dynamic thread-local storage
 * (gt_thread__tls_touch says why it is touched first only after a
 * reservation). Where that fails, the thread never calls unw_backtrace.
 * unw_tls_size: written once at init, before any thread is prepared.
 */
static size_t unw_tls_size;
/* 1 once the calling thread's libunwind block exists. */
static __thread int unw_tls_ready;

int gt_unwind__init(void)
{
	entry_point = (uintptr_t)getauxval(AT_ENTRY);
	if (!gcc_backtrace)
		gcc_unwinder__init();
	unw_tls_size = gt_thread__tls_size((const void *)(uintptr_t)&unw_backtrace);
	/* No register-state cache. unw_backtrace in a signal handler keeps
	 * its own per-thread cache of frames; only an address new to the
	 * thread takes the full step, which with a shared cache (the global
	 * cache is what PER_THREAD gives where libunwind is built without
	 * thread-local storage, as Debian's is) would hold that cache's lock
	 * while dl_iterate_phdr waits for the loader's: a thread sampled
	 * inside dlclose, which holds the loader's lock, then waits for the
	 * cache's, and both hang (seen with wall-clock samples under mpirun). */
	return unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE) ? -1 : 0;
}

struct gcc_walk {
	struct gt_frame *out;
	int n, max;
	uintptr_t boundary;
	/* A signal's walk (pc: the interrupted instruction) starts in its
	 * handler: frames before pc's are passed over. at_pc: pc was met. */
	uintptr_t pc;
	int at_pc;
	/* Ends after the first frame that is neither a runtime's nor the
	 * system's (gt_unwind__sample_frames). */
	int to_own;
};

static _Unwind_Reason_Code gcc_walk__frame(struct _Unwind_Context *ctx, void *arg)
{
	struct gcc_walk *w = arg;
	uintptr_t ip = (uintptr_t)gcc_get_ip(ctx);
	enum gt_module_class c;

	if (!ip)
		return _URC_END_OF_STACK;
	if (w->pc && !w->at_pc) {
		if (ip != w->pc)
			return _URC_NO_REASON;
		w->at_pc = 1;
	}
	/* The context's "CFA" is the frame's stack pointer at its call: its
	 * callee's canonical frame address. */
	w->out[w->n].ip = ip;
	w->out[w->n].sp = (uintptr_t)gcc_get_cfa(ctx);
	w->n++;
	if (w->n >= w->max || (w->boundary && w->out[w->n - 1].sp >= w->boundary))
		return _URC_END_OF_STACK;
	if (w->to_own) {
		c = gt_modmap__class(ip);
		if (c != GT_MOD_SYSTEM && c != GT_MOD_RUNTIME)
			return _URC_END_OF_STACK;
	}
	return _URC_NO_REASON;
}

/* The calling thread's frames (with stack pointers) up to the first one at
 * or above boundary (0: all of them). Normal context only. */
static int unwind__frames(struct gt_frame *out, int max, uintptr_t boundary)
{
	struct gcc_walk w = { .out = out, .max = max, .boundary = boundary };

	if (!gcc_backtrace)
		return gt_unwind__raw(NULL, out, max);
	gcc_backtrace(gcc_walk__frame, &w);
	return w.n;
}

/* An empty table of cap entries, each on a line of its own. */
static struct gt_memo_entry *memo__table(uint32_t cap)
{
	struct gt_memo_entry *e = aligned_alloc(64, cap * sizeof(*e));

	if (e)
		memset(e, 0, cap * sizeof(*e));
	return e;
}

int gt_unwind__memo_rearm(struct gt_unwind_memo *memo)
{
	if (memo->e)
		return 0;
	memo->e = memo__table(MEMO_MIN_CAP);
	if (!memo->e)
		return -ENOMEM;
	memo->cap = MEMO_MIN_CAP;
	return 0;
}

struct gt_unwind_memo *gt_unwind__memo_new(void)
{
	struct gt_unwind_memo *memo = calloc(1, sizeof(*memo));

	if (memo && gt_unwind__memo_rearm(memo)) {
		free(memo);
		return NULL;
	}
	return memo;
}

void gt_unwind__memo_release(struct gt_unwind_memo *memo)
{
	if (!memo)
		return;
	for (uint32_t i = 0; i < memo->cap; i++)
		free(memo->e[i].slots);
	free(memo->e);
	memo->e = NULL;
	memo->cap = 0;
	memo->used = 0;
	memo->last = memo->pred = 0;
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

static void unwind__touch_tls(void)
{
	void *ips[4];

	unw_backtrace(ips, 4);
}

void gt_unwind__thread_init(void)
{
	if (unw_tls_ready)
		return;
	if (!gt_thread__tls_touch(unw_tls_size, unwind__touch_tls))
		unw_tls_ready = 1;
}

int gt_unwind__ips(struct gt_frame *f, int max)
{
	void *ips[MAX_FRAMES];
	int n;

	if (max > MAX_FRAMES)
		max = MAX_FRAMES;
	/* GCC's unwinder needs no lock and no system call (see
	 * unwind__frames); a runtime may be holding its own lock around the
	 * callback that asked. */
	if (gcc_backtrace)
		return unwind__frames(f, max, 0);
	if (!unw_tls_ready) {
		/* Out of memory when the thread started
		 * (gt_unwind__thread_init): the validated step, which needs no
		 * thread-local storage. */
		n = gt_unwind__raw(NULL, f, max);
		for (int i = 0; i < n; i++)
			f[i].sp = 0;
		return n;
	}
	n = unw_backtrace(ips, max);
	for (int i = 0; i < n; i++)
		f[i] = (struct gt_frame){ .ip = (uintptr_t)ips[i], .sp = 0 };
	return n;
}

int gt_unwind__sample_frames(void *uc, struct gt_frame *f, int max, const struct gt_stitch *st)
{
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	void *ips[MAX_FRAMES];
	int n, k = 0;

	if (max > MAX_FRAMES)
		max = MAX_FRAMES;
	/* Under a node that takes no frames (a wait, idle, the fork), a
	 * sample that interrupted a runtime's own code (libomp spinning at a
	 * barrier or waiting for work) is the node's: the walk would only look
	 * for the tool above it, and the tool calls a runtime only inside its
	 * bracketed sections (gt_thread__enter), where the handler takes no
	 * context. Most samples of a team that waits at its barriers. */
	if (st->base && !st->cut && !st->boundary && max > 0 && gt_modmap__class(pc) == GT_MOD_RUNTIME) {
		f[0].ip = pc;
		f[0].sp = 0;
		return 1;
	}
	if (gcc_backtrace) {
		/* GCC's unwinder crosses the signal frame and takes no lock.
		 * libunwind's unw_backtrace falls back to its full step
		 * wherever its fast trace stops (frames that realign the
		 * stack, a thread blocked in the kernel), which without a
		 * cache reads every module's tables (~0.1 ms a sample under
		 * mpirun) and with one holds a lock the loader can wait on
		 * (gt_unwind__init). A frame costs about 1 µs here (tables
		 * cold between samples): the walk ends where the frames stop
		 * mattering. Under a task's node they end at its exit frame,
		 * where select_frames cuts; under a node that takes no frames
		 * (a wait, idle), at the first frame that says whether the
		 * sample is the tool's (sample__context). An open region's
		 * cut counts frames from the root, which needs them all. */
		struct gcc_walk w = { .out = f, .max = max, .pc = pc };

		if (st->base && !st->cut) {
			w.boundary = st->boundary;
			w.to_own = !st->boundary;
		}
		gcc_backtrace(gcc_walk__frame, &w);
		if (w.n) {
			/* Without the boundary, the frames' stack pointers
			 * would end the context at it; the first runtime frame
			 * above the user's does (select_frames). */
			if (!w.boundary)
				for (int i = 0; i < w.n; i++)
					f[i].sp = 0;
			return w.n;
		}
	}
	/* Out of memory when the thread started (gt_unwind__thread_init): a
	 * signal handler goes without frames. */
	if (!unw_tls_ready)
		return 0;
	n = unw_backtrace(ips, max);
	/* Drop the handler's frames and the signal trampoline: start at the
	 * interrupted instruction. */
	while (k < n && (uintptr_t)ips[k] != pc)
		k++;
	if (k == n) {
		/* The fast path did not cross the signal frame. */
		n = gt_unwind__raw(uc, f, max);
		k = 0;
	} else {
		for (int i = k; i < n; i++)
			f[i - k].ip = (uintptr_t)ips[i];
		n -= k;
	}
	for (int i = 0; i < n; i++)
		f[i].sp = 0;
	return n;
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
	n = gt_unwind__ips(f, max);
	return gt_unwind__frames_context(t, f, n, 0, st, 0);
}

/* Each slot written once by a backend at its start (release), read by every
 * unwind including signal handlers (acquire): a slot reads NULL until its
 * hook is in. n_elide_hooks only hands out slots. */
static int (*_Atomic elide_hooks[GT_UNWIND_ELIDE_HOOKS])(uintptr_t pc);
static atomic_uint n_elide_hooks;

void gt_unwind__set_elide_hook(int (*covers)(uintptr_t pc))
{
	unsigned n = atomic_load_explicit(&n_elide_hooks, memory_order_relaxed), slot;

	for (unsigned i = 0; i < n && i < GT_UNWIND_ELIDE_HOOKS; i++)
		if (atomic_load_explicit(&elide_hooks[i], memory_order_acquire) == covers)
			return;
	/* relaxed: the slot index only; the hook's release store below is
	 * what readers pair with. */
	slot = atomic_fetch_add_explicit(&n_elide_hooks, 1, memory_order_relaxed);
	if (slot < GT_UNWIND_ELIDE_HOOKS)
		atomic_store_explicit(&elide_hooks[slot], covers, memory_order_release);
}

static int elided_class(enum gt_module_class c)
{
	return c == GT_MOD_TOOL || c == GT_MOD_RUNTIME;
}

/* A frame of the tool or of a runtime: left out of contexts. */
static int elided(uintptr_t pc)
{
	if (elided_class(gt_modmap__class(pc)))
		return 1;
	for (unsigned i = 0; i < GT_UNWIND_ELIDE_HOOKS; i++) {
		/* Pairs with the release store of gt_unwind__set_elide_hook. */
		int (*hook)(uintptr_t) = atomic_load_explicit(&elide_hooks[i], memory_order_acquire);

		if (!hook)
			break;
		if (hook(pc))
			return 1;
	}
	return 0;
}

int gt_unwind__elided(uintptr_t pc)
{
	return elided(pc);
}

/*
 * How many frames of f[0..n) (leaf first) lie below an open region's opener
 * (core/region.h): those under the frame at cut_depth from the root whose
 * return address is cut_ip, less the opener's own frame just below it.
 * Unwinders may differ by a frame at the root: the frame is looked for two
 * frames either side. Not found (the opener has returned with the region
 * open): the frames deeper than the opener's caller.
 */
static int cut_limit(const struct gt_frame *f, int n, const struct gt_stitch *st)
{
	static const int near[] = { 0, -1, 1, -2, 2 };
	int at = n - (int)st->cut_depth;

	if (!st->cut_depth)
		return 0;
	for (unsigned k = 0; k < sizeof(near) / sizeof(near[0]); k++) {
		int j = at + near[k];

		if (j < 1 || j >= n || f[j].ip != st->cut_ip)
			continue;
		if (f[j].sp && st->cut_sp && f[j].sp != st->cut_sp)
			continue;
		return j - 1;
	}
	return at > 0 ? at : 0;
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
	if (st->base && !st->boundary && !st->cut)
		return 0;
	if (st->cut)
		n = cut_limit(f, n, st);
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

static uint32_t memo_hash(uintptr_t ra, uintptr_t depth, const struct gt_cct_node *base)
{
	uint64_t x = ra * 0x9e3779b97f4a7c15ull ^ depth * 0xc2b2ae3d27d4eb4full ^ (uintptr_t)base;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint32_t)x;
}

#if defined(__x86_64__)
/* The hash walk of a lookup that no recent entry answered; out of line, so
 * that the recent entries' check saves no registers for it. */
static __attribute__((noinline)) struct gt_cct_node *memo__walk(struct gt_unwind_memo *memo, uintptr_t ra,
								 uintptr_t depth,
								 const struct gt_cct_node *base,
								 uintptr_t key)
{
	uint32_t mask = memo->cap - 1;

	for (uint32_t h = memo_hash(ra, depth, base) & mask; memo->e[h].node; h = (h + 1) & mask) {
		const struct gt_memo_entry *e = &memo->e[h];

		if (gt_memo__entry_is(e, ra, depth, base) && gt_memo__entry_valid(e, key)) {
			memo->stats.memo_hits++;
			gt_memo__answered_new(memo, h);
			return e->node;
		}
	}
	memo->stats.memo_misses++;
	return NULL;
}

#endif

struct gt_cct_node *gt_unwind__memo_lookup(struct gt_thread *t, uintptr_t ra, uintptr_t key,
					   const struct gt_stitch *st)
{
#if defined(__x86_64__)
	struct gt_unwind_memo *memo = t->memo;
	uintptr_t depth;
	struct gt_cct_node *node;

	if (!gt_memo__usable(memo, ra, key, st->boundary))
		return NULL;
	depth = gt_memo__depth(key, st->boundary);
	node = gt_memo__recent(memo, ra, depth, st->base, key);
	return node ? node : memo__walk(memo, ra, depth, st->base, key);
#else
	(void)t, (void)ra, (void)key, (void)st;
	return NULL;
#endif
}

#if defined(__x86_64__)
static struct gt_cct_node *memo__derive(struct gt_thread *t, struct gt_unwind_memo *memo, uintptr_t ra,
					uintptr_t depth, struct gt_cct_node *base, uintptr_t key);
#endif

/* gt_unwind__memo_context when the memo has no answer: an unwind. */
static __attribute__((noinline)) struct gt_cct_node *memo_context__unwind(struct gt_thread *t, uintptr_t ra,
									   uintptr_t key,
									   struct gt_cct_node *base,
									   uintptr_t boundary)
{
	struct gt_stitch st = { .base = base, .boundary = boundary };
	struct gt_cct_node *node = gt_unwind__context(t, ra, key, &st);

	return node ? node : t->cct.root;
}

struct gt_cct_node *gt_unwind__memo_context(struct gt_thread *t, uintptr_t ra, uintptr_t key,
					    struct gt_cct_node *base, uintptr_t boundary)
{
#if defined(__x86_64__)
	struct gt_unwind_memo *memo = t->memo;

	if (gt_memo__usable(memo, ra, key, boundary)) {
		uintptr_t depth = gt_memo__depth(key, boundary);
		struct gt_cct_node *node = gt_memo__recent(memo, ra, depth, base, key);

		if (!node)
			node = memo__walk(memo, ra, depth, base, key);
		if (!node && base)
			node = memo__derive(t, memo, ra, depth, base, key);
		if (node)
			return node;
	}
#endif
	return memo_context__unwind(t, ra, key, base, boundary);
}

#if defined(__x86_64__)
static int memo__grow(struct gt_unwind_memo *memo)
{
	uint32_t cap = memo->cap * 2, mask = cap - 1;
	struct gt_memo_entry *e = memo__table(cap);

	if (!e)
		return -1;
	/* Links are indices of the old table. */
	memo->last = memo->pred = 0;
	for (uint32_t i = 0; i < memo->cap; i++) {
		const struct gt_memo_entry *o = &memo->e[i];
		uint32_t h;

		if (!o->node)
			continue;
		for (h = memo_hash(o->ra, o->depth, o->base) & mask; e[h].node; h = (h + 1) & mask)
			;
		e[h] = *o;
		e[h].next = 0;
	}
	free(memo->e);
	memo->e = e;
	memo->cap = cap;
	return 0;
}

/* The entry to (re)write for (ra, key, base): an empty one while the key
 * has fewer than MEMO_VARIANTS variants and the table may grow; else one of
 * the key's variants, round robin. NULL only when memory ran out. */
static struct gt_memo_entry *memo__slot_for(struct gt_unwind_memo *memo, uintptr_t ra, uintptr_t depth,
					 const struct gt_cct_node *base)
{
	struct gt_memo_entry *variants[MEMO_VARIANTS];
	uint32_t mask, h, nv = 0;

	/* Half full at most while it may grow: linear probing's walks stay
	 * short (1.5 entries for a hit, 2.5 for a miss; at three quarters,
	 * 2.5 and 8.5). */
	if ((memo->used + 1) * 2 > memo->cap && memo->cap < MEMO_MAX_CAP)
		memo__grow(memo);
	mask = memo->cap - 1;
	for (h = memo_hash(ra, depth, base) & mask; memo->e[h].node; h = (h + 1) & mask) {
		if (gt_memo__entry_is(&memo->e[h], ra, depth, base) && nv < MEMO_VARIANTS)
			variants[nv++] = &memo->e[h];
	}
	if (nv < MEMO_VARIANTS && (memo->used + 1) * 4 <= memo->cap * 3) {
		memo->used++;
		return &memo->e[h];
	}
	if (!nv)
		return NULL; /* full at MEMO_MAX_CAP, and no variant to replace */
	return variants[memo->replace++ % nv];
}

/* The entry to write for (ra, depth, base), with room for n slots; NULL
 * when memory ran out. */
static struct gt_memo_entry *memo__entry_for(struct gt_unwind_memo *memo, uintptr_t ra, uintptr_t depth,
					  const struct gt_cct_node *base, uint32_t n)
{
	struct gt_memo_entry *e = memo__slot_for(memo, ra, depth, base);

	if (!e)
		return NULL;
	if (e->cap < n) {
		uint32_t cap = e->cap ? e->cap : 4;
		struct gt_memo_slot *slots;

		while (cap < n)
			cap *= 2;
		slots = realloc(e->slots, cap * sizeof(*slots));
		if (!slots) {
			/* Keep the entry in its probe chain, matching nothing. */
			e->nslots = 0;
			e->ra = 0;
			return NULL;
		}
		e->slots = slots;
		e->cap = (uint16_t)cap;
	}
	e->ra = ra;
	e->depth = depth;
	e->base = (struct gt_cct_node *)base;
	return e;
}

/* Remembers node as the context under base of the frames keep[0..m) (root
 * first; the last one is the call site) up to boundary, seen from the
 * handler frame at key. */
static void memo__put(struct gt_unwind_memo *memo, uintptr_t ra, uintptr_t key, uintptr_t boundary,
		      const struct gt_cct_node *base, struct gt_cct_node *node, const struct gt_frame *f,
		      const int *keep, int m)
{
	struct gt_memo_entry *e;

	for (int j = 0; j < m; j++)
		if (f[keep[j]].sp <= key)
			return; /* no stack address, or not above the handler */
	e = memo__entry_for(memo, ra, gt_memo__depth(key, boundary), base, (uint32_t)m);
	if (!e)
		return;
	/* The call site first: it differs most often between contexts. */
	e->nslots = 0;
	for (int j = m - 1; j >= 0; j--) {
		const struct gt_frame *fr = &f[keep[j]];

		e->slots[e->nslots].off = fr->sp - sizeof(uintptr_t) - key;
		e->slots[e->nslots].val = fr->ip;
		e->nslots++;
	}
	e->node = node;
	/* A shape answers no lookup of its own. */
	if (base != MEMO_SHAPE)
		gt_memo__answered(memo, (uint32_t)(e - memo->e));
}

/*
 * The context of (ra, depth) under base, which the memo does not hold, made
 * from a shape of the same frames (MEMO_SHAPE) whose slots hold on the live
 * stack: base's child frames, root first, as insert_frames makes them. Then
 * remembered under base. NULL: no shape fits.
 */
static __attribute__((noinline)) struct gt_cct_node *memo__derive(struct gt_thread *t,
								   struct gt_unwind_memo *memo,
								   uintptr_t ra, uintptr_t depth,
								   struct gt_cct_node *base, uintptr_t key)
{
	uint32_t mask = memo->cap - 1;

	for (uint32_t h = memo_hash(ra, depth, MEMO_SHAPE) & mask; memo->e[h].node; h = (h + 1) & mask) {
		const struct gt_memo_entry *e = &memo->e[h];
		/* The shape's slots stay where they are if the table grows. */
		const struct gt_memo_slot *slots = e->slots;
		uint32_t n = e->nslots;
		struct gt_cct_node *node = base;
		struct gt_memo_entry *d;

		if (!gt_memo__entry_is(e, ra, depth, MEMO_SHAPE) || !gt_memo__entry_valid(e, key))
			continue;
		for (uint32_t j = n; j-- > 0 && node;)
			node = gt_cct__child(&t->cct, node, GT_NODE_FRAME, slots[j].val - 1, 0);
		if (!node)
			return NULL;
		memo->stats.derived++;
		d = memo__entry_for(memo, ra, depth, base, n);
		if (d) {
			memcpy(d->slots, slots, n * sizeof(*slots));
			d->nslots = (uint16_t)n;
			d->node = node;
			gt_memo__answered(memo, (uint32_t)(d - memo->e));
		}
		return node;
	}
	return NULL;
}
#endif

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
	n = unwind__frames(f, max, st->boundary);
	if (t->memo)
		t->memo->stats.full_unwinds++;
	m = select_frames(f, n, ra, st, keep, &call_site);
	node = insert_frames(t, f, keep, m, 0, st, 0);
#if defined(__x86_64__)
	/* A context cut at max_depth is not a whole call chain: not kept. */
	if (node && ra && t->memo && t->memo->cap && n < max && (!st->boundary || st->boundary > key)) {
		if (m > 0) {
			memo__put(t->memo, ra, key, st->boundary, st->base, node, f, keep, m);
			/* A cut context's frames depend on the region's opener
			 * (cut_limit), not on the stack alone. */
			if (st->base && !st->cut)
				memo__put(t->memo, ra, key, st->boundary, MEMO_SHAPE, t->cct.root, f, keep, m);
		} else if (st->cut) {
			/* No user frame below a region's opener (a runtime's
			 * code, Kokkos' templates, between it and the event):
			 * the context is the region's node, as long as those
			 * frames are the same; they are what a hit checks. */
			for (int i = cut_limit(f, n, st); i-- > 0;)
				if (f[i].sp > key)
					keep[m++] = i;
			if (m > 0)
				memo__put(t->memo, ra, key, st->boundary, st->base, node, f, keep, m);
		}
	}
#endif
	return node;
}
