/* SPDX-License-Identifier: MIT */
#include "core/metrics.h"

const struct gt_metric_desc gt_metric_descs[GT_M__COUNT] = {
#define X(id, name, unit, desc) [GT_M_##id] = { name, unit, desc },
	GT_METRICS(X)
#undef X
};
