/* SPDX-License-Identifier: MIT */
/* core/mem.c: the tool's heap, against libc's and against itself. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "core/mem.h"
#include "test.h"

/* Every size from 0 to past the largest class, and large ones: usable,
 * 16-aligned, distinct, owned; freed blocks are handed out again. */
static void test_sizes(void)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 17, 48, 100, 1000, 4096, 16384, 16385,
					65536, 1 << 20, (3 << 20) + 5 };
	void *p[sizeof(sizes) / sizeof(*sizes)];
	size_t n = sizeof(sizes) / sizeof(*sizes);

	for (size_t i = 0; i < n; i++) {
		p[i] = gt_mem__alloc(sizes[i]);
		CHECK(p[i]);
		CHECK(((uintptr_t)p[i] & 15) == 0);
		CHECK(gt_mem__owns(p[i]));
		memset(p[i], (int)i + 1, sizes[i]);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sizes[i]; j += 997)
			CHECK(((unsigned char *)p[i])[j] == i + 1);
	for (size_t i = 0; i < n; i++)
		CHECK(gt_mem__free(p[i]));
	/* The same small class gives back the block just freed. */
	void *a = gt_mem__alloc(100), *b;

	gt_mem__free(a);
	b = gt_mem__alloc(110);
	CHECK(a == b);
	gt_mem__free(b);
}

/* libc's blocks, stack addresses and NULL are not the heap's: free()
 * leaves them alone (the wrapper gives them to libc's free). */
static void test_foreign(void)
{
	void *libc = malloc(64), *big = malloc(1 << 20);
	int on_stack;

	CHECK(!gt_mem__owns(libc));
	CHECK(!gt_mem__owns(big));
	CHECK(!gt_mem__owns(&on_stack));
	CHECK(!gt_mem__owns(NULL));
	CHECK(!gt_mem__free(libc));
	CHECK(!gt_mem__free(big));
	CHECK(gt_mem__free(NULL));
	free(libc);
	free(big);
}

static void test_aligned(void)
{
	static const size_t aligns[] = { 1, 8, 16, 64, 128, 4096, 8192, 1 << 16 };
	static const size_t sizes[] = { 1, 40, 64, 100, 3000, 20000 };

	for (size_t a = 0; a < sizeof(aligns) / sizeof(*aligns); a++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
			char *p = gt_mem__aligned(aligns[a], sizes[s]);

			CHECK(p);
			CHECK(((uintptr_t)p & (aligns[a] - 1)) == 0);
			memset(p, 0x5a, sizes[s]);
			CHECK(gt_mem__free(p));
		}
	CHECK(!gt_mem__aligned(48, 10));
}

/* A block that is reused comes back zeroed from calloc; a product that
 * overflows is refused. */
static void test_calloc(void)
{
	unsigned char *p = gt_mem__alloc(200), *q;

	memset(p, 0xff, 200);
	gt_mem__free(p);
	q = gt_mem__calloc(10, 20);
	CHECK(q == p);
	for (int i = 0; i < 200; i++)
		CHECK(q[i] == 0);
	gt_mem__free(q);
	CHECK(!gt_mem__calloc(SIZE_MAX / 2, 4));
}

/* Growing through every class into large blocks keeps the contents. */
static void test_realloc(void)
{
	unsigned char *p = gt_mem__realloc(NULL, 1);
	size_t n = 1;

	p[0] = 0;
	while (n < (4u << 20)) {
		size_t m = n * 3 / 2 + 1;

		p = gt_mem__realloc(p, m);
		CHECK(p);
		for (size_t i = 0; i < n; i += 101)
			CHECK(p[i] == (unsigned char)(i * 7));
		for (size_t i = 0; i < m; i++)
			p[i] = (unsigned char)(i * 7);
		n = m;
	}
	p = gt_mem__realloc(p, 10);
	for (size_t i = 0; i < 10; i++)
		CHECK(p[i] == (unsigned char)(i * 7));
	CHECK(gt_mem__free(p));
}

/* Freed large blocks are unmapped but for a few kept for reuse: many
 * rounds map no more than that. */
static void test_large_returned(void)
{
	struct gt_mem_stats before, after;
	void *keep = gt_mem__alloc(1 << 20);

	gt_mem__stats(&before);
	for (int i = 0; i < 1000; i++) {
		void *p = gt_mem__alloc((size_t)(i % 7 + 1) << 20);

		CHECK(p);
		gt_mem__free(p);
	}
	gt_mem__stats(&after);
	CHECK_EQ_U(after.large, before.large);
	CHECK(after.mapped <= before.mapped + (32u << 20) + 4096);
	gt_mem__free(keep);
}

/* A large block freed and taken again at once is the same mapping (no
 * page faults each time); calloc's is zero all the same. */
static void test_large_kept(void)
{
	unsigned char *p = gt_mem__alloc(2u << 20), *q;

	memset(p, 0xee, 2u << 20);
	gt_mem__free(p);
	q = gt_mem__calloc(1, 2u << 20);
	CHECK(q == p);
	for (size_t i = 0; i < (2u << 20); i += 4093)
		CHECK(q[i] == 0);
	CHECK(gt_mem__owns(q));
	gt_mem__free(q);
	CHECK(!gt_mem__owns(q));
}

/* Thousands of live large blocks (the address table grows and shrinks
 * through backward-shift deletion), freed in an order unlike their
 * allocation's: every one is found. */
static void test_many_large(void)
{
	enum { N = 3000 };
	static void *p[N];

	for (int i = 0; i < N; i++) {
		p[i] = gt_mem__alloc(100000);
		CHECK(p[i]);
		*(int *)p[i] = i;
	}
	for (int i = 0; i < N; i += 2)
		CHECK(gt_mem__free(p[i]));
	for (int i = 1; i < N; i += 2) {
		CHECK(gt_mem__owns(p[i]));
		CHECK(*(int *)p[i] == i);
	}
	for (int i = N - 1; i > 0; i -= 2)
		CHECK(gt_mem__free(p[i]));
	for (int i = 0; i < N; i++)
		CHECK(!gt_mem__owns(p[i]));
}

struct worker {
	unsigned seed;
	int ok;
};

static void *churn(void *arg)
{
	struct worker *w = arg;
	enum { LIVE = 256 };
	unsigned char *live[LIVE] = { 0 };
	size_t len[LIVE] = { 0 };

	w->ok = 1;
	for (int i = 0; i < 100000; i++) {
		int k;

		w->seed = w->seed * 1103515245u + 12345u;
		k = (int)(w->seed >> 8) % LIVE;
		if (live[k]) {
			for (size_t j = 0; j < len[k]; j += 61)
				if (live[k][j] != (unsigned char)k)
					w->ok = 0;
			gt_mem__free(live[k]);
		}
		len[k] = (w->seed >> 4) % (w->seed & 64 ? 40000 : 600);
		live[k] = gt_mem__alloc(len[k]);
		if (!live[k])
			return NULL;
		memset(live[k], k, len[k]);
	}
	for (int k = 0; k < LIVE; k++)
		gt_mem__free(live[k]);
	return NULL;
}

/* Four threads allocate and free at once: no block is handed out twice. */
static void test_threads(void)
{
	pthread_t t[4];
	struct worker w[4];

	for (int i = 0; i < 4; i++) {
		w[i].seed = (unsigned)i * 7919u + 1;
		CHECK(pthread_create(&t[i], NULL, churn, &w[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(w[i].ok);
	}
}

enum { HANDED = 64 };

static void *take_and_give(void *arg)
{
	void **p = arg;

	for (int i = 0; i < HANDED; i++)
		p[i] = gt_mem__alloc(60000);
	for (int i = 0; i < HANDED; i++)
		gt_mem__free(p[i]);
	return NULL;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

	return x < y ? -1 : x > y;
}

/* A thread's cached blocks go back to the shared lists when it ends: the
 * next thread gets every one of them again, not one new block. */
static void test_thread_cache_returned(void)
{
	static void *first[HANDED], *second[HANDED];
	pthread_t t;

	CHECK(pthread_create(&t, NULL, take_and_give, first) == 0);
	pthread_join(t, NULL);
	CHECK(pthread_create(&t, NULL, take_and_give, second) == 0);
	pthread_join(t, NULL);
	qsort(first, HANDED, sizeof(*first), by_address);
	qsort(second, HANDED, sizeof(*second), by_address);
	for (int i = 0; i < HANDED; i++)
		CHECK(first[i] == second[i]);
}

static void *hold_and_fork(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		gt_mem__free(gt_mem__alloc((size_t)i % 3000));
	return NULL;
}

/* Under ThreadSanitizer, which a fork() with threads running and an
 * address-space limit both upset. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* fork() while another thread allocates: the child's heap works. */
static void test_fork(void)
{
	pthread_t t;

#ifdef UNDER_TSAN
	return;
#endif
	CHECK(pthread_create(&t, NULL, hold_and_fork, NULL) == 0);
	for (int i = 0; i < 20; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			void *p = gt_mem__alloc(100);

			_exit(p && gt_mem__free(p) ? 0 : 1);
		}
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	pthread_join(t, NULL);
}

/* Out of address space: NULL, never a crash; the heap works again after. */
static void test_exhausted(void)
{
	struct rlimit lim = { 256u << 20, 256u << 20 };
	void *p;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
	return; /* its shadow memory is far beyond any such limit */
#endif
#endif
#ifdef UNDER_TSAN
	return;
#endif
	CHECK(setrlimit(RLIMIT_AS, &lim) == 0);
	CHECK(!gt_mem__alloc(1u << 30));
	p = gt_mem__alloc(64);
	CHECK(p);
	gt_mem__free(p);
}

TEST_MAIN(TEST_CASE(test_sizes), TEST_CASE(test_foreign), TEST_CASE(test_aligned),
	  TEST_CASE(test_calloc), TEST_CASE(test_realloc), TEST_CASE(test_large_returned), TEST_CASE(test_large_kept),
	  TEST_CASE(test_many_large), TEST_CASE(test_threads), TEST_CASE(test_thread_cache_returned),
	  TEST_CASE(test_fork),
	  TEST_CASE(test_exhausted))
