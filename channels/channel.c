/* SPDX-License-Identifier: MIT */
#include "channels/channel.h"

#include <assert.h>
#include <stdatomic.h>

void gt_channel__init(struct gt_channel *ch)
{
	/* Before publication to the other thread: no ordering needed. */
	atomic_init(&ch->shared, NULL);
	ch->head = NULL;
	ch->tail = NULL;
}

void gt_channel__push(struct gt_channel *ch, struct gt_channel_node *node)
{
	/*
	 * Relaxed: the value is only stored into node->next, never
	 * dereferenced here (see "Ordering" in channel.h).
	 */
	struct gt_channel_node *head =
		atomic_load_explicit(&ch->shared, memory_order_relaxed);

	node->next = head;
	/* Release: pairs with the acquire exchange in gt_channel__steal. */
	if (atomic_compare_exchange_strong_explicit(&ch->shared, &head, node,
						    memory_order_release,
						    memory_order_relaxed))
		return;

	/*
	 * The consumer's exchange is the only other write to ch->shared, and
	 * it stores NULL; the failed CAS has loaded that NULL into head.
	 */
	assert(head == NULL);
	node->next = NULL;
	bool pushed = atomic_compare_exchange_strong_explicit(
		&ch->shared, &head, node, memory_order_release,
		memory_order_relaxed);
	assert(pushed && "gt_channel__push: more than one producer");
	(void)pushed;
}

size_t gt_channel__steal(struct gt_channel *ch)
{
	/*
	 * Relaxed pre-check: an empty channel is the common case for a
	 * polling consumer, and a plain load keeps the line shared instead
	 * of taking it exclusive. A push missed here is seen next time.
	 */
	if (atomic_load_explicit(&ch->shared, memory_order_relaxed) == NULL)
		return 0;

	/*
	 * Acquire: pairs with the release CAS in gt_channel__push, so the
	 * records and next links of every node in the batch are visible.
	 */
	struct gt_channel_node *newest =
		atomic_exchange_explicit(&ch->shared, NULL, memory_order_acquire);
	if (newest == NULL)
		return 0;

	/* The batch is newest first; reverse it to get the push order. */
	struct gt_channel_node *oldest = NULL;
	struct gt_channel_node *node = newest;
	size_t count = 0;
	while (node != NULL) {
		struct gt_channel_node *next = node->next;
		node->next = oldest;
		oldest = node;
		node = next;
		count++;
	}

	/* Everything already on the private list was pushed before this batch. */
	if (ch->head == NULL)
		ch->head = oldest;
	else
		ch->tail->next = oldest;
	ch->tail = newest;
	return count;
}

struct gt_channel_node *gt_channel__pop_stolen(struct gt_channel *ch)
{
	struct gt_channel_node *first = ch->head;

	if (first != NULL)
		ch->head = first->next;
	return first;
}

struct gt_channel_node *gt_channel__pop(struct gt_channel *ch)
{
	if (ch->head == NULL)
		gt_channel__steal(ch);
	return gt_channel__pop_stolen(ch);
}
