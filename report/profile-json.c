/* SPDX-License-Identifier: MIT */
/* The JSON form of a profile (docs/PROFILE.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "core/profile-internal.h"
#include "core/text.h"

#define JSON_MAX_CELLS (1ull << 29) /* inclusive sums held at once: 4 GiB */

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence at s (up to end), 0 if invalid. */
static void json__ref(FILE *f, uint32_t ref)
{
	if (ref == GT_NONE)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu32, ref);
}

static const char *node_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[GT_PNODE_ROOT] = "root",
		[GT_PNODE_FRAME] = "frame",
		[GT_PNODE_PLACEHOLDER] = "placeholder",
		[GT_PNODE_NAME] = "name",
		[GT_PNODE_INLINE] = "inline",
		[GT_PNODE_TAIL] = "tail",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "other";
}

static const char *metric_name(const struct gt_profile *p, uint32_t m)
{
	const char *s = gt_profile__str(p, p->metrics[m].name);

	return s ? s : "?";
}

/* One node's line; v[0, nv) are its values, sorted by (metric, thread). */
static void json__node(FILE *f, const struct gt_profile *p, uint32_t i, const struct gt_prof_value *v, uint64_t nv,
		       const uint64_t *incl, const uint32_t *used, uint32_t n_used)
{
	const struct gt_prof_node *n = &p->nodes[i];
	const char *sep = "";
	uint64_t a, b;

	fprintf(f, "{\"id\":%" PRIu32 ",\"parent\":", i);
	json__ref(f, n->parent);
	fprintf(f, ",\"kind\":\"%s\",\"name\":", node_kind_name(n->kind));
	gt_json__str(f, gt_profile__str(p, n->name), 0);
	if (gt_profile__linkage(p, n->name) != GT_NONE) {
		fputs(",\"linkage_name\":", f);
		gt_json__str(f, gt_profile__str(p, gt_profile__linkage(p, n->name)), 0);
	}
	fputs(",\"file\":", f);
	gt_json__str(f, gt_profile__str(p, n->file), 0);
	fprintf(f, ",\"line\":%" PRIu32 ",\"module\":", n->line);
	json__ref(f, n->module);
	fprintf(f, ",\"offset\":%" PRIu64 ",\"exclusive\":{", n->offset);
	for (a = 0; a < nv; a = b) {
		uint64_t sum = 0;

		for (b = a; b < nv && v[b].metric == v[a].metric; b++)
			sum = sat_add(sum, v[b].value);
		fprintf(f, "%s", sep);
		gt_json__str(f, metric_name(p, v[a].metric), 0);
		fprintf(f, ":%" PRIu64, sum);
		sep = ",";
	}
	fputs("},\"inclusive\":{", f);
	sep = "";
	for (uint32_t k = 0; k < n_used; k++) {
		uint64_t x = incl[(uint64_t)i * n_used + k];

		if (!x)
			continue;
		fprintf(f, "%s", sep);
		gt_json__str(f, metric_name(p, used[k]), 0);
		fprintf(f, ":%" PRIu64, x);
		sep = ",";
	}
	fputs("},\"threads\":{", f);
	for (a = 0; a < nv; a = b) {
		fprintf(f, "%s", a ? "," : "");
		gt_json__str(f, metric_name(p, v[a].metric), 0);
		putc(':', f);
		putc('{', f);
		for (b = a; b < nv && v[b].metric == v[a].metric; b++)
			fprintf(f, "%s\"%" PRIu32 "\":%" PRIu64, b > a ? "," : "", p->threads[v[b].thread].id,
				v[b].value);
		putc('}', f);
	}
	fputs("}}", f);
}

int gt_profile__write_json(const struct gt_profile *p, FILE *f)
{
	struct gt_prof_value *v;
	uint32_t *col = NULL, *used = NULL, n_used = 0;
	uint64_t nv, *incl = NULL, k;
	size_t cells;
	int err;

	err = gt_profile__check(p);
	if (err)
		return err;
	err = gt_profile__sorted_values(p, &v, &nv);
	if (err)
		return err;

	/* Inclusive sums, one column per metric that has values. */
	err = -ENOMEM;
	col = malloc(((size_t)p->n_metrics + 1) * sizeof(*col));
	used = malloc(((size_t)p->n_metrics + 1) * sizeof(*used));
	if (!col || !used)
		goto out_free;
	for (uint32_t m = 0; m < p->n_metrics; m++)
		col[m] = GT_NONE;
	for (k = 0; k < nv; k++)
		col[v[k].metric] = 0; /* numbered below, in metric order */
	for (uint32_t m = 0; m < p->n_metrics; m++)
		if (col[m] != GT_NONE) {
			used[n_used] = m;
			col[m] = n_used++;
		}
	/* Real profiles stay far below this; a crafted one with many nodes and
	 * many metrics would otherwise ask for their product. */
	if (n_used && (uint64_t)p->n_nodes * n_used > JSON_MAX_CELLS)
		goto out_free;
	cells = (size_t)p->n_nodes * n_used;
	incl = calloc(cells ? cells : 1, sizeof(*incl));
	if (!incl)
		goto out_free;
	for (k = 0; k < nv; k++) {
		uint64_t *x = &incl[(uint64_t)v[k].node * n_used + col[v[k].metric]];

		*x = sat_add(*x, v[k].value);
	}
	for (uint32_t i = p->n_nodes; i-- > 1;)
		for (uint32_t c = 0; c < n_used; c++) {
			uint64_t *up = &incl[(uint64_t)p->nodes[i].parent * n_used + c];

			*up = sat_add(*up, incl[(uint64_t)i * n_used + c]);
		}

	fprintf(f, "{\"format\":\"gputool-profile\",\"version\":%u,\n\"meta\":{", GT_PROFILE_VERSION);
	for (uint32_t i = 0; i < p->n_meta; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		gt_json__str(f, gt_profile__str(p, p->meta[i].key), 0);
		putc(':', f);
		gt_json__str(f, gt_profile__str(p, p->meta[i].value), 0);
	}
	fputs("},\n\"metrics\":[", f);
	for (uint32_t i = 0; i < p->n_metrics; i++) {
		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", f);
		gt_json__str(f, gt_profile__str(p, p->metrics[i].name), 0);
		fputs(",\"unit\":", f);
		gt_json__str(f, gt_profile__str(p, p->metrics[i].unit), 0);
		fputs(",\"description\":", f);
		gt_json__str(f, gt_profile__str(p, p->metrics[i].desc), 0);
		fprintf(f, ",\"class\":\"%s\"}",
			gt_metric_class_names[p->metrics[i].cls < GT_MC__COUNT ? p->metrics[i].cls : 0]);
	}
	fputs("],\n\"threads\":[", f);
	for (uint32_t i = 0; i < p->n_threads; i++) {
		fprintf(f, "%s{\"id\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"kind\":", i ? ",\n  " : "\n  ",
			p->threads[i].id, p->threads[i].tid);
		gt_json__str(f, gt_profile__str(p, p->threads[i].kind), 0);
		putc('}', f);
	}
	fputs("],\n\"modules\":[", f);
	for (uint32_t i = 0; i < p->n_modules; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		gt_json__str(f, gt_profile__str(p, p->modules[i]), 0);
	}
	fputs("],\n\"nodes\":[", f);
	k = 0;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t first = k;

		while (k < nv && v[k].node == i)
			k++;
		fputs(i ? ",\n  " : "\n  ", f);
		json__node(f, p, i, nv ? v + first : NULL, k - first, incl, used, n_used);
	}
	fputs("]}\n", f);
	err = ferror(f) || fflush(f) ? -EIO : 0;
out_free:
	free(incl);
	free(used);
	free(col);
	free(v);
	return err;
}
