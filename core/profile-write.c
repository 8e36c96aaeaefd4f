/* SPDX-License-Identifier: MIT */
/* The profile's binary file, written (docs/PROFILE.md; read in profile-read.c). */
#include "core/profile.h"

#include "core/bytes.h"
#include "core/metrics.h"
#include "core/profile-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

