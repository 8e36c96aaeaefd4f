/* SPDX-License-Identifier: MIT */
/*
 * The unwinder's per-thread memo of call paths (core/unwind.c), whose
 * recent entries are checked inline by the runtimes' hottest callbacks
 * (gt_memo__recent): a construct met again, or two that alternate, is
 * answered without a call. Owned by one thread, used only in normal
 * context (not by the sampling handler), so nothing here is atomic.
 */
#ifndef GT_CORE_UNWIND_MEMO_H
#define GT_CORE_UNWIND_MEMO_H

#include <stdint.h>

#include "core/unwind.h"

struct gt_memo_slot {
	uintptr_t off, val; /* *(key + off) == val */
};

struct gt_memo_entry {
	uintptr_t ra, depth;
	struct gt_cct_node *base, *node; /* node == NULL: an empty entry */
	struct gt_memo_slot *slots;      /* nslots of cap, call site first */
	uint32_t nslots, cap;
};

struct gt_unwind_memo {
	struct gt_memo_entry *e;
	uint32_t cap, used;
	uint32_t replace; /* round robin over the variants of a full key */
	/* The entries of the last two hits that took the walk, the newer
	 * first: a construct met again and again (tasks created in a loop),
	 * or two that alternate (a task's creation and its taskwait), is
	 * checked there before the hash is computed. A check that fails
	 * costs a compare of the return address or depth (a task tree's
	 * levels, which alternate among more entries). Indices, taken modulo
	 * cap: they survive the table's growth and a rewrite of the entry,
	 * after which the entry's key tells. */
	uint32_t recent[2];
	struct gt_unwind_stats stats;
};

/* The depth of key below boundary (0: none), part of an entry's key. */
static inline uintptr_t gt_memo__depth(uintptr_t key, uintptr_t boundary)
{
	return boundary ? boundary - key : key;
}

/* Whether a lookup of ra at key under boundary can use the memo. */
static inline int gt_memo__usable(const struct gt_unwind_memo *memo, uintptr_t ra, uintptr_t key,
				  uintptr_t boundary)
{
	return memo && memo->cap && ra && (!boundary || boundary > key);
}

static inline int gt_memo__entry_is(const struct gt_memo_entry *e, uintptr_t ra, uintptr_t depth,
				    const struct gt_cct_node *base)
{
	return e->ra == ra && e->depth == depth && e->base == base;
}

/* Whether the live stack at key still holds e's call path. */
static inline int gt_memo__entry_valid(const struct gt_memo_entry *e, uintptr_t key)
{
	const struct gt_memo_slot *s = e->slots, *end = s + e->nslots;

	for (; s < end; s++)
		if (*(const uintptr_t *)(key + s->off) != s->val)
			return 0;
	return 1;
}

/* The answer of the memo's two recent entries for (ra, depth, base) at key,
 * or NULL. memo has a table, ra is not 0. The same test as the hash walk's:
 * as exact as it is. An empty entry has ra 0, which no lookup asks for. */
static inline struct gt_cct_node *gt_memo__recent(struct gt_unwind_memo *memo, uintptr_t ra, uintptr_t depth,
						  const struct gt_cct_node *base, uintptr_t key)
{
	for (uint32_t i = 0; i < 2; i++) {
		const struct gt_memo_entry *e = &memo->e[memo->recent[i] & (memo->cap - 1)];

		if (gt_memo__entry_is(e, ra, depth, base) && gt_memo__entry_valid(e, key)) {
			memo->stats.memo_hits++;
			return e->node;
		}
	}
	return NULL;
}

/* The recent entry that holds node for (ra, depth, base), or NULL: the one
 * that answered the lookup just made, unless it made node anew. */
static inline const struct gt_memo_entry *gt_memo__recent_entry(const struct gt_unwind_memo *memo, uintptr_t ra,
								 uintptr_t depth,
								 const struct gt_cct_node *base,
								 const struct gt_cct_node *node)
{
	for (uint32_t i = 0; i < 2; i++) {
		const struct gt_memo_entry *e = &memo->e[memo->recent[i] & (memo->cap - 1)];

		if (e->node == node && gt_memo__entry_is(e, ra, depth, base))
			return e;
	}
	return NULL;
}

#endif
