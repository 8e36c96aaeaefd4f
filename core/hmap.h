/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_HMAP_H
#define GT_CORE_HMAP_H

/*
 * A map from nonzero 64-bit keys (addresses, pointers) to 64-bit values, for
 * one thread at a time: open addressing, linear probing, a power-of-two
 * capacity that doubles before the table is half full. Not for signal
 * handlers (it allocates) nor for tables other threads read while it grows.
 */
#include <stdint.h>

struct gt_hmap {
	uint64_t *keys; /* 0: empty */
	uint64_t *vals;
	uint32_t cap, used;
};

/* The value of key, or NULL. The pointer is valid until the next put. */
uint64_t *gt_hmap__get(const struct gt_hmap *m, uint64_t key);
/* Sets key's value (key != 0): 0, or -ENOMEM (the map is unchanged). */
int gt_hmap__put(struct gt_hmap *m, uint64_t key, uint64_t val);
void gt_hmap__fini(struct gt_hmap *m);

#endif
