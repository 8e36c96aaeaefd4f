/* SPDX-License-Identifier: MIT */
#include "channels/bichannel.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

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

static struct bichannel_node *node_of_link(struct gt_channel_node *link)
{
	/* link is the first member. */
	return (struct bichannel_node *)link;
}

static struct bichannel_node *node_of_payload(void *payload)
{
	return (struct bichannel_node *)((unsigned char *)payload -
					 offsetof(struct bichannel_node,
						  payload));
}

struct gt_bichannel *gt_bichannel__new(size_t payload_size)
{
	size_t header = offsetof(struct bichannel_node, payload);
	struct gt_bichannel *ch;

	if (payload_size > SIZE_MAX - header)
		return NULL;

	/* sizeof is a multiple of the alignment, as aligned_alloc requires. */
	ch = aligned_alloc(alignof(struct gt_bichannel),
			   sizeof(struct gt_bichannel));
	if (ch == NULL)
		return NULL;

	gt_channel__init(&ch->forward);
	gt_channel__init(&ch->back);
	ch->all = NULL;
	atomic_init(&ch->allocations, 0);
	ch->payload_size = payload_size;
	ch->node_size = header + payload_size;
	return ch;
}

void gt_bichannel__delete(struct gt_bichannel *ch)
{
	if (ch == NULL)
		return;

	/*
	 * Every node is on ch->all whichever list it is on now, and whoever
	 * holds it: nothing is freed twice and nothing leaks.
	 */
	struct bichannel_node *node = ch->all;
	while (node != NULL) {
		struct bichannel_node *next = node->all_next;
		free(node);
		node = next;
	}
	free(ch);
}

size_t gt_bichannel__payload_size(const struct gt_bichannel *ch)
{
	return ch->payload_size;
}

size_t gt_bichannel__allocations(const struct gt_bichannel *ch)
{
	return atomic_load_explicit(&ch->allocations, memory_order_relaxed);
}

/* Producer only. */
static struct bichannel_node *node__new(struct gt_bichannel *ch)
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

void *gt_bichannel__produce_try_begin(struct gt_bichannel *ch)
{
	/* P is the consumer of `back`: pop its free list, else steal once. */
	struct gt_channel_node *link = gt_channel__pop(&ch->back);

	return link != NULL ? node_of_link(link)->payload : NULL;
}

void *gt_bichannel__produce_begin(struct gt_bichannel *ch)
{
	void *payload = gt_bichannel__produce_try_begin(ch);

	if (payload == NULL) {
		struct bichannel_node *node = node__new(ch);

		if (node != NULL)
			payload = node->payload;
	}
	return payload;
}

void gt_bichannel__produce_commit(struct gt_bichannel *ch, void *payload)
{
	gt_channel__push(&ch->forward, &node_of_payload(payload)->link);
}

void gt_bichannel__produce_cancel(struct gt_bichannel *ch, void *payload)
{
	gt_channel__unpop(&ch->back, &node_of_payload(payload)->link);
}

int gt_bichannel__reserve(struct gt_bichannel *ch, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct bichannel_node *node = node__new(ch);

		if (node == NULL)
			return -ENOMEM;
		gt_channel__unpop(&ch->back, &node->link);
	}
	return 0;
}

void *gt_bichannel__consume(struct gt_bichannel *ch)
{
	struct gt_channel_node *link = gt_channel__pop(&ch->forward);

	return link != NULL ? node_of_link(link)->payload : NULL;
}

void gt_bichannel__release(struct gt_bichannel *ch, void *payload)
{
	/* C is the producer of `back`. */
	gt_channel__push(&ch->back, &node_of_payload(payload)->link);
}

size_t gt_bichannel__drain(struct gt_bichannel *ch,
			   void (*fn)(void *payload, void *arg), void *arg)
{
	struct gt_channel_node *link;
	size_t count = 0;

	/* Records stolen earlier and not yet consumed stay ahead of these. */
	gt_channel__steal(&ch->forward);
	while ((link = gt_channel__pop_stolen(&ch->forward)) != NULL) {
		void *payload = node_of_link(link)->payload;

		if (fn != NULL)
			fn(payload, arg);
		gt_bichannel__release(ch, payload);
		count++;
	}
	return count;
}
