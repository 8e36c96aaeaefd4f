/* SPDX-License-Identifier: MIT */
/* gpu/resend.c: the host-data hash, and which uploads are the same bytes
 * as the buffer's previous one. */
#include <stdint.h>

#include "gpu/resend.h"
#include "test.h"

static void test_hash(void)
{
	size_t n = 100003, big = (80u << 20) + 12345;
	unsigned char *a = malloc(n), *b = malloc(big);
	uint64_t h;

	CHECK(a && b);
	for (size_t i = 0; i < n; i++)
		a[i] = (unsigned char)(i * 7);
	h = gt_resend__hash(a, n);
	CHECK(h == gt_resend__hash(a, n));
	a[n - 1] ^= 1;
	CHECK(h != gt_resend__hash(a, n));
	a[n - 1] ^= 1;
	a[12345] ^= 0x80;
	CHECK(h != gt_resend__hash(a, n));
	CHECK(gt_resend__hash(a, n - 1) != gt_resend__hash(a, n));
	/* Sampled above 64 MiB: the chunks it reads, including both ends, count. */
	memset(b, 3, big);
	h = gt_resend__hash(b, big);
	b[0] = 4;
	CHECK(h != gt_resend__hash(b, big));
	b[0] = 3;
	b[big - 1] = 4;
	CHECK(h != gt_resend__hash(b, big));
	free(a);
	free(b);
}

/* Up to 64 KiB, every byte: resent from the second unchanged upload. */
static void test_small(void)
{
	static float x[16384], y[16384];

	for (int i = 0; i < 16384; i++)
		x[i] = (float)i;
	CHECK(!gt_resend__upload(x, sizeof(x)));
	CHECK(gt_resend__upload(x, sizeof(x)));
	CHECK(gt_resend__upload(x, sizeof(x)));
	x[9999] = -1;
	CHECK(!gt_resend__upload(x, sizeof(x)));
	CHECK(gt_resend__upload(x, sizeof(x)));
	/* Another size, or another buffer with the same bytes: not a resend. */
	CHECK(!gt_resend__upload(x, sizeof(x) - 4));
	memcpy(y, x, sizeof(x));
	CHECK(!gt_resend__upload(y, sizeof(y)));
	CHECK(!gt_resend__upload(NULL, 8));
	CHECK(!gt_resend__upload(x, 0));
}

/* Larger: a sample of 64 pieces of 64 bytes, the first at 0 and the last
 * at the end, tells. A change between them goes unseen, as documented. */
static void test_large(void)
{
	size_t n = 3u << 20, step = (n - 64) / 63;
	unsigned char *a = malloc(n);

	CHECK(a);
	for (size_t i = 0; i < n; i++)
		a[i] = (unsigned char)(i * 13 + 1);
	CHECK(!gt_resend__upload(a, n));
	CHECK(gt_resend__upload(a, n));
	a[0] ^= 1;
	CHECK(!gt_resend__upload(a, n));
	a[n - 1] ^= 1;
	CHECK(!gt_resend__upload(a, n));
	a[step * 31 + 63] ^= 1; /* the last byte of the 32nd piece */
	CHECK(!gt_resend__upload(a, n));
	CHECK(gt_resend__upload(a, n));
	a[step * 31 + 64] ^= 1; /* just past it */
	CHECK(gt_resend__upload(a, n));
	free(a);
}

/* More buffers than it keeps (64): the last 64 uploaded are remembered. */
static void test_many(void)
{
	static int bufs[100][16];

	for (int i = 0; i < 100; i++)
		CHECK(!gt_resend__upload(bufs[i], sizeof(bufs[i])));
	for (int i = 36; i < 100; i++)
		CHECK(gt_resend__upload(bufs[i], sizeof(bufs[i])));
	CHECK(!gt_resend__upload(bufs[0], sizeof(bufs[0])));
}

TEST_MAIN(TEST_CASE(test_hash), TEST_CASE(test_small), TEST_CASE(test_large), TEST_CASE(test_many))
