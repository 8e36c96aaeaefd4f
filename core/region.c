/* SPDX-License-Identifier: MIT */
#include "core/region.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/modmap.h"
#include "core/sample.h"
#include "core/thread.h"

#define REGION_FRAMES 512
/* Openers remembered per thread: sets of ways, a set chosen by the layer's
 * call (every call site of one layer function at one stack depth shares
 * it: LULESH has 26 MPI_Wait calls in one function), each set allocated at
 * its first use; the most frames of a stack remembered. */
#define OPENER_SETS 16
#define OPENER_WAYS 32
#define OPENER_FRAMES 32

struct region {
	struct gt_cct_node *node;
	/* The programming model's base when it opened (st->base of
	 * gt_sample__stitch_model): the task it belongs to. */
	const struct gt_cct_node *outer;
	uintptr_t cut_ip, cut_sp;
	uint32_t cut_depth;
	uint8_t owner, flags;
	uint64_t id;
	uint64_t start;
};

/*
 * A region opener seen before: the context of its call path, found again
 * without an unwind (a few microseconds a call, most of an MPI call's cost
 * under the tool). Keyed by the layer's call of gt_region__open (its return
 * address and this function's frame address: the same for the same call
 * path at the same stack position) and the stitch the call applies; valid
 * when every return address of the stack above this function's frame is
 * still where the unwind found it, read from the live stack: the same call
 * path, so the unwind would find the same frames. The memo of core/unwind.c
 * checks its entries alike.
 */
struct opener {
	uintptr_t ra, key;
	struct gt_stitch st;
	struct gt_cct_node *node;
	uintptr_t cut_ip, cut_sp;
	uint32_t cut_depth, n;
	struct {
		uintptr_t at, ip; /* the return address ip is stored at `at` */
	} slot[OPENER_FRAMES];
};

/*
 * One thread's open regions. Written by the owner in normal context, inside
 * gt_thread__enter (its sampling handler then leaves the thread alone), read
 * by the owner's handler outside: same-thread, so the compiler fences of
 * enter/leave order them and no atomic is needed.
 */
struct gt_regions {
	unsigned n;
	unsigned calls; /* open GT_REGION_CALL regions */
	uint64_t refused;
	struct region r[GT_REGION_DEPTH];
	struct opener *openers[OPENER_SETS]; /* OPENER_WAYS each; NULL until used */
	uint8_t opener_next[OPENER_SETS]; /* each set's way to replace next */
	uint64_t opener_hits, opener_misses;
	/* Interned labels: FNV-1a hash -> the copy (a chain on collision is
	 * not kept: an equal hash of another string gets no map entry). */
	struct gt_hmap names;
};

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* Regions left open at a thread's end are closed there: their time counts
 * to the end of the thread. */
static void region__thread_exit(struct gt_thread *t)
{
	struct gt_regions *rs = t->regions;
	uint64_t now;

	if (!rs || !rs->n)
		return;
	now = gt_clock__now();
	gt_thread__enter(t);
	while (rs->n) {
		struct region *r = &rs->r[--rs->n];

		gt_cct__add(&t->cct, r->node, GT_M_REGION_COUNT, 1, 0);
		gt_cct__add(&t->cct, r->node, GT_M_REGION_TIME, now - r->start, 0);
	}
	rs->calls = 0;
	gt_thread__leave(t);
}

static void region__register(void)
{
	gt_thread__on_exit(region__thread_exit);
}

static struct gt_regions *regions_of(struct gt_thread *t)
{
	struct gt_regions *rs = t->regions;

	if (rs)
		return rs;
	pthread_once(&exit_once, region__register);
	rs = gt_arena__alloc(&t->arena, sizeof(*rs));
	if (!rs)
		return NULL;
	memset(rs, 0, sizeof(*rs));
	atomic_signal_fence(memory_order_release); /* zeroed before the handler can see it */
	t->regions = rs;
	return rs;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h ? h : 1;
}

const char *gt_region__intern(struct gt_thread *t, const char *s)
{
	struct gt_regions *rs = regions_of(t);
	uint64_t h = fnv1a(s), *v;
	size_t len = strlen(s) + 1;
	char *copy;

	if (!rs)
		return NULL;
	v = gt_hmap__get(&rs->names, h);
	if (v && !strcmp((const char *)(uintptr_t)*v, s))
		return (const char *)(uintptr_t)*v;
	copy = gt_arena__alloc(&t->arena, len);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	if (!v)
		gt_hmap__put(&rs->names, h, (uint64_t)(uintptr_t)copy);
	return copy;
}

/*
 * The context of the user function that called the layer (its frame at the
 * call, under @st) and where that function sits: its caller's frame, for
 * the cut. f[0..n) from gt_unwind__ips: the tool's frames first, then the
 * layer's runtime (a Kokkos library, an NVTX wrapper), then the program.
 */
/* The set of (ra, key): OPENER_WAYS entries. NULL when out of memory. */
static struct opener *opener__set(struct gt_regions *rs, uintptr_t ra, uintptr_t key, unsigned *set)
{
	uint64_t h = (ra ^ (key << 7)) * 0x9e3779b97f4a7c15ull;

	*set = (unsigned)((h >> 40) % OPENER_SETS);
	if (!rs->openers[*set])
		rs->openers[*set] = calloc(OPENER_WAYS, sizeof(struct opener));
	return rs->openers[*set];
}

/* Field by field: a struct copy need not copy the padding. */
static int stitch__same(const struct gt_stitch *a, const struct gt_stitch *b)
{
	return a->base == b->base && a->boundary == b->boundary && a->runtime == b->runtime && a->cut == b->cut &&
	       a->cut_depth == b->cut_depth && a->cut_ip == b->cut_ip && a->cut_sp == b->cut_sp;
}

static struct gt_cct_node *opener__lookup(struct gt_regions *rs, uintptr_t ra, uintptr_t key,
					  const struct gt_stitch *st, struct region *r)
{
	unsigned set;
	struct opener *o = opener__set(rs, ra, key, &set);

	for (unsigned w = 0; o && w < OPENER_WAYS; w++, o++) {
		uint32_t i;

		if (!o->node || o->ra != ra || o->key != key || !stitch__same(&o->st, st))
			continue;
		/* Leaf first: the layer's frames match, the program's call
		 * site tells call sites apart at once. */
		for (i = 0; i < o->n && *(const uintptr_t *)o->slot[i].at == o->slot[i].ip; i++)
			;
		if (i < o->n)
			continue;
		r->cut_ip = o->cut_ip;
		r->cut_sp = o->cut_sp;
		r->cut_depth = o->cut_depth;
		return o->node;
	}
	return NULL;
}

/* Remembers an unwind's answer: f[0..n), the whole stack (n < the limit),
 * every frame above key with its stack pointer. */
static void opener__put(struct gt_regions *rs, uintptr_t ra, uintptr_t key, const struct gt_stitch *st,
			const struct gt_frame *f, int n, const struct region *r, struct gt_cct_node *node)
{
	unsigned set;
	struct opener *o = opener__set(rs, ra, key, &set);
	uint32_t m = 0;

	if (!o)
		return;
	o += rs->opener_next[set]++ % OPENER_WAYS;
	o->node = NULL;
	for (int i = 0; i < n; i++) {
		if (f[i].sp <= key)
			continue; /* this function's and the unwinder's own frames */
		if (m == OPENER_FRAMES)
			return;
		o->slot[m].at = f[i].sp - sizeof(uintptr_t);
		o->slot[m].ip = f[i].ip;
		m++;
	}
	if (!m)
		return;
	o->n = m;
	o->ra = ra;
	o->key = key;
	o->st = *st;
	o->cut_ip = r->cut_ip;
	o->cut_sp = r->cut_sp;
	o->cut_depth = r->cut_depth;
	o->node = node;
}

static struct gt_cct_node *opener_context(struct gt_thread *t, const struct gt_stitch *st,
					  struct region *r, uintptr_t ra, uintptr_t key)
{
	struct gt_frame f[REGION_FRAMES];
	struct gt_regions *rs = t->regions;
	struct gt_cct_node *node;
	int n, k, max = (int)gt_config.max_depth + 64, whole = 1;

	if (max <= 0 || max > REGION_FRAMES)
		max = REGION_FRAMES;
	if ((node = opener__lookup(rs, ra, key, st, r))) {
		rs->opener_hits++;
		return node;
	}
	rs->opener_misses++;
	if (gt_modmap__stale())
		gt_modmap__refresh();
	n = gt_unwind__ips(NULL, f, max);
	for (k = 0; k < n && whole; k++)
		whole = f[k].sp != 0;
	for (k = 0; k < n; k++)
		if (!gt_unwind__elided(f[k].ip) && gt_modmap__class(f[k].ip) == GT_MOD_USER)
			break;
	r->cut_depth = 0;
	if (k >= n)
		return st->base ? st->base : t->cct.root;
	/* A stack cut at the depth limit has no known root: no frame can be
	 * told below the opener later, and the region keeps all its time. */
	if (k + 1 < n && n < max) {
		r->cut_ip = f[k + 1].ip;
		r->cut_sp = f[k + 1].sp;
		r->cut_depth = (uint32_t)(n - (k + 1));
	}
	node = gt_unwind__frames_context(t, f + k, n - k, 0, st, 0);
	if (node && whole && n < max)
		opener__put(rs, ra, key, st, f, n, r, node);
	return node;
}

struct gt_cct_node *gt_region__open(struct gt_thread *t, enum gt_region_owner owner,
				    const char *label, uint64_t id, unsigned flags)
{
	struct gt_regions *rs = regions_of(t);
	struct gt_stitch st;
	struct region r = { .owner = (uint8_t)owner, .flags = (uint8_t)flags, .id = id };
	struct gt_cct_node *node;
	const char *name;

	if (!rs)
		return NULL;
	if (rs->n == GT_REGION_DEPTH) {
		if (!rs->refused++)
			gt_log(GT_LOG_WARN, "region",
			       "more than %d regions open on a thread: the deeper ones are not measured",
			       GT_REGION_DEPTH);
		return NULL;
	}
	gt_sample__stitch_model(t, &st);
	r.outer = st.base;
	gt_region__stitch(t, &st);
	node = opener_context(t, &st, &r, (uintptr_t)__builtin_return_address(0),
			      (uintptr_t)__builtin_frame_address(0));
	name = gt_region__intern(t, label);
	if (!node || !name)
		return NULL;
	node = gt_cct__child(&t->cct, node, GT_NODE_NAME, (uint64_t)(uintptr_t)name, 0);
	if (!node)
		return NULL;
	r.node = node;
	r.start = gt_clock__now();
	rs->r[rs->n] = r;
	atomic_signal_fence(memory_order_release); /* the entry before the count */
	rs->n++;
	if (flags & GT_REGION_CALL)
		rs->calls++;
	return node;
}

struct gt_cct_node *gt_region__close(struct gt_thread *t, enum gt_region_owner owner,
				     uint64_t id, uint64_t *ns)
{
	struct gt_regions *rs = t->regions;
	struct gt_cct_node *node;
	uint64_t len;
	unsigned i;

	if (!rs)
		return NULL;
	for (i = rs->n; i-- > 0;)
		if (rs->r[i].owner == owner && (!id || rs->r[i].id == id))
			break;
	if (i == (unsigned)-1)
		return NULL;
	node = rs->r[i].node;
	len = gt_clock__now() - rs->r[i].start;
	if (rs->r[i].flags & GT_REGION_CALL)
		rs->calls--;
	/* Closed out of order (start/end ranges may be): the ones above move
	 * down, the handler sees the stack whole before and after. */
	rs->n--;
	atomic_signal_fence(memory_order_release);
	memmove(&rs->r[i], &rs->r[i + 1], (rs->n - i) * sizeof(rs->r[0]));
	gt_cct__add(&t->cct, node, GT_M_REGION_COUNT, 1, 0);
	gt_cct__add(&t->cct, node, GT_M_REGION_TIME, len, 0);
	if (ns)
		*ns = len;
	return node;
}

void gt_region__stitch(const struct gt_thread *t, struct gt_stitch *st)
{
	const struct gt_regions *rs = t ? t->regions : NULL;

	/* The model's base with no boundary is a state of the runtime (idle,
	 * waiting at a barrier): no region of the program's code holds it. */
	if (!rs || (st->base && !st->boundary && !st->cut))
		return;
	for (unsigned i = rs->n; i-- > 0;) {
		const struct region *r = &rs->r[i];

		if (r->outer != st->base)
			continue;
		st->base = r->node;
		st->boundary = 0;
		st->runtime = GT_PH_THREAD_ROOT;
		st->cut = 1;
		st->cut_ip = r->cut_ip;
		st->cut_sp = r->cut_sp;
		st->cut_depth = r->cut_depth;
		return;
	}
}

void gt_region__stats(const struct gt_thread *t, uint64_t *hits, uint64_t *misses)
{
	const struct gt_regions *rs = t->regions;

	*hits = rs ? rs->opener_hits : 0;
	*misses = rs ? rs->opener_misses : 0;
}

int gt_region__in_call(const struct gt_thread *t)
{
	return t && t->regions && t->regions->calls;
}
