/* SPDX-License-Identifier: MIT */
/*
 * Part of libgputool.so only: hands core the report library's writer for
 * the report at exit (core/tool.h), so that core needs no link to it.
 */
#include "core/tool.h"
#include "report/report.h"

__attribute__((constructor)) static void exit__register(void)
{
	gt_tool__set_report(gt_report__write_profile);
}
