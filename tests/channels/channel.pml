/* SPDX-License-Identifier: MIT */
/*
 * Model of the wait-free channel (channels/channel.c, ICS'20 Algorithm 1)
 * and the bidirectional channel built from two of them
 * (channels/bichannel.c, Algorithm 2), for an exhaustive safety check:
 *
 *   spin -DRECORDS=4 -DPOOL=2 -a channel.pml && cc -DSAFETY pan.c && ./pan
 *
 * One producer sends RECORDS records on `fwd`; one consumer takes them and
 * gives every node back on `back`. The producer may allocate at most POOL
 * nodes; with POOL < RECORDS it must wait for nodes to come back, so every
 * run exercises recycling.
 *
 * What is checked, over every interleaving:
 *   - the consumer sees records 0, 1, ..., RECORDS-1 in that order: none
 *     lost, none duplicated, FIFO (assert in consumer);
 *   - a node has one owner at a time: the producer, a channel, or the
 *     consumer (ghost variable owner[], asserted at every hand-over);
 *   - the CAS in push fails at most once per push, and when it fails it has
 *     read NULL (asserts in push);
 *   - a steal whose relaxed pre-check saw a non-empty channel takes a
 *     non-empty batch (assert in steal);
 *   - at the end every node allocated is back on the producer's free list
 *     (assert in init), and no process is left blocked: a lost record or a
 *     lost node would leave a side waiting forever, an invalid end state.
 *
 * Blocking guards such as (fwd_shared != NIL) stand for a thread polling: a
 * poll that finds nothing changes no state, so it is left out.
 *
 * Promela executes with sequential consistency; the memory orders of the C
 * code are argued in channels/channel.h and exercised by the TSan stress
 * test, not checked here.
 *
 * BUG_NO_REVERSE (LIFO steal), BUG_STEAL_REPLACES (steal drops what the
 * consumer still holds) and BUG_TWO_PRODUCERS (a second thread pushes on
 * `back`) inject known bugs; run-spin.sh checks that each one is caught.
 */

#ifndef RECORDS
#define RECORDS 4
#endif
#ifndef POOL
#define POOL 2
#endif

#define NIL 255

/* owner[] values */
#define O_NONE 0 /* not allocated yet */
#define O_PROD 1 /* producer, between produce_begin and commit */
#define O_FWD 2  /* on the forward channel, shared or consumer's list */
#define O_CONS 3 /* consumer, between consume and release */
#define O_BACK 4 /* on the back channel, shared or producer's free list */

#ifdef BUG_TWO_PRODUCERS
#define NODES (POOL + 1) /* one more node, pushed by a second producer */
#else
#define NODES POOL
#endif

byte next[NODES];
byte rec[NODES];
byte owner[NODES];

/* forward: the producer pushes, the consumer steals and pops */
byte fwd_shared = NIL;
byte fwd_head = NIL; /* consumer's private list */
byte fwd_tail = NIL;

/* back: the consumer pushes, the producer steals and pops */
byte back_shared = NIL;
byte back_head = NIL; /* producer's free list */
byte back_tail = NIL;

byte allocated = 0;

/* gt_channel__push: the repeat loop of Algorithm 1, with its bound asserted. */
inline push(shared, n, h, ok, fails)
{
	h = shared;
	next[n] = h;
	fails = 0;
	do
	:: atomic {
		if
		:: shared == h -> shared = n; ok = 1
		:: else -> h = shared; ok = 0
		fi
	   };
	   if
	   :: ok -> break
	   :: else ->
		fails++;
		assert(fails <= 1);
		assert(h == NIL);
		next[n] = h
	   fi
	od
}

/* gt_channel__steal: exchange with NULL, reverse, append. */
inline steal(shared, head, tail, newest, oldest, cur, nxt)
{
	if
	:: shared == NIL -> skip /* relaxed pre-check */
	:: else ->
		atomic { newest = shared; shared = NIL };
		assert(newest != NIL);
		oldest = NIL;
		cur = newest;
#ifdef BUG_NO_REVERSE
		oldest = newest;
		do
		:: next[cur] != NIL -> cur = next[cur]
		:: else -> break
		od;
		newest = cur;
#else
		do
		:: cur != NIL ->
			nxt = next[cur];
			next[cur] = oldest;
			oldest = cur;
			cur = nxt
		:: else -> break
		od;
#endif
#ifdef BUG_STEAL_REPLACES
		head = oldest;
#else
		if
		:: head == NIL -> head = oldest
		:: else -> next[tail] = oldest
		fi;
#endif
		tail = newest
	fi
}

/* gt_channel__pop_stolen */
inline pop_stolen(head, n)
{
	n = head;
	if
	:: n != NIL -> head = next[n]
	:: else -> skip
	fi
}

/* gt_channel__pop: steal only when the private list is empty. */
inline pop(shared, head, tail, n, newest, oldest, cur, nxt)
{
	if
	:: head == NIL -> steal(shared, head, tail, newest, oldest, cur, nxt)
	:: else -> skip
	fi;
	pop_stolen(head, n)
}

proctype producer()
{
	byte seq = 0;
	byte n, h, ok, fails;
	byte newest, oldest, cur, nxt;

	do
	:: seq == RECORDS -> break
	:: else ->
		/* gt_bichannel__produce_begin */
		pop(back_shared, back_head, back_tail, n, newest, oldest, cur, nxt);
		do
		:: n != NIL ->
			assert(owner[n] == O_BACK);
			break
		:: n == NIL && allocated < POOL ->
			n = allocated;
			allocated++;
			assert(owner[n] == O_NONE);
			break
		:: n == NIL && allocated == POOL ->
			/* Pool exhausted: wait for the consumer to release. */
			(back_shared != NIL);
			pop(back_shared, back_head, back_tail, n, newest, oldest, cur, nxt)
		od;
		owner[n] = O_PROD;
		rec[n] = seq;
		/* gt_bichannel__produce_commit */
		owner[n] = O_FWD;
		push(fwd_shared, n, h, ok, fails);
		seq++
	od
}

proctype consumer()
{
	byte expect = 0;
	byte n, h, ok, fails;
	byte held = NIL;
	byte newest, oldest, cur, nxt;

	do
	:: expect == RECORDS -> break
	:: else ->
		/* An explicit steal (drain) may come with a non-empty list. */
		if
		:: steal(fwd_shared, fwd_head, fwd_tail, newest, oldest, cur, nxt)
		:: skip
		fi;
		/* gt_bichannel__consume */
		pop(fwd_shared, fwd_head, fwd_tail, n, newest, oldest, cur, nxt);
		if
		:: n == NIL ->
			/* Nothing to consume: release what is held, then wait. */
			if
			:: held != NIL ->
				owner[held] = O_BACK;
				push(back_shared, held, h, ok, fails);
				held = NIL
			:: else ->
				(fwd_shared != NIL)
			fi
		:: else ->
			assert(owner[n] == O_FWD);
			owner[n] = O_CONS;
			assert(rec[n] == expect);
			expect++;
			/* gt_bichannel__release, now or after the next one */
			if
			:: held == NIL -> held = n
			:: true ->
				owner[n] = O_BACK;
				push(back_shared, n, h, ok, fails)
			fi
		fi
	od;
	if
	:: held != NIL ->
		owner[held] = O_BACK;
		push(back_shared, held, h, ok, fails)
	:: else -> skip
	fi
}

#ifdef BUG_TWO_PRODUCERS
proctype intruder()
{
	byte h, ok, fails;

	owner[POOL] = O_BACK;
	push(back_shared, POOL, h, ok, fails)
}
#endif

init
{
	byte i, n, count;

	atomic {
		run producer();
		run consumer();
#ifdef BUG_TWO_PRODUCERS
		run intruder()
#endif
	};
	/* Teardown: both sides quiescent. */
	(_nr_pr == 1);
	assert(fwd_shared == NIL && fwd_head == NIL);
	count = 0;
	n = back_head;
	do
	:: n != NIL -> assert(owner[n] == O_BACK); count++; assert(count <= allocated); n = next[n]
	:: else -> break
	od;
	n = back_shared;
	do
	:: n != NIL -> assert(owner[n] == O_BACK); count++; assert(count <= allocated); n = next[n]
	:: else -> break
	od;
	assert(count == allocated);
	i = 0;
	do
	:: i < allocated -> assert(owner[i] == O_BACK); i++
	:: else -> break
	od
}
