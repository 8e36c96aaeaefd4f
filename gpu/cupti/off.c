/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend when the CUDA headers were missing at build time: the
 * entry point exists, and says once that the backend is not built in; no
 * probe is added (gpu/backend.h).
 */
#include "core/log.h"
#include "core/tool.h"
#include "gpu/cupti/cupti.h"

__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	if (gt_tool__start() == 0)
		gt_warn("cupti", "off (built without the CUDA headers)");
	return 0;
}
