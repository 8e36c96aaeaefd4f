/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_SASS_INTERNAL_H
#define GT_GPU_SASS_INTERNAL_H

#include "gpu/sass/sass.h"

/* The natural loops of every function (loops.c): sets s->loops and each
 * instruction's innermost loop. 0 or -ENOMEM. */
int gt_sass__loops(struct gt_sass *s);

/* The strongly connected components of a graph of @n vertices, its edges
 * out of v to[start[v]] .. to[start[v + 1] - 1]: comp[v] gets v's
 * component, numbered from 0 in the order they close (a component's
 * successors first), *@ncomp their number. 0 or -ENOMEM. */
int gt_sass__scc(uint32_t n, const uint32_t *start, const uint32_t *to, uint32_t *comp, uint32_t *ncomp);

#endif
