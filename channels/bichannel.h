/* SPDX-License-Identifier: MIT */
#ifndef GT_CHANNELS_BICHANNEL_H
#define GT_CHANNELS_BICHANNEL_H

/*
 * A wait-free bidirectional channel (ICS'20, Algorithm 2): fixed-size
 * records flow from one producer thread to one consumer thread, and the
 * nodes that carried them flow back for reuse, so that a producer in its
 * steady state never allocates.
 *
 *   producer thread P                          consumer thread C
 *   ─────────────────                          ─────────────────
 *   produce_begin: pop a free node  ◄─ back ─  release: push the node back
 *     (steal `back` when P holds none;           [release CAS (B)]
 *      [acquire xchg, pairs with (B)];
 *      allocate only when both are empty)
 *   fill the payload
 *   produce_commit: push ──────────── forward ─► consume: pop, FIFO
 *     [release CAS (A)]                            (steal `forward` when C
 *                                                   holds none; [acquire
 *                                                   xchg, pairs with (A)])
 *
 * `forward` and `back` are two gt_channel (channel.h): P is the producer of
 * `forward` and the consumer of `back`; C the other way round. The free list
 * of P is the private list of `back`.
 *
 * Ownership of a payload (and of the node around it):
 *   - from produce_begin until produce_commit (or produce_cancel): P's;
 *   - from produce_commit until consume returns it: the channel's;
 *   - from consume until release: C's, to read and to write;
 *   - from release until a later produce_begin returns it: the channel's.
 * Only one thread owns a payload at a time, so payload bytes are plain
 * memory. (A) orders P's writes to a payload before C's reads of it; (B)
 * orders C's last accesses to it before P's writes when it is reused.
 *
 * Allocation happens only in P: in produce_begin when P holds no free node
 * and none has come back, and in reserve. C never allocates and never
 * frees. Every node ever allocated stays on a list private to P
 * until gt_bichannel__delete frees it, so memory is bounded by the most
 * records ever in flight at once.
 *
 * No call waits for the other thread: produce_commit and release make at
 * most two CAS attempts; begin and consume cost O(1) plus the length of one
 * stolen batch, and drain that plus its callbacks.
 *
 * The library consumes with drain (consume and release of every record
 * committed before it). Consuming one record at a time, produce_cancel and
 * reserve are the channel's tests' (tests/channels/bichannel-test.h).
 */

#include <stddef.h>

/* Opaque; one producer thread, one consumer thread. */
struct gt_bichannel;

/*
 * Any thread, before the channel is shared. Payloads are @payload_size bytes
 * (0 allowed) aligned for any object type. Returns NULL when out of memory.
 * The channel's memory orders reach the two threads only if each of them got
 * @ch through something that orders it after this call (thread creation, a
 * release/acquire pair, a lock).
 */
struct gt_bichannel *gt_bichannel__new(size_t payload_size);

/*
 * Any thread, once both sides are quiescent: neither thread calls the
 * channel again, and everything each one did to it happens-before this call
 * (joined, or synchronized some other way). Frees every node ever allocated,
 * including records still in flight and payloads not yet released.
 */
void gt_bichannel__delete(struct gt_bichannel *ch);

/*
 * Any thread. Number of nodes allocated so far; grows only when P found no
 * free node. Relaxed: a count, not a synchronization point.
 */
size_t gt_bichannel__allocations(const struct gt_bichannel *ch);

/* ---- producer side (one thread) ---- */

/*
 * Returns a payload for P to fill: a node from P's free list, else one
 * released by C (one steal of `back`), else a new allocation. Its bytes are
 * zero when newly allocated and otherwise whatever the previous record left.
 * NULL only when allocation fails.
 */
void *gt_bichannel__produce_begin(struct gt_bichannel *ch);

/* Sends @payload, from produce_begin, to C. C sees records in commit order. */
void gt_bichannel__produce_commit(struct gt_bichannel *ch, void *payload);

/* ---- consumer side (one thread) ---- */

/*
 * Consumes every record committed before the call, calls @fn(payload, @arg)
 * (when @fn is not NULL) on each in FIFO order and releases it after @fn
 * returns. It steals once, so a record committed during the call may be left
 * for the next call, and the call terminates however fast P commits. At
 * teardown, once P has stopped, one call takes everything. Returns the
 * number of records.
 */
size_t gt_bichannel__drain(struct gt_bichannel *ch,
			   void (*fn)(void *payload, void *arg), void *arg);

#endif /* GT_CHANNELS_BICHANNEL_H */
