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
 *            placeholder, the call site's address, 0 when not unwound,
 *            and when it was issued, on CUPTI's clock; recordings before
 *            that field end without it)
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
 *   CUBIN    u64 CRC, u64 size: a module PC sampling keeps (not its bytes)
 *   REASONS  a context's stall reasons: per reason u32 index, then its
 *            name in CUPTI_STALL_REASON_STRING_SIZE bytes
 *   PCS      what one cuptiPCSamplingGetData call gave: per PC a struct
 *            rec_pc, its (u32 reason index, u32 samples) pairs and its
 *            function's name, NUL-ended, padded to 8 bytes
 *   LINE     u64 CRC, u64 PC offset, u32 line, u32 0, then the function's
 *            and the file's names, each NUL-ended: one source line found
 *   SASS     u64 CRC, then nvdisasm's text of that module (not NUL-ended)
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

enum { C_API = 1, C_OP, C_BUFFER, C_NAME, C_RECORDS, C_DEVICE, C_SITE, C_WAIT, C_CUBIN, C_REASONS, C_PCS, C_LINE, C_SASS };

struct chunk {
	uint32_t type, len;
};

struct rec_api {
	uint32_t cupti_id;
	int32_t parts;
	uint64_t id;
	uint32_t ph, pad;
	uint64_t site;
	uint64_t issued_ns; /* CUPTI's clock; 0: not known */
};

struct rec_pc {
	uint64_t crc, pc;
	uint32_t function_index, n;
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
			  uintptr_t site, uint64_t issued_ns)
{
	struct rec_api a = {
		cupti_id, parts, id, (uint32_t)ph, 0, site,
		issued_ns ? (uint64_t)((int64_t)issued_ns - gt_cupti_activity__offset()) : 0,
	};

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

void gt_cupti_record__cubin(uint64_t crc, uint64_t size)
{
	const uint64_t v[2] = { crc, size };

	pthread_mutex_lock(&lock);
	if (out)
		put(C_CUBIN, v, sizeof(v), NULL, 0);
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__reasons(const uint32_t *index, char *const *names, uint32_t n)
{
	pthread_mutex_lock(&lock);
	if (out) {
		struct chunk c = { C_REASONS, n * (4 + CUPTI_STALL_REASON_STRING_SIZE) };

		fwrite(&c, sizeof(c), 1, out);
		for (uint32_t i = 0; i < n; i++) {
			char name[CUPTI_STALL_REASON_STRING_SIZE] = { 0 };

			snprintf(name, sizeof(name), "%s", names[i]);
			fwrite(&index[i], 4, 1, out);
			fwrite(name, 1, sizeof(name), out);
		}
		/* 4 + 128 per reason: a multiple of 4; pad to 8. */
		if (c.len % 8)
			fwrite("\0\0\0\0", 1, 8 - c.len % 8, out);
	}
	pthread_mutex_unlock(&lock);
}

static size_t pc_len(const CUpti_PCSamplingPCData *p)
{
	size_t len = sizeof(struct rec_pc) + p->stallReasonCount * 8 + strlen(p->functionName) + 1;

	return (len + 7) / 8 * 8;
}

void gt_cupti_record__pcs(const CUpti_PCSamplingData *d)
{
	static const char zero[8];
	struct chunk c = { C_PCS, 0 };

	pthread_mutex_lock(&lock);
	if (!out)
		goto out_unlock;
	for (size_t i = 0; i < d->totalNumPcs; i++)
		if (d->pPcData[i].functionName)
			c.len += (uint32_t)pc_len(&d->pPcData[i]);
	fwrite(&c, sizeof(c), 1, out);
	for (size_t i = 0; i < d->totalNumPcs; i++) {
		const CUpti_PCSamplingPCData *p = &d->pPcData[i];
		struct rec_pc r = { p->cubinCrc, p->pcOffset, p->functionIndex, (uint32_t)p->stallReasonCount };
		size_t name = strlen(p->functionName ? p->functionName : "") + 1, len;

		if (!p->functionName)
			continue;
		len = pc_len(p);
		fwrite(&r, sizeof(r), 1, out);
		for (size_t k = 0; k < p->stallReasonCount; k++) {
			const uint32_t v[2] = { p->stallReason[k].pcSamplingStallReasonIndex, p->stallReason[k].samples };

			fwrite(v, sizeof(v), 1, out);
		}
		fwrite(p->functionName, 1, name, out);
		fwrite(zero, 1, len - (sizeof(r) + p->stallReasonCount * 8 + name), out);
	}
out_unlock:
	pthread_mutex_unlock(&lock);
}

void gt_cupti_record__line(uint64_t crc, uint64_t pc, const char *function, const char *file, uint32_t line)
{
	const uint64_t head[3] = { crc, pc, line };
	size_t f = strlen(function) + 1;
	char *names = malloc(f + strlen(file) + 1);

	if (!names)
		return;
	memcpy(names, function, f);
	strcpy(names + f, file);
	pthread_mutex_lock(&lock);
	if (out)
		put(C_LINE, head, sizeof(head), names, (uint32_t)(f + strlen(file) + 1));
	pthread_mutex_unlock(&lock);
	free(names);
}

void gt_cupti_record__sass(uint64_t crc, const char *text, size_t len)
{
	pthread_mutex_lock(&lock);
	if (out && len < UINT32_MAX - 16)
		put(C_SASS, &crc, sizeof(crc), text, (uint32_t)len);
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

static int replay__reasons(const struct gt_cupti_replay *r, const uint8_t *p, uint32_t len)
{
	uint32_t n = len / (4 + CUPTI_STALL_REASON_STRING_SIZE);
	uint32_t *index = calloc(n ? n : 1, sizeof(*index));
	char **names = calloc(n ? n : 1, sizeof(*names));

	if (!index || !names) {
		free(index);
		free(names);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = p + i * (4 + CUPTI_STALL_REASON_STRING_SIZE);

		memcpy(&index[i], e, 4);
		names[i] = (char *)e + 4;
		names[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = 0;
	}
	r->reasons(r->arg, index, names, n);
	free(index);
	free(names);
	return 0;
}

/* A PCS chunk back into CUPTI's structures, for the reader's callback. */
static int replay__pcs(const struct gt_cupti_replay *r, const uint8_t *p, uint32_t len, char ***names,
		       size_t *n_names)
{
	CUpti_PCSamplingData d = { .size = sizeof(d) };
	CUpti_PCSamplingStallReason *reasons = NULL;
	size_t n = 0, n_reasons = 0, cap = 0;
	int err = 0;

	/* Two passes: count, then fill. */
	for (int pass = 0; pass < 2 && !err; pass++) {
		size_t k = 0, used = 0;

		for (uint32_t pos = 0; pos + sizeof(struct rec_pc) <= len;) {
			struct rec_pc rp;
			const char *fn;
			size_t rlen;

			memcpy(&rp, p + pos, sizeof(rp));
			fn = (const char *)p + pos + sizeof(rp) + (size_t)rp.n * 8;
			if (rp.n > 1024 || (const uint8_t *)fn >= p + len || !memchr(fn, 0, (size_t)(p + len - (const uint8_t *)fn))) {
				err = -EINVAL;
				break;
			}
			rlen = (sizeof(rp) + (size_t)rp.n * 8 + strlen(fn) + 1 + 7) / 8 * 8;
			if (pass == 1) {
				CUpti_PCSamplingPCData *pc = &d.pPcData[k];

				pc->size = sizeof(*pc);
				pc->cubinCrc = rp.crc;
				pc->pcOffset = rp.pc;
				pc->functionIndex = rp.function_index;
				pc->functionName = (char *)replay__intern(names, n_names, fn);
				pc->stallReasonCount = rp.n;
				pc->stallReason = reasons + used;
				for (uint32_t j = 0; j < rp.n; j++) {
					uint32_t v[2];

					memcpy(v, p + pos + sizeof(rp) + j * 8, sizeof(v));
					reasons[used + j].pcSamplingStallReasonIndex = v[0];
					reasons[used + j].samples = v[1];
				}
			}
			k++;
			used += rp.n;
			pos += (uint32_t)rlen;
		}
		if (pass == 0 && !err) {
			n = k;
			n_reasons = used;
			cap = n ? n : 1;
			d.pPcData = calloc(cap, sizeof(*d.pPcData));
			reasons = calloc(n_reasons ? n_reasons : 1, sizeof(*reasons));
			if (!d.pPcData || !reasons)
				err = -ENOMEM;
		}
	}
	if (!err) {
		d.totalNumPcs = n;
		d.collectNumPcs = cap;
		r->pcs(r->arg, &d);
	}
	free(reasons);
	free(d.pPcData);
	return err;
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
				struct rec_api a = { 0 };
				const char *site = NULL;

				memcpy(&a, p, c.len < sizeof(a) ? c.len : sizeof(a));
				for (size_t i = 0; a.site && i < n_snames; i++)
					if (snames[i].site == a.site)
						site = snames[i].name;
				if (r->api)
					r->api(r->arg, a.cupti_id, a.id, a.parts, (enum gt_placeholder)a.ph,
					       site, a.issued_ns);
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
			case C_CUBIN:
				if (r->cubin && c.len >= 16) {
					uint64_t v[2];

					memcpy(v, p, sizeof(v));
					r->cubin(r->arg, v[0], v[1]);
				}
				break;
			case C_REASONS:
				if (r->reasons)
					err = replay__reasons(r, p, c.len);
				break;
			case C_PCS:
				if (r->pcs)
					err = replay__pcs(r, p, c.len, &names, &n_names);
				break;
			case C_LINE:
				if (r->line && c.len > 24) {
					uint64_t v[3];
					const char *fn = (const char *)p + 24;

					memcpy(v, p, sizeof(v));
					if (memchr(fn, 0, c.len - 24) && fn + strlen(fn) + 1 < (const char *)p + c.len)
						r->line(r->arg, v[0], v[1], replay__intern(&names, &n_names, fn),
							fn + strlen(fn) + 1, (uint32_t)v[2]);
				}
				break;
			case C_SASS:
				if (r->sass && c.len >= 8) {
					uint64_t crc;

					memcpy(&crc, p, sizeof(crc));
					r->sass(r->arg, crc, (const char *)p + 8, c.len - 8);
				}
				break;
			case C_DEVICE:
				/* Fields added at the end stay 0 from older files. */
				if (r->device && c.len >= 4 + offsetof(struct gt_cupti_device, mem_bus_bits)) {
					struct gt_cupti_device d = { 0 };
					int32_t o;

					memcpy(&o, p, 4);
					memcpy(&d, p + 4, c.len - 4 < sizeof(d) ? c.len - 4 : sizeof(d));
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
