/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_PROFILE_INTERNAL_H
#define GT_CORE_PROFILE_INTERNAL_H

#include "core/profile.h"

#include <stdint.h>

/* Sums stop at UINT64_MAX rather than wrapping. */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Shared by the binary and JSON writers (profile.c, profile-json.c). */

/* 0 if p obeys the tree rules of profile.h, else -EINVAL. */
int gt_profile__check(const struct gt_profile *p);
/* A copy of p's values sorted by (node, thread, metric); free() it. */
int gt_profile__sorted_values(const struct gt_profile *p, struct gt_prof_value **out, uint64_t *n_out);

#endif
