/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_PATHS_H
#define GT_REPORT_PATHS_H

/*
 * Calling contexts as text, for every table and view that shows one per
 * row (the text sections, blame, importance, imbalance, and the advice's
 * "where" in text and JSON). Labels are core/text.h's gt_label.
 *
 * A context that does not fit its width keeps what tells it apart and
 * gives way elsewhere, whole frames at a time, each run of them read "…":
 *  - always: the innermost frame in the user's own source (a file that is
 *    not a header, in the program rather than a shared library) with its
 *    line, the innermost element when it is a placeholder or a name
 *    ("<gpu kernel>", a kernel's name), and a kernel's name with its
 *    placeholder wherever they are in the path;
 *  - then the placeholders, the user's other frames from the inside out,
 *    the outermost element, frames without lines, and last the frames of
 *    libraries and headers (STL, cl2.hpp) from the outside in, so that a
 *    shortened row ends at the user's frame or the call into the library,
 *    never in the library's internals (a __sched_yield under MPI_Waitall).
 * Over a table's rows: two rows that would read the same each keep, in
 * addition, the outermost element where their contexts differ, until no
 * two read the same; rows whose contexts read the same in full (two nodes
 * with the same labels) end in " (k of m contexts)".
 */
#include <stddef.h>
#include <stdint.h>

#include "core/profile.h"

struct gt_paths_opts {
	size_t width;    /* columns of each row, at most (a name longer than that alone is cut) */
	int leaf_first;  /* innermost first joined by " < "; else outermost first by " > " */
	int label_flags; /* GT_LABEL_* of core/text.h beyond the short file name */
};

/*
 * out[k] (malloc()ed) is the context of nodes[k], from the root's child to
 * it ("<program>" for the root). Rows with the same node are one context
 * and read the same. 0 or -ENOMEM (nothing in out to free).
 */
int gt_paths__build(const struct gt_profile *p, const uint32_t *nodes, uint32_t n, const struct gt_paths_opts *o,
		    char **out);
/* One context alone; NULL: no memory. */
char *gt_paths__one(const struct gt_profile *p, uint32_t node, const struct gt_paths_opts *o);
void gt_paths__free(char **out, uint32_t n);

/* The width of text reports when not told: a terminal's is told by the caller. */
#define GT_PATHS_WIDTH 160

#endif
