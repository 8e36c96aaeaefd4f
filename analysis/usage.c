/* SPDX-License-Identifier: MIT */
/* A command line the gputool command cannot take. */
#include <stdarg.h>
#include <stdio.h>

#include "analysis/analysis.h"

int gt_usage_error(const char *topic, const char *fmt, ...)
{
	va_list ap;

	fputs("gputool: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(`gputool help%s%s` shows the usage)\n", topic ? " " : "", topic ? topic : "");
	return GT_EXIT_USAGE;
}
