/* SPDX-License-Identifier: MIT */
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per metric with a value, whose samples are the
 * contexts with an exclusive value (the stack from the outermost caller
 * down) weighted by it, in the metric's unit. Frames are functions: a
 * function's contexts at different lines share one frame, as in a
 * profile of perf, so that the left-heavy and sandwich views add them up.
 * The profile shown first is the view's metric.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct frame_key {
	char *name;
	uint32_t file; /* string, or GT_NONE */
	uint32_t node;
};

static int key_cmp(const void *pa, const void *pb)
{
	const struct frame_key *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->file < b->file ? -1 : a->file > b->file;
}

static const char *unit_of(const char *unit)
{
	if (unit && !strcmp(unit, "ns"))
		return "nanoseconds";
	if (unit && !strcmp(unit, "bytes"))
		return "bytes";
	return "none";
}

/* Frame index per kept node (fid), and the frames written in "shared". */
static int frames(FILE *f, const struct gt_profile *t, const uint8_t *keep, uint32_t *fid)
{
	struct frame_key *k = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*k));
	uint32_t n = 0, out = 0;
	int err = -ENOMEM;

	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		struct gt_sb b = { 0 };

		if (!keep[i])
			continue;
		gt_label(&b, t, i, GT_LABEL_NAME_ONLY);
		if (b.oom || !b.s) {
			free(b.s);
			goto out;
		}
		k[n++] = (struct frame_key){ .name = b.s,
					     .file = gt_pnode__is_frame(t->nodes[i].kind) ? t->nodes[i].file : GT_NONE,
					     .node = i };
	}
	qsort(k, n, sizeof(*k), key_cmp);
	fputs("\"shared\":{\"frames\":[", f);
	for (uint32_t j = 0; j < n; j++) {
		const char *file = gt_profile__str(t, k[j].file);

		if (j && !key_cmp(&k[j - 1], &k[j])) {
			fid[k[j].node] = out - 1;
			continue;
		}
		fid[k[j].node] = out++;
		fputs(j ? ",\n  {\"name\":" : "\n  {\"name\":", f);
		gt_json__str(f, k[j].name, 0);
		if (file) {
			fputs(",\"file\":", f);
			gt_json__str(f, file, 0);
		}
		fputc('}', f);
	}
	fputs("]},\n", f);
	err = 0;
out:
	for (uint32_t j = 0; j < n; j++)
		free(k[j].name);
	free(k);
	return err;
}

int gt_speedscope__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o)
{
	const struct gt_run *r = a->run;
	const struct gt_profile *t = a->t;
	uint32_t *fid = NULL, *chain = NULL, active = 0;
	struct gt_used u;
	int err;

	err = gt_used__init(&u, r, 1);
	if (err)
		return err;
	err = -ENOMEM;
	fid = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*fid));
	chain = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*chain));
	if (!fid || !chain)
		goto out;
	for (uint32_t k = 0; k < u.n; k++)
		if (u.metric[k] == a->metric)
			active = k;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"gputool\",\"name\":", f);
	gt_json__str(f, o->path ? o->path : "gputool", 0);
	fprintf(f, ",\"activeProfileIndex\":%" PRIu32 ",\n", active);
	err = frames(f, t, u.keep, fid);
	if (err)
		goto out;
	fputs("\"profiles\":[", f);
	for (uint32_t k = 0; k < u.n; k++) {
		const struct gt_prof_metric *m = &t->metrics[u.metric[k]];
		int first = 1;

		fputs(k ? ",\n {\"type\":\"sampled\",\"name\":" : "\n {\"type\":\"sampled\",\"name\":", f);
		gt_json__str(f, gt_profile__str(t, m->name), 0);
		fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n  \"samples\":[",
			unit_of(gt_profile__str(t, m->unit)), u.total[k]);
		for (uint32_t i = 0; i < t->n_nodes; i++) {
			uint32_t depth = 0;

			if (!gt_run__excl(r, i, u.metric[k]))
				continue;
			/* The root's own value (no frame under it) stands on the root. */
			chain[depth++] = i;
			for (uint32_t v = t->nodes[i].parent; v != 0 && v != GT_NONE; v = t->nodes[v].parent)
				chain[depth++] = v;
			fputs(first ? "[" : ",[", f);
			first = 0;
			while (depth--)
				fprintf(f, depth ? "%" PRIu32 "," : "%" PRIu32, fid[chain[depth]]);
			fputc(']', f);
		}
		fputs("],\n  \"weights\":[", f);
		first = 1;
		for (uint32_t i = 0; i < t->n_nodes; i++) {
			uint64_t v = gt_run__excl(r, i, u.metric[k]);

			if (!v)
				continue;
			fprintf(f, first ? "%" PRIu64 : ",%" PRIu64, v);
			first = 0;
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
	err = ferror(f) || fflush(f) ? -EIO : 0;
out:
	gt_used__fini(&u);
	free(fid);
	free(chain);
	return err;
}
