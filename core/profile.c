/* SPDX-License-Identifier: MIT */
/*
 * The profile model: building, interning, totals. The binary file is
 * written by profile-write.c and read by profile-read.c; docs/PROFILE.md
 * describes it byte by byte. Its JSON form is the report's (report/).
 */
#include "core/profile.h"

#include "core/hash.h"
#include "core/metrics.h"
#include "core/profile-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const gt_profile_section_names[SEC__KNOWN] = {
	[SEC_END] = "END",         [SEC_STRINGS] = "STRINGS", [SEC_META] = "META",
	[SEC_MODULES] = "MODULES", [SEC_METRICS] = "METRICS", [SEC_THREADS] = "THREADS",
	[SEC_NODES] = "NODES",     [SEC_VALUES] = "VALUES",   [SEC_LINKAGE] = "LINKAGE",
	[SEC_CLASSES] = "CLASSES",
};

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
	uint64_t h = gt_hash__bytes(s, len);

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
uint32_t gt_profile__add_string(struct gt_profile *p, const char *s, size_t len, int dedup)
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

uint32_t gt_profile__add_module(struct gt_profile *p, uint32_t path, int dedup)
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
	return s ? gt_profile__add_string(p, s, strlen(s), 1) : GT_NONE;
}

uint32_t gt_profile__module(struct gt_profile *p, const char *path)
{
	uint32_t s = gt_profile__string(p, path);

	return s == GT_NONE ? GT_NONE : gt_profile__add_module(p, s, 1);
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

