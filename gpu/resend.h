/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_RESEND_H
#define GT_GPU_RESEND_H

/*
 * Host bytes sent to a device again, unchanged: an upload of a host buffer
 * whose bytes are those of its previous upload (a time loop that maps or
 * copies the same input at every step). Per thread, for any programming
 * model's host-to-device copies; the copy's layer charges the counts
 * (GT_M_GXCOPY_RESENT_*) to its node. A copy a layer's runtime makes for
 * it (OpenMP target's transfers, through CUDA) is the layer's: a backend
 * leaves the uploads made inside a construct (core/construct.h) to it.
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
 * Up to 64 KiB every byte is compared. A larger upload is compared by a
 * sample of 4 KiB, 64 pieces of 64 bytes spread over it from its first
 * byte to its last: hashing all of it would take longer than a copy over
 * PCIe (a core hashes at about the speed it reads memory), at every
 * upload. A change confined to the bytes between the pieces goes unseen:
 * that upload is called resent though a part of it is new.
 */
int gt_resend__upload(const void *p, uint64_t n);

#endif
