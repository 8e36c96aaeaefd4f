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

/* For the binary writer (profile-write.c). */

/* A copy of p's values sorted by (node, thread, metric); free() it. */
int gt_profile__sorted_values(const struct gt_profile *p, struct gt_prof_value **out, uint64_t *n_out);

/* The binary file (profile-write.c, profile-read.c). */
/* Section tags (docs/PROFILE.md). Readers skip tags they do not know. */
enum {
	SEC_END = 0,
	SEC_STRINGS = 1,
	SEC_META = 2,
	SEC_MODULES = 3,
	SEC_METRICS = 4,
	SEC_THREADS = 5,
	SEC_NODES = 6,
	SEC_VALUES = 7,
	SEC_LINKAGE = 8,
	SEC_CLASSES = 9,
	SEC__KNOWN
};


#define HEADER_BYTES 16u  /* magic, version, flags */
#define SECTION_BYTES 12u /* tag, length */
extern const char *const gt_profile_section_names[SEC__KNOWN];

static inline void le_store(uint8_t *d, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t le_load(const uint8_t *d, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)d[i] << (8 * i);
	return v;
}

/* Interning for the reader: a string of len bytes, a module by its path's
 * string; dedup 0 appends without looking (the file's own tables). */
uint32_t gt_profile__add_string(struct gt_profile *p, const char *s, size_t len, int dedup);
uint32_t gt_profile__add_module(struct gt_profile *p, uint32_t path, int dedup);

#endif
