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

/* An optional index: 0 for GT_NONE, index + 1 otherwise. */
static void buf__ref(struct gt_bytes *b, uint32_t ref)
{
	gt_bytes__uv(b, ref == GT_NONE ? 0 : (uint64_t)ref + 1);
}

static size_t section__begin(struct gt_bytes *b, uint32_t tag)
{
	size_t at = b->len;

	gt_bytes__fixed(b, tag, 4);
	gt_bytes__fixed(b, 0, 8); /* patched by section__end */
	return at;
}

static void section__end(struct gt_bytes *b, size_t at)
{
	if (!b->oom)
		le_store(b->d + at + 4, b->len - at - SECTION_BYTES, 8);
}

static void encode(const struct gt_profile *p, const struct gt_prof_value *v, uint64_t nv, struct gt_bytes *b)
{
	size_t at;

	gt_bytes__put(b, GT_PROFILE_MAGIC, 8);
	gt_bytes__fixed(b, GT_PROFILE_VERSION, 4);
	gt_bytes__fixed(b, 0, 4); /* flags: none defined */

	at = section__begin(b, SEC_STRINGS);
	gt_bytes__uv(b, p->n_strings);
	for (uint32_t i = 0; i < p->n_strings; i++) {
		size_t len = strlen(p->strings[i]);

		gt_bytes__uv(b, len);
		gt_bytes__put(b, p->strings[i], len);
	}
	section__end(b, at);

	at = section__begin(b, SEC_META);
	gt_bytes__uv(b, p->n_meta);
	for (uint32_t i = 0; i < p->n_meta; i++) {
		gt_bytes__uv(b, p->meta[i].key);
		buf__ref(b, p->meta[i].value);
	}
	section__end(b, at);

	at = section__begin(b, SEC_MODULES);
	gt_bytes__uv(b, p->n_modules);
	for (uint32_t i = 0; i < p->n_modules; i++)
		gt_bytes__uv(b, p->modules[i]);
	section__end(b, at);

	at = section__begin(b, SEC_METRICS);
	gt_bytes__uv(b, p->n_metrics);
	for (uint32_t i = 0; i < p->n_metrics; i++) {
		gt_bytes__uv(b, p->metrics[i].name);
		buf__ref(b, p->metrics[i].unit);
		buf__ref(b, p->metrics[i].desc);
	}
	section__end(b, at);

	at = section__begin(b, SEC_THREADS);
	gt_bytes__uv(b, p->n_threads);
	for (uint32_t i = 0; i < p->n_threads; i++) {
		gt_bytes__uv(b, p->threads[i].id);
		gt_bytes__uv(b, p->threads[i].tid);
		buf__ref(b, p->threads[i].kind);
	}
	section__end(b, at);

	at = section__begin(b, SEC_NODES);
	gt_bytes__uv(b, p->n_nodes);
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const struct gt_prof_node *n = &p->nodes[i];

		gt_bytes__uv(b, i ? i - n->parent : 0);
		gt_bytes__uv(b, n->kind);
		buf__ref(b, n->name);
		buf__ref(b, n->file);
		gt_bytes__uv(b, n->line);
		buf__ref(b, n->module);
		gt_bytes__uv(b, n->offset);
	}
	section__end(b, at);

	/* Groups of values, one per node that has any, nodes in increasing order. */
	at = section__begin(b, SEC_VALUES);
	{
		uint64_t groups = 0, i, j;
		uint32_t prev = 0;

		for (i = 0; i < nv; i++)
			groups += !i || v[i].node != v[i - 1].node;
		gt_bytes__uv(b, groups);
		for (i = 0; i < nv; i = j) {
			for (j = i; j < nv && v[j].node == v[i].node; j++)
				;
			gt_bytes__uv(b, v[i].node - prev);
			gt_bytes__uv(b, j - i);
			for (uint64_t k = i; k < j; k++) {
				gt_bytes__uv(b, v[k].metric);
				gt_bytes__uv(b, v[k].thread);
				gt_bytes__uv(b, v[k].value);
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
		gt_bytes__uv(b, n);
		for (uint32_t i = 0; i < p->n_metrics; i++) {
			if (p->metrics[i].cls == GT_MC_UNKNOWN)
				continue;
			gt_bytes__uv(b, i);
			gt_bytes__uv(b, p->metrics[i].cls);
		}
	}
	section__end(b, at);

	at = section__begin(b, SEC_LINKAGE);
	{
		uint32_t n = 0, cap = p->cap_linkage < p->n_strings ? p->cap_linkage : p->n_strings;

		for (uint32_t i = 0; i < cap; i++)
			n += p->linkage[i] != GT_NONE;
		gt_bytes__uv(b, n);
		for (uint32_t i = 0; i < cap; i++) {
			if (p->linkage[i] == GT_NONE)
				continue;
			gt_bytes__uv(b, i);
			gt_bytes__uv(b, p->linkage[i]);
		}
	}
	section__end(b, at);

	/* END carries the CRC of every byte before it. */
	{
		uint32_t crc = b->oom ? 0 : gt_crc32(b->d, b->len);

		gt_bytes__fixed(b, SEC_END, 4);
		gt_bytes__fixed(b, 4, 8);
		gt_bytes__fixed(b, crc, 4);
	}
}

int gt_profile__write(const struct gt_profile *p, FILE *f)
{
	struct gt_prof_value *v;
	struct gt_bytes b = { 0 };
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
	errno = 0;
	if (fwrite(b.d, 1, b.len, f) != b.len || fflush(f))
		err = errno ? -errno : -EIO; /* EFBIG, ENOSPC, ... */
out_free_buf:
	free(b.d);
	free(v);
	return err;
}

