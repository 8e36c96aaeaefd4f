/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained page (report/report.html, built
 * into the command) with the run's JSON form inside it. The page loads
 * nothing from anywhere; its script draws the summary and what to do next,
 * then the top-down tree, a flame graph, the bottom-up and flat views, the
 * OpenMP regions, the waits, the load imbalance and the process table.
 */
#include <errno.h>
#include <string.h>

#include "report/report.h"
#include "report/report-html.h"

/* Where the page takes the run's JSON, its first tab and its first
 * metric (the value after each mark is the page's own default: null, the
 * JSON's metric). */
#define DATA_MARK "/*GPUTOOL-DATA*/"
#define VIEW_MARK "/*GPUTOOL-VIEW*/\"top-down\""
#define METRIC_MARK "/*GPUTOOL-METRIC*/null"

/*
 * The page opens on the side the run is bound by: a GPU-bound run on its
 * GPU operations (GPUOP), whatever metric the JSON's views use, unless
 * --metric chose one. NULL: the JSON's metric.
 */
static const char *first_metric(const struct gt_analysis *a, const struct gt_out_opts *o)
{
	if (o->metric_given || a->bound != GT_BOUND_GPU || a->metric == GT_METRIC_GPUOP)
		return NULL;
	return "GPUOP";
}

int gt_html__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o)
{
	static const char *const views[] = { [GT_VIEW_TOP_DOWN] = "top-down", [GT_VIEW_BOTTOM_UP] = "bottom-up",
					     [GT_VIEW_FLAT] = "flat" };
	const char *data = strstr(gt_html_template, DATA_MARK), *view, *metric, *first = first_metric(a, o);
	int err;

	if (!data || !(view = strstr(data, VIEW_MARK)) || !(metric = strstr(view, METRIC_MARK)))
		return -EINVAL;
	fwrite(gt_html_template, 1, (size_t)(data - gt_html_template), f);
	/* Strings escape '<', so the data cannot end its script element. */
	err = gt_json__write(f, a, o, 1);
	if (err)
		return err;
	data += strlen(DATA_MARK);
	fwrite(data, 1, (size_t)(view - data), f);
	fprintf(f, "\"%s\"", views[o->view]);
	view += strlen(VIEW_MARK);
	fwrite(view, 1, (size_t)(metric - view), f);
	if (first)
		fprintf(f, "\"%s\"", first);
	else
		fputs("null", f);
	fputs(metric + strlen(METRIC_MARK), f);
	return ferror(f) || fflush(f) ? -EIO : 0;
}
