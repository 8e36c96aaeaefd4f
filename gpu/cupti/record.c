/* SPDX-License-Identifier: MIT */
/*
 * GPUTOOL_CUPTI_RECORD=DIR: the backend also writes DIR/cupti-<pid>.rec, what
 * it saw, so that the conversion and correlation code can be tested again
 * without a GPU (tests/cupti replays the files in tests/cupti/data/). A
 * test and debugging aid: the writer takes a lock and does I/O on the
 * application's threads; never set it when measuring performance.
 *
 * The file: the 8 bytes "GTCUPTI1", then chunks, each a struct chunk
 * header and `len` bytes of payload, padded to 8 bytes:
 *
 *   API      struct rec_api: a CUPTI correlation id filed under an
 *            operation (its monitor id, the activities it expects, its
 *            placeholder, the call site's address, 0 when not unwound)
 *   OP       struct gt_device_op: an operation measured at the API
 *            (allocation, free, synchronization, a failed call)
 *   BUFFER   an activity buffer as CUPTI completed it (valid bytes)
 *   NAME     u32 offset of a kernel record in the last BUFFER, then its
 *            NUL-terminated name (the pointer in the buffer is CUPTI's)
 *   RECORDS  u32 offsets of every record of the last BUFFER, as CUPTI's
 *            iterator returned them; ends the buffer
 *   DEVICE   i32 ordinal, then struct gt_cupti_device
 *   SITE     u64 call-site address, then "function (file:line)", NUL-ended;
 *            written at the end, for every address an API chunk used
 *   WAIT     struct gt_cupti_wait: a host wait blamed (an explicit or an
 *            implicit synchronization), with the operation it was made
 *            by and the offset of CUPTI's clock to the tool's then
 *
 * Numbers are little-endian, as on the machines that write and read them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/symbolize.h"
#include "gpu/cupti/cupti-internal.h"

#define MAGIC "GTCUPTI1"
#define MAX_SITES 4096

enum { C_API = 1, C_OP, C_BUFFER, C_NAME, C_RECORDS, C_DEVICE, C_SITE, C_WAIT };

struct chunk {
	uint32_t type, len;
};

struct rec_api {
	uint32_t cupti_id;
	int32_t parts;
	uint64_t id;
	uint32_t ph, pad;
	uint64_t site;
};

int gt_cupti_recording;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static uintptr_t sites[MAX_SITES];
static unsigned n_sites;

static void put(uint32_t type, const void *a, uint32_t alen, const void *b, uint32_t blen)
{
	static const char zero[8];
	struct chunk c = { type, alen + blen };

	fwrite(&c, sizeof(c), 1, out);
	if (alen)
		fwrite(a, 1, alen, out);
	if (blen)
		fwrite(b, 1, blen, out);
	if (c.len % 8)
		fwrite(zero, 1, 8 - c.len % 8, out);
}

int gt_cupti_record__open(const char *dir)
{
	char path[1024];

	if (mkdir(dir, 0777) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/cupti-%d.rec", dir, (int)getpid());
	out = fopen(path, "wb");
	if (!out)
		return -errno;
	fwrite(MAGIC, 1, 8, out);
	gt_cupti_recording = 1;
	return 0;
}

void gt_cupti_record__api(uint32_t cupti_id, uint64_t id, int32_t parts, enum gt_placeholder ph,
			  uintptr_t site)
{
	struct rec_api a = { cupti_id, parts, id, (uint32_t)ph, 0, site };

	pthread_mutex_lock(&lock);
	if (out) {
		put(C_API, &a, sizeof(a), NULL, 0);
		if (site) {
			unsigned i = 0;

			while (i < n_sites && sites[i] != site)
				i++;
			if (i == n_sites && n_sites < MAX_SITES)
				sites[n_sites++] = site;
		}
	}
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__op(const struct gt_device_op *op)
{
	pthread_mutex_lock(&lock);
	if (out)
		put(C_OP, op, sizeof(*op), NULL, 0);
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__wait(const struct gt_cupti_wait *w)
{
	pthread_mutex_lock(&lock);
	if (out)
		put(C_WAIT, w, sizeof(*w), NULL, 0);
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__buffer(uint8_t *buf, size_t valid, gt_cupti_next_fn next)
{
	CUpti_Activity *r = NULL;
	uint32_t *offs = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&lock);
	if (!out || valid > UINT32_MAX)
		goto out_unlock;
	put(C_BUFFER, buf, (uint32_t)valid, NULL, 0);
	while (next(buf, valid, &r) == 0) {
		uint32_t off = (uint32_t)((uint8_t *)r - buf);

		if (n == cap) {
			uint32_t *grown = realloc(offs, (cap = cap ? cap * 2 : 1024) * sizeof(*offs));

			if (!grown)
				break;
			offs = grown;
		}
		offs[n++] = off;
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
			const char *name = ((const CUpti_ActivityKernel10 *)r)->name;

			if (name)
				put(C_NAME, &off, sizeof(off), name, (uint32_t)strlen(name) + 1);
		}
	}
	put(C_RECORDS, offs, (uint32_t)(n * sizeof(*offs)), NULL, 0);
	free(offs);
out_unlock:
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__device(int ordinal, const struct gt_cupti_device *d)
{
	int32_t o = ordinal;

	pthread_mutex_lock(&lock);
	if (out)
		put(C_DEVICE, &o, sizeof(o), d, sizeof(*d));
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__close(void)
{
	struct gt_symbolizer *sym;

	pthread_mutex_lock(&lock);
	if (!out)
		goto out_unlock;
	sym = gt_symbolizer__new();
	for (unsigned i = 0; sym && i < n_sites; i++) {
		struct gt_symbol s;
		char text[512];
		uint64_t site = sites[i];

		/* A return address: the call is the instruction before it. */
		gt_symbolizer__lookup(sym, sites[i] - 1, &s);
		if (s.file)
			snprintf(text, sizeof(text), "%s (%s:%d)", s.function ? s.function : "?",
				 s.file, s.line);
		else
			snprintf(text, sizeof(text), "%s", s.function ? s.function : "?");
		put(C_SITE, &site, sizeof(site), text, (uint32_t)strlen(text) + 1);
	}
	if (sym)
		gt_symbolizer__delete(sym);
	fclose(out);
	out = NULL;
	gt_cupti_recording = 0;
out_unlock:
	pthread_mutex_unlock(&lock);
}

/* ---- reading ------------------------------------------------------------------ */

struct site_name {
	uint64_t site;
	const char *name;
};

/* One copy per distinct kernel name, as CUPTI has one pointer per kernel. */
static const char *replay__intern(char ***names, size_t *n, const char *s)
{
	char **grown;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], s))
			return (*names)[i];
	grown = realloc(*names, (*n + 1) * sizeof(**names));
	if (!grown)
		return NULL;
	*names = grown;
	grown[*n] = strdup(s);
	return grown[(*n)++];
}

/* The call sites' names of the last replay: tree nodes point at them. */
static struct site_name *snames;
static size_t n_snames;

int gt_cupti_record__replay(const char *path, const struct gt_cupti_replay *r)
{
	size_t n_names = 0, size, pos;
	char **names = NULL;
	uint8_t *data, *buf = NULL;
	size_t buf_len = 0;
	FILE *f = fopen(path, "rb");
	int err = 0;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != size || size < 8 || memcmp(data, MAGIC, 8)) {
		fclose(f);
		free(data);
		return -EINVAL;
	}
	fclose(f);
	/* Sites come last in the file; the API chunks before them use them. */
	for (int pass = 0; pass < 2 && !err; pass++) {
		for (pos = 8; pos + sizeof(struct chunk) <= size;) {
			struct chunk c;
			uint8_t *p;

			memcpy(&c, data + pos, sizeof(c));
			p = data + pos + sizeof(c);
			if (c.len > size - pos - sizeof(c)) {
				err = -EINVAL;
				break;
			}
			pos += sizeof(c) + (c.len + 7) / 8 * 8;
			if (pass == 0) {
				if (c.type == C_SITE && c.len > 8) {
					struct site_name *grown =
						realloc(snames, (n_snames + 1) * sizeof(*snames));

					if (!grown)
						break;
					snames = grown;
					memcpy(&snames[n_snames].site, p, 8);
					/* The tree keeps it: it outlives the file. */
					snames[n_snames].name = strdup((const char *)p + 8);
					if (snames[n_snames].name)
						n_snames++;
				}
				continue;
			}
			switch (c.type) {
			case C_API: {
				struct rec_api a;
				const char *site = NULL;

				memcpy(&a, p, sizeof(a));
				for (size_t i = 0; a.site && i < n_snames; i++)
					if (snames[i].site == a.site)
						site = snames[i].name;
				if (r->api)
					r->api(r->arg, a.cupti_id, a.id, a.parts, (enum gt_placeholder)a.ph,
					       site);
				break;
			}
			case C_OP: {
				struct gt_device_op op;

				memcpy(&op, p, sizeof(op));
				if (r->op)
					r->op(r->arg, &op);
				break;
			}
			case C_WAIT: {
				struct gt_cupti_wait w;

				if (c.len < sizeof(w))
					break;
				memcpy(&w, p, sizeof(w));
				if (r->wait)
					r->wait(r->arg, &w);
				break;
			}
			case C_BUFFER:
				free(buf);
				buf = aligned_alloc(8, (c.len + 7) / 8 * 8 + 8);
				if (!buf) {
					err = -ENOMEM;
					break;
				}
				memcpy(buf, p, c.len);
				buf_len = c.len;
				break;
			case C_NAME: {
				uint32_t off;
				const char *name;

				memcpy(&off, p, 4);
				name = replay__intern(&names, &n_names, (const char *)p + 4);
				if (buf && off + sizeof(CUpti_ActivityKernel10) <= buf_len)
					memcpy(buf + off + offsetof(CUpti_ActivityKernel10, name), &name,
					       sizeof(name));
				break;
			}
			case C_RECORDS:
				if (buf && r->buffer)
					r->buffer(r->arg, buf, buf_len, (const uint32_t *)p, c.len / 4);
				break;
			case C_DEVICE:
				if (r->device && c.len >= 4 + sizeof(struct gt_cupti_device)) {
					struct gt_cupti_device d;
					int32_t o;

					memcpy(&o, p, 4);
					memcpy(&d, p + 4, sizeof(d));
					r->device(r->arg, o, &d);
				}
				break;
			default:
				break;
			}
		}
	}
	free(buf);
	/* Names stay: the tree's nodes point at them until exit (the kernel
	 * names through the backend's name table, the sites from here). */
	free(names);
	free(data);
	return err;
}
