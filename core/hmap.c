/* SPDX-License-Identifier: MIT */
#include "core/hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (uint32_t)key & (cap - 1);
}

uint64_t *gt_hmap__get(const struct gt_hmap *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	for (uint32_t h = slot_of(key, m->cap);; h = (h + 1) & (m->cap - 1)) {
		if (m->keys[h] == key)
			return &m->vals[h];
		if (!m->keys[h])
			return NULL;
	}
}

static int hmap__grow(struct gt_hmap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 256;
	uint64_t *keys, *vals;

	if (!cap)
		return -ENOMEM;
	keys = calloc(cap, sizeof(*keys));
	vals = malloc((size_t)cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t h;

		if (!m->keys[i])
			continue;
		for (h = slot_of(m->keys[i], cap); keys[h]; h = (h + 1) & (cap - 1))
			;
		keys[h] = m->keys[i];
		vals[h] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int gt_hmap__put(struct gt_hmap *m, uint64_t key, uint64_t val)
{
	uint32_t h;

	if (!key)
		return -EINVAL;
	if ((uint64_t)(m->used + 1) * 2 > m->cap && hmap__grow(m))
		return -ENOMEM;
	for (h = slot_of(key, m->cap); m->keys[h] && m->keys[h] != key; h = (h + 1) & (m->cap - 1))
		;
	if (!m->keys[h]) {
		m->keys[h] = key;
		m->used++;
	}
	m->vals[h] = val;
	return 0;
}

void gt_hmap__fini(struct gt_hmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
