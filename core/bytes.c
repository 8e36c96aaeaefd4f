/* SPDX-License-Identifier: MIT */
#include "core/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

void gt_bytes__put(struct gt_bytes *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (n > b->cap - b->len) {
		size_t c = b->cap ? b->cap : 4096;
		uint8_t *q;

		while (c - b->len < n) {
			if (c > SIZE_MAX / 2) {
				b->oom = 1;
				return;
			}
			c *= 2;
		}
		q = realloc(b->d, c);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->d = q;
		b->cap = c;
	}
	if (n)
		memcpy(b->d + b->len, p, n);
	b->len += n;
}

void gt_bytes__uv(struct gt_bytes *b, uint64_t v)
{
	uint8_t d[10];
	unsigned n = 0;

	do {
		d[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			d[n] |= 0x80;
		n++;
	} while (v);
	gt_bytes__put(b, d, n);
}

void gt_bytes__fixed(struct gt_bytes *b, uint64_t v, unsigned bytes)
{
	uint8_t d[8];

	for (unsigned i = 0; i < bytes && i < 8; i++)
		d[i] = (uint8_t)(v >> (8 * i));
	gt_bytes__put(b, d, bytes < 8 ? bytes : 8);
}

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

long gt_read_small(const char *path, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	while (n + 1 < size && ((got = read(fd, buf + n, size - 1 - n)) > 0 || (got < 0 && errno == EINTR)))
		if (got > 0)
			n += (size_t)got;
	err = got < 0 ? errno : 0;
	close(fd);
	buf[n] = 0;
	if (err) {
		buf[0] = 0;
		return -err;
	}
	return (long)n;
}

int gt_slurp(FILE *f, size_t max, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	struct stat st;
	int more = 0;
	uint8_t *d, *q;

	/* A regular file: its size and one byte to see its end by, in one
	 * block; never more than max. */
	if (fileno(f) >= 0 && !fstat(fileno(f), &st) && S_ISREG(st.st_mode)) {
		more = (uint64_t)st.st_size > max;
		cap = more ? max : (size_t)st.st_size + 1;
	}
	if (cap > max)
		cap = max;
	d = malloc(cap ? cap : 1);
	if (!d)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			size_t grown = cap > max / 2 ? max : cap * 2;

			if (n >= max)
				break;
			if (!(q = realloc(d, grown)))
				goto out_free_data;
			d = q;
			cap = grown;
		}
		got = fread(d + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	if (ferror(f)) {
		free(d);
		return -EIO;
	}
	/* A stream, or a file that grew: is there more? */
	if (!more && n >= max && fgetc(f) != EOF)
		more = 1;
	*out = d;
	*len = n;
	return more;
out_free_data:
	free(d);
	return -ENOMEM;
}

int gt_uv_read_long(const uint8_t *d, size_t end, size_t *pos, uint64_t *out)
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
