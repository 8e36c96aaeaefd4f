/* SPDX-License-Identifier: MIT */
/*
 * Host bytes sent to a device again, unchanged (resend.h). A thread keeps
 * the last RESEND_BUFFERS buffers it uploaded: address, size and a hash of
 * the bytes, or of a sample of them.
 */
#include "gpu/resend.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/thread.h"

#define HASH_FULL_MAX (64ull << 20) /* above: sampled */
#define HASH_CHUNK (64u << 10)
#define HASH_CHUNKS 1024u
#define EXACT_MAX (64u << 10) /* uploads up to this size: every byte compared */
#define SAMPLE_CHUNK 64u
#define SAMPLE_CHUNKS 64u
#define RESEND_BUFFERS 64u

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Four independent lanes, so that it runs near memory speed. */
static uint64_t hash_run(const unsigned char *p, uint64_t n, uint64_t seed)
{
	const uint64_t k1 = 0x9e3779b185ebca87ull, k2 = 0xc2b2ae3d27d4eb4full;
	uint64_t a = seed + k1, b = seed + k2, c = seed ^ k1, d = seed - k2;
	uint64_t i = 0;

	for (; i + 32 <= n; i += 32) {
		a = rotl(a + load64(p + i) * k2, 31) * k1;
		b = rotl(b + load64(p + i + 8) * k2, 31) * k1;
		c = rotl(c + load64(p + i + 16) * k2, 31) * k1;
		d = rotl(d + load64(p + i + 24) * k2, 31) * k1;
	}
	a = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
	for (; i < n; i++)
		a = (a ^ p[i]) * k1;
	a ^= a >> 33;
	a *= k2;
	a ^= a >> 29;
	return a;
}

/* chunks pieces of chunk bytes spread evenly over the n > chunks * chunk
 * bytes at b, the first at 0 and the last at the end. */
static uint64_t hash_spread(const unsigned char *b, uint64_t n, uint64_t chunk, uint64_t chunks)
{
	uint64_t h = n;

	for (uint64_t i = 0; i < chunks; i++) {
		uint64_t at = i == chunks - 1 ? n - chunk : (n - chunk) / (chunks - 1) * i;

		h = hash_run(b + at, chunk, h);
	}
	return h;
}

uint64_t gt_resend__hash(const void *p, uint64_t n)
{
	if (n <= HASH_FULL_MAX)
		return hash_run(p, n, n);
	return hash_spread(p, n, HASH_CHUNK, HASH_CHUNKS);
}

/* All the bytes up to EXACT_MAX; beyond, SAMPLE_CHUNKS pieces spread over them. */
static uint64_t upload_hash(const void *p, uint64_t n)
{
	if (n <= EXACT_MAX)
		return hash_run(p, n, n);
	return hash_spread(p, n, SAMPLE_CHUNK, SAMPLE_CHUNKS);
}

struct upload {
	const void *p;
	uint64_t n;
	uint64_t hash;
};

struct resend_thread {
	uint32_t used, next;
	struct upload up[RESEND_BUFFERS];
};

static __thread struct resend_thread *self_rt;

/* At the thread's end (core/thread.c's exit hook). */
static void thread__end(struct gt_thread *t)
{
	(void)t;
	free(self_rt);
	self_rt = NULL;
}

static void hook__init(void)
{
	gt_thread__on_exit(thread__end);
}

static struct resend_thread *self(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!self_rt) {
		pthread_once(&once, hook__init);
		self_rt = calloc(1, sizeof(*self_rt));
	}
	return self_rt;
}

static struct upload *upload__find(struct resend_thread *rt, const void *p, uint64_t n)
{
	for (uint32_t i = 0; i < rt->used; i++)
		if (rt->up[i].p == p && rt->up[i].n == n)
			return &rt->up[i];
	return NULL;
}

int gt_resend__upload(const void *p, uint64_t n)
{
	struct resend_thread *rt;
	struct upload *u;
	uint64_t h;

	if (!p || !n || !(rt = self()))
		return 0;
	h = upload_hash(p, n);
	u = upload__find(rt, p, n);
	if (!u) {
		u = rt->used < RESEND_BUFFERS ? &rt->up[rt->used++] : &rt->up[rt->next++ % RESEND_BUFFERS];
		*u = (struct upload){ .p = p, .n = n, .hash = h };
		return 0;
	}
	if (u->hash != h) {
		u->hash = h;
		return 0;
	}
	return 1;
}
