/* SPDX-License-Identifier: MIT */
/*
 * The trace recorder; see core/trace.h. The file it writes is described in
 * docs/REPORT.md and read by core/trace-read.c; both take their constants from
 * core/trace-format.h.
 */
#include "core/trace.h"
#include "core/bytes.h"
#include "core/hmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace-format.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/output.h"
#include "core/profile.h"

enum { CH_END = 0, CH_STRINGS = 1, CH_TRACKS = 2, CH_EVENTS = 3 };

/* Events per EVENTS chunk: a trace cut short loses at most one. */
#define EVENTS_PER_CHUNK 4096u
/* GPU track ids come after every possible thread index. */
#define GPU_TRACK_BASE GT_MAX_THREADS

struct rec {
	uint64_t start, dur, corr, stream;
	const struct gt_cct_node *node;
	const char *name;
	uint32_t kind, device;
};

#define RECS_PER_CHUNK ((GT_TRACE_CHUNK_BYTES - 16u) / sizeof(struct rec))

struct chunk {
	struct chunk *next;
	/* Written by the buffer's owner (release), read by the writer at stop
	 * (acquire): the records before n are complete. */
	_Atomic uint32_t n;
	struct rec recs[RECS_PER_CHUNK];
};

/* One producer (the owner). Chunks are never freed before exit. */
struct buf {
	struct chunk *head, *tail;
	uint64_t chunks;
	uint64_t dropped;
	uint64_t anchor_ticks; /* of the owner's last ANCHOR record */
};

/*
 * Records in ticks (gt_clock__ticks) carry REC_TICKS in kind: start and
 * dur are ticks, converted at write time. ANCHOR records pair a tick count
 * with the clock read next to it (start ticks, dur ns); a thread that
 * records in ticks writes one at most every ANCHOR_NS. The conversion
 * interpolates between the anchors of all threads: a pure function of the
 * tick count, so a begin shared by two spans (a region and its implicit
 * task) converts to the same ns, and spans nest as they did in ticks.
 */
#define REC_TICKS (1u << 31)
#define REC_ANCHOR (1u << 30)
#define ANCHOR_NS 1000000u

atomic_int gt_tracer_enabled;
/* Slot i: thread i's buffer, published by its owner (release) and read by
 * the writer (acquire). */
static struct buf *_Atomic bufs[GT_MAX_THREADS];
/* The monitor thread's. */
static struct buf mon_buf;
/* Ticks and ns at start: the first anchor (see REC_TICKS). */
static struct anchor {
	uint64_t ticks, ns;
} anchor0;

void gt_tracer__init(void)
{
	anchor0.ticks = gt_clock__ticks();
	anchor0.ns = gt_clock__now();
	atomic_store_explicit(&gt_tracer_enabled, gt_config.trace ? 1 : 0, memory_order_relaxed);
}

static void buf__clear(struct buf *b)
{
	for (struct chunk *c = b->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(b, 0, sizeof(*b));
}

void gt_tracer__atfork_child(void)
{
	for (uint32_t i = 0; i < GT_MAX_THREADS; i++) {
		struct buf *b = atomic_load_explicit(&bufs[i], memory_order_acquire);

		if (b)
			buf__clear(b);
	}
	buf__clear(&mon_buf);
}

/* A free record of b, or NULL (counted) when b is at its cap. */
static struct rec *buf__take(struct buf *b)
{
	struct chunk *c = b->tail;
	uint32_t n = c ? atomic_load_explicit(&c->n, memory_order_relaxed) : RECS_PER_CHUNK;

	if (n < RECS_PER_CHUNK)
		return &c->recs[n];
	if ((b->chunks + 1) * GT_TRACE_CHUNK_BYTES > GT_TRACE_CAP_BYTES || !(c = malloc(sizeof(*c)))) {
		b->dropped++;
		return NULL;
	}
	c->next = NULL;
	atomic_store_explicit(&c->n, 0, memory_order_relaxed);
	if (b->tail)
		b->tail->next = c;
	else
		b->head = c;
	b->tail = c;
	b->chunks++;
	return &c->recs[0];
}

static void buf__commit(struct buf *b)
{
	/* Release: pairs with the writer's acquire load of n. */
	atomic_store_explicit(&b->tail->n, atomic_load_explicit(&b->tail->n, memory_order_relaxed) + 1,
			      memory_order_release);
}

static struct buf *buf__of(struct gt_thread *t)
{
	struct buf *b;

	if (t->index >= GT_MAX_THREADS)
		return NULL;
	b = atomic_load_explicit(&bufs[t->index], memory_order_relaxed);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (b)
			atomic_store_explicit(&bufs[t->index], b, memory_order_release);
	}
	return b;
}

void gt_tracer__span(struct gt_thread *t, uint32_t kind, const char *name,
		     const struct gt_cct_node *node, uint64_t start_ns, uint64_t end_ns, uint64_t corr)
{
	struct buf *b = t ? buf__of(t) : NULL;
	struct rec *r = b ? buf__take(b) : NULL;

	if (!r)
		return;
	*r = (struct rec){ .start = start_ns,
			   .dur = end_ns > start_ns ? end_ns - start_ns : 0,
			   .corr = corr,
			   .node = node,
			   .name = name,
			   .kind = kind };
	buf__commit(b);
}

static void buf__anchor(struct buf *b, uint64_t ticks, uint64_t ns)
{
	struct rec *r = buf__take(b);

	if (!r)
		return;
	*r = (struct rec){ .start = ticks, .dur = ns, .kind = REC_ANCHOR };
	buf__commit(b);
	b->anchor_ticks = ticks;
}

void gt_tracer__span_ticks(struct gt_thread *t, uint32_t kind, const char *name,
			   const struct gt_cct_node *node, uint64_t start_ticks, uint64_t end_ticks)
{
	struct buf *b = t ? buf__of(t) : NULL;
	struct rec *r;

	if (!b)
		return;
	if (!b->anchor_ticks || gt_clock__ticks_to_ns(end_ticks - b->anchor_ticks) > ANCHOR_NS) {
		uint64_t ticks = gt_clock__ticks();

		buf__anchor(b, ticks, gt_clock__now());
	}
	r = buf__take(b);
	if (!r)
		return;
	*r = (struct rec){ .start = start_ticks,
			   .dur = end_ticks > start_ticks ? end_ticks - start_ticks : 0,
			   .node = node,
			   .name = name,
			   .kind = kind | REC_TICKS };
	buf__commit(b);
}

void gt_tracer__device(uint32_t kind, const char *name, const struct gt_cct_node *node, uint64_t start_ns,
		       uint64_t end_ns, uint64_t corr, uint32_t device, uint64_t stream)
{
	struct rec *r = buf__take(&mon_buf);

	if (!r)
		return;
	*r = (struct rec){ .start = start_ns,
			   .dur = end_ns > start_ns ? end_ns - start_ns : 0,
			   .corr = corr,
			   .stream = stream,
			   .node = node,
			   .name = name,
			   .kind = kind,
			   .device = device };
	buf__commit(&mon_buf);
}

/* ---- writing ---- */

/* Writes one chunk (tag, length, payload, CRC) and empties payload. */
static int chunk__write(FILE *f, uint32_t tag, struct gt_bytes *payload)
{
	struct gt_bytes h = { 0 };
	int err;

	if (payload->oom)
		return -ENOMEM;
	gt_bytes__fixed(&h, tag, 4);
	gt_bytes__fixed(&h, payload->len, 8);
	if (h.oom)
		return -ENOMEM;
	err = fwrite(h.d, 1, h.len, f) != h.len || (payload->len && fwrite(payload->d, 1, payload->len, f) != payload->len);
	free(h.d);
	h = (struct gt_bytes){ 0 };
	gt_bytes__fixed(&h, gt_crc32(payload->d, payload->len), 4);
	err |= h.oom || fwrite(h.d, 1, h.len, f) != h.len;
	free(h.d);
	payload->len = 0;
	return err ? -EIO : 0;
}

/* Devices' labels (gt_tracer__device_label): set once each (a CAS from
 * NULL, release; the writer's acquire load at exit sees the string). */
#define LABELED_DEVICES 64
static _Atomic(char *) device_labels[LABELED_DEVICES];

void gt_tracer__device_label(uint32_t device, const char *label)
{
	char *copy, *none = NULL;

	if (device >= LABELED_DEVICES || !label || atomic_load_explicit(&device_labels[device], memory_order_relaxed))
		return;
	copy = strdup(label);
	if (copy && !atomic_compare_exchange_strong_explicit(&device_labels[device], &none, copy, memory_order_release,
							     memory_order_relaxed))
		free(copy);
}

/* Interned names, by pointer: each backend interns its own. */
struct names {
	struct gt_hmap ids; /* name -> its index in order */
	const char **order;
	uint32_t n, cap;
};

static uint32_t names__id(struct names *s, const char *name)
{
	uint64_t *id;

	if (!name)
		return UINT32_MAX;
	id = gt_hmap__get(&s->ids, (uintptr_t)name);
	if (id)
		return (uint32_t)*id;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 256;
		const char **order = realloc(s->order, cap * sizeof(*order));

		if (!order)
			return UINT32_MAX;
		s->order = order;
		s->cap = cap;
	}
	if (gt_hmap__put(&s->ids, (uintptr_t)name, s->n))
		return UINT32_MAX;
	s->order[s->n] = name;
	return s->n++;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Longer first: an enclosing span before the spans inside it. */
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	/* Equal spans: spans are recorded at their end, inner ones first;
	 * corr holds the record's sequence number while sorting. */
	return x->corr < y->corr ? 1 : x->corr > y->corr ? -1 : 0;
}

/* The records of b, in recording order; *n of them. NULL: none or no memory. */
static struct rec *buf__collect(struct buf *b, uint64_t *n)
{
	uint64_t total = 0, k = 0;
	struct rec *out;

	for (struct chunk *c = b->head; c; c = c->next)
		total += atomic_load_explicit(&c->n, memory_order_acquire);
	*n = 0;
	if (!total || !(out = malloc(total * sizeof(*out))))
		return NULL;
	for (struct chunk *c = b->head; c && k < total; c = c->next) {
		uint32_t m = atomic_load_explicit(&c->n, memory_order_acquire);

		if (m > total - k)
			m = (uint32_t)(total - k);
		memcpy(out + k, c->recs, m * sizeof(*out));
		k += m;
	}
	*n = k;
	return out;
}

/* Sorts a track's records by start, enclosing spans first. */
static void recs__sort(struct rec *r, uint64_t n, uint64_t **corr)
{
	uint64_t *saved = malloc((n ? n : 1) * sizeof(*saved));

	*corr = saved;
	if (!saved) {
		for (uint64_t i = 0; i < n; i++)
			r[i].corr = 0;
		qsort(r, n, sizeof(*r), rec_cmp);
		return;
	}
	/* While sorting, corr holds the record's sequence number (the tie
	 * break of rec_cmp); the correlation ids wait in saved, by it. */
	for (uint64_t i = 0; i < n; i++) {
		saved[i] = r[i].corr;
		r[i].corr = i;
	}
	qsort(r, n, sizeof(*r), rec_cmp);
}

static uint32_t context_ref(const struct gt_cct_node *node)
{
	/* gt_output__build left the profile node in aux; 0 is the root or a
	 * node left out of the profile (nothing measured below it). */
	return node && node->aux ? node->aux + 1 : 0;
}

static int events__write(FILE *f, struct names *s, uint32_t track, const struct rec *r, const uint64_t *corr,
			 uint64_t n)
{
	struct gt_bytes p = { 0 };
	int err = 0;

	for (uint64_t i = 0; i < n && !err; i += EVENTS_PER_CHUNK) {
		uint64_t m = n - i < EVENTS_PER_CHUNK ? n - i : EVENTS_PER_CHUNK, prev = r[i].start;

		gt_bytes__uv(&p, track);
		gt_bytes__uv(&p, prev);
		gt_bytes__uv(&p, m);
		for (uint64_t k = i; k < i + m; k++) {
			uint32_t name = names__id(s, r[k].name);

			gt_bytes__uv(&p, r[k].start - prev);
			prev = r[k].start;
			gt_bytes__uv(&p, r[k].dur);
			gt_bytes__uv(&p, r[k].kind);
			gt_bytes__uv(&p, name == UINT32_MAX ? 0 : (uint64_t)name + 1);
			gt_bytes__uv(&p, context_ref(r[k].node));
			gt_bytes__uv(&p, corr ? corr[r[k].corr] : 0);
		}
		err = chunk__write(f, CH_EVENTS, &p);
	}
	free(p.d);
	return err;
}

struct track {
	uint32_t id, kind;
	uint64_t a, b;
	char *name; /* NULL: the reader names it by kind */
	struct rec *recs;
	uint64_t *corr;
	uint64_t n;
};

static int anchor_cmp(const void *a, const void *b)
{
	const struct anchor *x = a, *y = b;

	return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* ns at tick count t: interpolated between the anchors around it, or
 * extrapolated at the tick rate beyond the first or the last. */
static uint64_t ticks__ns(const struct anchor *a, uint64_t n, uint64_t t)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) { /* the first anchor after t */
		uint64_t mid = lo + (hi - lo) / 2;

		if (a[mid].ticks <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return a[0].ns - gt_clock__ticks_to_ns(a[0].ticks - t);
	if (lo == n)
		return a[n - 1].ns + gt_clock__ticks_to_ns(t - a[n - 1].ticks);
	return a[lo - 1].ns + (uint64_t)((double)(t - a[lo - 1].ticks) * (double)(a[lo].ns - a[lo - 1].ns) /
					 (double)(a[lo].ticks - a[lo - 1].ticks));
}

/* Converts the CPU tracks' tick records to ns and drops the anchors. */
static int ticks__convert(struct track *tr, uint32_t n_tracks)
{
	uint64_t n = 2, kept = 1;
	struct anchor *a;

	for (uint32_t k = 0; k < n_tracks; k++)
		for (uint64_t i = 0; i < tr[k].n; i++)
			n += (tr[k].recs[i].kind & REC_ANCHOR) != 0;
	a = malloc(n * sizeof(*a));
	if (!a)
		return -ENOMEM;
	n = 0;
	a[n++] = anchor0;
	a[n].ticks = gt_clock__ticks();
	a[n++].ns = gt_clock__now();
	for (uint32_t k = 0; k < n_tracks; k++)
		for (uint64_t i = 0; i < tr[k].n; i++)
			if (tr[k].recs[i].kind & REC_ANCHOR)
				a[n++] = (struct anchor){ tr[k].recs[i].start, tr[k].recs[i].dur };
	qsort(a, n, sizeof(*a), anchor_cmp);
	/* Anchors far enough apart that the clock's jitter cannot reverse
	 * the order of two conversions. */
	for (uint64_t i = 1; i < n; i++)
		if (a[i].ns > a[kept - 1].ns && gt_clock__ticks_to_ns(a[i].ticks - a[kept - 1].ticks) >= ANCHOR_NS / 2)
			a[kept++] = a[i];
	for (uint32_t k = 0; k < n_tracks; k++) {
		uint64_t m = 0;

		for (uint64_t i = 0; i < tr[k].n; i++) {
			struct rec r = tr[k].recs[i];

			if (r.kind & REC_ANCHOR)
				continue;
			if (r.kind & REC_TICKS) {
				uint64_t s = ticks__ns(a, kept, r.start);

				r.dur = ticks__ns(a, kept, r.start + r.dur) - s;
				r.start = s;
				r.kind &= ~REC_TICKS;
			}
			tr[k].recs[m++] = r;
		}
		tr[k].n = m;
	}
	free(a);
	return 0;
}

static int file__write(FILE *f, struct track *tr, uint32_t n_tracks)
{
	struct names s = { 0 };
	struct gt_bytes p = { 0 };
	int err;

	gt_bytes__put(&p, GT_TRACE_MAGIC, 8);
	gt_bytes__fixed(&p, GT_TRACE_VERSION, 4);
	gt_bytes__fixed(&p, 0, 4);
	if (p.oom || fwrite(p.d, 1, p.len, f) != p.len) {
		free(p.d);
		return -EIO;
	}
	p.len = 0;
	/* Names first (every event's name is known now), then tracks, then
	 * each track's events. */
	for (uint32_t k = 0; k < n_tracks; k++) {
		for (uint64_t i = 0; i < tr[k].n; i++)
			names__id(&s, tr[k].recs[i].name);
		names__id(&s, tr[k].name);
	}
	gt_bytes__uv(&p, 0);
	gt_bytes__uv(&p, s.n);
	for (uint32_t i = 0; i < s.n; i++) {
		size_t len = strlen(s.order[i]);

		gt_bytes__uv(&p, len);
		gt_bytes__put(&p, s.order[i], len);
	}
	err = chunk__write(f, CH_STRINGS, &p);
	if (!err) {
		gt_bytes__uv(&p, n_tracks);
		for (uint32_t k = 0; k < n_tracks; k++) {
			gt_bytes__uv(&p, tr[k].id);
			gt_bytes__uv(&p, tr[k].kind);
			gt_bytes__uv(&p, tr[k].a);
			gt_bytes__uv(&p, tr[k].b);
			gt_bytes__uv(&p, tr[k].name ? (uint64_t)names__id(&s, tr[k].name) + 1 : 0);
		}
		err = chunk__write(f, CH_TRACKS, &p);
	}
	for (uint32_t k = 0; k < n_tracks && !err; k++)
		err = events__write(f, &s, tr[k].id, tr[k].recs, tr[k].corr, tr[k].n);
	if (!err)
		err = chunk__write(f, CH_END, &p);
	free(p.d);
	gt_hmap__fini(&s.ids);
	free(s.order);
	return err;
}

int gt_tracer__write(struct gt_output *o, struct gt_profile *p, struct gt_output_file *of)
{
	uint32_t n_threads = gt_thread__count(), n_tracks = 0;
	struct track *tr = calloc((size_t)n_threads + 1, sizeof(*tr));
	struct rec *gpu = NULL;
	uint64_t n_gpu = 0, dropped = mon_buf.dropped, events = 0, *gpu_corr = NULL;
	char buf[64];
	int err = -ENOMEM;

	of->f = NULL;
	of->tmp[0] = 0;
	if (!gt_tracer__on())
		return 0;
	if (!tr)
		goto out;
	for (uint32_t i = 0; i < n_threads; i++) {
		struct buf *b = atomic_load_explicit(&bufs[i], memory_order_acquire);
		struct gt_thread *t = gt_thread__at(i);

		if (!b || !t)
			continue;
		dropped += b->dropped;
		tr[n_tracks] = (struct track){ .id = i, .kind = GT_TRACK_CPU, .a = t->index, .b = (uint64_t)t->tid };
		tr[n_tracks].recs = buf__collect(b, &tr[n_tracks].n);
		if (tr[n_tracks].recs)
			n_tracks++;
	}
	if (ticks__convert(tr, n_tracks))
		goto out;
	for (uint32_t k = 0; k < n_tracks; k++) {
		recs__sort(tr[k].recs, tr[k].n, &tr[k].corr);
		events += tr[k].n;
	}
	/* The monitor's records, one track per (device, stream). */
	gpu = buf__collect(&mon_buf, &n_gpu);
	if (gpu) {
		uint64_t i = 0;
		uint32_t n_gpu_tracks = 0, g = 0;
		struct track *more;

		recs__sort(gpu, n_gpu, &gpu_corr);
		for (uint64_t k = 0; k < n_gpu; k++)
			if (!k || gpu[k].device != gpu[k - 1].device || gpu[k].stream != gpu[k - 1].stream)
				n_gpu_tracks++;
		more = realloc(tr, ((size_t)n_tracks + n_gpu_tracks + 1) * sizeof(*tr));
		if (!more)
			goto out;
		tr = more;
		while (i < n_gpu) {
			uint64_t j = i;

			while (j < n_gpu && gpu[j].device == gpu[i].device && gpu[j].stream == gpu[i].stream)
				j++;
			tr[n_tracks] = (struct track){ .id = GPU_TRACK_BASE + g++,
						       .kind = GT_TRACK_GPU,
						       .a = gpu[i].device,
						       .b = gpu[i].stream,
						       .recs = gpu + i,
						       .corr = gpu_corr,
						       .n = j - i };
			if (gpu[i].device < LABELED_DEVICES) {
				/* Acquire: pairs with the labeling CAS. */
				const char *label = atomic_load_explicit(&device_labels[gpu[i].device],
									 memory_order_acquire);
				char name[192];

				if (label) {
					snprintf(name, sizeof(name), "%s queue %llu", label,
						 (unsigned long long)gpu[i].stream);
					tr[n_tracks].name = strdup(name);
				}
			}
			n_tracks++;
			i = j;
		}
		events += n_gpu;
	}
	err = gt_output__open(o, GT_TRACE_SUFFIX, of);
	if (err)
		goto out;
	err = file__write(of->f, tr, n_tracks);
	if (err)
		gt_output__discard(of);
	else
		err = gt_output__finish(of);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)events);
	gt_profile__set_meta(p, "trace_events", buf);
	if (dropped) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)dropped);
		gt_profile__set_meta(p, "trace_dropped", buf);
		gt_warn("trace", "%llu events dropped: a thread's trace reached %llu MiB",
			(unsigned long long)dropped, GT_TRACE_CAP_BYTES >> 20);
	}
out:
	if (err) {
		char q[GT_LOG_VALUE];

		gt_err("trace", "cannot write the trace of %s: %s", gt_log__escape(o->stem, q, sizeof(q)),
		       strerror(-err));
	}
	for (uint32_t k = 0; tr && k < n_tracks; k++) {
		if (tr[k].kind == GT_TRACK_CPU) {
			free(tr[k].recs);
			free(tr[k].corr);
		}
		free(tr[k].name);
	}
	free(gpu);
	free(gpu_corr);
	free(tr);
	return err;
}
