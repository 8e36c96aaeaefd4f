/* SPDX-License-Identifier: MIT */
/*
 * The layer's tables that any thread reads: handle maps (an object's
 * record by its handle) and interned strings (kernel names). See
 * ocl-internal.h for their rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/opencl/ocl-internal.h"

/* ---- handle maps ---- */

#define KEY_EMPTY ((uintptr_t)0)
#define KEY_TOMB ((uintptr_t)1)
#define MAP_MIN_CAP 256u
/* Lookups that find a rebuild in progress try again this many times. */
#define MAP_TRIES 4096

struct ocl_slot {
	_Atomic uintptr_t key;
	void *_Atomic val;
};

struct ocl_map_table {
	uint32_t cap; /* a power of two */
	struct ocl_slot s[];
};

static uint32_t hash_ptr(uintptr_t k)
{
	uint64_t x = (uint64_t)k;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void *gt_ocl_map__find(struct ocl_map *m, const void *key)
{
	uintptr_t k = (uintptr_t)key;
	uint32_t h = hash_ptr(k);

	if (k <= KEY_TOMB)
		return NULL;
	for (int tries = 0; tries < MAP_TRIES; tries++) {
		/* A seqlock read: pairs with the release store that ends a
		 * rebuild; the fence orders the slot loads before the re-check. */
		unsigned s0 = atomic_load_explicit(&m->seq, memory_order_acquire);
		struct ocl_map_table *tab;
		void *v = NULL;

		if (s0 & 1) {
			cpu_relax();
			continue;
		}
		tab = atomic_load_explicit(&m->tab, memory_order_acquire);
		if (tab) {
			uint32_t mask = tab->cap - 1;

			for (uint32_t i = h & mask, n = 0; n < tab->cap; i = (i + 1) & mask, n++) {
				/* Acquire: pairs with the release store of the key
				 * at insertion, after its value. */
				uintptr_t sk = atomic_load_explicit(&tab->s[i].key, memory_order_acquire);

				if (sk == k) {
					/* Acquire: the record's contents were written
					 * before its release store into the slot. */
					v = atomic_load_explicit(&tab->s[i].val, memory_order_acquire);
					break;
				}
				if (sk == KEY_EMPTY)
					break;
			}
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&m->seq, memory_order_relaxed) == s0)
			return v;
	}
	return NULL;
}

static struct ocl_map_table *table__new(uint32_t cap)
{
	struct ocl_map_table *t = calloc(1, sizeof(*t) + (size_t)cap * sizeof(struct ocl_slot));

	if (t)
		t->cap = cap;
	return t;
}

/* Under the lock. Returns the slot of k, or NULL. */
static struct ocl_slot *table__slot(struct ocl_map_table *t, uintptr_t k)
{
	uint32_t mask = t->cap - 1;

	for (uint32_t i = hash_ptr(k) & mask, n = 0; n < t->cap; i = (i + 1) & mask, n++) {
		uintptr_t sk = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);

		if (sk == k)
			return &t->s[i];
		if (sk == KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

/* Under the lock: a free slot for k (known absent); counts a new use. */
static void table__insert(struct ocl_map *m, struct ocl_map_table *t, uintptr_t k, void *v)
{
	uint32_t mask = t->cap - 1;

	for (uint32_t i = hash_ptr(k) & mask;; i = (i + 1) & mask) {
		uintptr_t sk = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);

		if (sk == KEY_EMPTY || sk == KEY_TOMB) {
			if (sk == KEY_EMPTY)
				m->used++;
			atomic_store_explicit(&t->s[i].val, v, memory_order_release);
			atomic_store_explicit(&t->s[i].key, k, memory_order_release);
			m->live++;
			return;
		}
	}
}

/*
 * Under the lock: moves the live entries into a table of cap slots. Readers
 * that overlap see an odd or changed sequence number and look again. The old
 * table becomes the spare when the size is unchanged; a smaller one is simply
 * kept (growth doubles, so what is kept is less than what is in use).
 */
static int map__rebuild(struct ocl_map *m, uint32_t cap)
{
	struct ocl_map_table *old = atomic_load_explicit(&m->tab, memory_order_relaxed);
	struct ocl_map_table *t = (old && cap == old->cap && m->spare) ? m->spare : table__new(cap);
	unsigned s = atomic_load_explicit(&m->seq, memory_order_relaxed);

	if (!t)
		return -ENOMEM;
	atomic_store_explicit(&m->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (uint32_t i = 0; i < t->cap; i++) {
		atomic_store_explicit(&t->s[i].key, KEY_EMPTY, memory_order_relaxed);
		atomic_store_explicit(&t->s[i].val, NULL, memory_order_relaxed);
	}
	m->used = m->live = 0;
	for (uint32_t i = 0; old && i < old->cap; i++) {
		uintptr_t k = atomic_load_explicit(&old->s[i].key, memory_order_relaxed);

		if (k > KEY_TOMB)
			table__insert(m, t, k, atomic_load_explicit(&old->s[i].val, memory_order_relaxed));
	}
	atomic_store_explicit(&m->tab, t, memory_order_release);
	if (old && old->cap == cap)
		m->spare = old;
	else
		m->spare = NULL;
	/* Pairs with the readers' acquire load of seq. */
	atomic_store_explicit(&m->seq, s + 2, memory_order_release);
	return 0;
}

int gt_ocl_map__put(struct ocl_map *m, const void *key, void *val)
{
	uintptr_t k = (uintptr_t)key;
	struct ocl_map_table *t;
	struct ocl_slot *sl;
	int err = 0;

	if (k <= KEY_TOMB)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	t = atomic_load_explicit(&m->tab, memory_order_relaxed);
	if (t && (sl = table__slot(t, k))) {
		/* The driver reused the handle of an object released earlier. */
		atomic_store_explicit(&sl->val, val, memory_order_release);
		goto out_unlock;
	}
	if (!t || (m->live + 1) * 2 > t->cap)
		err = map__rebuild(m, t ? t->cap * 2 : MAP_MIN_CAP);
	else if ((m->used + 1) * 4 > t->cap * 3)
		err = map__rebuild(m, t->cap);
	if (err)
		goto out_unlock;
	table__insert(m, atomic_load_explicit(&m->tab, memory_order_relaxed), k, val);
out_unlock:
	pthread_mutex_unlock(&m->lock);
	return err;
}

void *gt_ocl_map__del(struct ocl_map *m, const void *key)
{
	uintptr_t k = (uintptr_t)key;
	struct ocl_map_table *t;
	struct ocl_slot *sl;
	void *v = NULL;

	if (k <= KEY_TOMB)
		return NULL;
	pthread_mutex_lock(&m->lock);
	t = atomic_load_explicit(&m->tab, memory_order_relaxed);
	if (t && (sl = table__slot(t, k))) {
		v = atomic_load_explicit(&sl->val, memory_order_relaxed);
		atomic_store_explicit(&sl->key, KEY_TOMB, memory_order_release);
		m->live--;
	}
	pthread_mutex_unlock(&m->lock);
	return v;
}

#define MAP_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }
struct ocl_map gt_ocl_queues = MAP_INIT, gt_ocl_kernels = MAP_INIT, gt_ocl_mems = MAP_INIT,
	       gt_ocl_programs = MAP_INIT;
atomic_int gt_ocl_any_forced;

/* ---- interned strings ---- */

static struct {
	pthread_mutex_t lock;
	char **slot;
	uint32_t cap, n;
} strings = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t hash_str(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int strings__grow(void)
{
	uint32_t cap = strings.cap ? strings.cap * 2 : 64;
	char **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < strings.cap; i++) {
		uint32_t j;

		if (!strings.slot[i])
			continue;
		for (j = hash_str(strings.slot[i], strlen(strings.slot[i])) & (cap - 1); slot[j];
		     j = (j + 1) & (cap - 1))
			;
		slot[j] = strings.slot[i];
	}
	free(strings.slot);
	strings.slot = slot;
	strings.cap = cap;
	return 0;
}

const char *gt_ocl__intern(const char *s, size_t len)
{
	const char *out = NULL;
	uint32_t j;

	if (!s)
		return NULL;
	pthread_mutex_lock(&strings.lock);
	if ((strings.n + 1) * 2 > strings.cap && strings__grow())
		goto out_unlock;
	for (j = hash_str(s, len) & (strings.cap - 1); strings.slot[j]; j = (j + 1) & (strings.cap - 1)) {
		if (!strncmp(strings.slot[j], s, len) && !strings.slot[j][len]) {
			out = strings.slot[j];
			goto out_unlock;
		}
	}
	strings.slot[j] = strndup(s, len);
	if (strings.slot[j]) {
		out = strings.slot[j];
		strings.n++;
	}
out_unlock:
	pthread_mutex_unlock(&strings.lock);
	return out;
}
