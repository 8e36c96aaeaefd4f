/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_BYTES_H
#define GT_CORE_BYTES_H

/* Helpers of the binary files (profiles, traces): their writers and readers. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* CRC-32 as in zlib and PNG (reflected polynomial 0xedb88320). */
uint32_t gt_crc32(const uint8_t *d, size_t n);

/* Reads all of f (a file or a pipe) into memory: *out is malloc()ed.
 * Returns 0, -ENOMEM or -EIO. */
int gt_slurp(FILE *f, uint8_t **out, size_t *len);

/*
 * Reads the unsigned LEB128 number at d[*pos] (d holds end bytes) into
 * *out and advances *pos. Returns 0; -ENODATA when the bytes end first;
 * -ERANGE when the number does not fit in 64 bits.
 */
int gt_uv_read(const uint8_t *d, size_t end, size_t *pos, uint64_t *out);

#endif
