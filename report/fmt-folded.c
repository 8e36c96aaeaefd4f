/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks, the input of flamegraph.pl and one that speedscope reads:
 * one line per context with an exclusive value of the view's metric, its
 * path from the outermost caller joined by ';', a space, and the value (an
 * integer, in the metric's unit). The lines add up to the metric's total.
 * A ';' inside a name would split a frame, so it becomes ':'; control
 * characters become '?'. The first line names the metric and its unit,
 * as a '#' comment that does not end in a number: flamegraph.pl and
 * speedscope pass over it (flamegraph.pl counts it as one ignored line).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int gt_folded__write(FILE *f, const struct gt_analysis *a)
{
	uint32_t n = a->n_nodes, *chain;
	char **lab;
	int err = -ENOMEM;

	lab = calloc(n ? n : 1, sizeof(*lab));
	chain = malloc((n ? n : 1) * sizeof(*chain));
	if (!lab || !chain)
		goto out_free;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_sb b = { 0 };

		if (!a->incl[i])
			continue;
		gt_label(&b, a->t, i, GT_LABEL_SHORT_FILE);
		if (b.oom || !b.s) {
			free(b.s);
			goto out_free;
		}
		for (char *c = b.s; *c; c++)
			if (*c == ';')
				*c = ':';
		lab[i] = b.s;
	}
	fprintf(f, "# gputool folded stacks: metric %s, values in %s\n", a->metric_name ? a->metric_name : "?",
		a->metric_unit ? a->metric_unit : "count");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t depth = 0;

		if (!a->excl[i])
			continue;
		for (uint32_t v = i; v != 0; v = a->t->nodes[v].parent)
			chain[depth++] = v;
		if (!depth)
			fputs(lab[0], f);
		while (depth--) {
			fputs(lab[chain[depth]], f);
			if (depth)
				fputc(';', f);
		}
		fprintf(f, " %" PRIu64 "\n", a->excl[i]);
	}
	err = ferror(f) || fflush(f) ? -EIO : 0;
out_free:
	for (uint32_t i = 0; lab && i < n; i++)
		free(lab[i]);
	free(lab);
	free(chain);
	return err;
}
