/* SPDX-License-Identifier: MIT */
#include "core/bytes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc__init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t r = i;

		for (int k = 0; k < 8; k++)
			r = (r >> 1) ^ (0xedb88320u & (0u - (r & 1)));
		crc_table[i] = r;
	}
}

uint32_t gt_crc32(const uint8_t *d, size_t n)
{
	uint32_t c = 0xffffffffu;

	pthread_once(&crc_once, crc__init);
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ d[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
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
