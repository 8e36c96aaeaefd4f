/* SPDX-License-Identifier: MIT */
#include "channels/bichannel.h"

#include <stdint.h>
#include <stdlib.h>

#include "channels/bichannel-internal.h"

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

size_t gt_bichannel__allocations(const struct gt_bichannel *ch)
{
	return atomic_load_explicit(&ch->allocations, memory_order_relaxed);
}

void *gt_bichannel__produce_begin(struct gt_bichannel *ch)
{
	void *payload = bichannel__try_begin(ch);

	if (payload == NULL) {
		struct bichannel_node *node = bichannel__node_new(ch);

		if (node != NULL)
			payload = node->payload;
	}
	return payload;
}

void gt_bichannel__produce_commit(struct gt_bichannel *ch, void *payload)
{
	gt_channel__push(&ch->forward, &bichannel__node_of_payload(payload)->link);
}

size_t gt_bichannel__drain(struct gt_bichannel *ch,
			   void (*fn)(void *payload, void *arg), void *arg)
{
	struct gt_channel_node *link;
	size_t count = 0;

	/* Records stolen earlier and not yet consumed stay ahead of these. */
	gt_channel__steal(&ch->forward);
	while ((link = gt_channel__pop_stolen(&ch->forward)) != NULL) {
		void *payload = bichannel__node_of_link(link)->payload;

		if (fn != NULL)
			fn(payload, arg);
		bichannel__release(ch, payload);
		count++;
	}
	return count;
}
