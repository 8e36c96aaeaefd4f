/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_CHANNELS_BICHANNEL_TEST_H
#define GT_TESTS_CHANNELS_BICHANNEL_TEST_H

/*
 * The calls of the channels' protocol that the library does not make (it
 * produces with produce_begin/commit and consumes with drain), for the tests
 * and benchmarks of channels/ that drive the protocol a step at a time.
 * Compiled into those programs only (bichannel-test.c). Ownership and order
 * are as channels/bichannel.h and channels/channel.h say.
 */
#include <stddef.h>

#include "channels/bichannel.h"
#include "channels/channel.h"

size_t gt_bichannel__payload_size(const struct gt_bichannel *ch);

/* Like produce_begin, but returns NULL instead of allocating. */
void *gt_bichannel__produce_try_begin(struct gt_bichannel *ch);

/* Gives @payload, from produce_begin, back to P's free list unsent. */
void gt_bichannel__produce_cancel(struct gt_bichannel *ch, void *payload);

/*
 * Allocates @count nodes onto P's free list now, so that the next @count
 * produce_begin calls do not allocate. Returns 0 or -ENOMEM (the nodes
 * allocated before the failure stay on the free list).
 */
int gt_bichannel__reserve(struct gt_bichannel *ch, size_t count);

/* Returns the oldest record not yet consumed, or NULL when there is none. */
void *gt_bichannel__consume(struct gt_bichannel *ch);

/* Returns @payload, from consume, to P for reuse. C must not touch it after. */
void gt_bichannel__release(struct gt_bichannel *ch, void *payload);

/*
 * Consumer of a gt_channel. Puts @node, which the consumer owns, back in
 * front of its private list, so that the next pop returns it.
 */
void gt_channel__unpop(struct gt_channel *ch, struct gt_channel_node *node);

#endif /* GT_TESTS_CHANNELS_BICHANNEL_TEST_H */
