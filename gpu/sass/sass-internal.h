/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_SASS_INTERNAL_H
#define GT_GPU_SASS_INTERNAL_H

#include "gpu/sass/sass.h"

/* The natural loops of every function (loops.c): sets s->loops and each
 * instruction's innermost loop. 0 or -ENOMEM. */
int gt_sass__loops(struct gt_sass *s);

#endif
