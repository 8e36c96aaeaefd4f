/* SPDX-License-Identifier: MIT */
/*
 * Hatchet's literal form: the JSON of a list of trees that
 * hatchet.GraphFrame.from_literal(json.load(f)) reads (and Thicket through
 * it). One tree, from "<program>"; a node per context with a value, as
 *
 *   {"frame": {"name": "solve", "type": "function", "file": "a.c", "line": 12},
 *    "metrics": {"CPUTIME": 1000, "CPUTIME (inc)": 5000, ...},
 *    "children": [...]}
 *
 * Every node carries every metric with a value in the run, exclusive and
 * "(inc)" (Hatchet's mark of an inclusive metric), in the metric's unit,
 * summed over processes and threads. Frame types: "function", "inlined
 * function", "tail call" (a frame rebuilt from DWARF), "region" (the
 * placeholders: "<omp parallel>", "<gpu kernel>", ...), "name" (a kernel,
 * copy or other name under its placeholder), "root".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const char *type_of(uint32_t kind)
{
	switch (kind) {
	case GT_PNODE_ROOT: return "root";
	case GT_PNODE_FRAME: return "function";
	case GT_PNODE_INLINE: return "inlined function";
	case GT_PNODE_TAIL: return "tail call";
	case GT_PNODE_PLACEHOLDER: return "region";
	default: return "name";
	}
}

static int open_node(FILE *f, const struct gt_analysis *a, uint32_t i, const struct gt_used *u, char *const *inc)
{
	const struct gt_profile *t = a->t;
	const struct gt_prof_node *n = &t->nodes[i];
	const char *file = gt_profile__str(t, n->file);
	struct gt_sb b = { 0 };

	gt_label(&b, t, i, GT_LABEL_NAME_ONLY);
	if (b.oom || !b.s) {
		free(b.s);
		return -ENOMEM;
	}
	fputs("{\"frame\":{\"name\":", f);
	gt_json__str(f, b.s, 0);
	free(b.s);
	fprintf(f, ",\"type\":\"%s\"", type_of(n->kind));
	if (gt_pnode__is_frame(n->kind) && file) {
		fputs(",\"file\":", f);
		gt_json__str(f, file, 0);
		if (n->line)
			fprintf(f, ",\"line\":%" PRIu32, n->line);
	}
	fputs("},\"metrics\":{", f);
	for (uint32_t k = 0; k < u->n; k++) {
		const struct gt_cell *c = gt_run__cell(a->run, i, u->metric[k]);
		const char *name = gt_profile__str(t, t->metrics[u->metric[k]].name);

		if (k)
			fputc(',', f);
		gt_json__str(f, name ? name : "?", 0);
		fprintf(f, ":%" PRIu64 ",", c ? c->excl.sum : 0);
		gt_json__str(f, inc[k], 0);
		fprintf(f, ":%" PRIu64, c ? c->incl.sum : 0);
	}
	fputc('}', f);
	return 0;
}

/* The next kept child of node after child c (c == GT_NONE: the first). */
static uint32_t next_kept(const struct gt_analysis *a, const uint8_t *keep, uint32_t node, uint32_t c)
{
	c = c == GT_NONE ? a->first[node] : a->next[c];
	while (c != GT_NONE && !keep[c])
		c = a->next[c];
	return c;
}

int gt_hatchet__write(FILE *f, const struct gt_analysis *a)
{
	const struct gt_profile *t = a->t;
	uint32_t *stack = NULL, *at = NULL, depth = 0;
	char **inc = NULL;
	struct gt_used u;
	int err;

	err = gt_used__init(&u, a->run, 1);
	if (err)
		return err;
	err = -ENOMEM;
	stack = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*stack));
	at = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*at));
	inc = calloc(u.n ? u.n : 1, sizeof(*inc));
	if (!stack || !at || !inc)
		goto out;
	/* Each metric's inclusive column, Hatchet's "(inc)" mark after it. */
	for (uint32_t k = 0; k < u.n; k++) {
		const char *name = gt_profile__str(t, t->metrics[u.metric[k]].name);
		struct gt_sb b = { 0 };

		gt_sb__addf(&b, "%s (inc)", name ? name : "?");
		if (b.oom || !b.s) {
			free(b.s);
			goto out;
		}
		inc[k] = b.s;
	}
	fputc('[', f);
	if (t->n_nodes) {
		/* Depth first without recursion: deep recursive programs give
		 * deep trees. at[d] is the child of stack[d] written last. */
		err = open_node(f, a, 0, &u, inc);
		if (err)
			goto out;
		stack[depth] = 0;
		at[depth++] = GT_NONE;
		while (depth) {
			uint32_t top = stack[depth - 1], c = next_kept(a, u.keep, top, at[depth - 1]);

			if (c == GT_NONE) {
				fputs(at[depth - 1] == GT_NONE ? "}" : "]}", f);
				depth--;
				continue;
			}
			fputs(at[depth - 1] == GT_NONE ? ",\"children\":[\n" : ",\n", f);
			at[depth - 1] = c;
			err = open_node(f, a, c, &u, inc);
			if (err)
				goto out;
			stack[depth] = c;
			at[depth++] = GT_NONE;
		}
	}
	fputs("]\n", f);
	err = ferror(f) || fflush(f) ? -EIO : 0;
out:
	for (uint32_t k = 0; inc && k < u.n; k++)
		free(inc[k]);
	free(inc);
	gt_used__fini(&u);
	free(stack);
	free(at);
	return err;
}
