/* SPDX-License-Identifier: MIT */
/*
 * The profile's binary file, read (docs/PROFILE.md; written in
 * profile-write.c). The reader treats every file as hostile: each length,
 * count and index is checked against what the file can actually hold before
 * anything is allocated or dereferenced, so a corrupt or truncated file
 * costs at most memory proportional to its size and ends in one line of
 * explanation.
 */
#include "core/profile.h"

#include "core/bytes.h"
#include "core/metrics.h"
#include "core/profile-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- decoding ---- */

/* A cursor over one section of the file held in memory. */
struct rd {
	const uint8_t *data;
	size_t pos, end; /* file offsets */
	const char *sec;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int rd__fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int rd__truncated(struct rd *r)
{
	return rd__fail(r, "truncated %s section at byte %zu", r->sec, r->pos);
}

static int rd__uv(struct rd *r, uint64_t *out)
{
	size_t start = r->pos;
	int err = gt_uv_read(r->data, r->end, &r->pos, out);

	if (err == -ENODATA)
		return rd__truncated(r);
	if (err)
		return rd__fail(r, "%s section: number too large at byte %zu", r->sec, start);
	return 0;
}

static int rd__u32(struct rd *r, uint32_t *out, const char *what)
{
	size_t start = r->pos;
	uint64_t v;
	int err = rd__uv(r, &v);

	if (err)
		return err;
	if (v > UINT32_MAX)
		return rd__fail(r, "%s section: %s %" PRIu64 " too large at byte %zu", r->sec, what, v, start);
	*out = (uint32_t)v;
	return 0;
}

/* An index into a table of n entries; with optional, 0 stands for GT_NONE. */
static int rd__index(struct rd *r, uint32_t n, int optional, uint32_t *out, const char *what)
{
	size_t start = r->pos;
	uint64_t v;
	int err = rd__uv(r, &v);

	if (err)
		return err;
	if (optional) {
		if (!v) {
			*out = GT_NONE;
			return 0;
		}
		v--;
	}
	if (v >= n)
		return rd__fail(r, "%s section: %s %" PRIu64 " out of range (%" PRIu32 " present) at byte %zu",
				r->sec, what, v, n, start);
	*out = (uint32_t)v;
	return 0;
}

/* A record count, capped by what the rest of the section can hold when each
 * record takes at least min_bytes, and by max. */
static int rd__count(struct rd *r, size_t min_bytes, uint64_t max, uint64_t *out)
{
	size_t start = r->pos;
	uint64_t v;
	int err = rd__uv(r, &v);

	if (err)
		return err;
	if (v > (r->end - r->pos) / min_bytes || v > max)
		return rd__fail(r, "%s section: count %" PRIu64 " at byte %zu exceeds what the section holds",
				r->sec, v, start);
	*out = v;
	return 0;
}

static int read_strings(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 1, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		size_t start = r->pos;
		uint64_t len;

		err = rd__uv(r, &len);
		if (err)
			return err;
		if (len > r->end - r->pos)
			return rd__truncated(r);
		if (memchr(r->data + r->pos, '\0', (size_t)len))
			return rd__fail(r, "STRINGS section: string %" PRIu64 " at byte %zu contains a NUL byte", i,
					start);
		if (gt_profile__add_string(p, (const char *)r->data + r->pos, (size_t)len, 0) == GT_NONE)
			return -ENOMEM;
		r->pos += (size_t)len;
	}
	return 0;
}

static int read_meta(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 2, GT_NONE - 1, &n);

	if (err)
		return err;
	p->meta = calloc(n ? (size_t)n : 1, sizeof(*p->meta));
	if (!p->meta)
		return -ENOMEM;
	p->cap_meta = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_prof_meta *m = &p->meta[i];

		if ((err = rd__index(r, p->n_strings, 0, &m->key, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &m->value, "string")))
			return err;
		p->n_meta++;
	}
	return 0;
}

static int read_linkage(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 2, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t name = GT_NONE, linkage = GT_NONE;

		if ((err = rd__index(r, p->n_strings, 0, &name, "string")) ||
		    (err = rd__index(r, p->n_strings, 0, &linkage, "string")))
			return err;
		err = gt_profile__set_linkage(p, name, linkage);
		if (err)
			return err;
	}
	return 0;
}

static int read_classes(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 2, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t metric = GT_NONE;
		uint64_t cls;

		if ((err = rd__index(r, p->n_metrics, 0, &metric, "metric")) || (err = rd__uv(r, &cls)))
			return err;
		/* A class of a later version: the one known here stays. */
		if (cls < GT_MC__COUNT)
			gt_profile__set_metric_class(p, metric, (uint32_t)cls);
	}
	return 0;
}

static int read_modules(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 1, GT_NONE - 1, &n);

	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t path = GT_NONE; /* set by rd__index when it returns 0 */

		err = rd__index(r, p->n_strings, 0, &path, "string");
		if (err)
			return err;
		if (gt_profile__add_module(p, path, 0) == GT_NONE)
			return -ENOMEM;
	}
	return 0;
}

static int read_metrics(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 3, GT_NONE - 1, &n);

	if (err)
		return err;
	p->metrics = calloc(n ? (size_t)n : 1, sizeof(*p->metrics));
	if (!p->metrics)
		return -ENOMEM;
	p->cap_metrics = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_prof_metric *m = &p->metrics[i];

		if ((err = rd__index(r, p->n_strings, 0, &m->name, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &m->unit, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &m->desc, "string")))
			return err;
		/* A profile without CLASSES (or one naming a metric this
		 * version knows): the class its name has here. */
		m->cls = gt_metric__class_by_name(gt_profile__str(p, m->name));
		p->n_metrics++;
	}
	return 0;
}

static int read_threads(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 3, GT_NONE - 1, &n);

	if (err)
		return err;
	p->threads = calloc(n ? (size_t)n : 1, sizeof(*p->threads));
	if (!p->threads)
		return -ENOMEM;
	p->cap_threads = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct gt_prof_thread *t = &p->threads[i];

		if ((err = rd__u32(r, &t->id, "thread id")) || (err = rd__u32(r, &t->tid, "thread tid")) ||
		    (err = rd__index(r, p->n_strings, 1, &t->kind, "string")))
			return err;
		p->n_threads++;
	}
	return 0;
}

static int read_nodes(struct rd *r, struct gt_profile *p)
{
	uint64_t n;
	int err = rd__count(r, 7, GT_NONE - 1, &n);

	if (err)
		return err;
	p->nodes = calloc(n ? (size_t)n : 1, sizeof(*p->nodes));
	if (!p->nodes)
		return -ENOMEM;
	p->cap_nodes = (uint32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_prof_node *nd = &p->nodes[i];
		size_t start = r->pos;
		uint64_t up;

		if ((err = rd__uv(r, &up)) || (err = rd__u32(r, &nd->kind, "node kind")) ||
		    (err = rd__index(r, p->n_strings, 1, &nd->name, "string")) ||
		    (err = rd__index(r, p->n_strings, 1, &nd->file, "string")) ||
		    (err = rd__u32(r, &nd->line, "line")) ||
		    (err = rd__index(r, p->n_modules, 1, &nd->module, "module")) ||
		    (err = rd__uv(r, &nd->offset)))
			return err;
		if (i == 0 && (up != 0 || nd->kind != GT_PNODE_ROOT))
			return rd__fail(r, "NODES section: node 0 at byte %zu is not the root", start);
		if (i > 0 && (up == 0 || up > i))
			return rd__fail(r, "NODES section: node %" PRIu32 " at byte %zu has no earlier parent", i,
					start);
		if (i > 0 && nd->kind == GT_PNODE_ROOT)
			return rd__fail(r, "NODES section: node %" PRIu32 " at byte %zu is a second root", i, start);
		nd->parent = i ? i - (uint32_t)up : GT_NONE;
		p->n_nodes++;
	}
	return 0;
}

static int read_values(struct rd *r, struct gt_profile *p)
{
	uint64_t groups;
	uint32_t node = 0;
	int err = rd__count(r, 5, UINT64_MAX, &groups);

	if (err)
		return err;
	for (uint64_t g = 0; g < groups; g++) {
		size_t start = r->pos;
		uint64_t delta, n;

		if ((err = rd__uv(r, &delta)) || (err = rd__count(r, 3, UINT64_MAX, &n)))
			return err;
		/* Writers never emit empty groups; allowing them would break the
		 * 5-byte minimum that caps the group count above. */
		if (!n)
			return rd__fail(r, "VALUES section: empty group at byte %zu", start);
		if (delta >= (uint64_t)p->n_nodes - node)
			return rd__fail(r, "VALUES section: node %" PRIu64 " at byte %zu out of range (%" PRIu32
					" nodes)", (uint64_t)node + delta, start, p->n_nodes);
		node += (uint32_t)delta;
		if (n > p->cap_values - p->n_values) {
			/* Geometric: one group at a time would copy the whole
			 * table at every group. */
			uint64_t want = p->n_values + n > 2 * (uint64_t)p->cap_values ? p->n_values + n
										 : 2 * (uint64_t)p->cap_values;
			void *q = NULL;

			if (want <= SIZE_MAX / sizeof(*p->values))
				q = realloc(p->values, (size_t)want * sizeof(*p->values));
			if (!q)
				return -ENOMEM;
			p->values = q;
			p->cap_values = want;
		}
		for (uint64_t k = 0; k < n; k++) {
			struct gt_prof_value *v = &p->values[p->n_values];

			v->node = node;
			if ((err = rd__index(r, p->n_metrics, 0, &v->metric, "metric")) ||
			    (err = rd__index(r, p->n_threads, 0, &v->thread, "thread")) ||
			    (err = rd__uv(r, &v->value)))
				return err;
			p->n_values++;
		}
	}
	return 0;
}

static int (*const section_readers[SEC__KNOWN])(struct rd *, struct gt_profile *) = {
	[SEC_STRINGS] = read_strings, [SEC_META] = read_meta,       [SEC_MODULES] = read_modules,
	[SEC_METRICS] = read_metrics, [SEC_THREADS] = read_threads, [SEC_NODES] = read_nodes,
	[SEC_VALUES] = read_values,   [SEC_LINKAGE] = read_linkage, [SEC_CLASSES] = read_classes,
};

static int decode(struct gt_profile *p, const uint8_t *d, size_t len, char *err, size_t errlen)
{
	struct rd r = { .data = d, .pos = 0, .end = len, .sec = "header", .err = err, .errlen = errlen };
	size_t sec_at[SEC__KNOWN], sec_len[SEC__KNOWN];
	int seen[SEC__KNOWN] = { 0 };
	uint32_t version;
	int rc;

	if (len < 8 || memcmp(d, GT_PROFILE_MAGIC, 8))
		return rd__fail(&r, "not a gputool profile (%s)", len < 8 ? "file too short" : "bad magic");
	if (len < HEADER_BYTES)
		return rd__fail(&r, "truncated file: header ends at byte %zu", len);
	version = (uint32_t)le_load(d + 8, 4);
	if (version == 0)
		return rd__fail(&r, "invalid profile format version 0");
	if (version > GT_PROFILE_VERSION)
		return rd__fail(&r,
				"profile format version %" PRIu32 " is newer than this gputool reads (%u); "
				"use a newer gputool",
				version, GT_PROFILE_VERSION);

	/* Find the sections; stop at END, whose CRC vouches for all before it. */
	for (r.pos = HEADER_BYTES;;) {
		size_t at = r.pos;
		uint32_t tag;
		uint64_t slen;

		if (len - at < SECTION_BYTES)
			return rd__fail(&r, "truncated file: no END section (file ends at byte %zu)", len);
		tag = (uint32_t)le_load(d + at, 4);
		slen = le_load(d + at + 4, 8);
		if (slen > len - at - SECTION_BYTES)
			return rd__fail(&r, "truncated file: section at byte %zu claims %" PRIu64
					" bytes, %zu remain", at, slen, len - at - SECTION_BYTES);
		r.pos = at + SECTION_BYTES + (size_t)slen;
		if (tag >= SEC__KNOWN)
			continue; /* a later format's section */
		if (seen[tag])
			return rd__fail(&r, "duplicate %s section at byte %zu", gt_profile_section_names[tag], at);
		seen[tag] = 1;
		sec_at[tag] = at + SECTION_BYTES;
		sec_len[tag] = (size_t)slen;
		if (tag != SEC_END)
			continue;
		if (slen < 4)
			return rd__fail(&r, "END section at byte %zu has no checksum", at);
		if (r.pos != len)
			return rd__fail(&r, "%zu unexpected bytes after the END section", len - r.pos);
		if (gt_crc32(d, at) != (uint32_t)le_load(d + at + SECTION_BYTES, 4))
			return rd__fail(&r, "checksum mismatch: the file is corrupt");
		break;
	}

	/* Later sections refer to earlier ones in this order. */
	for (int tag = SEC_STRINGS; tag < SEC__KNOWN; tag++) {
		if (!seen[tag])
			continue;
		r.sec = gt_profile_section_names[tag];
		r.pos = sec_at[tag];
		r.end = sec_at[tag] + sec_len[tag];
		rc = section_readers[tag](&r, p);
		if (rc)
			return rc;
		/* Bytes after the last record are what a later minor revision may
		 * append; they are ignored. */
	}
	return 0;
}

/* Sections checked for their frame before the file is read, at most: later
 * formats add a few; the read checks any beyond. */
#define PRECHECK_SECTIONS 64

/*
 * A regular file's size, header and section frames, from a few small reads
 * before the file is read whole: a file too large to be a profile, or one
 * whose sections do not fit in it, costs no more than these.
 */
static int precheck(int fd, uint64_t size, char *err, size_t errlen)
{
	struct rd r = { .sec = "header", .err = err, .errlen = errlen };
	uint8_t h[HEADER_BYTES];
	uint64_t at = HEADER_BYTES;

	if (size > GT_PROFILE_MAX_BYTES)
		return rd__fail(&r, "%" PRIu64 " bytes: larger than any profile (at most %llu MiB)", size,
				GT_PROFILE_MAX_BYTES >> 20);
	if (size < HEADER_BYTES || pread(fd, h, HEADER_BYTES, 0) != (ssize_t)HEADER_BYTES)
		return 0; /* too short: the read says so */
	if (memcmp(h, GT_PROFILE_MAGIC, 8))
		return rd__fail(&r, "not a gputool profile (bad magic)");
	for (int i = 0; i < PRECHECK_SECTIONS && size - at >= SECTION_BYTES; i++) {
		uint8_t s[SECTION_BYTES];
		uint64_t slen;

		if (pread(fd, s, SECTION_BYTES, (off_t)at) != (ssize_t)SECTION_BYTES)
			return 0;
		slen = le_load(s + 4, 8);
		if (slen > size - at - SECTION_BYTES)
			return rd__fail(&r, "truncated file: section at byte %" PRIu64 " claims %" PRIu64
					" bytes, %" PRIu64 " remain", at, slen, size - at - SECTION_BYTES);
		at += SECTION_BYTES + slen;
		if ((uint32_t)le_load(s, 4) == SEC_END)
			return at == size ? 0
					  : rd__fail(&r, "%" PRIu64 " unexpected bytes after the END section",
						     size - at);
	}
	return 0;
}

int gt_profile__read(struct gt_profile *p, FILE *f, char *err, size_t errlen)
{
	/* A stream that is not a file (a merged run in memory) has no bound. */
	size_t max = SIZE_MAX;
	struct stat st;
	uint8_t *d;
	size_t len;
	int rc;

	gt_profile__init(p);
	if (err && errlen)
		err[0] = '\0';
	if (fileno(f) >= 0 && !fstat(fileno(f), &st) && S_ISREG(st.st_mode)) {
		rc = precheck(fileno(f), (uint64_t)st.st_size, err, errlen);
		if (rc)
			return rc;
		max = GT_PROFILE_MAX_BYTES;
	}
	rc = gt_slurp(f, max, &d, &len);
	if (rc > 0) {
		/* It grew past the bound since it was checked. */
		free(d);
		if (err && errlen)
			snprintf(err, errlen, "larger than any profile (over %llu MiB)", GT_PROFILE_MAX_BYTES >> 20);
		return -EINVAL;
	}
	if (rc) {
		if (err && errlen)
			snprintf(err, errlen, "%s", rc == -EIO ? "read error" : "out of memory");
		return rc;
	}
	rc = decode(p, d, len, err, errlen);
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	if (rc)
		gt_profile__fini(p);
	free(d);
	return rc;
}
