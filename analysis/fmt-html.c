/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained page (analysis/report.html, built
 * into the command) with the run's JSON form inside it. The page loads
 * nothing from anywhere; its script draws the top-down tree, a flame
 * graph, the bottom-up and flat views and the process table.
 */
#include <errno.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/report-html.h"

#define DATA_MARK "/*GPUTOOL-DATA*/"

int gt_html__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o)
{
	const char *mark = strstr(gt_html_template, DATA_MARK);
	int err;

	if (!mark)
		return -EINVAL;
	fwrite(gt_html_template, 1, (size_t)(mark - gt_html_template), f);
	/* Strings escape '<', so the data cannot end its script element. */
	err = gt_json__write(f, a, o, 1);
	if (err)
		return err;
	fputs(mark + strlen(DATA_MARK), f);
	return ferror(f) || fflush(f) ? -EIO : 0;
}
