/* SPDX-License-Identifier: MIT */
/*
 * The trace reader (trace.h, docs/REPORT.md). A trace is written while the
 * program runs, chunk by chunk, so a program that dies leaves a trace
 * without its END chunk, or with a torn last chunk: the reader keeps every
 * complete chunk before the damage and says what it lost. Everything is
 * checked before use, as in the profile reader.
 */
#include "core/trace-format.h"
#include "core/bytes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CH_END = 0, CH_STRINGS = 1, CH_TRACKS = 2, CH_EVENTS = 3 };

#define HEADER_BYTES 16u
#define CHUNK_BYTES 12u /* tag, length; the payload is followed by its CRC */
#define NONE UINT32_MAX

static const char *const kind_names[GT_EV__COUNT] = {
	[GT_EV_REGION] = "region",      [GT_EV_API] = "api",         [GT_EV_KERNEL] = "kernel",
	[GT_EV_COPY_H2D] = "copy h2d",  [GT_EV_COPY_D2H] = "copy d2h", [GT_EV_COPY_D2D] = "copy d2d",
	[GT_EV_COPY_OTHER] = "copy",    [GT_EV_MEMSET] = "memset",   [GT_EV_ALLOC] = "alloc",
	[GT_EV_SYNC] = "sync",          [GT_EV_OTHER] = "other",
};

const char *gt_trace__event_kind_name(uint32_t kind)
{
	return kind < GT_EV__COUNT ? kind_names[kind] : "other";
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* An optional reference: 0 none (NONE), k + 1 entry k of a table of n. */
static uint32_t c__ref(struct gt_cursor *c, uint64_t n)
{
	uint64_t v = gt_cursor__uv(c);

	if (!v)
		return NONE;
	if (v > n) {
		c->bad = 1;
		return NONE;
	}
	return (uint32_t)(v - 1);
}

/* A count of records of at least min bytes each that must fit. */
static uint64_t c__count(struct gt_cursor *c, size_t min)
{
	uint64_t v = gt_cursor__uv(c);

	if (v > (c->end - c->pos) / min) {
		c->bad = 1;
		return 0;
	}
	return v;
}

static int grow(void *arr, uint64_t *cap, uint64_t want, size_t size)
{
	void **a = arr, *q;
	uint64_t c = *cap ? *cap : 64;

	if (want <= *cap)
		return 0;
	while (c < want)
		c *= 2;
	if (c > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*a, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*a = q;
	*cap = c;
	return 0;
}

struct caps {
	uint64_t strings, tracks, events;
};

static int chunk_strings(struct gt_trace *t, struct gt_cursor *c, struct caps *cap)
{
	uint64_t first = gt_cursor__uv(c), n = c__count(c, 1);

	if (c->bad || first != t->n_strings || n > UINT32_MAX - 1 - t->n_strings)
		return -EINVAL;
	if (grow(&t->strings, &cap->strings, t->n_strings + n, sizeof(*t->strings)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t len = gt_cursor__uv(c);
		char *s;

		if (c->bad || len > c->end - c->pos || memchr(c->d + c->pos, 0, (size_t)len))
			return -EINVAL;
		s = malloc((size_t)len + 1);
		if (!s)
			return -ENOMEM;
		memcpy(s, c->d + c->pos, (size_t)len);
		s[len] = '\0';
		c->pos += (size_t)len;
		t->strings[t->n_strings++] = s;
	}
	return 0;
}

static int chunk_tracks(struct gt_trace *t, struct gt_cursor *c, struct caps *cap)
{
	uint64_t n = c__count(c, 5);

	if (c->bad || n > UINT32_MAX - 1 - t->n_tracks)
		return -EINVAL;
	if (grow(&t->tracks, &cap->tracks, t->n_tracks + n, sizeof(*t->tracks)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_trace_track *tr = &t->tracks[t->n_tracks];
		uint64_t id = gt_cursor__uv(c), kind = gt_cursor__uv(c);

		tr->a = gt_cursor__uv(c);
		tr->b = gt_cursor__uv(c);
		tr->name = c__ref(c, t->n_strings);
		if (c->bad || id > UINT32_MAX || kind > GT_TRACK_GPU)
			return -EINVAL;
		for (uint32_t k = 0; k < t->n_tracks; k++)
			if (t->tracks[k].id == id)
				return -EINVAL;
		tr->id = (uint32_t)id;
		tr->kind = (uint32_t)kind;
		t->n_tracks++;
	}
	return 0;
}

static int chunk_events(struct gt_trace *t, struct gt_cursor *c, struct caps *cap)
{
	uint64_t track = gt_cursor__uv(c), at = gt_cursor__uv(c), n;
	uint32_t ti = NONE;

	n = c__count(c, 6);
	if (c->bad)
		return -EINVAL;
	for (uint32_t k = 0; k < t->n_tracks; k++)
		if (t->tracks[k].id == track)
			ti = k;
	if (ti == NONE)
		return -EINVAL;
	if (grow(&t->events, &cap->events, t->n_events + n, sizeof(*t->events)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_trace_event *e = &t->events[t->n_events];
		uint64_t delta = gt_cursor__uv(c), node;

		e->dur = gt_cursor__uv(c);
		e->kind = (uint32_t)(gt_cursor__uv(c) & 0xffffffffu);
		e->name = c__ref(c, t->n_strings);
		node = gt_cursor__uv(c);
		e->corr = gt_cursor__uv(c);
		if (c->bad || at + delta < at || node > UINT32_MAX)
			return -EINVAL;
		if (e->kind >= GT_EV__COUNT)
			e->kind = GT_EV_OTHER;
		at += delta;
		e->start = at;
		e->track = ti;
		e->node = node ? (uint32_t)node - 1 : NONE;
		t->n_events++;
	}
	return 0;
}

__attribute__((format(printf, 2, 3))) static void stop(struct gt_trace *t, const char *fmt, ...)
{
	va_list ap;

	t->truncated = 1;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/*
 * How much of a regular file of size bytes is worth reading, from the
 * chunks' frames alone (a few bytes each, read with pread): up to the END
 * chunk, or to the header of the first chunk that does not fit (so that the
 * read names it), never past GT_TRACE_READ_MAX (*over set then).
 */
static uint64_t frames_end(int fd, uint64_t size, int *over)
{
	uint64_t at = HEADER_BYTES;

	if (size < HEADER_BYTES)
		return size;
	while (size - at >= CHUNK_BYTES + 4) {
		uint8_t h[CHUNK_BYTES];
		uint64_t plen, next;

		if (pread(fd, h, CHUNK_BYTES, (off_t)at) != (ssize_t)CHUNK_BYTES)
			return size;
		plen = le(h + 4, 8);
		if (plen > size - at - CHUNK_BYTES - 4)
			return at + CHUNK_BYTES + 4; /* torn: its header tells */
		next = at + CHUNK_BYTES + plen + 4;
		if (next > GT_TRACE_READ_MAX) {
			*over = 1;
			return at;
		}
		at = next;
		if (le(h, 4) == CH_END)
			return at;
	}
	return size;
}

int gt_trace__read(struct gt_trace *t, FILE *f, char *err, size_t errlen)
{
	struct caps cap = { 0 };
	size_t len, pos, max = SIZE_MAX;
	struct stat st;
	uint8_t *d;
	uint32_t version;
	int rc, over = 0;

	memset(t, 0, sizeof(*t));
	if (fileno(f) >= 0 && !fstat(fileno(f), &st) && S_ISREG(st.st_mode))
		max = (size_t)frames_end(fileno(f), (uint64_t)st.st_size, &over);
	rc = gt_slurp(f, max, &d, &len);
	if (rc < 0)
		return rc;
	if (len < HEADER_BYTES || memcmp(d, GT_TRACE_MAGIC, 8)) {
		snprintf(err, errlen, "not a gputool trace (%s)", len < 8 ? "file too short" : "bad magic");
		free(d);
		return -EINVAL;
	}
	version = (uint32_t)le(d + 8, 4);
	if (version == 0 || version > GT_TRACE_VERSION) {
		snprintf(err, errlen, "trace format version %" PRIu32 " is not one this gputool reads (%u)", version,
			 GT_TRACE_VERSION);
		free(d);
		return -EINVAL;
	}
	for (pos = HEADER_BYTES;;) {
		struct gt_cursor c;
		uint32_t tag;
		uint64_t plen;

		if (pos == len && over) {
			stop(t, "only the first %zu bytes read: the trace is larger than %llu MiB", len,
			     (unsigned long long)GT_TRACE_READ_MAX >> 20);
			break;
		}
		if (pos == len) {
			stop(t, "no END chunk: the trace ends at byte %zu (the program may have stopped early)", len);
			break;
		}
		if (len - pos < CHUNK_BYTES + 4) {
			stop(t, "torn chunk at byte %zu", pos);
			break;
		}
		tag = (uint32_t)le(d + pos, 4);
		plen = le(d + pos + 4, 8);
		if (plen > len - pos - CHUNK_BYTES - 4) {
			stop(t, "torn chunk at byte %zu", pos);
			break;
		}
		if (gt_crc32(d + pos + CHUNK_BYTES, (size_t)plen) != (uint32_t)le(d + pos + CHUNK_BYTES + plen, 4)) {
			stop(t, "damaged chunk at byte %zu (checksum mismatch)", pos);
			break;
		}
		c = (struct gt_cursor){ .d = d, .pos = pos + CHUNK_BYTES, .end = pos + CHUNK_BYTES + (size_t)plen };
		pos = c.end + 4;
		if (tag == CH_END)
			break;
		switch (tag) {
		case CH_STRINGS: rc = chunk_strings(t, &c, &cap); break;
		case CH_TRACKS: rc = chunk_tracks(t, &c, &cap); break;
		case CH_EVENTS: rc = chunk_events(t, &c, &cap); break;
		default: rc = 0; /* a later version's chunk */
		}
		if (rc == -ENOMEM) {
			free(d);
			gt_trace__fini(t);
			return rc;
		}
		if (rc) {
			stop(t, "malformed chunk at byte %zu", c.end - (size_t)plen - CHUNK_BYTES);
			break;
		}
	}
	free(d);
	return 0;
}

void gt_trace__fini(struct gt_trace *t)
{
	for (uint32_t i = 0; i < t->n_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->tracks);
	free(t->events);
	memset(t, 0, sizeof(*t));
}
