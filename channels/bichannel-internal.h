/* SPDX-License-Identifier: MIT */
#ifndef GT_CHANNELS_BICHANNEL_INTERNAL_H
#define GT_CHANNELS_BICHANNEL_INTERNAL_H

/*
 * The layout of a bidirectional channel, for bichannel.c and for the
 * consumer-at-a-time and reservation calls that only the channel's own tests
 * use (tests/channels/bichannel-test.c). Who owns what is said in
 * bichannel.h.
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "channels/bichannel.h"
#include "channels/channel.h"

struct bichannel_node {
	struct gt_channel_node link; /* on `forward`, on `back`, or owned */
	struct bichannel_node *all_next; /* P only: chain of every node */
	alignas(max_align_t) unsigned char payload[];
};

/*
 * Each group sits on its own cache lines: the shared head of a channel is
 * written by both threads, the private list of `forward` by C only, the
 * private list of `back` and the allocation bookkeeping by P only.
 */
struct gt_bichannel {
	/* P pushes records; C steals and pops them. */
	alignas(GT_CHANNEL_CACHELINE) struct gt_channel forward;
	/* C pushes released nodes; P steals and pops them (P's free list). */
	alignas(GT_CHANNEL_CACHELINE) struct gt_channel back;

	/* Written by P only; read by delete once both sides are quiescent. */
	alignas(GT_CHANNEL_CACHELINE) struct bichannel_node *all;
	/* Written by P only, read anywhere: single writer, relaxed. */
	_Atomic size_t allocations;
	/* Constant after new. */
	size_t payload_size;
	size_t node_size;
};

static inline struct bichannel_node *bichannel__node_of_link(struct gt_channel_node *link)
{
	/* link is the first member. */
	return (struct bichannel_node *)link;
}

static inline struct bichannel_node *bichannel__node_of_payload(void *payload)
{
	return (struct bichannel_node *)((unsigned char *)payload -
					 offsetof(struct bichannel_node, payload));
}

/* Producer only: a new node, on the chain of every node. NULL when out of memory. */
static inline struct bichannel_node *bichannel__node_new(struct gt_bichannel *ch)
{
	struct bichannel_node *node = calloc(1, ch->node_size);

	if (node == NULL)
		return NULL;
	node->all_next = ch->all;
	ch->all = node;
	/* P is the only writer: a load and a store, no read-modify-write. */
	atomic_store_explicit(
		&ch->allocations,
		atomic_load_explicit(&ch->allocations, memory_order_relaxed) + 1,
		memory_order_relaxed);
	return node;
}

/* Producer only: a payload from P's free list, else one released by C
 * (one steal of `back`); NULL when there is none. */
static inline void *bichannel__try_begin(struct gt_bichannel *ch)
{
	/* P is the consumer of `back`. */
	struct gt_channel_node *link = gt_channel__pop(&ch->back);

	return link != NULL ? bichannel__node_of_link(link)->payload : NULL;
}

/* Consumer only: @payload back to P for reuse. */
static inline void bichannel__release(struct gt_bichannel *ch, void *payload)
{
	/* C is the producer of `back`. */
	gt_channel__push(&ch->back, &bichannel__node_of_payload(payload)->link);
}

#endif /* GT_CHANNELS_BICHANNEL_INTERNAL_H */
