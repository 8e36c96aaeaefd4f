/* SPDX-License-Identifier: MIT */
#include "core/region.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/hash.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/modmap.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"

#define REGION_FRAMES 512
#define CUT_SETS 64 /* a power of two */
#define CUT_WAYS 4

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
	/*
	 * Where the openers of regions opened at a known call site sit: the
	 * cut of the context the unwind memo gave for that site at that stack
	 * position. A memo hit means the same call chain at the same addresses
	 * (its return-address slots checked), so the cut is the same.
	 */
	struct {
		const struct gt_cct_node *node;
		uintptr_t key;
		uintptr_t cut_ip, cut_sp;
		uint32_t cut_depth;
	} cuts[CUT_SETS][CUT_WAYS];
	uint8_t cut_next[CUT_SETS]; /* each set's way to replace next */
	uint64_t opener_hits, opener_misses; /* opens at a known call site, and not */
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

/* The tool stops (at exit) on a thread that is still running: its open
 * regions (a range pushed and never popped, a kernel the program exited
 * in) are closed there, so that the profile counts them. Other threads'
 * trees are their own: theirs close at their end. */
static void region__stop(void)
{
	struct gt_thread *t = gt_thread__peek();

	if (t)
		region__thread_exit(t);
}

static void region__register(void)
{
	gt_thread__on_exit(region__thread_exit);
	gt_tool__on_stop(region__stop);
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

const char *gt_region__intern(struct gt_thread *t, const char *s)
{
	struct gt_regions *rs = regions_of(t);
	uint64_t h = gt_hash__str(s) | 1, *v;
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
static struct gt_cct_node *opener_context(struct gt_thread *t, const struct gt_stitch *st,
					  struct region *r)
{
	struct gt_frame f[REGION_FRAMES];
	int n, k, max = (int)gt_config.max_depth + 64;

	if (max <= 0 || max > REGION_FRAMES)
		max = REGION_FRAMES;
	if (gt_modmap__stale())
		gt_modmap__refresh();
	n = gt_unwind__ips(f, max);
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
	return gt_unwind__frames_context(t, f + k, n - k, 0, st, 0);
}

static unsigned cut_set(const struct gt_cct_node *node, uintptr_t key)
{
	uint64_t x = ((uintptr_t)node ^ (uint64_t)key << 17) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(x >> 58) & (CUT_SETS - 1);
}

/* The context of the opener at a call site seen before, with its cut; NULL
 * when the memo or the cut cache misses. */
static struct gt_cct_node *opener_known(struct gt_thread *t, struct gt_regions *rs,
					const struct gt_stitch *st, uintptr_t ra, uintptr_t key,
					struct region *r)
{
	struct gt_cct_node *node = gt_unwind__memo_lookup(t, ra, key, st);
	unsigned set;

	if (!node)
		return NULL;
	set = cut_set(node, key);
	for (unsigned w = 0; w < CUT_WAYS; w++) {
		if (rs->cuts[set][w].node != node || rs->cuts[set][w].key != key)
			continue;
		r->cut_ip = rs->cuts[set][w].cut_ip;
		r->cut_sp = rs->cuts[set][w].cut_sp;
		r->cut_depth = rs->cuts[set][w].cut_depth;
		return node;
	}
	return NULL;
}

/* Remembers the cut of a site: the memo's answer for (ra, key) must be the
 * context the full unwind found (gt_unwind__context puts it in the memo). */
static void opener_remember(struct gt_thread *t, struct gt_regions *rs, const struct gt_stitch *st,
			    uintptr_t ra, uintptr_t key, struct gt_cct_node *node, const struct region *r)
{
	unsigned set, w;

	if (gt_unwind__context(t, ra, key, st) != node)
		return;
	set = cut_set(node, key);
	w = rs->cut_next[set]++ % CUT_WAYS;
	rs->cuts[set][w].node = node;
	rs->cuts[set][w].key = key;
	rs->cuts[set][w].cut_ip = r->cut_ip;
	rs->cuts[set][w].cut_sp = r->cut_sp;
	rs->cuts[set][w].cut_depth = r->cut_depth;
}

struct gt_cct_node *gt_region__open(struct gt_thread *t, enum gt_region_owner owner,
				       const char *label, uint64_t id, unsigned flags, uintptr_t ra,
				       uintptr_t key)
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
	node = ra ? opener_known(t, rs, &st, ra, key, &r) : NULL;
	if (ra)
		*(node ? &rs->opener_hits : &rs->opener_misses) += 1;
	if (!node) {
		node = opener_context(t, &st, &r);
		if (ra && node)
			opener_remember(t, rs, &st, ra, key, node, &r);
	}
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
	return gt_region__close_at(t, owner, id, 0, ns);
}

struct gt_cct_node *gt_region__close_at(struct gt_thread *t, enum gt_region_owner owner,
					uint64_t id, uint64_t end, uint64_t *ns)
{
	struct gt_regions *rs = t->regions;
	struct gt_cct_node *node;
	uint64_t len;
	unsigned i;

	if (!rs)
		return NULL;
	/* id 0 closes the innermost region opened with id 0 (a push/pop
	 * pair), never one opened with an id of its own: a start/end range or
	 * a kernel still open inside it belongs to its own close. */
	for (i = rs->n; i-- > 0;)
		if (rs->r[i].owner == owner && rs->r[i].id == id)
			break;
	if (i == (unsigned)-1)
		return NULL;
	node = rs->r[i].node;
	if (!end)
		end = gt_clock__now();
	len = end > rs->r[i].start ? end - rs->r[i].start : 0;
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
