/* SPDX-License-Identifier: MIT */
/*
 * Stress test of channels/bichannel.h with real threads.
 *
 *   stress_channel [RECORDS]
 *
 * Run 1: one producer thread sends RECORDS records to one consumer thread.
 * Run 2: four producer threads, each with its own bichannel, send RECORDS
 *        records in all to one consumer that polls every channel.
 *
 * Each record carries its producer, a sequence number and a value derived
 * from both. The consumer checks, per channel, that sequence numbers arrive
 * as 0, 1, 2, ... (FIFO, nothing lost, nothing duplicated), that each value
 * matches its sequence number (the payload arrived whole), and at the end
 * that the sum of the values it saw equals the sum each producer sent.
 *
 * The producers bound the nodes in flight at WINDOW per channel through the
 * channel itself: they allocate until WINDOW nodes exist, then wait for
 * nodes to come back (produce_try_begin). No other synchronization links the
 * threads until they are joined, so a missing ordering in the channel shows
 * up under ThreadSanitizer instead of being hidden by a helper's fence.
 *
 * The consumer alternates between consume/release one at a time (holding a
 * few records before releasing them) and drain, so both consumer paths run
 * against a live producer.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "channels/bichannel.h"
#include "tests/channels/bichannel-test.h"

#ifndef STRESS_DEFAULT_RECORDS
#define STRESS_DEFAULT_RECORDS 10000000ULL
#endif
#ifndef STRESS_BUILD
#define STRESS_BUILD "normal"
#endif

enum { MAX_PRODUCERS = 4, WINDOW = 4096, HOLD = 16, SPINS = 256 };

struct record {
	uint64_t seq;
	uint32_t producer;
	uint32_t pad;
	uint64_t value;
};

struct producer {
	pthread_t thread;
	struct gt_bichannel *ch;
	uint32_t index;
	uint64_t records;
	uint64_t sum; /* of values sent; read after join */
	uint64_t waits;
};

struct consumer_channel {
	uint64_t next_seq;
	uint64_t sum;
};

struct consumer {
	pthread_t thread;
	struct producer *producers;
	int nproducers;
	struct consumer_channel seen[MAX_PRODUCERS];
	uint64_t errors;
	uint64_t drains;
};

static uint64_t mix(uint64_t x)
{
	/* splitmix64 finalizer */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t record_value(uint32_t producer, uint64_t seq)
{
	return mix(seq * MAX_PRODUCERS + producer);
}

static void backoff(unsigned *spins)
{
	if (++*spins >= SPINS) {
		*spins = 0;
		sched_yield();
	}
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	unsigned spins = 0;

	for (uint64_t seq = 0; seq < p->records; seq++) {
		struct record *r;

		if (gt_bichannel__allocations(p->ch) < WINDOW)
			r = gt_bichannel__produce_begin(p->ch);
		else
			while ((r = gt_bichannel__produce_try_begin(p->ch)) ==
			       NULL) {
				p->waits++;
				backoff(&spins);
			}
		if (r == NULL) {
			fprintf(stderr, "producer %u: out of memory\n",
				p->index);
			abort();
		}
		r->seq = seq;
		r->producer = p->index;
		r->value = record_value(p->index, seq);
		p->sum += r->value;
		gt_bichannel__produce_commit(p->ch, r);
	}
	return NULL;
}

static void consumer_check(struct consumer *c, uint32_t channel,
			   const struct record *r)
{
	struct consumer_channel *s = &c->seen[channel];

	if (r->producer != channel || r->seq != s->next_seq ||
	    r->value != record_value(channel, r->seq)) {
		if (c->errors++ < 10)
			fprintf(stderr,
				"channel %u: got producer %u seq %" PRIu64
				" value %016" PRIx64 ", expected seq %" PRIu64
				"\n",
				channel, r->producer, r->seq, r->value,
				s->next_seq);
		s->next_seq = r->seq; /* resynchronize, report once */
	}
	s->next_seq++;
	s->sum += r->value;
}

struct drain_arg {
	struct consumer *c;
	uint32_t channel;
};

static void drain_one(void *payload, void *arg)
{
	struct drain_arg *d = arg;

	consumer_check(d->c, d->channel, payload);
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	void *held[MAX_PRODUCERS][HOLD];
	int nheld[MAX_PRODUCERS] = { 0 };
	unsigned spins = 0;
	uint64_t round = 0;
	int done;

	do {
		int progress = 0;

		done = 1;
		for (int i = 0; i < c->nproducers; i++) {
			struct producer *p = &c->producers[i];
			struct consumer_channel *s = &c->seen[i];
			uint32_t ch = (uint32_t)i;

			if (s->next_seq >= p->records)
				continue;
			done = 0;

			/* One round in 8 drains; the others consume. */
			if ((round & 7) == 7) {
				struct drain_arg d = { c, ch };
				size_t n = gt_bichannel__drain(p->ch,
							       drain_one, &d);
				c->drains += n != 0;
				progress |= n != 0;
				continue;
			}
			for (int k = 0; k < 1024; k++) {
				struct record *r = gt_bichannel__consume(p->ch);

				if (r == NULL)
					break;
				progress = 1;
				consumer_check(c, ch, r);
				held[i][nheld[i]++] = r;
				if (nheld[i] == HOLD) {
					for (int h = 0; h < HOLD; h++)
						gt_bichannel__release(
							p->ch, held[i][h]);
					nheld[i] = 0;
				}
			}
		}
		round++;
		if (!progress) {
			/*
			 * Held records count against the producer's window:
			 * give them back before waiting for more.
			 */
			for (int i = 0; i < c->nproducers; i++) {
				for (int h = 0; h < nheld[i]; h++)
					gt_bichannel__release(
						c->producers[i].ch, held[i][h]);
				nheld[i] = 0;
			}
			backoff(&spins);
		}
	} while (!done);

	for (int i = 0; i < c->nproducers; i++)
		for (int h = 0; h < nheld[i]; h++)
			gt_bichannel__release(c->producers[i].ch, held[i][h]);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run(int nproducers, uint64_t records)
{
	struct producer producers[MAX_PRODUCERS] = { 0 };
	struct consumer c = { .producers = producers,
			      .nproducers = nproducers };
	int failed = 0;

	for (int i = 0; i < nproducers; i++) {
		producers[i].index = (uint32_t)i;
		producers[i].records = records / (uint64_t)nproducers +
				       ((uint64_t)i < records % (uint64_t)nproducers);
		producers[i].ch = gt_bichannel__new(sizeof(struct record));
		if (producers[i].ch == NULL) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
	}

	double t0 = now_s();
	if (pthread_create(&c.thread, NULL, consumer_main, &c) != 0)
		abort();
	for (int i = 0; i < nproducers; i++)
		if (pthread_create(&producers[i].thread, NULL, producer_main,
				   &producers[i]) != 0)
			abort();
	for (int i = 0; i < nproducers; i++)
		pthread_join(producers[i].thread, NULL);
	pthread_join(c.thread, NULL);
	double elapsed = now_s() - t0;

	uint64_t total = 0;
	for (int i = 0; i < nproducers; i++) {
		struct producer *p = &producers[i];
		struct consumer_channel *s = &c.seen[i];
		size_t allocs = gt_bichannel__allocations(p->ch);

		/* Everything was released: one drain must find nothing. */
		if (gt_bichannel__drain(p->ch, NULL, NULL) != 0) {
			fprintf(stderr, "channel %d: records left over\n", i);
			failed = 1;
		}
		if (s->next_seq != p->records || s->sum != p->sum) {
			fprintf(stderr,
				"channel %d: received %" PRIu64 " of %" PRIu64
				", checksum %016" PRIx64 " vs sent %016" PRIx64
				"\n",
				i, s->next_seq, p->records, s->sum, p->sum);
			failed = 1;
		}
		if (allocs > WINDOW) {
			fprintf(stderr, "channel %d: %zu allocations > %d\n",
				i, allocs, WINDOW);
			failed = 1;
		}
		printf("  channel %d: %" PRIu64 " records, checksum %016" PRIx64
		       ", %zu nodes allocated, %" PRIu64 " producer waits\n",
		       i, p->records, s->sum, allocs, p->waits);
		total += s->next_seq;
		gt_bichannel__delete(p->ch);
	}
	if (c.errors != 0) {
		fprintf(stderr, "%" PRIu64 " records out of order or corrupt\n",
			c.errors);
		failed = 1;
	}
	printf("%d producer(s) -> 1 consumer: %" PRIu64
	       " records in %.3f s (%.1f M records/s), %" PRIu64
	       " drain calls: %s\n",
	       nproducers, total, elapsed, (double)total / elapsed * 1e-6,
	       c.drains, failed ? "FAIL" : "ok");
	return failed;
}

int main(int argc, char **argv)
{
	uint64_t records = STRESS_DEFAULT_RECORDS;

	if (argc > 1) {
		char *end;

		records = strtoull(argv[1], &end, 10);
		if (*end != '\0' || records == 0) {
			fprintf(stderr, "usage: %s [RECORDS]\n", argv[0]);
			return 2;
		}
	}
	printf("%s build, %" PRIu64 " records per run\n", STRESS_BUILD,
	       records);
	fflush(stdout);

	int failed = run(1, records);
	failed |= run(MAX_PRODUCERS, records);
	return failed;
}
