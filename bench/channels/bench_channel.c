/* SPDX-License-Identifier: MIT */
/*
 * Throughput and per-record cost of the bidirectional channel
 * (channels/bichannel.h), against a queue protected by a pthread mutex, in
 * the same run.
 *
 *   bench_channel [RECORDS [REPEATS]]     (default: 10000000 3)
 *
 * Both queues do the same work per record: take a free node (recycled, or
 * allocated while fewer than WINDOW exist, else wait for one to come back),
 * fill it, send it, receive it, check it, give it back. Neither allocates in its steady state; the
 * allocations made during each timed phase are printed (expected: 0).
 *
 * Phases:
 *   same thread   one thread produces and consumes: the cost of the calls
 *                 themselves, one record at a time and in batches of BATCH;
 *   1 -> 1        one producer thread, one consumer thread (pinned to two
 *                 CPUs when at least two are available): records per second.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "channels/bichannel.h"
#include "tests/channels/bichannel-test.h"

enum { WINDOW = 4096, BATCH = 64 };

struct record {
	uint64_t seq;
	uint64_t value;
};

/* ---- baseline: FIFO and free list under one pthread mutex ---- */

struct mq_node {
	struct mq_node *next;	  /* FIFO or free list */
	struct mq_node *all_next; /* every node, for teardown */
	struct record rec;
};

struct mutex_queue {
	pthread_mutex_t lock;
	struct mq_node *head, *tail; /* FIFO of records */
	struct mq_node *free;	     /* released nodes */
	struct mq_node *all;
	size_t allocations;
};

static void mq__init(struct mutex_queue *q)
{
	pthread_mutex_init(&q->lock, NULL);
	q->head = q->tail = q->free = q->all = NULL;
	q->allocations = 0;
}

static void mq__fini(struct mutex_queue *q)
{
	while (q->all != NULL) {
		struct mq_node *n = q->all;

		q->all = n->all_next;
		free(n);
	}
	pthread_mutex_destroy(&q->lock);
}

static size_t mq__allocations(struct mutex_queue *q)
{
	pthread_mutex_lock(&q->lock);
	size_t n = q->allocations;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* NULL when no node is free and WINDOW nodes exist. */
static struct record *mq__begin(struct mutex_queue *q)
{
	struct mq_node *n;

	pthread_mutex_lock(&q->lock);
	n = q->free;
	if (n != NULL) {
		q->free = n->next;
	} else if (q->allocations < WINDOW) {
		n = malloc(sizeof(*n));
		if (n == NULL)
			abort();
		q->allocations++;
		n->all_next = q->all;
		q->all = n;
	}
	pthread_mutex_unlock(&q->lock);
	return n != NULL ? &n->rec : NULL;
}

static struct mq_node *mq_node_of(struct record *r)
{
	return (struct mq_node *)((char *)r - offsetof(struct mq_node, rec));
}

static void mq__commit(struct mutex_queue *q, struct record *r)
{
	struct mq_node *n = mq_node_of(r);

	n->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail != NULL)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	pthread_mutex_unlock(&q->lock);
}

static struct record *mq__consume(struct mutex_queue *q)
{
	struct mq_node *n;

	pthread_mutex_lock(&q->lock);
	n = q->head;
	if (n != NULL) {
		q->head = n->next;
		if (q->head == NULL)
			q->tail = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	return n != NULL ? &n->rec : NULL;
}

static void mq__release(struct mutex_queue *q, struct record *r)
{
	struct mq_node *n = mq_node_of(r);

	pthread_mutex_lock(&q->lock);
	n->next = q->free;
	q->free = n;
	pthread_mutex_unlock(&q->lock);
}

/* ---- the channel, with the same window policy ---- */

static struct record *ch__begin(struct gt_bichannel *ch)
{
	if (gt_bichannel__allocations(ch) < WINDOW)
		return gt_bichannel__produce_begin(ch);
	return gt_bichannel__produce_try_begin(ch);
}

#define ch__commit gt_bichannel__produce_commit
#define ch__consume gt_bichannel__consume
#define ch__release gt_bichannel__release
#define ch__allocations gt_bichannel__allocations

/* ---- the benchmark, generated for both queues ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void relax(unsigned *spins)
{
	if (++*spins >= 1024) {
		*spins = 0;
		sched_yield();
	}
}

static int pin_to(int nth)
{
	cpu_set_t avail, one;
	int seen = 0;

	if (sched_getaffinity(0, sizeof(avail), &avail) != 0 ||
	    CPU_COUNT(&avail) < 2)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &avail) || seen++ != nth)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}
	return -1;
}

struct result {
	double seconds;
	size_t allocations; /* during the timed part */
	uint64_t sum;
	int errors;
};

/*
 * Q: queue type; P: prefix of its functions.
 *   P##_same_thread: produce/consume/release in one thread, BATCH at a time
 *                    (batch == 1: one at a time).
 *   P##_threads:     producer thread and consumer thread.
 */
#define DEFINE_BENCH(Q, P)                                                     \
	static void P##_same_thread(Q *q, uint64_t records, int batch,         \
				    struct result *res)                        \
	{                                                                      \
		uint64_t seq = 0, expect = 0;                                  \
		size_t allocs = P##__allocations(q);                           \
		double t0 = now_s();                                           \
		while (seq < records) {                                        \
			for (int i = 0; i < batch; i++) {                      \
				struct record *r = P##__begin(q);              \
				r->seq = seq;                                  \
				r->value = seq * 3;                            \
				P##__commit(q, r);                             \
				seq++;                                         \
			}                                                      \
			for (int i = 0; i < batch; i++) {                      \
				struct record *r = P##__consume(q);            \
				res->errors += r->seq != expect++;             \
				res->sum += r->value;                          \
				P##__release(q, r);                            \
			}                                                      \
		}                                                              \
		res->seconds = now_s() - t0;                                   \
		res->allocations = P##__allocations(q) - allocs;               \
	}                                                                      \
                                                                               \
	struct P##_arg {                                                       \
		Q *q;                                                          \
		uint64_t records;                                              \
		struct result *res;                                            \
	};                                                                     \
                                                                               \
	static void *P##_producer(void *argp)                                  \
	{                                                                      \
		struct P##_arg *a = argp;                                      \
		unsigned spins = 0;                                            \
		pin_to(0);                                                     \
		for (uint64_t seq = 0; seq < a->records; seq++) {              \
			struct record *r;                                      \
			while ((r = P##__begin(a->q)) == NULL)                 \
				relax(&spins);                                 \
			r->seq = seq;                                          \
			r->value = seq * 3;                                    \
			P##__commit(a->q, r);                                  \
		}                                                              \
		return NULL;                                                   \
	}                                                                      \
                                                                               \
	static void *P##_consumer(void *argp)                                  \
	{                                                                      \
		struct P##_arg *a = argp;                                      \
		unsigned spins = 0;                                            \
		pin_to(1);                                                     \
		for (uint64_t expect = 0; expect < a->records;) {              \
			struct record *r = P##__consume(a->q);                 \
			if (r == NULL) {                                       \
				relax(&spins);                                 \
				continue;                                      \
			}                                                      \
			a->res->errors += r->seq != expect++;                  \
			a->res->sum += r->value;                               \
			P##__release(a->q, r);                                 \
		}                                                              \
		return NULL;                                                   \
	}                                                                      \
                                                                               \
	static void P##_threads(Q *q, uint64_t records, struct result *res)    \
	{                                                                      \
		struct P##_arg a = { q, records, res };                        \
		pthread_t prod, cons;                                          \
		size_t allocs = P##__allocations(q);                           \
		double t0 = now_s();                                           \
		if (pthread_create(&cons, NULL, P##_consumer, &a) != 0 ||      \
		    pthread_create(&prod, NULL, P##_producer, &a) != 0)        \
			abort();                                               \
		pthread_join(prod, NULL);                                      \
		pthread_join(cons, NULL);                                      \
		res->seconds = now_s() - t0;                                   \
		res->allocations = P##__allocations(q) - allocs;               \
	}

DEFINE_BENCH(struct gt_bichannel, ch)
DEFINE_BENCH(struct mutex_queue, mq)

static int report(const char *what, uint64_t records, const struct result *c,
		  const struct result *m)
{
	double crate = (double)records / c->seconds;
	double mrate = (double)records / m->seconds;
	uint64_t sum = records * (records - 1) / 2 * 3;
	int bad = c->errors || m->errors || c->sum != sum || m->sum != sum;

	printf("%-22s channel %7.2f M rec/s %6.1f ns/rec  %zu allocs | "
	       "mutex %7.2f M rec/s %6.1f ns/rec  %zu allocs | x%.2f%s\n",
	       what, crate * 1e-6, 1e9 / crate, c->allocations, mrate * 1e-6,
	       1e9 / mrate, m->allocations, crate / mrate,
	       bad ? "  WRONG RESULT" : "");
	fflush(stdout);
	return bad;
}

int main(int argc, char **argv)
{
	uint64_t records = 10000000;
	int repeats = 3;
	int bad = 0;

	if (argc > 1)
		records = strtoull(argv[1], NULL, 10);
	if (argc > 2)
		repeats = atoi(argv[2]);
	if (records < BATCH || repeats < 1) {
		fprintf(stderr, "usage: %s [RECORDS [REPEATS]]\n", argv[0]);
		return 2;
	}
	records -= records % BATCH;

	struct gt_bichannel *ch = gt_bichannel__new(sizeof(struct record));
	struct mutex_queue mq;

	if (ch == NULL)
		return 1;
	mq__init(&mq);

	/* Warm-up: reach the steady state (window filled, pages touched). */
	{
		struct result c = { 0 }, m = { 0 };

		ch_threads(ch, records / 4, &c);
		mq_threads(&mq, records / 4, &m);
		ch_same_thread(ch, BATCH * 1000, BATCH, &c);
		mq_same_thread(&mq, BATCH * 1000, BATCH, &m);
	}
	printf("%" PRIu64 " records per phase, %d repeats; "
	       "after warm-up: channel %zu nodes, mutex queue %zu nodes\n",
	       records, repeats, gt_bichannel__allocations(ch),
	       mq__allocations(&mq));

	for (int rep = 0; rep < repeats; rep++) {
		struct result c = { 0 }, m = { 0 };

		ch_same_thread(ch, records, 1, &c);
		mq_same_thread(&mq, records, 1, &m);
		bad |= report("same thread, 1 by 1", records, &c, &m);
	}
	for (int rep = 0; rep < repeats; rep++) {
		struct result c = { 0 }, m = { 0 };

		ch_same_thread(ch, records, BATCH, &c);
		mq_same_thread(&mq, records, BATCH, &m);
		bad |= report("same thread, batch 64", records, &c, &m);
	}
	for (int rep = 0; rep < repeats; rep++) {
		struct result c = { 0 }, m = { 0 };

		ch_threads(ch, records, &c);
		mq_threads(&mq, records, &m);
		bad |= report("1 -> 1 threads", records, &c, &m);
	}

	gt_bichannel__delete(ch);
	mq__fini(&mq);
	return bad;
}
