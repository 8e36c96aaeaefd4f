/* SPDX-License-Identifier: MIT */
#include "tests/channels/bichannel-test.h"

#include <errno.h>

#include "channels/bichannel-internal.h"

size_t gt_bichannel__payload_size(const struct gt_bichannel *ch)
{
	return ch->payload_size;
}

void *gt_bichannel__produce_try_begin(struct gt_bichannel *ch)
{
	return bichannel__try_begin(ch);
}

void gt_bichannel__produce_cancel(struct gt_bichannel *ch, void *payload)
{
	gt_channel__unpop(&ch->back, &bichannel__node_of_payload(payload)->link);
}

int gt_bichannel__reserve(struct gt_bichannel *ch, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct bichannel_node *node = bichannel__node_new(ch);

		if (node == NULL)
			return -ENOMEM;
		gt_channel__unpop(&ch->back, &node->link);
	}
	return 0;
}

void *gt_bichannel__consume(struct gt_bichannel *ch)
{
	struct gt_channel_node *link = gt_channel__pop(&ch->forward);

	return link != NULL ? bichannel__node_of_link(link)->payload : NULL;
}

void gt_bichannel__release(struct gt_bichannel *ch, void *payload)
{
	bichannel__release(ch, payload);
}

void gt_channel__unpop(struct gt_channel *ch, struct gt_channel_node *node)
{
	node->next = ch->head;
	if (ch->head == NULL)
		ch->tail = node;
	ch->head = node;
}
