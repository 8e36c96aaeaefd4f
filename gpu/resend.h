/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_RESEND_H
#define GT_GPU_RESEND_H

/*
 * Host bytes sent to a device again, unchanged: an upload of a host buffer
 * whose bytes are those of its previous upload (a time loop that maps or
 * copies the same input at every step). Per thread, for any programming
 * model's host-to-device copies; the copy's layer charges the counts
 * (GT_M_GXCOPY_RESENT_*) to its node.
 */
#include <stdint.h>

/*
 * A hash of the n bytes at p: every byte up to 64 MiB; beyond, 1,024
 * chunks of 64 KiB spread over them (a change confined to the bytes
 * between them goes unseen: a false "unchanged" is possible for such sizes
 * only).
 */
uint64_t gt_resend__hash(const void *p, uint64_t n);

/*
 * The calling thread sends the n bytes at host address p to a device, now
 * (its layer's call, before the bytes may change). 1 if they are the bytes
 * of the previous upload of the same (p, n) on this thread, else 0.
 *
 * Most uploads change their data: a sample of the bytes (4 KiB) tells, and
 * is all that is read. Only where the sample is unchanged are all the
 * bytes hashed, so an upload is called resent when its whole hash equals
 * the previous upload's: from the third upload of a buffer larger than the
 * sample, from the second of a smaller one.
 */
int gt_resend__upload(const void *p, uint64_t n);

/* Copies of one layer made by another on this thread (OpenMP target's
 * transfers, done by the CUDA driver) are that layer's: between hold and
 * release, gt_resend__upload answers 0 and remembers nothing. Nests. */
void gt_resend__hold(void);
void gt_resend__release(void);

#endif
