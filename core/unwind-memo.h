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

/*
 * One line each (the table is aligned): a lookup reads the entry, its slots
 * and its node. next links the entry to the one that answered the thread's
 * following lookup last time, and keeps where that one's slots and node
 * were: when this entry answers, those lines are fetched while the program
 * runs on (gt_memo__answered). A program that meets its constructs in the
 * same order every time step then finds each lookup's lines in the cache,
 * however many contexts it has.
 */
struct gt_memo_entry {
	uintptr_t ra, depth;
	struct gt_cct_node *base, *node; /* node == NULL: an empty entry */
	struct gt_memo_slot *slots;      /* nslots of cap, call site first */
	uint16_t nslots, cap;
	uint32_t next;                      /* the successor's index + 1; 0: none */
	const void *next_slots, *next_node; /* where its slots and node were */
};

_Static_assert(sizeof(struct gt_memo_entry) == 64, "a memo entry is one cache line");

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
	/* The entry that answered last, and its successor (indices + 1; 0:
	 * none), reset when the table grows. */
	uint32_t last, pred;
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

/*
 * Entry i answered a lookup: it becomes the successor of the entry that
 * answered the one before, and its own successor's lines are fetched now,
 * to be checked first at the next lookup. Only a changed link is written.
 */
static inline void gt_memo__answered(struct gt_unwind_memo *memo, uint32_t i)
{
	const struct gt_memo_entry *e = &memo->e[i];

	if (memo->last) {
		struct gt_memo_entry *p = &memo->e[memo->last - 1];

		if (p->next != i + 1 || p->next_slots != e->slots || p->next_node != e->node) {
			p->next = i + 1;
			p->next_slots = e->slots;
			p->next_node = e->node;
		}
	}
	memo->last = i + 1;
	memo->pred = e->next;
	if (e->next) {
		__builtin_prefetch(&memo->e[e->next - 1]);
		__builtin_prefetch(e->next_slots);
		__builtin_prefetch(e->next_node);
	}
}

/* Entry i, found by the hash walk or predicted, answered: also the most
 * recent one. */
static inline void gt_memo__answered_new(struct gt_unwind_memo *memo, uint32_t i)
{
	if (memo->recent[0] != i) {
		memo->recent[1] = memo->recent[0];
		memo->recent[0] = i;
	}
	gt_memo__answered(memo, i);
}

/* The answer of the memo's predicted entry, then of its two recent ones,
 * for (ra, depth, base) at key, or NULL. memo has a table, ra is not 0.
 * The same test as the hash walk's: as exact as it is. An empty entry has
 * ra 0, which no lookup asks for. */
static inline struct gt_cct_node *gt_memo__recent(struct gt_unwind_memo *memo, uintptr_t ra, uintptr_t depth,
						  const struct gt_cct_node *base, uintptr_t key)
{
	if (memo->pred) {
		uint32_t i = memo->pred - 1;
		const struct gt_memo_entry *e = &memo->e[i];

		if (gt_memo__entry_is(e, ra, depth, base) && gt_memo__entry_valid(e, key)) {
			memo->stats.memo_hits++;
			memo->stats.predicted++;
			gt_memo__answered_new(memo, i);
			return e->node;
		}
	}
	for (uint32_t k = 0; k < 2; k++) {
		uint32_t i = memo->recent[k] & (memo->cap - 1);
		const struct gt_memo_entry *e = &memo->e[i];

		if (gt_memo__entry_is(e, ra, depth, base) && gt_memo__entry_valid(e, key)) {
			memo->stats.memo_hits++;
			gt_memo__answered(memo, i);
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
