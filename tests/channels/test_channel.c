/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of channels/channel.h and channels/bichannel.h, single-threaded:
 * one thread plays both sides, which the protocol allows as long as each
 * side's calls stay in program order.
 *
 * Each test runs in a child process; `test_channel NAME` runs one test in
 * place (for a debugger).
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channels/bichannel.h"
#include "channels/channel.h"
#include "tests/channels/bichannel-test.h"
#include "tests/unit/test.h"

struct rec {
	struct gt_channel_node node;
	int value;
};

static int rec_value(struct gt_channel_node *node)
{
	return ((struct rec *)node)->value;
}

/* ---- gt_channel ---- */

/* Consumer. True when nothing is left to pop right now. */
static bool empty(struct gt_channel *ch)
{
	return ch->head == NULL && atomic_load_explicit(&ch->shared, memory_order_relaxed) == NULL;
}

static void test_channel_empty(void)
{
	struct gt_channel ch;

	gt_channel__init(&ch);
	CHECK(empty(&ch));
	CHECK(gt_channel__pop(&ch) == NULL);
	CHECK(gt_channel__steal(&ch) == 0);
	CHECK(gt_channel__pop_stolen(&ch) == NULL);
	CHECK(gt_channel__pop(&ch) == NULL);
	CHECK(empty(&ch));
}

static void test_channel_fifo(void)
{
	struct gt_channel ch;
	struct rec recs[16];

	gt_channel__init(&ch);
	for (int i = 0; i < 16; i++) {
		recs[i].value = i;
		gt_channel__push(&ch, &recs[i].node);
	}
	CHECK(!empty(&ch));
	for (int i = 0; i < 16; i++) {
		struct gt_channel_node *n = gt_channel__pop(&ch);

		CHECK(n == &recs[i].node);
		CHECK(rec_value(n) == i);
	}
	CHECK(gt_channel__pop(&ch) == NULL);
	CHECK(empty(&ch));
}

static void test_channel_single(void)
{
	struct gt_channel ch;
	struct rec r = { .value = 7 };

	gt_channel__init(&ch);
	for (int round = 0; round < 3; round++) {
		gt_channel__push(&ch, &r.node);
		CHECK(gt_channel__pop(&ch) == &r.node);
		CHECK(gt_channel__pop(&ch) == NULL);
	}
}

/* A steal while the private list is not empty appends behind it. */
static void test_channel_steal_appends(void)
{
	struct gt_channel ch;
	struct rec recs[9];
	int next = 0;

	gt_channel__init(&ch);
	for (int i = 0; i < 9; i++)
		recs[i].value = i;

	for (int i = 0; i < 3; i++)
		gt_channel__push(&ch, &recs[i].node);
	CHECK(rec_value(gt_channel__pop(&ch)) == next++);
	for (int i = 3; i < 6; i++)
		gt_channel__push(&ch, &recs[i].node);
	CHECK(gt_channel__steal(&ch) == 3);
	for (int i = 6; i < 9; i++)
		gt_channel__push(&ch, &recs[i].node);
	CHECK(gt_channel__steal(&ch) == 3);
	CHECK(gt_channel__steal(&ch) == 0);

	struct gt_channel_node *n;
	while ((n = gt_channel__pop(&ch)) != NULL)
		CHECK(rec_value(n) == next++);
	CHECK(next == 9);
}

static void test_channel_pop_stolen(void)
{
	struct gt_channel ch;
	struct rec a = { .value = 1 }, b = { .value = 2 };

	gt_channel__init(&ch);
	gt_channel__push(&ch, &a.node);
	CHECK(gt_channel__pop_stolen(&ch) == NULL); /* not stolen yet */
	CHECK(!empty(&ch));
	CHECK(gt_channel__steal(&ch) == 1);
	gt_channel__push(&ch, &b.node);
	CHECK(gt_channel__pop_stolen(&ch) == &a.node);
	CHECK(gt_channel__pop_stolen(&ch) == NULL); /* b is not stolen */
	CHECK(gt_channel__pop(&ch) == &b.node);
	CHECK(empty(&ch));
}

static void test_channel_unpop(void)
{
	struct gt_channel ch;
	struct rec a = { .value = 1 }, b = { .value = 2 }, c = { .value = 3 };

	gt_channel__init(&ch);
	gt_channel__push(&ch, &a.node);
	gt_channel__push(&ch, &b.node);
	struct gt_channel_node *n = gt_channel__pop(&ch);
	CHECK(n == &a.node);
	gt_channel__unpop(&ch, n);
	CHECK(gt_channel__pop(&ch) == &a.node);
	CHECK(gt_channel__pop(&ch) == &b.node);

	/* Unpop onto an empty private list must leave a valid tail. */
	gt_channel__unpop(&ch, &b.node);
	gt_channel__push(&ch, &c.node);
	CHECK(gt_channel__steal(&ch) == 1);
	CHECK(gt_channel__pop(&ch) == &b.node);
	CHECK(gt_channel__pop(&ch) == &c.node);
	CHECK(gt_channel__pop(&ch) == NULL);
}

/* ---- gt_bichannel ---- */

struct payload {
	uint64_t seq;
	uint64_t data[3];
};

static void test_bichannel_basic(void)
{
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));

	CHECK(ch != NULL);
	CHECK(gt_bichannel__payload_size(ch) == sizeof(struct payload));
	CHECK(gt_bichannel__allocations(ch) == 0);
	CHECK(gt_bichannel__consume(ch) == NULL);

	struct payload *p = gt_bichannel__produce_begin(ch);
	CHECK(p != NULL);
	CHECK((uintptr_t)p % alignof(max_align_t) == 0);
	CHECK(p->seq == 0 && p->data[0] == 0 && p->data[2] == 0); /* new: 0 */
	CHECK(gt_bichannel__allocations(ch) == 1);
	p->seq = 42;
	gt_bichannel__produce_commit(ch, p);

	struct payload *q = gt_bichannel__consume(ch);
	CHECK(q == p);
	CHECK(q->seq == 42);
	CHECK(gt_bichannel__consume(ch) == NULL);
	gt_bichannel__release(ch, q);

	/* The released node comes back instead of a new allocation. */
	CHECK(gt_bichannel__produce_begin(ch) == p);
	CHECK(gt_bichannel__allocations(ch) == 1);
	gt_bichannel__produce_commit(ch, p);

	gt_bichannel__delete(ch);
}

static void test_bichannel_fifo(void)
{
	enum { N = 100 };
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));
	struct payload *held[N];

	CHECK(ch != NULL);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			struct payload *p = gt_bichannel__produce_begin(ch);

			CHECK(p != NULL);
			p->seq = (uint64_t)(round * N + i);
			gt_bichannel__produce_commit(ch, p);
		}
		for (int i = 0; i < N; i++) {
			held[i] = gt_bichannel__consume(ch);
			CHECK(held[i] != NULL);
			CHECK(held[i]->seq == (uint64_t)(round * N + i));
		}
		CHECK(gt_bichannel__consume(ch) == NULL);
		for (int i = 0; i < N; i++)
			gt_bichannel__release(ch, held[i]);
		/* Round 0 allocates N nodes; later rounds reuse them. */
		CHECK(gt_bichannel__allocations(ch) == N);
	}
	gt_bichannel__delete(ch);
}

/* After a warm-up, produce/consume/release cycles allocate nothing. */
static void test_bichannel_reuse(void)
{
	enum { WARMUP = 1000, MAX_BATCH = 64, CYCLES = 200000 };
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));
	uint64_t produced = 0, consumed = 0;

	CHECK(ch != NULL);
	/* Warm-up: reach the largest batch in flight used below. */
	for (int i = 0; i < WARMUP; i++) {
		int batch = i % (MAX_BATCH + 1);

		for (int j = 0; j < batch; j++) {
			struct payload *p = gt_bichannel__produce_begin(ch);
			CHECK(p != NULL);
			p->seq = produced++;
			gt_bichannel__produce_commit(ch, p);
		}
		struct payload *q;
		while ((q = gt_bichannel__consume(ch)) != NULL) {
			CHECK(q->seq == consumed++);
			gt_bichannel__release(ch, q);
		}
	}
	size_t warm = gt_bichannel__allocations(ch);
	CHECK(warm == MAX_BATCH);

	int batch = 1;
	for (uint64_t done = 0; done < CYCLES; done += (uint64_t)batch) {
		batch = (int)(done % MAX_BATCH) + 1;
		for (int j = 0; j < batch; j++) {
			struct payload *p = gt_bichannel__produce_begin(ch);
			p->seq = produced++;
			gt_bichannel__produce_commit(ch, p);
		}
		for (int j = 0; j < batch; j++) {
			struct payload *q = gt_bichannel__consume(ch);
			CHECK(q != NULL);
			CHECK(q->seq == consumed++);
			gt_bichannel__release(ch, q);
		}
	}
	CHECK(produced == consumed);
	CHECK(gt_bichannel__allocations(ch) == warm);
	gt_bichannel__delete(ch);
}

static void test_bichannel_try_begin_reserve(void)
{
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));
	void *p[8];

	CHECK(ch != NULL);
	CHECK(gt_bichannel__produce_try_begin(ch) == NULL);
	CHECK(gt_bichannel__allocations(ch) == 0);
	CHECK(gt_bichannel__reserve(ch, 8) == 0);
	CHECK(gt_bichannel__allocations(ch) == 8);
	for (int i = 0; i < 8; i++) {
		p[i] = gt_bichannel__produce_try_begin(ch);
		CHECK(p[i] != NULL);
		for (int j = 0; j < i; j++)
			CHECK(p[i] != p[j]);
	}
	CHECK(gt_bichannel__produce_try_begin(ch) == NULL);
	for (int i = 0; i < 8; i++)
		gt_bichannel__produce_commit(ch, p[i]);
	for (int i = 0; i < 8; i++) {
		void *q = gt_bichannel__consume(ch);
		CHECK(q == p[i]);
		gt_bichannel__release(ch, q);
	}
	CHECK(gt_bichannel__produce_try_begin(ch) != NULL);
	CHECK(gt_bichannel__allocations(ch) == 8);
	gt_bichannel__delete(ch);
}

static void test_bichannel_cancel(void)
{
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));

	CHECK(ch != NULL);
	struct payload *p = gt_bichannel__produce_begin(ch);
	CHECK(p != NULL);
	gt_bichannel__produce_cancel(ch, p);
	CHECK(gt_bichannel__consume(ch) == NULL);
	CHECK(gt_bichannel__produce_begin(ch) == p);
	CHECK(gt_bichannel__allocations(ch) == 1);
	gt_bichannel__delete(ch);
}

struct drain_state {
	struct gt_bichannel *ch;
	uint64_t next;
	int commit_more; /* records the callback commits, as a racing P would */
	uint64_t more_seq;
};

static void drain_check(void *payload, void *arg)
{
	struct drain_state *st = arg;
	struct payload *p = payload;

	if (p->seq != st->next)
		st->next = UINT64_MAX; /* poisons every later comparison */
	else
		st->next++;
	if (st->commit_more > 0) {
		struct payload *more = gt_bichannel__produce_begin(st->ch);
		more->seq = st->more_seq++;
		st->commit_more--;
		gt_bichannel__produce_commit(st->ch, more);
	}
}

static void test_bichannel_drain(void)
{
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));
	struct drain_state st = { .ch = ch, .more_seq = 1000 };

	CHECK(ch != NULL);
	CHECK(gt_bichannel__drain(ch, drain_check, &st) == 0);
	for (uint64_t i = 0; i < 10; i++) {
		struct payload *p = gt_bichannel__produce_begin(ch);
		p->seq = i;
		gt_bichannel__produce_commit(ch, p);
	}
	/* consume steals all ten; drain must still see 1..9 first. */
	struct payload *first = gt_bichannel__consume(ch);
	CHECK(first->seq == 0);
	gt_bichannel__release(ch, first);
	st.next = 1;
	for (uint64_t i = 10; i < 12; i++) {
		struct payload *p = gt_bichannel__produce_begin(ch);
		p->seq = i;
		gt_bichannel__produce_commit(ch, p);
	}

	/* Commits made during the call are left for the next one. */
	st.commit_more = 3;
	CHECK(gt_bichannel__drain(ch, drain_check, &st) == 11);
	CHECK(st.next == 12);
	st.next = 1000;
	CHECK(gt_bichannel__drain(ch, drain_check, &st) == 3);
	CHECK(st.next == 1003);
	CHECK(gt_bichannel__drain(ch, NULL, NULL) == 0);
	CHECK(gt_bichannel__consume(ch) == NULL);
	gt_bichannel__delete(ch);
}

static void test_bichannel_drain_order(void)
{
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));
	struct drain_state st = { .ch = ch, .next = 0 };

	CHECK(ch != NULL);
	for (uint64_t i = 0; i < 5; i++) {
		struct payload *p = gt_bichannel__produce_begin(ch);
		p->seq = i;
		gt_bichannel__produce_commit(ch, p);
	}
	CHECK(gt_bichannel__drain(ch, drain_check, &st) == 5);
	CHECK(st.next == 5);
	CHECK(gt_bichannel__allocations(ch) == 5);
	gt_bichannel__delete(ch);
}

/* delete frees nodes wherever they are; ASan/LSan builds check for leaks. */
static void test_bichannel_delete_in_flight(void)
{
	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct payload));

	CHECK(ch != NULL);
	void *held_by_producer = gt_bichannel__produce_begin(ch);
	for (int i = 0; i < 4; i++)
		gt_bichannel__produce_commit(ch, gt_bichannel__produce_begin(ch));
	void *held_by_consumer = gt_bichannel__consume(ch);
	gt_bichannel__release(ch, gt_bichannel__consume(ch));
	CHECK(held_by_producer != NULL && held_by_consumer != NULL);
	CHECK(gt_bichannel__allocations(ch) == 5);
	gt_bichannel__delete(ch);
	gt_bichannel__delete(NULL);
}

static void test_bichannel_sizes(void)
{
	CHECK(gt_bichannel__new(SIZE_MAX) == NULL);

	struct gt_bichannel *ch = gt_bichannel__new(0);
	CHECK(ch != NULL);
	void *a = gt_bichannel__produce_begin(ch);
	void *b = gt_bichannel__produce_begin(ch);
	CHECK(a != NULL && b != NULL && a != b);
	gt_bichannel__produce_commit(ch, a);
	CHECK(gt_bichannel__consume(ch) == a);
	gt_bichannel__delete(ch);

	ch = gt_bichannel__new(4096);
	CHECK(ch != NULL);
	unsigned char *big = gt_bichannel__produce_begin(ch);
	memset(big, 0xa5, 4096);
	gt_bichannel__produce_commit(ch, big);
	CHECK(gt_bichannel__consume(ch) == big);
	CHECK(big[4095] == 0xa5);
	gt_bichannel__delete(ch);
}

TEST_MAIN(TEST_CASE(test_channel_empty),
	  TEST_CASE(test_channel_fifo),
	  TEST_CASE(test_channel_single),
	  TEST_CASE(test_channel_steal_appends),
	  TEST_CASE(test_channel_pop_stolen),
	  TEST_CASE(test_channel_unpop),
	  TEST_CASE(test_bichannel_basic),
	  TEST_CASE(test_bichannel_fifo),
	  TEST_CASE(test_bichannel_reuse),
	  TEST_CASE(test_bichannel_try_begin_reserve),
	  TEST_CASE(test_bichannel_cancel),
	  TEST_CASE(test_bichannel_drain),
	  TEST_CASE(test_bichannel_drain_order),
	  TEST_CASE(test_bichannel_delete_in_flight),
	  TEST_CASE(test_bichannel_sizes))
