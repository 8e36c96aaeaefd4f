/* SPDX-License-Identifier: MIT */
/*
 * The monitor's correlation map and its pool of parked activities; see
 * struct corr_map in monitor-internal.h. Used by the monitor thread only.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/monitor-internal.h"

#define MAP_MIN_CAP 256u
#define POOL_MIN_CAP 64u

static uint32_t id_hash(uint64_t id)
{
	/* splitmix64's finalizer: ids differ mostly in their low bits. */
	id ^= id >> 30;
	id *= 0xbf58476d1ce4e5b9ull;
	id ^= id >> 27;
	id *= 0x94d049bb133111ebull;
	id ^= id >> 31;
	return (uint32_t)id;
}

void gt_corrmap__init(struct corr_map *m, uint32_t pool_max)
{
	memset(m, 0, sizeof(*m));
	m->pool_max = pool_max;
}

void gt_corrmap__fini(struct corr_map *m)
{
	free(m->slots);
	free(m->pool);
	gt_corrmap__init(m, m->pool_max);
}

struct corr_entry *gt_corrmap__find(struct corr_map *m, uint64_t id)
{
	uint32_t mask = m->cap - 1;

	if (!m->size || !id)
		return NULL;
	for (uint32_t i = id_hash(id) & mask;; i = (i + 1) & mask) {
		if (m->slots[i].id == id)
			return &m->slots[i];
		if (!m->slots[i].id)
			return NULL;
	}
}

static int map__grow(struct corr_map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : MAP_MIN_CAP;
	struct corr_entry *slots;

	if (!cap)
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t j;

		if (!m->slots[i].id)
			continue;
		for (j = id_hash(m->slots[i].id) & (cap - 1); slots[j].id; j = (j + 1) & (cap - 1))
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

struct corr_entry *gt_corrmap__insert(struct corr_map *m, uint64_t id)
{
	struct corr_entry *e;
	uint32_t i;

	assert(id && !gt_corrmap__find(m, id));
	/* Load at most 1/2: probes stay short with linear probing. */
	if ((m->size + 1) * 2 > m->cap && map__grow(m))
		return NULL;
	for (i = id_hash(id) & (m->cap - 1); m->slots[i].id; i = (i + 1) & (m->cap - 1))
		;
	e = &m->slots[i];
	memset(e, 0, sizeof(*e));
	e->id = id;
	if (++m->size > m->peak)
		m->peak = m->size;
	return e;
}

void gt_corrmap__remove(struct corr_map *m, struct corr_entry *e)
{
	uint32_t mask = m->cap - 1;
	uint32_t hole = (uint32_t)(e - m->slots);
	uint32_t j = hole;

	assert(!e->head);
	/*
	 * Backward shift: move each later entry of the probe run into the hole
	 * unless its home slot lies cyclically in (hole, j], where it must stay
	 * to remain reachable.
	 */
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (!m->slots[j].id)
			break;
		home = id_hash(m->slots[j].id) & mask;
		if (hole <= j ? (hole < home && home <= j) : (hole < home || home <= j))
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->slots[hole].id = 0;
	m->size--;
}

/* ---- parked activities ---- */

static struct corr_parked *slot(struct corr_map *m, uint32_t ref)
{
	return &m->pool[ref - 1];
}

static int pool__grow(struct corr_map *m)
{
	uint32_t cap = m->pool_cap ? m->pool_cap * 2 : POOL_MIN_CAP;
	struct corr_parked *pool;

	if (cap > m->pool_max)
		cap = m->pool_max;
	if (cap <= m->pool_cap)
		return -ENOMEM;
	pool = realloc(m->pool, (size_t)cap * sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	m->pool = pool;
	for (uint32_t i = cap; i > m->pool_cap; i--) {
		pool[i - 1].next = m->free_list;
		m->free_list = i;
	}
	m->pool_cap = cap;
	return 0;
}

static void fifo__unlink(struct corr_map *m, uint32_t ref)
{
	struct corr_parked *p = slot(m, ref);

	if (p->older)
		slot(m, p->older)->newer = p->newer;
	else
		m->oldest = p->newer;
	if (p->newer)
		slot(m, p->newer)->older = p->older;
	else
		m->newest = p->older;
}

/* Takes the oldest activity off @e's chain and returns its slot to the free list. */
static uint32_t chain__shift(struct corr_map *m, struct corr_entry *e)
{
	uint32_t ref = e->head;
	struct corr_parked *p = slot(m, ref);

	e->head = p->next;
	if (!e->head)
		e->tail = 0;
	fifo__unlink(m, ref);
	p->next = m->free_list;
	m->free_list = ref;
	m->parked--;
	return ref;
}

static void pool__evict_oldest(struct corr_map *m)
{
	struct corr_entry *e = gt_corrmap__find(m, slot(m, m->oldest)->op.correlation);

	/* Arrival order per id follows arrival order overall: the oldest of
	 * all is the head of its own chain. */
	assert(e && e->head == m->oldest);
	chain__shift(m, e);
	m->evicted++;
	if (!e->head && !e->owner)
		gt_corrmap__remove(m, e);
}

int gt_corrmap__park(struct corr_map *m, const struct gt_device_op *op)
{
	struct corr_entry *e;
	struct corr_parked *p;
	uint32_t ref;

	if (!m->free_list && pool__grow(m)) {
		if (!m->oldest)
			return -ENOMEM;
		pool__evict_oldest(m);
	}
	/* After the eviction, which may have moved entries. */
	e = gt_corrmap__find(m, op->correlation);
	if (!e) {
		e = gt_corrmap__insert(m, op->correlation);
		if (!e)
			return -ENOMEM;
	}
	assert(!e->owner);
	ref = m->free_list;
	p = slot(m, ref);
	m->free_list = p->next;
	p->op = *op;
	p->next = 0;
	if (e->tail)
		slot(m, e->tail)->next = ref;
	else
		e->head = ref;
	e->tail = ref;
	p->newer = 0;
	p->older = m->newest;
	if (m->newest)
		slot(m, m->newest)->newer = ref;
	else
		m->oldest = ref;
	m->newest = ref;
	if (++m->parked > m->parked_peak)
		m->parked_peak = m->parked;
	return 0;
}

int gt_corrmap__unpark(struct corr_map *m, struct corr_entry *e, struct gt_device_op *out)
{
	if (!e->head)
		return 0;
	*out = slot(m, e->head)->op;
	chain__shift(m, e);
	return 1;
}
