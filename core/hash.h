/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_HASH_H
#define GT_CORE_HASH_H

/*
 * The hashes the tool's tables use, written once. None is cryptographic:
 * they spread keys the tool itself made (addresses, handles, names).
 */
#include <stddef.h>
#include <stdint.h>

/* A 64-bit mixer (MurmurHash3's finalizer), for addresses, handles, keys. */
static inline uint64_t gt_hash__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* FNV-1a over @n bytes. */
static inline uint64_t gt_hash__bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* FNV-1a over a NUL-terminated string. */
static inline uint64_t gt_hash__str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

#endif
