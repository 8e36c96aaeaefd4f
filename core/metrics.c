/* SPDX-License-Identifier: MIT */
#include "core/metrics.h"

#include <string.h>

const struct gt_metric_desc gt_metric_descs[GT_M__COUNT] = {
#define X(id, name, unit, cls, desc) [GT_M_##id] = { name, unit, desc, GT_MC_##cls },
	GT_METRICS(X)
#undef X
};

const char *const gt_metric_class_names[GT_MC__COUNT] = {
	[GT_MC_UNKNOWN] = "unknown", [GT_MC_CPU] = "cpu",     [GT_MC_DEVICE] = "device",
	[GT_MC_GPU_HOST] = "gpu_host", [GT_MC_HOST] = "host", [GT_MC_COUNT] = "count",
	[GT_MC_BYTES] = "bytes",     [GT_MC_BLAME] = "blame", [GT_MC_ADVICE] = "advice",
	[GT_MC_WALL] = "wall",
};

enum gt_metric_class gt_metric__class_by_name(const char *name)
{
	for (int i = 0; name && i < GT_M__COUNT; i++)
		if (!strcmp(gt_metric_descs[i].name, name))
			return gt_metric_descs[i].cls;
	return GT_MC_UNKNOWN;
}
