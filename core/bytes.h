/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_BYTES_H
#define GT_CORE_BYTES_H

/* Helpers of the binary files (profiles, traces): their writers and readers. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A growable byte buffer, what every binary writer builds its bytes in
 * (profiles, traces, runs sent between ranks). Appending never fails on its
 * own: out of memory sets oom and later appends do nothing, so a writer
 * checks once at the end. d is malloc()ed; the writer frees it.
 */
struct gt_bytes {
	uint8_t *d;
	size_t len, cap;
	int oom;
};

void gt_bytes__put(struct gt_bytes *b, const void *p, size_t n);
/* v as an unsigned LEB128 number: 7 bits a byte, low bits first, the high
 * bit set on all but the last. */
void gt_bytes__uv(struct gt_bytes *b, uint64_t v);
/* The low bytes of v, little-endian (bytes <= 8). */
void gt_bytes__fixed(struct gt_bytes *b, uint64_t v, unsigned bytes);

/* CRC-32 as in zlib and PNG (reflected polynomial 0xedb88320). */
uint32_t gt_crc32(const uint8_t *d, size_t n);

/* Reads f (a file or a pipe) into memory, at most max bytes: *out is
 * malloc()ed. Returns 0 (all of f read), 1 (f holds more than max bytes:
 * the first max are in *out; a regular file's size is taken from fstat, so
 * its rest is never read), -ENOMEM or -EIO. */
int gt_slurp(FILE *f, size_t max, uint8_t **out, size_t *len);

/* Reads at most size - 1 bytes of a small file (a /proc or /sys entry) into
 * buf, NUL-terminated, without stdio (whose FILE and buffer come from the
 * program's heap). Returns the length, or -errno with buf "". */
long gt_read_small(const char *path, char *buf, size_t size);

/*
 * Reads the unsigned LEB128 number at d[*pos] (d holds end bytes) into
 * *out and advances *pos. Returns 0; -ENODATA when the bytes end first;
 * -ERANGE when the number does not fit in 64 bits.
 */
int gt_uv_read_long(const uint8_t *d, size_t end, size_t *pos, uint64_t *out);

static inline int gt_uv_read(const uint8_t *d, size_t end, size_t *pos, uint64_t *out)
{
	/* Most numbers of the files are small: one byte, inline. */
	if (*pos < end && d[*pos] < 0x80) {
		*out = d[(*pos)++];
		return 0;
	}
	return gt_uv_read_long(d, end, pos, out);
}

/*
 * A reader's place in bytes it checks as it goes: a number that runs past
 * the end or out of 64 bits sets bad and reads as 0, so a decoder checks
 * once, where it matters.
 */
struct gt_cursor {
	const uint8_t *d;
	size_t pos, end;
	int bad;
};

static inline uint64_t gt_cursor__uv(struct gt_cursor *c)
{
	uint64_t v = 0;

	if (gt_uv_read(c->d, c->end, &c->pos, &v))
		c->bad = 1;
	return v;
}

#endif
