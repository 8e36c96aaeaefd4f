/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained page (report/report.html, built
 * into the command) with the run's JSON form inside it. The page loads
 * nothing from anywhere; its script draws the top-down tree, a flame
 * graph, the bottom-up and flat views and the process table.
 */
#include <errno.h>
#include <string.h>

#include "report/report.h"
#include "report/report-html.h"

/* Where the page takes the run's JSON, and its first tab (the string
 * after the mark is the page's own default). */
#define DATA_MARK "/*GPUTOOL-DATA*/"
#define VIEW_MARK "/*GPUTOOL-VIEW*/\"top-down\""

int gt_html__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o)
{
	static const char *const views[] = { [GT_VIEW_TOP_DOWN] = "top-down", [GT_VIEW_BOTTOM_UP] = "bottom-up",
					     [GT_VIEW_FLAT] = "flat" };
	const char *data = strstr(gt_html_template, DATA_MARK), *view;
	int err;

	if (!data || !(view = strstr(data, VIEW_MARK)))
		return -EINVAL;
	fwrite(gt_html_template, 1, (size_t)(data - gt_html_template), f);
	/* Strings escape '<', so the data cannot end its script element. */
	err = gt_json__write(f, a, o, 1);
	if (err)
		return err;
	data += strlen(DATA_MARK);
	fwrite(data, 1, (size_t)(view - data), f);
	fprintf(f, "\"%s\"", views[o->view]);
	fputs(view + strlen(VIEW_MARK), f);
	return ferror(f) || fflush(f) ? -EIO : 0;
}
