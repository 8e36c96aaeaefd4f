/* SPDX-License-Identifier: MIT */
/*
 * The profile model and its binary file (profile-json.c writes the JSON form). docs/PROFILE.md
 * describes both formats byte by byte; keep it in step with this file.
 *
 * The reader treats every file as hostile: each length, count and index is
 * checked against what the file can actually hold before anything is
 * allocated or dereferenced, so a corrupt or truncated file costs at most
 * memory proportional to its size and ends in one line of explanation.
 */
#include "core/profile.h"

#include "core/bytes.h"
#include "core/metrics.h"
#include "core/profile-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Section tags (docs/PROFILE.md). Readers skip tags they do not know. */
enum {
	SEC_END = 0,
	SEC_STRINGS = 1,
	SEC_META = 2,
	SEC_MODULES = 3,
	SEC_METRICS = 4,
	SEC_THREADS = 5,
	SEC_NODES = 6,
	SEC_VALUES = 7,
	SEC_LINKAGE = 8,
	SEC_CLASSES = 9,
	SEC__KNOWN
};

static const char *const section_names[SEC__KNOWN] = {
	[SEC_END] = "END",         [SEC_STRINGS] = "STRINGS", [SEC_META] = "META",
	[SEC_MODULES] = "MODULES", [SEC_METRICS] = "METRICS", [SEC_THREADS] = "THREADS",
	[SEC_NODES] = "NODES",     [SEC_VALUES] = "VALUES",   [SEC_LINKAGE] = "LINKAGE",
	[SEC_CLASSES] = "CLASSES",
};

#define HEADER_BYTES 16u  /* magic, version, flags */
#define SECTION_BYTES 12u /* tag, length */

/* ---- growable arrays ---- */

/* Returns arr with room for element n (a new block if it had to grow), or
 * NULL. max bounds the element count so that indices never reach GT_NONE. */
static void *grow(void *arr, uint64_t n, uint64_t *cap, size_t size, uint64_t max)
{
	uint64_t c;
	void *q;

	if (n < *cap)
		return arr;
	if (n >= max)
		return NULL;
	c = *cap ? *cap * 2 : 16;
	if (c > max)
		c = max;
	if (c > SIZE_MAX / size)
		return NULL;
	q = realloc(arr, (size_t)c * size);
	if (!q)
		return NULL;
	*cap = c;
	return q;
}

/* Sets ok to whether arr (with n elements, capacity cap) has room for one more. */
#define RESERVE(arr, n, cap, max, ok)                                      \
	do {                                                               \
		uint64_t c_ = (cap);                                       \
		void *q_ = grow((arr), (n), &c_, sizeof(*(arr)), (max));   \
		(ok) = q_ != NULL;                                         \
		if (q_) {                                                  \
			(arr) = q_;                                        \
			(cap) = c_;                                        \
		}                                                          \
	} while (0)

/* ---- interning ----
 *
 * Open addressing with linear probing, at most half full. Slots hold an index
 * into strings[] (or modules[]), GT_NONE when empty; nothing is ever removed
 * except by gt_profile__fini, which frees the whole table.
 */
struct intern {
	uint32_t *str_slots;
	uint32_t str_cap; /* a power of two, or 0 */
	uint32_t str_used;
	uint32_t *mod_slots; /* keyed by the module's path string */
	uint32_t mod_cap;
	uint32_t mod_used;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

static uint64_t hash_u32(uint32_t v)
{
	uint64_t h = (uint64_t)v * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 31);
}

static struct intern *intern__get(struct gt_profile *p)
{
	if (!p->string_index)
		p->string_index = calloc(1, sizeof(struct intern));
	return p->string_index;
}

static uint32_t *slots__new(uint32_t cap)
{
	uint32_t *s = malloc((size_t)cap * sizeof(*s));

	if (s)
		memset(s, 0xff, (size_t)cap * sizeof(*s)); /* every slot GT_NONE */
	return s;
}

/* Makes room for one more key; rehashes with key_hash(p, index). */
static int slots__reserve(const struct gt_profile *p, uint32_t **slots, uint32_t *cap, uint32_t used,
			  uint64_t (*key_hash)(const struct gt_profile *, uint32_t))
{
	uint32_t ncap, *ns;

	if ((uint64_t)(used + 1) * 2 <= *cap)
		return 0;
	if (*cap >= (1u << 31))
		return -ENOMEM;
	ncap = *cap ? *cap * 2 : 64;
	while ((uint64_t)(used + 1) * 2 > ncap)
		ncap *= 2;
	ns = slots__new(ncap);
	if (!ns)
		return -ENOMEM;
	for (uint32_t i = 0; i < *cap; i++) {
		uint32_t v = (*slots)[i], j;

		if (v == GT_NONE)
			continue;
		for (j = (uint32_t)key_hash(p, v) & (ncap - 1); ns[j] != GT_NONE; j = (j + 1) & (ncap - 1))
			;
		ns[j] = v;
	}
	free(*slots);
	*slots = ns;
	*cap = ncap;
	return 0;
}

static uint64_t string_hash(const struct gt_profile *p, uint32_t i)
{
	return hash_bytes(p->strings[i], strlen(p->strings[i]));
}

static uint64_t module_hash(const struct gt_profile *p, uint32_t i)
{
	return hash_u32(p->modules[i]);
}

/* The slot holding s, or the empty slot where it would go. */
static uint32_t string__slot(const struct gt_profile *p, const struct intern *t, const char *s, size_t len)
{
	uint32_t j = (uint32_t)hash_bytes(s, len) & (t->str_cap - 1);

	for (; t->str_slots[j] != GT_NONE; j = (j + 1) & (t->str_cap - 1)) {
		const char *c = p->strings[t->str_slots[j]];

		if (strlen(c) == len && !memcmp(c, s, len))
			break;
	}
	return j;
}

/*
 * Appends a copy of s[0, len) as string n_strings. With dedup, returns the
 * index of an equal string instead when there is one; without (the reader,
 * which must keep the file's indices), duplicates are stored and the first
 * one stays the one found by lookups.
 */
static uint32_t string__add(struct gt_profile *p, const char *s, size_t len, int dedup)
{
	struct intern *t = intern__get(p);
	uint32_t slot, idx;
	char *copy;
	int ok;

	if (!t || slots__reserve(p, &t->str_slots, &t->str_cap, t->str_used, string_hash))
		return GT_NONE;
	slot = string__slot(p, t, s, len);
	if (dedup && t->str_slots[slot] != GT_NONE)
		return t->str_slots[slot];
	RESERVE(p->strings, p->n_strings, p->cap_strings, GT_NONE, ok);
	if (!ok)
		return GT_NONE;
	copy = malloc(len + 1);
	if (!copy)
		return GT_NONE;
	memcpy(copy, s, len);
	copy[len] = '\0';
	idx = p->n_strings++;
	p->strings[idx] = copy;
	if (t->str_slots[slot] == GT_NONE) {
		t->str_slots[slot] = idx;
		t->str_used++;
	}
	return idx;
}

static uint32_t module__add(struct gt_profile *p, uint32_t path, int dedup)
{
	struct intern *t = intern__get(p);
	uint32_t j, idx;
	int ok;

	if (!t || slots__reserve(p, &t->mod_slots, &t->mod_cap, t->mod_used, module_hash))
		return GT_NONE;
	for (j = (uint32_t)hash_u32(path) & (t->mod_cap - 1); t->mod_slots[j] != GT_NONE;
	     j = (j + 1) & (t->mod_cap - 1))
		if (p->modules[t->mod_slots[j]] == path)
			break;
	if (dedup && t->mod_slots[j] != GT_NONE)
		return t->mod_slots[j];
	RESERVE(p->modules, p->n_modules, p->cap_modules, GT_NONE, ok);
	if (!ok)
		return GT_NONE;
	idx = p->n_modules++;
	p->modules[idx] = path;
	if (t->mod_slots[j] == GT_NONE) {
		t->mod_slots[j] = idx;
		t->mod_used++;
	}
	return idx;
}

/* ---- building ---- */

void gt_profile__init(struct gt_profile *p)
{
	memset(p, 0, sizeof(*p));
}

void gt_profile__fini(struct gt_profile *p)
{
	struct intern *t = p->string_index;

	for (uint32_t i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	if (t) {
		free(t->str_slots);
		free(t->mod_slots);
		free(t);
	}
	free(p->modules);
	free(p->metrics);
	free(p->threads);
	free(p->meta);
	free(p->nodes);
	free(p->values);
	free(p->linkage);
	gt_profile__init(p);
}

int gt_profile__set_linkage(struct gt_profile *p, uint32_t name, uint32_t linkage)
{
	if (name >= p->n_strings || linkage >= p->n_strings)
		return -EINVAL;
	if (name >= p->cap_linkage) {
		uint32_t cap = p->cap_linkage ? p->cap_linkage : 64;
		uint32_t *grown;

		while (cap <= name)
			cap *= 2;
		grown = realloc(p->linkage, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + p->cap_linkage, 0xff, (cap - p->cap_linkage) * sizeof(*grown));
		p->linkage = grown;
		p->cap_linkage = cap;
	}
	if (p->linkage[name] == GT_NONE)
		p->linkage[name] = linkage;
	return 0;
}

uint32_t gt_profile__string(struct gt_profile *p, const char *s)
{
	return s ? string__add(p, s, strlen(s), 1) : GT_NONE;
}

uint32_t gt_profile__module(struct gt_profile *p, const char *path)
{
	uint32_t s = gt_profile__string(p, path);

	return s == GT_NONE ? GT_NONE : module__add(p, s, 1);
}

uint32_t gt_profile__find_metric(const struct gt_profile *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_metrics; i++) {
		const char *n = gt_profile__str(p, p->metrics[i].name);

		if (n && name && !strcmp(n, name))
			return i;
	}
	return GT_NONE;
}

uint32_t gt_profile__metric(struct gt_profile *p, const char *name, const char *unit, const char *desc)
{
	struct gt_prof_metric m;
	uint32_t i = gt_profile__find_metric(p, name);
	int ok;

	if (i != GT_NONE || !name)
		return i;
	m.name = gt_profile__string(p, name);
	m.unit = gt_profile__string(p, unit);
	m.desc = gt_profile__string(p, desc);
	m.cls = gt_metric__class_by_name(name);
	if (m.name == GT_NONE || (unit && m.unit == GT_NONE) || (desc && m.desc == GT_NONE))
		return GT_NONE;
	RESERVE(p->metrics, p->n_metrics, p->cap_metrics, GT_NONE, ok);
	if (!ok)
		return GT_NONE;
	p->metrics[p->n_metrics] = m;
	return p->n_metrics++;
}

void gt_profile__set_metric_class(struct gt_profile *p, uint32_t metric, uint32_t cls)
{
	if (metric < p->n_metrics && cls > GT_MC_UNKNOWN && cls < GT_MC__COUNT)
		p->metrics[metric].cls = cls;
}

uint32_t gt_profile__thread(struct gt_profile *p, uint32_t id, uint32_t tid, const char *kind)
{
	uint32_t k = gt_profile__string(p, kind);
	int ok;

	if (kind && k == GT_NONE)
		return GT_NONE;
	RESERVE(p->threads, p->n_threads, p->cap_threads, GT_NONE, ok);
	if (!ok)
		return GT_NONE;
	p->threads[p->n_threads] = (struct gt_prof_thread){ .id = id, .tid = tid, .kind = k };
	return p->n_threads++;
}

void gt_profile__set_meta(struct gt_profile *p, const char *key, const char *value)
{
	uint32_t k, v;
	int ok;

	if (!key)
		return;
	k = gt_profile__string(p, key);
	v = gt_profile__string(p, value);
	if (k == GT_NONE || (value && v == GT_NONE))
		return;
	for (uint32_t i = 0; i < p->n_meta; i++) {
		if (p->meta[i].key == k) {
			p->meta[i].value = v;
			return;
		}
	}
	RESERVE(p->meta, p->n_meta, p->cap_meta, GT_NONE, ok);
	if (!ok)
		return;
	p->meta[p->n_meta++] = (struct gt_prof_meta){ .key = k, .value = v };
}

const char *gt_profile__get_meta(const struct gt_profile *p, const char *key)
{
	for (uint32_t i = 0; i < p->n_meta; i++) {
		const char *k = gt_profile__str(p, p->meta[i].key);

		if (k && key && !strcmp(k, key))
			return gt_profile__str(p, p->meta[i].value);
	}
	return NULL;
}

static int ref_ok(uint32_t ref, uint32_t n)
{
	return ref == GT_NONE || ref < n;
}

/* Whether node i of p, as given, keeps the invariants of profile.h. */
static int node_ok(const struct gt_profile *p, uint32_t i, const struct gt_prof_node *n)
{
	if (i == 0) {
		if (n->parent != GT_NONE || n->kind != GT_PNODE_ROOT)
			return 0;
	} else if (n->parent >= i || n->kind == GT_PNODE_ROOT) {
		return 0;
	}
	return ref_ok(n->name, p->n_strings) && ref_ok(n->file, p->n_strings) &&
	       ref_ok(n->module, p->n_modules);
}

uint32_t gt_profile__node(struct gt_profile *p, const struct gt_prof_node *n)
{
	int ok;

	if (!node_ok(p, p->n_nodes, n))
		return GT_NONE;
	RESERVE(p->nodes, p->n_nodes, p->cap_nodes, GT_NONE, ok);
	if (!ok)
		return GT_NONE;
	p->nodes[p->n_nodes] = *n;
	return p->n_nodes++;
}

int gt_profile__value(struct gt_profile *p, uint32_t node, uint32_t thread, uint32_t metric, uint64_t value)
{
	int ok;

	if (node >= p->n_nodes || thread >= p->n_threads || metric >= p->n_metrics)
		return -EINVAL;
	if (!value)
		return 0;
	RESERVE(p->values, p->n_values, p->cap_values, SIZE_MAX / sizeof(*p->values), ok);
	if (!ok)
		return -ENOMEM;
	p->values[p->n_values++] = (struct gt_prof_value){
		.node = node, .thread = thread, .metric = metric, .value = value
	};
	return 0;
}

int gt_profile__metric_totals(const struct gt_profile *p, uint32_t metric, uint64_t *excl, uint64_t *incl)
{
	if (metric >= p->n_metrics)
		return -EINVAL;
	for (uint32_t i = 1; i < p->n_nodes; i++)
		if (p->nodes[i].parent >= i)
			return -EINVAL;
	if (excl)
		memset(excl, 0, (size_t)p->n_nodes * sizeof(*excl));
	if (incl)
		memset(incl, 0, (size_t)p->n_nodes * sizeof(*incl));
	for (uint64_t i = 0; i < p->n_values; i++) {
		const struct gt_prof_value *v = &p->values[i];

		if (v->metric != metric || v->node >= p->n_nodes)
			continue;
		if (excl)
			excl[v->node] = sat_add(excl[v->node], v->value);
		if (incl)
			incl[v->node] = sat_add(incl[v->node], v->value);
	}
	/* Children have larger indices than their parents: one backward pass
	 * completes every subtree before its root is added to its parent. */
	if (incl)
		for (uint32_t i = p->n_nodes; i-- > 1;)
			incl[p->nodes[i].parent] = sat_add(incl[p->nodes[i].parent], incl[i]);
	return 0;
}

/* Whether p keeps every invariant a file must keep, so that whatever is
 * written can be read back. */
int gt_profile__check(const struct gt_profile *p)
{
	for (uint32_t i = 0; i < p->n_strings; i++)
		if (!p->strings[i])
			return -EINVAL;
	for (uint32_t i = 0; i < p->n_modules; i++)
		if (p->modules[i] >= p->n_strings)
			return -EINVAL;
	for (uint32_t i = 0; i < p->n_metrics; i++) {
		const struct gt_prof_metric *m = &p->metrics[i];

		if (m->name >= p->n_strings || !ref_ok(m->unit, p->n_strings) || !ref_ok(m->desc, p->n_strings))
			return -EINVAL;
	}
	for (uint32_t i = 0; i < p->n_threads; i++)
		if (!ref_ok(p->threads[i].kind, p->n_strings))
			return -EINVAL;
	for (uint32_t i = 0; i < p->n_meta; i++)
		if (p->meta[i].key >= p->n_strings || !ref_ok(p->meta[i].value, p->n_strings))
			return -EINVAL;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (!node_ok(p, i, &p->nodes[i]))
			return -EINVAL;
	for (uint64_t i = 0; i < p->n_values; i++) {
		const struct gt_prof_value *v = &p->values[i];

		if (v->node >= p->n_nodes || v->thread >= p->n_threads || v->metric >= p->n_metrics)
			return -EINVAL;
	}
	return 0;
}

static int value_cmp(const void *a, const void *b)
{
	const struct gt_prof_value *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}

/* A copy of p's values sorted by (node, metric, thread), equal keys summed
 * and zeros dropped; *out is NULL when there are none. */
int gt_profile__sorted_values(const struct gt_profile *p, struct gt_prof_value **out, uint64_t *n_out)
{
	struct gt_prof_value *v;
	uint64_t n = 0;

	*out = NULL;
	*n_out = 0;
	if (!p->n_values)
		return 0;
	if (p->n_values > SIZE_MAX / sizeof(*v))
		return -ENOMEM;
	v = malloc((size_t)p->n_values * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, p->values, (size_t)p->n_values * sizeof(*v));
	qsort(v, (size_t)p->n_values, sizeof(*v), value_cmp);
	for (uint64_t i = 0; i < p->n_values; i++) {
		if (n && !value_cmp(&v[n - 1], &v[i]))
			v[n - 1].value = sat_add(v[n - 1].value, v[i].value);
		else if (v[i].value)
			v[n++] = v[i];
	}
	*out = v;
	*n_out = n;
	return 0;
}

/* ---- encoding ---- */

struct buf {
	uint8_t *data;
	size_t len, cap;
	int oom;
};

static void buf__put(struct buf *b, const void *d, size_t n)
{
	if (b->oom)
		return;
	if (n > b->cap - b->len) {
		size_t c = b->cap ? b->cap : 4096;
		uint8_t *q;

		while (c - b->len < n) {
			if (c > SIZE_MAX / 2) {
				b->oom = 1;
				return;
			}
			c *= 2;
		}
		q = realloc(b->data, c);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->data = q;
		b->cap = c;
	}
	memcpy(b->data + b->len, d, n);
	b->len += n;
}

static void le_store(uint8_t *d, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t le_load(const uint8_t *d, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)d[i] << (8 * i);
	return v;
}

static void buf__fixed(struct buf *b, uint64_t v, unsigned bytes)
{
	uint8_t d[8];

	le_store(d, v, bytes);
	buf__put(b, d, bytes);
}

/* Unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the last. */
static void buf__uv(struct buf *b, uint64_t v)
{
	uint8_t d[10];
	unsigned n = 0;

	do {
		d[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			d[n] |= 0x80;
		n++;
	} while (v);
	buf__put(b, d, n);
}

/* An optional index: 0 for GT_NONE, index + 1 otherwise. */
static void buf__ref(struct buf *b, uint32_t ref)
{
	buf__uv(b, ref == GT_NONE ? 0 : (uint64_t)ref + 1);
}

static size_t section__begin(struct buf *b, uint32_t tag)
{
	size_t at = b->len;

	buf__fixed(b, tag, 4);
	buf__fixed(b, 0, 8); /* patched by section__end */
	return at;
}

static void section__end(struct buf *b, size_t at)
{
	if (!b->oom)
		le_store(b->data + at + 4, b->len - at - SECTION_BYTES, 8);
}

static void encode(const struct gt_profile *p, const struct gt_prof_value *v, uint64_t nv, struct buf *b)
{
	size_t at;

	buf__put(b, GT_PROFILE_MAGIC, 8);
	buf__fixed(b, GT_PROFILE_VERSION, 4);
	buf__fixed(b, 0, 4); /* flags: none defined */

	at = section__begin(b, SEC_STRINGS);
	buf__uv(b, p->n_strings);
	for (uint32_t i = 0; i < p->n_strings; i++) {
		size_t len = strlen(p->strings[i]);

		buf__uv(b, len);
		buf__put(b, p->strings[i], len);
	}
	section__end(b, at);

	at = section__begin(b, SEC_META);
	buf__uv(b, p->n_meta);
	for (uint32_t i = 0; i < p->n_meta; i++) {
		buf__uv(b, p->meta[i].key);
		buf__ref(b, p->meta[i].value);
	}
	section__end(b, at);

	at = section__begin(b, SEC_MODULES);
	buf__uv(b, p->n_modules);
	for (uint32_t i = 0; i < p->n_modules; i++)
		buf__uv(b, p->modules[i]);
	section__end(b, at);

	at = section__begin(b, SEC_METRICS);
	buf__uv(b, p->n_metrics);
	for (uint32_t i = 0; i < p->n_metrics; i++) {
		buf__uv(b, p->metrics[i].name);
		buf__ref(b, p->metrics[i].unit);
		buf__ref(b, p->metrics[i].desc);
	}
	section__end(b, at);

	at = section__begin(b, SEC_THREADS);
	buf__uv(b, p->n_threads);
	for (uint32_t i = 0; i < p->n_threads; i++) {
		buf__uv(b, p->threads[i].id);
		buf__uv(b, p->threads[i].tid);
		buf__ref(b, p->threads[i].kind);
	}
	section__end(b, at);

	at = section__begin(b, SEC_NODES);
	buf__uv(b, p->n_nodes);
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const struct gt_prof_node *n = &p->nodes[i];

		buf__uv(b, i ? i - n->parent : 0);
		buf__uv(b, n->kind);
		buf__ref(b, n->name);
		buf__ref(b, n->file);
		buf__uv(b, n->line);
		buf__ref(b, n->module);
		buf__uv(b, n->offset);
	}
	section__end(b, at);

	/* Groups of values, one per node that has any, nodes in increasing order. */
	at = section__begin(b, SEC_VALUES);
	{
		uint64_t groups = 0, i, j;
		uint32_t prev = 0;

		for (i = 0; i < nv; i++)
			groups += !i || v[i].node != v[i - 1].node;
		buf__uv(b, groups);
		for (i = 0; i < nv; i = j) {
			for (j = i; j < nv && v[j].node == v[i].node; j++)
				;
			buf__uv(b, v[i].node - prev);
			buf__uv(b, j - i);
			for (uint64_t k = i; k < j; k++) {
				buf__uv(b, v[k].metric);
				buf__uv(b, v[k].thread);
				buf__uv(b, v[k].value);
			}
			prev = v[i].node;
		}
	}
	section__end(b, at);

	at = section__begin(b, SEC_CLASSES);
	{
		uint32_t n = 0;

		for (uint32_t i = 0; i < p->n_metrics; i++)
			n += p->metrics[i].cls != GT_MC_UNKNOWN;
		buf__uv(b, n);
		for (uint32_t i = 0; i < p->n_metrics; i++) {
			if (p->metrics[i].cls == GT_MC_UNKNOWN)
				continue;
			buf__uv(b, i);
			buf__uv(b, p->metrics[i].cls);
		}
	}
	section__end(b, at);

	at = section__begin(b, SEC_LINKAGE);
	{
		uint32_t n = 0, cap = p->cap_linkage < p->n_strings ? p->cap_linkage : p->n_strings;

		for (uint32_t i = 0; i < cap; i++)
			n += p->linkage[i] != GT_NONE;
		buf__uv(b, n);
		for (uint32_t i = 0; i < cap; i++) {
			if (p->linkage[i] == GT_NONE)
				continue;
			buf__uv(b, i);
			buf__uv(b, p->linkage[i]);
		}
	}
	section__end(b, at);

	/* END carries the CRC of every byte before it. */
	{
		uint32_t crc = b->oom ? 0 : gt_crc32(b->data, b->len);

		buf__fixed(b, SEC_END, 4);
		buf__fixed(b, 4, 8);
		buf__fixed(b, crc, 4);
	}
}

int gt_profile__write(const struct gt_profile *p, FILE *f)
{
	struct gt_prof_value *v;
	struct buf b = { 0 };
	uint64_t nv;
	int err;

	err = gt_profile__check(p);
	if (err)
		return err;
	err = gt_profile__sorted_values(p, &v, &nv);
	if (err)
		return err;
	encode(p, v, nv, &b);
	if (b.oom) {
		err = -ENOMEM;
		goto out_free_buf;
	}
	if (fwrite(b.data, 1, b.len, f) != b.len || fflush(f))
		err = -EIO;
out_free_buf:
	free(b.data);
	free(v);
	return err;
}

/* ---- decoding ---- */

/* A cursor over one section of the file held in memory. */
struct rd {
	const uint8_t *data;
	size_t pos, end; /* file offsets */
	const char *sec;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int rd__fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int rd__truncated(struct rd *r)
{
	return rd__fail(r, "truncated %s section at byte %zu", r->sec, r->pos);
}

static int rd__uv(struct rd *r, uint64_t *out)
{
	size_t start = r->pos;
	int err = gt_uv_read(r->data, r->end, &r->pos, out);

	if (err == -ENODATA)
		return rd__truncated(r);
	if (err)
		return rd__fail(r, "%s section: number too large at byte %zu", r->sec, start);
	return 0;
}

static int rd__u32(struct rd *r, uint32_t *out, const char *what)
{
	size_t start = r->pos;
	uint64_t v;
	int err = rd__uv(r, &v);

	if (err)
		return err;
	if (v > UINT32_MAX)
		return rd__fail(r, "%s section: %s %" PRIu64 " too large at byte %zu", r->sec, what, v, start);
	*out = (uint32_t)v;
	return 0;
}

/* An index into a table of n entries; with optional, 0 stands for GT_NONE. */
static int rd__index(struct rd *r, uint32_t n, int optional, uint32_t *out, const char *what)
{
	size_t start = r->pos;
	uint64_t v;
	int err = rd__uv(r, &v);

	if (err)
		return err;
	if (optional) {
		if (!v) {
			*out = GT_NONE;
			return 0;
		}
		v--;
	}
	if (v >= n)
		return rd__fail(r, "%s section: %s %" PRIu64 " out of range (%" PRIu32 " present) at byte %zu",
				r->sec, what, v, n, start);
	*out = (uint32_t)v;
	return 0;
}

/* A record count, capped by what the rest of the section can hold when each
 * record takes at least min_bytes, and by max. */
static int rd__count(struct rd *r, size_t min_bytes, uint64_t max, uint64_t *out)
{
	size_t start = r->pos;
	uint64_t v;
	int err = rd__uv(r, &v);

	if (err)
		return err;
	if (v > (r->end - r->pos) / min_bytes || v > max)
		return rd__fail(r, "%s section: count %" PRIu64 " at byte %zu exceeds what the section holds",
				r->sec, v, start);
	*out = v;
	return 0;
}

static int read_strings(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 1, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		size_t start = r->pos;
		uint64_t len;

		err = rd__uv(r, &len);
		if (err)
			return err;
		if (len > r->end - r->pos)
			return rd__truncated(r);
		if (memchr(r->data + r->pos, '\0', (size_t)len))
			return rd__fail(r, "STRINGS section: string %" PRIu64 " at byte %zu contains a NUL byte", i,
					start);
		if (string__add(p, (const char *)r->data + r->pos, (size_t)len, 0) == GT_NONE)
			return -ENOMEM;
		r->pos += (size_t)len;
	}
	return 0;
}

static int read_meta(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 2, GT_NONE - 1, &n);

	if (err)
		return err;
	p->meta = calloc(n ? (size_t)n : 1, sizeof(*p->meta));
	if (!p->meta)
		return -ENOMEM;
	p->cap_meta = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_prof_meta *m = &p->meta[i];

		if ((err = rd__index(r, p->n_strings, 0, &m->key, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &m->value, "string")))
			return err;
		p->n_meta++;
	}
	return 0;
}

static int read_linkage(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 2, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t name = GT_NONE, linkage = GT_NONE;

		if ((err = rd__index(r, p->n_strings, 0, &name, "string")) ||
		    (err = rd__index(r, p->n_strings, 0, &linkage, "string")))
			return err;
		err = gt_profile__set_linkage(p, name, linkage);
		if (err)
			return err;
	}
	return 0;
}

static int read_classes(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 2, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t metric = GT_NONE;
		uint64_t cls;

		if ((err = rd__index(r, p->n_metrics, 0, &metric, "metric")) || (err = rd__uv(r, &cls)))
			return err;
		/* A class of a later version: the one known here stays. */
		if (cls < GT_MC__COUNT)
			gt_profile__set_metric_class(p, metric, (uint32_t)cls);
	}
	return 0;
}

static int read_modules(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 1, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t path = GT_NONE; /* set by rd__index when it returns 0 */

		err = rd__index(r, p->n_strings, 0, &path, "string");
		if (err)
			return err;
		if (module__add(p, path, 0) == GT_NONE)
			return -ENOMEM;
	}
	return 0;
}

static int read_metrics(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 3, GT_NONE - 1, &n);

	if (err)
		return err;
	p->metrics = calloc(n ? (size_t)n : 1, sizeof(*p->metrics));
	if (!p->metrics)
		return -ENOMEM;
	p->cap_metrics = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_prof_metric *m = &p->metrics[i];

		if ((err = rd__index(r, p->n_strings, 0, &m->name, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &m->unit, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &m->desc, "string")))
			return err;
		/* A profile without CLASSES (or one naming a metric this
		 * version knows): the class its name has here. */
		m->cls = gt_metric__class_by_name(gt_profile__str(p, m->name));
		p->n_metrics++;
	}
	return 0;
}

static int read_threads(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 3, GT_NONE - 1, &n);

	if (err)
		return err;
	p->threads = calloc(n ? (size_t)n : 1, sizeof(*p->threads));
	if (!p->threads)
		return -ENOMEM;
	p->cap_threads = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_prof_thread *t = &p->threads[i];

		if ((err = rd__u32(r, &t->id, "thread id")) || (err = rd__u32(r, &t->tid, "thread tid")) ||
		    (err = rd__index(r, p->n_strings, 1, &t->kind, "string")))
			return err;
		p->n_threads++;
	}
	return 0;
}

static int read_nodes(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 7, GT_NONE - 1, &n);

	if (err)
		return err;
	p->nodes = calloc(n ? (size_t)n : 1, sizeof(*p->nodes));
	if (!p->nodes)
		return -ENOMEM;
	p->cap_nodes = (uint32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_prof_node *nd = &p->nodes[i];
		size_t start = r->pos;
		uint64_t up;

		if ((err = rd__uv(r, &up)) || (err = rd__u32(r, &nd->kind, "node kind")) ||
		    (err = rd__index(r, p->n_strings, 1, &nd->name, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &nd->file, "string")) ||
		    (err = rd__u32(r, &nd->line, "line")) ||
		    (err = rd__index(r, p->n_modules, 1, &nd->module, "module")) ||
		    (err = rd__uv(r, &nd->offset)))
			return err;
		if (i == 0 && (up != 0 || nd->kind != GT_PNODE_ROOT))
			return rd__fail(r, "NODES section: node 0 at byte %zu is not the root", start);
		if (i > 0 && (up == 0 || up > i))
			return rd__fail(r, "NODES section: node %" PRIu32 " at byte %zu has no earlier parent", i,
					start);
		if (i > 0 && nd->kind == GT_PNODE_ROOT)
			return rd__fail(r, "NODES section: node %" PRIu32 " at byte %zu is a second root", i, start);
		nd->parent = i ? i - (uint32_t)up : GT_NONE;
		p->n_nodes++;
	}
	return 0;
}

static int read_values(struct rd *r, struct gt_profile *p)
{
	uint64_t groups;
	uint32_t node = 0;
	int err = rd__count(r, 5, UINT64_MAX, &groups);

	if (err)
		return err;
	for (uint64_t g = 0; g < groups; g++) {
		size_t start = r->pos;
		uint64_t delta, n;

		if ((err = rd__uv(r, &delta)) || (err = rd__count(r, 3, UINT64_MAX, &n)))
			return err;
		/* Writers never emit empty groups; allowing them would break the
		 * 5-byte minimum that caps the group count above. */
		if (!n)
			return rd__fail(r, "VALUES section: empty group at byte %zu", start);
		if (delta >= (uint64_t)p->n_nodes - node)
			return rd__fail(r, "VALUES section: node %" PRIu64 " at byte %zu out of range (%" PRIu32
					" nodes)", (uint64_t)node + delta, start, p->n_nodes);
		node += (uint32_t)delta;
		if (n > p->cap_values - p->n_values) {
			uint64_t want = p->n_values + n;
			void *q = NULL;

			if (want <= SIZE_MAX / sizeof(*p->values))
				q = realloc(p->values, (size_t)want * sizeof(*p->values));
			if (!q)
				return -ENOMEM;
			p->values = q;
			p->cap_values = want;
		}
		for (uint64_t k = 0; k < n; k++) {
			struct gt_prof_value *v = &p->values[p->n_values];

			v->node = node;
			if ((err = rd__index(r, p->n_metrics, 0, &v->metric, "metric")) ||
			    (err = rd__index(r, p->n_threads, 0, &v->thread, "thread")) ||
			    (err = rd__uv(r, &v->value)))
				return err;
			p->n_values++;
		}
	}
	return 0;
}

static int (*const section_readers[SEC__KNOWN])(struct rd *, struct gt_profile *) = {
	[SEC_STRINGS] = read_strings, [SEC_META] = read_meta,       [SEC_MODULES] = read_modules,
	[SEC_METRICS] = read_metrics, [SEC_THREADS] = read_threads, [SEC_NODES] = read_nodes,
	[SEC_VALUES] = read_values,   [SEC_LINKAGE] = read_linkage, [SEC_CLASSES] = read_classes,
};

static int decode(struct gt_profile *p, const uint8_t *d, size_t len, char *err, size_t errlen)
{
	struct rd r = { .data = d, .pos = 0, .end = len, .sec = "header", .err = err, .errlen = errlen };
	size_t sec_at[SEC__KNOWN], sec_len[SEC__KNOWN];
	int seen[SEC__KNOWN] = { 0 };
	uint32_t version;
	int rc;

	if (len < 8 || memcmp(d, GT_PROFILE_MAGIC, 8))
		return rd__fail(&r, "not a gputool profile (%s)", len < 8 ? "file too short" : "bad magic");
	if (len < HEADER_BYTES)
		return rd__fail(&r, "truncated file: header ends at byte %zu", len);
	version = (uint32_t)le_load(d + 8, 4);
	if (version == 0)
		return rd__fail(&r, "invalid profile format version 0");
	if (version > GT_PROFILE_VERSION)
		return rd__fail(&r,
				"profile format version %" PRIu32 " is newer than this gputool reads (%u); "
				"use a newer gputool",
				version, GT_PROFILE_VERSION);

	/* Find the sections; stop at END, whose CRC vouches for all before it. */
	for (r.pos = HEADER_BYTES;;) {
		size_t at = r.pos;
		uint32_t tag;
		uint64_t slen;

		if (len - at < SECTION_BYTES)
			return rd__fail(&r, "truncated file: no END section (file ends at byte %zu)", len);
		tag = (uint32_t)le_load(d + at, 4);
		slen = le_load(d + at + 4, 8);
		if (slen > len - at - SECTION_BYTES)
			return rd__fail(&r, "truncated file: section at byte %zu claims %" PRIu64
					" bytes, %zu remain", at, slen, len - at - SECTION_BYTES);
		r.pos = at + SECTION_BYTES + (size_t)slen;
		if (tag >= SEC__KNOWN)
			continue; /* a later format's section */
		if (seen[tag])
			return rd__fail(&r, "duplicate %s section at byte %zu", section_names[tag], at);
		seen[tag] = 1;
		sec_at[tag] = at + SECTION_BYTES;
		sec_len[tag] = (size_t)slen;
		if (tag != SEC_END)
			continue;
		if (slen < 4)
			return rd__fail(&r, "END section at byte %zu has no checksum", at);
		if (r.pos != len)
			return rd__fail(&r, "%zu unexpected bytes after the END section", len - r.pos);
		if (gt_crc32(d, at) != (uint32_t)le_load(d + at + SECTION_BYTES, 4))
			return rd__fail(&r, "checksum mismatch: the file is corrupt");
		break;
	}

	/* Later sections refer to earlier ones in this order. */
	for (int tag = SEC_STRINGS; tag < SEC__KNOWN; tag++) {
		if (!seen[tag])
			continue;
		r.sec = section_names[tag];
		r.pos = sec_at[tag];
		r.end = sec_at[tag] + sec_len[tag];
		rc = section_readers[tag](&r, p);
		if (rc)
			return rc;
		/* Bytes after the last record are what a later minor revision may
		 * append; they are ignored. */
	}
	return 0;
}

int gt_profile__read(struct gt_profile *p, FILE *f, char *err, size_t errlen)
{
	uint8_t *d;
	size_t len;
	int rc;

	gt_profile__init(p);
	if (err && errlen)
		err[0] = '\0';
	rc = gt_slurp(f, &d, &len);
	if (rc) {
		if (err && errlen)
			snprintf(err, errlen, "%s", rc == -EIO ? "read error" : "out of memory");
		return rc;
	}
	rc = decode(p, d, len, err, errlen);
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	if (rc)
		gt_profile__fini(p);
	free(d);
	return rc;
}
