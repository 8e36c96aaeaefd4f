/* SPDX-License-Identifier: MIT */
#ifndef GT_CHANNELS_CHANNEL_H
#define GT_CHANNELS_CHANNEL_H

/*
 * A wait-free single-producer/single-consumer channel of intrusive nodes
 * (ICS'20, Algorithm 1, made FIFO by reversing what the consumer steals).
 *
 *   producer thread P                      consumer thread C
 *   ─────────────────                      ─────────────────
 *   gt_channel__push(ch, n)                gt_channel__steal(ch)
 *     n->next = head                         batch = xchg(&ch->shared, NULL)
 *     CAS(&ch->shared, head, n) ──(A)──────►   [acquire] ── pairs with (A)
 *         [release]                          reverse batch, append to
 *                                            ch->head/ch->tail (C only)
 *                                          gt_channel__pop(ch)
 *                                            first of ch->head, stealing
 *                                            when ch->head is empty
 *
 * Who touches what:
 *   ch->shared        P: load (relaxed), CAS (release on success).
 *                     C: load (relaxed, a cheap emptiness check), exchange
 *                        with NULL (acquire).
 *   ch->head, ->tail  C only, never atomic.
 *   n->next           written by P before the CAS that publishes n, then read
 *                     and rewritten by C after the exchange that takes n.
 *
 * Ownership of a node:
 *   - before gt_channel__push(ch, n): the producer's; it may write the record.
 *   - from the successful CAS in push until the exchange in steal: the
 *     channel's. The producer must not touch it again: it cannot tell
 *     whether the consumer has taken it yet.
 *   - after steal, on the private list: the consumer's, reachable only
 *     through gt_channel__pop and gt_channel__pop_stolen.
 *   - once popped: the consumer's, to do anything with, typically to push
 *     it on another channel going the opposite way.
 *
 * Ordering: the release CAS in push (A) pairs with the acquire exchange in
 * steal. Everything P wrote into a node, and into every node pushed before
 * it (earlier CASes on ch->shared form one release sequence with later ones),
 * happens-before C's reads of those nodes after the steal. Nothing flows
 * from C to P through this channel: the exchange needs no release, and P's
 * loads of ch->shared may be relaxed because P never dereferences what it
 * loads there, it only links its own node in front of it. A node that goes
 * back from C to P travels through a second channel, whose push/steal pair
 * orders C's last reads before P's next writes (see bichannel.h).
 *
 * Why push is wait-free: between P's load of ch->shared and its CAS, the only
 * other writer is C, and C only ever stores NULL. So the first CAS either
 * succeeds or observes NULL, and the second attempt, made with NULL as the
 * expected head, cannot fail: a further exchange by C leaves NULL in place.
 * Push therefore makes at most two CAS attempts, never a loop. This needs
 * exactly one producer; a second producer voids the bound (asserted in debug
 * builds). The CAS is the strong form: a weak CAS may fail spuriously, which
 * the argument above does not allow for.
 *
 * ABA cannot arise: while P is inside push, the head it loaded is one of its
 * own nodes already in the channel or NULL. Only P pushes, and a node taken
 * by C cannot come back to P while P is still inside this push, so ch->shared
 * cannot return to the value P loaded once C has exchanged it away.
 *
 * Steal and pop cost O(1) plus the length of the batch stolen, which is
 * bounded by what P pushed; neither waits on P.
 */

#include <stdbool.h>
#include <stddef.h>

/* Embedded in a record; the channel links records through it. */
struct gt_channel_node {
	struct gt_channel_node *next;
};

#define GT_CHANNEL_CACHELINE 64

/*
 * ch->shared is written by both threads, ch->head and ch->tail by the
 * consumer only; the padding keeps them on different cache lines so that a
 * push does not evict the consumer's private list. The structure needs no
 * particular alignment.
 */
struct gt_channel {
	_Atomic(struct gt_channel_node *) shared;
	char pad_[GT_CHANNEL_CACHELINE - sizeof(struct gt_channel_node *)];
	struct gt_channel_node *head; /* oldest record the consumer owns */
	struct gt_channel_node *tail; /* newest; valid only when head != NULL */
};

/* Makes @ch empty. Call before either thread uses it. */
void gt_channel__init(struct gt_channel *ch);

/* Producer. Hands @node over to the consumer; at most two CAS attempts. */
void gt_channel__push(struct gt_channel *ch, struct gt_channel_node *node);

/*
 * Consumer. Moves every node pushed so far onto the consumer's private list,
 * behind the nodes already there, oldest first. Returns how many it moved.
 */
size_t gt_channel__steal(struct gt_channel *ch);

/*
 * Consumer. Returns the oldest node the consumer holds, stealing once when
 * it holds none; NULL when the channel is empty.
 */
struct gt_channel_node *gt_channel__pop(struct gt_channel *ch);

/*
 * Consumer. Like gt_channel__pop, but never steals: it only returns nodes
 * already moved by gt_channel__steal. Draining with it after one steal
 * terminates however fast the producer keeps pushing.
 */
struct gt_channel_node *gt_channel__pop_stolen(struct gt_channel *ch);

#endif /* GT_CHANNELS_CHANNEL_H */
