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

#endif
