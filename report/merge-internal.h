/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_MERGE_INTERNAL_H
#define GT_REPORT_MERGE_INTERNAL_H

/* Shared by the merge (merge.c) and its canonical order (merge-canon.c). */
#include <stdint.h>

#include "report/report.h"

/* Per (local node, column) of the profile being added. */
struct slot {
	uint64_t excl, incl;
	uint64_t tmin, tmax, tn; /* over its threads */
};

/* A value of the profile, on local nodes and columns (the slow path). */
struct mval {
	uint32_t ln, col, thread;
	uint64_t value;
};

struct gt_run_scratch {
	uint32_t *smap, *modmap, *metmap, *col, *cols, *L, *lmerged, *lparent;
	size_t cap_smap, cap_modmap, cap_metmap, cap_col, cap_cols, cap_L, cap_lm, cap_lp;
	uint32_t *stamp, *loc; /* per run node */
	size_t cap_stamp, cap_loc;
	/* The previous profile's run node of each of its node indices: ranks
	 * of one program have nearly the same tree, so most lookups are one
	 * comparison with what the same index was last time. */
	uint32_t *prev;
	size_t cap_prev;
	uint32_t n_prev;
	uint8_t *dupl; /* per local node: two nodes of the profile share it */
	size_t cap_dupl;
	uint32_t cur;
	struct slot *slots;
	size_t cap_slots;
	struct mval *mv;
	size_t cap_mv;
};

/* What tells two nodes with the same parent apart: an unknown function's
 * offset, nothing else of the offset. */
uint64_t gt_run__node_koff(const struct gt_prof_node *n);
uint32_t gt_run__node_hash(const struct gt_prof_node *n);
/* Doubles the run's node hash and puts every node back in: 0 or -ENOMEM. */
int gt_run__slots_grow(struct gt_run *r);
/* Metric m of src in dst (interned by name), with its class; GT_NONE when
 * out of memory. */
uint32_t gt_run__metric_copy(struct gt_profile *dst, const struct gt_profile *src, uint32_t m);
/* A function name's symbol name goes where the name goes: string s of src
 * became string to of dst. */
void gt_run__linkage_copy(struct gt_profile *dst, uint32_t to, const struct gt_profile *src, uint32_t s);

#endif
