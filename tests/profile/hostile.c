/* SPDX-License-Identifier: MIT */
/* Profiles written by hand, byte by byte, that the reader must refuse
 * with the reason, or read as far as they are valid. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "report/report.h"
#include "tests/profile/profile-test.h"

struct fb {
	uint8_t d[1 << 12];
	size_t n, sec;
};

static void fb__bytes(struct fb *b, const void *s, size_t n)
{
	memcpy(b->d + b->n, s, n);
	b->n += n;
}

static void fb__le(struct fb *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		b->d[b->n++] = (uint8_t)(v >> (8 * i));
}

static void fb__uv(struct fb *b, uint64_t v)
{
	do {
		b->d[b->n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void fb__header(struct fb *b, uint32_t version)
{
	b->n = 0;
	fb__bytes(b, GT_PROFILE_MAGIC, 8);
	fb__le(b, version, 4);
	fb__le(b, 0, 4);
}

static void fb__begin(struct fb *b, uint32_t tag)
{
	b->sec = b->n;
	fb__le(b, tag, 4);
	fb__le(b, 0, 8);
}

static void fb__end(struct fb *b)
{
	uint64_t len = b->n - b->sec - 12;

	for (int i = 0; i < 8; i++)
		b->d[b->sec + 4 + i] = (uint8_t)(len >> (8 * i));
}

static void fb__finish(struct fb *b)
{
	uint32_t crc = crc32_of(b->d, b->n);

	fb__le(b, 0, 4);
	fb__le(b, 4, 8);
	fb__le(b, crc, 4);
}

/* STRINGS {"a","b"} and a root node. */
static void fb__base(struct fb *b)
{
	fb__header(b, GT_PROFILE_VERSION);
	fb__begin(b, 1);
	fb__uv(b, 2);
	fb__uv(b, 1);
	fb__bytes(b, "a", 1);
	fb__uv(b, 1);
	fb__bytes(b, "b", 1);
	fb__end(b);
}

static void fb__root(struct fb *b)
{
	for (int i = 0; i < 7; i++)
		fb__uv(b, 0);
}

static int expect(const struct fb *b, const char *want)
{
	struct gt_profile q;
	char why[256] = "";
	int err = from_memory(&q, b->d, b->n, why, sizeof(why));

	if (!want) {
		if (err)
			fprintf(stderr, "unexpected error: %s\n", why);
		CHECK(err == 0);
		gt_profile__fini(&q);
		return 0;
	}
	if (err != -EINVAL || !strstr(why, want))
		fprintf(stderr, "expected \"%s\", got %d \"%s\"\n", want, err, why);
	CHECK(err == -EINVAL && strstr(why, want));
	CHECK(q.n_strings == 0 && q.n_nodes == 0 && q.string_index == NULL);
	return 0;
}

void test_hostile(void)
{
	struct fb b;

	fb__base(&b);
	fb__finish(&b);
	CHECK(expect(&b, NULL) == 0);

	fb__header(&b, GT_PROFILE_VERSION + 1);
	fb__finish(&b);
	CHECK(expect(&b, "newer") == 0);
	fb__header(&b, 0);
	fb__finish(&b);
	CHECK(expect(&b, "version 0") == 0);
	fb__header(&b, 1);
	b.d[0] = 'X';
	fb__finish(&b);
	CHECK(expect(&b, "bad magic") == 0);
	b.n = 10;
	memcpy(b.d, GT_PROFILE_MAGIC, 8);
	CHECK(expect(&b, "header") == 0);

	/* Counts far beyond the section. */
	fb__header(&b, 1);
	fb__begin(&b, 1);
	fb__uv(&b, 1ull << 40);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "count") == 0);
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 4000000000ull);
	fb__root(&b);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "count") == 0);

	/* A section longer than the file. */
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__root(&b);
	fb__end(&b);
	b.d[b.sec + 4] = 200;
	CHECK(expect(&b, "truncated file") == 0);

	/* No END. */
	fb__base(&b);
	CHECK(expect(&b, "no END") == 0);

	/* A checksum that does not match. */
	fb__base(&b);
	fb__finish(&b);
	b.d[30] ^= 1; /* the "a" of STRINGS */
	CHECK(expect(&b, "checksum") == 0);

	/* Bytes after END. */
	fb__base(&b);
	fb__finish(&b);
	fb__le(&b, 0, 3);
	CHECK(expect(&b, "after the END") == 0);

	/* A later format's section is skipped; so are bytes a later revision
	 * appends to a known section. */
	fb__base(&b);
	fb__begin(&b, 99);
	fb__bytes(&b, "\xff\xff\xff\xff", 4);
	fb__end(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__root(&b);
	fb__bytes(&b, "\x01\x02\x03", 3);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, NULL) == 0);

	/* The same section twice. */
	fb__base(&b);
	fb__begin(&b, 1);
	fb__uv(&b, 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "duplicate STRINGS") == 0);

	/* An 11-byte number. */
	fb__base(&b);
	fb__begin(&b, 5);
	fb__bytes(&b, "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x00", 14);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "too large") == 0);

	/* A NUL inside a string. */
	fb__header(&b, 1);
	fb__begin(&b, 1);
	fb__uv(&b, 1);
	fb__uv(&b, 3);
	fb__bytes(&b, "a\0b", 3);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "NUL") == 0);

	/* A string index past the table. */
	fb__base(&b);
	fb__begin(&b, 2);
	fb__uv(&b, 1);
	fb__uv(&b, 0);
	fb__uv(&b, 3); /* value: string 2 of 2 */
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "out of range") == 0);

	/* Node 0 must be the root; others need an earlier parent and no
	 * second root. */
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__uv(&b, 0);
	fb__uv(&b, 1); /* kind frame */
	for (int i = 0; i < 5; i++)
		fb__uv(&b, 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "not the root") == 0);
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 2);
	fb__root(&b);
	fb__uv(&b, 2); /* node 1, parent 1 - 2 */
	for (int i = 0; i < 6; i++)
		fb__uv(&b, i == 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "no earlier parent") == 0);
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 2);
	fb__root(&b);
	fb__uv(&b, 1);
	fb__uv(&b, 0); /* kind root */
	for (int i = 0; i < 5; i++)
		fb__uv(&b, 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "second root") == 0);

	/* A group of no values. */
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__root(&b);
	fb__end(&b);
	fb__begin(&b, 7);
	fb__bytes(&b, "\x01\x00\x00\x00\x00\x00", 6);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "empty group") == 0);

	/* Values for a node, metric or thread that does not exist. */
	for (int which = 0; which < 3; which++) {
		fb__base(&b);
		fb__begin(&b, 4); /* METRICS: one */
		fb__uv(&b, 1);
		fb__uv(&b, 0);
		fb__uv(&b, 0);
		fb__uv(&b, 0);
		fb__end(&b);
		fb__begin(&b, 5); /* THREADS: one */
		fb__uv(&b, 1);
		fb__uv(&b, 0);
		fb__uv(&b, 1);
		fb__uv(&b, 0);
		fb__end(&b);
		fb__begin(&b, 6);
		fb__uv(&b, 1);
		fb__root(&b);
		fb__end(&b);
		fb__begin(&b, 7);
		fb__uv(&b, 1);         /* one group */
		fb__uv(&b, which == 0); /* node */
		fb__uv(&b, 1);         /* one value */
		fb__uv(&b, which == 1); /* metric */
		fb__uv(&b, which == 2); /* thread */
		fb__uv(&b, 5);
		fb__end(&b);
		fb__finish(&b);
		CHECK(expect(&b, which == 0 ? "node 1" : which == 1 ? "metric 1" : "thread 1") == 0);
	}
}
