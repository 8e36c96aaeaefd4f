/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness: a profile (or, for inputs that start with the trace
 * magic, a trace) as the bytes of a file. What the reader accepts goes
 * through everything `gputool report` does with a run: merging it twice,
 * the byte encoding of the run, the derived metrics, and every view and
 * format. Nothing may crash, hang or
 * leak; a rejected file must come with a reason.
 *
 * Both formats carry checksums, which would stop nearly every mutation at
 * the door: each input is also tried with its checksums made right, so
 * that the fuzzer reaches the section and chunk parsers.
 *
 *   fuzz_report [libFuzzer options] CORPUS_DIR [SEED_DIR...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "core/trace-format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t crc32_of(const uint8_t *d, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= d[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return c ^ 0xffffffffu;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Rewrites the checksums of d in place: the END section's of a profile,
 * each chunk's of a trace. Returns whether anything changed. */
static int fix_checksums(uint8_t *d, size_t size, int trace)
{
	size_t pos = 16;
	int changed = 0;

	while (size >= pos && size - pos >= 12) {
		uint32_t tag = (uint32_t)le(d + pos, 4);
		uint64_t len = le(d + pos + 4, 8);

		if (trace) {
			if (len > size - pos - 12 || size - pos - 12 - len < 4)
				break;
			put32(d + pos + 12 + len, crc32_of(d + pos + 12, (size_t)len));
			changed = 1;
			pos += 12 + (size_t)len + 4;
			continue;
		}
		if (len > size - pos - 12)
			break;
		if (tag == 0 && len >= 4) {
			put32(d + pos + 12, crc32_of(d, pos));
			return 1;
		}
		pos += 12 + (size_t)len;
	}
	return changed;
}

static FILE *devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static void fuzz_trace(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "rb");
	struct gt_trace t;
	char why[200] = "";

	if (!f)
		return;
	if (gt_trace__read(&t, f, why, sizeof(why)) == 0)
		gt_trace__fini(&t);
	else if (!why[0])
		abort(); /* rejected without a reason */
	fclose(f);
}

static void fuzz_run(const struct gt_profile *p)
{
	static const enum gt_view views[] = { GT_VIEW_TOP_DOWN, GT_VIEW_BOTTOM_UP, GT_VIEW_FLAT };
	struct gt_out_opts o = { .top = 20, .path = "fuzz" };
	struct gt_run r, dec;
	struct gt_analysis a;
	char why[512], *buf;
	size_t len;

	if (gt_run__init(&r, 2))
		return;
	if (gt_run__add(&r, 0, p) || gt_run__add(&r, 1, p))
		goto out;
	if (!gt_run__encode(&r, &buf, &len)) {
		if (!gt_run__decode(&dec, buf, len)) {
			struct gt_run again;

			if (!gt_run__init(&again, 2)) {
				gt_run__absorb(&again, &dec);
				gt_run__fini(&again);
			}
			gt_run__fini(&dec);
		}
		free(buf);
	}
	if (gt_analysis__init(&a, &r, NULL, why, sizeof(why)))
		goto out;
	for (size_t v = 0; v < sizeof(views) / sizeof(*views); v++) {
		o.view = views[v];
		gt_text__write(devnull(), &a, &o);
	}
	gt_json__write(devnull(), &a, &o, 0);
	gt_folded__write(devnull(), &a);
	gt_html__write(devnull(), &a, &o);
	gt_speedscope__write(devnull(), &a, &o);
	gt_hatchet__write(devnull(), &a);
	gt_pprof__write(devnull(), &a, &o);
	gt_analysis__fini(&a);
	if (!gt_analysis__init(&a, &r, "GPUOP", why, sizeof(why)))
		gt_analysis__fini(&a);
out:
	gt_run__fini(&r);
}

static void fuzz_one(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	fuzz_one(data, size);
	if (size < 16 || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	if (fix_checksums(copy, size, !memcmp(copy, GT_TRACE_MAGIC, 8)))
		fuzz_one(copy, size);
	free(copy);
	return 0;
}

static void fuzz_one(const uint8_t *data, size_t size)
{
	struct gt_profile p;
	char why[256] = "";
	FILE *f;
	int err;

	if (size >= 8 && !memcmp(data, GT_TRACE_MAGIC, 8)) {
		fuzz_trace(data, size);
		return;
	}
	/* fmemopen needs a size: an empty input reads as an empty stream. */
	f = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
	if (!f)
		return;
	err = gt_profile__read(&p, f, why, sizeof(why));
	fclose(f);
	if (err) {
		if (!why[0])
			abort(); /* rejected without a reason */
		return;
	}
	if (p.n_nodes)
		fuzz_run(&p);
	gt_profile__fini(&p);
}
