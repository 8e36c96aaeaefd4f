/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_UNIT_CCT_TEST_H
#define GT_TESTS_UNIT_CCT_TEST_H

#include <stdint.h>

#include "core/cct.h"

/* Frames (ordered root side first) under parent, as an unwind inserts them. */
static inline struct gt_cct_node *cct_test__path(struct gt_cct *cct, struct gt_cct_node *parent,
						 const uintptr_t *pcs, unsigned n, int signal_ctx)
{
	for (unsigned i = 0; i < n && parent; i++)
		parent = gt_cct__child(cct, parent, GT_NODE_FRAME, pcs[i], signal_ctx);
	return parent;
}

#endif /* GT_TESTS_UNIT_CCT_TEST_H */
