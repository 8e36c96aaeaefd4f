/* SPDX-License-Identifier: MIT */
/*
 * One process's profile reported as a run of one process: the report the
 * library writes at exit is what `gputool report FILE` prints for the
 * profile it wrote beside it, through the same merge, views and writer.
 */
#include <errno.h>
#include <stdlib.h>

#include "report/report.h"
#include "report/sections.h"

int gt_report__write_profile(const struct gt_profile *p, const char *path, FILE *f, unsigned top)
{
	struct gt_out_opts o = { .view = GT_VIEW_TOP_DOWN, .top = top ? top : GT_REPORT_TOP, .path = path };
	struct gt_analysis a;
	struct gt_run r;
	char why[256];
	int err;

	err = gt_profile__check(p);
	if (err)
		return err;
	err = gt_run__init(&r, 1);
	if (err)
		return err;
	err = gt_run__add(&r, 0, p);
	if (!err)
		err = gt_run__canonicalize(&r);
	if (!err)
		err = gt_analysis__init(&a, &r, NULL, why, sizeof(why));
	if (!err) {
		err = gt_text__write(f, &a, &o);
		gt_analysis__fini(&a);
	}
	gt_run__fini(&r);
	return err;
}

