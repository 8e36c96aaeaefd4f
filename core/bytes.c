/* SPDX-License-Identifier: MIT */
#include "core/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

/* zlib's CRC-32 (the one of gzip and PNG): table-driven over words, several
 * times faster than a byte at a time; zlib takes lengths in 32 bits. */
uint32_t gt_crc32(const uint8_t *d, size_t n)
{
	uLong c = crc32(0L, Z_NULL, 0);

	while (n) {
		uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;

		c = crc32(c, d, k);
		d += k;
		n -= k;
	}
	return (uint32_t)c;
}

int gt_slurp(FILE *f, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *d = malloc(cap), *q;

	if (!d)
		return -ENOMEM;
	while ((got = fread(d + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n < cap)
			continue;
		if (cap > SIZE_MAX / 2 || !(q = realloc(d, cap * 2)))
			goto out_free_data;
		d = q;
		cap *= 2;
	}
	if (ferror(f)) {
		free(d);
		return -EIO;
	}
	*out = d;
	*len = n;
	return 0;
out_free_data:
	free(d);
	return -ENOMEM;
}

int gt_uv_read(const uint8_t *d, size_t end, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	size_t at = *pos;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t c;

		if (at >= end)
			return -ENODATA;
		c = d[at++];
		if (shift == 63 && c > 1)
			return -ERANGE;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	*pos = at;
	*out = v;
	return 0;
}
