/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend when the CUDA headers were missing at build time: the
 * entry points exist, and say once that the backend is not built in.
 */
#include "core/log.h"
#include "core/tool.h"
#include "gpu/cupti/cupti.h"

void gt_cupti__attach(const char *why)
{
	(void)why;
}

__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	if (gt_tool__start() == 0)
		gt_warn("cupti", "off (built without the CUDA headers)");
	return 0;
}
