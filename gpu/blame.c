/* SPDX-License-Identifier: MIT */
/*
 * Blame shifting over the monitor's device-operation records; see
 * gpu/blame.h and docs/BLAME.md.
 *
 * Who runs what:
 *   launching threads   gt_blame__launched (the in-flight counters, from
 *                       gt_monitor__correlate_device), gt_blame__sync
 *   sampling handlers   blame__sample: relaxed loads of the counters, and
 *                       the thread's own tree (signal context)
 *   the monitor thread  everything in `bl`: per device, the finished
 *                       operations kept for syncs to come, the epochs of
 *                       outstanding operations, the syncs waiting for them,
 *                       the busy intervals; the pending syncs. At exit,
 *                       gt_blame__fini runs there too, after the final
 *                       rounds.
 *
 * When a sync can be blamed. The sync record of thread T is committed after
 * T's wait ended, so every operation launched before it has its correlation
 * in some thread's channel already; the monitor reads every channel once
 * before it takes the sync (on_sync in monitor.c). Then the operations that
 * matter are exactly those outstanding now on the sync's device(s). Each
 * device counts its outstanding operations per epoch; a sync that finds
 * some closes the current epoch (its horizon) and waits, in the device's
 * FIFO of waits, until every epoch up to its horizon is empty. Epochs exist
 * only at horizons, so there are at most waits + 1 of them per device.
 */
#include "gpu/blame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/blame-internal.h"
#include "gpu/monitor-internal.h"
#include "gpu/monitor.h"
#include "gpu/ring.h"

_Static_assert(GT_BLAME_MAX_DEVICES <= 64, "device sets are 64-bit masks");
_Static_assert(GT_M_GPU_IDLE_CAUSE_D3 - GT_M_GPU_IDLE_CAUSE_D0 + 1 == GT_BLAME_DEVICE_METRICS,
	       "one GPU_IDLE_CAUSE_D<k> metric per device with a metric of its own");

/* Finished operations inserted on a device between two trims. */
#define TRIM_EVERY 64
/* Longest fact value core/tool.c keeps, with its NUL. */
#define FACT_BYTES 224

/* ---- monitor state ---- */

/* A finished operation, kept for the syncs to come. */
struct blame_op {
	uint64_t start, end, stream;
	struct gt_gpu_thread *owner;
	struct gt_cct_node *placeholder;
	const char *name;
	uint8_t kind, copy;
};

/* A sync received and not yet blamed. */
struct blame_sync {
	struct gt_gpu_thread *owner;
	struct gt_cct_node *node;
	uint64_t begin, end, stream;
	uint32_t device;  /* GT_BLAME_NO_DEVICE: every device */
	uint32_t waiting; /* devices with operations from before it outstanding */
	uint64_t devices; /* those devices */
	struct blame_sync *older, *newer; /* pending list, arrival order; free list */
};

/* A sync waiting on one device until every epoch up to horizon is empty. */
struct blame_wait {
	struct blame_sync *sync;
	uint64_t horizon;
};

struct interval {
	uint64_t start, end;
};

struct blame_dev {
	int active;
	/* struct blame_op, by end time. */
	struct ring ops;
	/* uint32_t counts of outstanding operations; slot i is epoch base + i,
	 * the last one current. Empty epochs at the front are dropped. */
	struct ring epochs;
	uint64_t base;
	uint64_t outstanding;
	/* struct blame_wait, by horizon (= arrival order). */
	struct ring waits;
	/* struct interval: disjoint, by start; what ended before `frontier`
	 * has been summed into busy_ns. */
	struct ring busy;
	uint64_t busy_ns, frontier;
	uint32_t since_trim;
};

/* One operation's share of a sync, while it is blamed. */
struct part {
	uint64_t a, b;
	double f0, f1;
	const struct blame_op *op;
};

struct event {
	uint64_t t;
	uint32_t part;
	int32_t delta;
};

enum {
#define X(field, desc) BSTAT_##field,
	GT_BLAME_STATS(X)
#undef X
	BSTAT_N
};

static struct {
	/* Published counters: written by the monitor (relaxed), read anywhere. */
	_Atomic uint64_t pub[BSTAT_N];
	_Atomic uint64_t pub_busy[GT_BLAME_MAX_DEVICES];

	/* ---- monitor thread only ---- */
	struct gt_blame_stats priv;
	struct blame_dev dev[GT_BLAME_MAX_DEVICES];
	uint64_t active; /* bit d: dev[d].active */
	struct blame_sync *oldest, *newest, *free_syncs;
	uint64_t newest_ns; /* the newest time seen in any record */
	struct part *parts;
	struct event *events;
	size_t cap_parts;
} bl;

void gt_blame__init(void)
{
	for (int d = 0; d < GT_BLAME_MAX_DEVICES; d++) {
		ring__init(&bl.dev[d].ops, sizeof(struct blame_op));
		ring__init(&bl.dev[d].epochs, sizeof(uint32_t));
		ring__init(&bl.dev[d].waits, sizeof(struct blame_wait));
		ring__init(&bl.dev[d].busy, sizeof(struct interval));
	}
	gt_sample__add_hook(gt_blame__sample);
}

/* dev[d], set up on first use. NULL when out of memory. */
static struct blame_dev *dev__get(uint32_t d)
{
	struct blame_dev *v = &bl.dev[d];
	uint32_t *first;

	if (v->active)
		return v;
	first = ring__push(&v->epochs);
	if (!first)
		return NULL;
	*first = 0;
	v->active = 1;
	bl.active |= 1ull << d;
	return v;
}

static uint32_t *epoch__at(struct blame_dev *v, uint32_t i)
{
	return ring__at(&v->epochs, i);
}

static uint64_t dev__current_epoch(const struct blame_dev *v)
{
	return v->base + v->epochs.n - 1;
}

static void time__seen(uint64_t t)
{
	if (t > bl.newest_ns)
		bl.newest_ns = t;
}

/* ---- blaming one sync ---- */

static int parts__reserve(size_t n)
{
	size_t cap = bl.cap_parts ? bl.cap_parts : 64;
	struct part *p;
	struct event *e;

	if (n <= bl.cap_parts)
		return 0;
	while (cap < n)
		cap *= 2;
	p = realloc(bl.parts, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	bl.parts = p;
	e = realloc(bl.events, 2 * cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	bl.events = e;
	bl.cap_parts = cap;
	return 0;
}

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* Ends first: a slice of length 0 changes nothing either way, but a
	 * stable order keeps results reproducible. */
	if (x->delta != y->delta)
		return x->delta < y->delta ? -1 : 1;
	return x->part < y->part ? -1 : x->part > y->part;
}

/* The operations of @s's device(s) and stream that ran during it, clipped
 * to it. Returns their number, or -ENOMEM. */
static long sync__collect(const struct blame_sync *s)
{
	uint64_t devs = s->device == GT_BLAME_NO_DEVICE ? bl.active
			: (bl.active & (1ull << s->device));
	size_t n = 0;

	for (; devs; devs &= devs - 1) {
		struct blame_dev *v = &bl.dev[__builtin_ctzll(devs)];
		uint32_t lo = 0, hi = v->ops.n;

		/* The first operation ending after the sync began. */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (((struct blame_op *)ring__at(&v->ops, mid))->end > s->begin)
				hi = mid;
			else
				lo = mid + 1;
		}
		for (uint32_t i = lo; i < v->ops.n; i++) {
			const struct blame_op *op = ring__at(&v->ops, i);
			uint64_t a = op->start > s->begin ? op->start : s->begin;
			uint64_t b = op->end < s->end ? op->end : s->end;

			if (b <= a || (s->stream && op->stream != s->stream))
				continue;
			if (parts__reserve(n + 1))
				return -ENOMEM;
			bl.parts[n++] = (struct part){ .a = a, .b = b, .op = op };
		}
	}
	return (long)n;
}

static int same_site(const struct blame_op *x, const struct blame_op *y)
{
	return x->owner == y->owner && x->placeholder == y->placeholder && x->name == y->name &&
	       x->kind == y->kind && x->copy == y->copy;
}

static void blame__send(const struct blame_op *op, uint64_t ns)
{
	struct gt_device_op dop;

	if (!ns)
		return;
	memset(&dop, 0, sizeof(dop));
	dop.kind = op->kind;
	dop.copy = op->copy;
	dop.name = op->name;
	dop.stream = op->stream;
	gt_monitor__send_blame(op->owner, op->placeholder, &dop, GT_M_CPU_IDLE_CAUSE, ns);
	bl.priv.blamed++;
}

/*
 * Shares the sync's window among the operations running in it: a slice in
 * which k of them run gives each 1/k of its length. With F(t) the integral
 * of 1/k from the sync's begin, an operation running over [a, b] gets
 * F(b) - F(a): one sorted sweep over the 2n ends. Slices with none running
 * are CPU_IDLE_OVERHEAD, at the sync's node.
 */
static void sync__blame(const struct blame_sync *s)
{
	long n = sync__collect(s);
	uint64_t covered = 0, prev = s->begin, acc = 0, rounded = 0;
	const struct blame_op *site = NULL;
	struct gt_device_op other;
	double f = 0, cum = 0;
	uint32_t k = 0;

	if (n < 0) {
		gt_debug("gpu", "blame: out of memory; a sync goes unblamed");
		return;
	}
	for (long i = 0; i < n; i++) {
		bl.events[2 * i] = (struct event){ bl.parts[i].a, (uint32_t)i, 1 };
		bl.events[2 * i + 1] = (struct event){ bl.parts[i].b, (uint32_t)i, -1 };
	}
	if (n > 0)
		qsort(bl.events, (size_t)(2 * n), sizeof(*bl.events), event_cmp);
	for (long i = 0; i < 2 * n; i++) {
		const struct event *e = &bl.events[i];

		if (k) {
			f += (double)(e->t - prev) / k;
			covered += e->t - prev;
		}
		prev = e->t;
		if (e->delta > 0) {
			bl.parts[e->part].f0 = f;
			k++;
		} else {
			bl.parts[e->part].f1 = f;
			k--;
		}
	}
	/*
	 * Whole ns by cumulative rounding: each operation gets its share
	 * within 1 ns, and the shares add up to `covered` exactly. One record
	 * per run of operations from the same site (a loop of launches), in
	 * the order they ended.
	 */
	for (long i = 0; i < n; i++) {
		const struct part *p = &bl.parts[i];
		uint64_t r;

		cum += p->f1 - p->f0;
		r = i == n - 1 ? covered : (uint64_t)(cum + 0.5);
		if (r > covered)
			r = covered;
		if (r < rounded)
			r = rounded;
		if (site && !same_site(site, p->op)) {
			blame__send(site, acc);
			acc = 0;
		}
		site = p->op;
		acc += r - rounded;
		rounded = r;
	}
	if (site)
		blame__send(site, acc);
	if (s->end - s->begin > covered) {
		memset(&other, 0, sizeof(other));
		gt_monitor__send_blame(s->owner, s->node, &other, GT_M_CPU_IDLE_OVERHEAD,
				       s->end - s->begin - covered);
		bl.priv.blamed++;
	}
}

/* ---- pending syncs ---- */

static struct blame_sync *sync__new(void)
{
	struct blame_sync *s = bl.free_syncs;

	if (s)
		bl.free_syncs = s->newer;
	else
		s = malloc(sizeof(*s));
	if (s)
		memset(s, 0, sizeof(*s));
	return s;
}

static void sync__unlink(struct blame_sync *s)
{
	if (s->older)
		s->older->newer = s->newer;
	else
		bl.oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		bl.newest = s->older;
	bl.priv.pending--;
}

/* Blames @s (its waits are gone) and frees it. */
static void sync__settle(struct blame_sync *s, int forced)
{
	sync__unlink(s);
	sync__blame(s);
	if (forced)
		bl.priv.forced++;
	else
		bl.priv.settled++;
	s->newer = bl.free_syncs;
	bl.free_syncs = s;
}

/*
 * Drops empty epochs at the front, then lets go the waits whose horizon is
 * behind them: every operation those syncs waited for is complete.
 */
static void dev__advance(struct blame_dev *v)
{
	while (v->epochs.n > 1 && !*epoch__at(v, 0)) {
		ring__shift(&v->epochs);
		v->base++;
	}
	while (v->waits.n) {
		struct blame_wait *w = ring__at(&v->waits, 0);
		struct blame_sync *s = w->sync;

		if (w->horizon >= v->base)
			break;
		ring__shift(&v->waits);
		if (!--s->waiting)
			sync__settle(s, 0);
	}
}

/*
 * Settles @s, the oldest pending sync, without waiting any longer. Its
 * waits are at the front of their devices' FIFOs (every older sync has
 * settled); the epochs up to its horizons merge into the next one, whose
 * count then includes the operations still outstanding from them.
 */
static void sync__force(struct blame_sync *s)
{
	for (uint64_t m = s->devices; m; m &= m - 1) {
		struct blame_dev *v = &bl.dev[__builtin_ctzll(m)];
		struct blame_wait *w = v->waits.n ? ring__at(&v->waits, 0) : NULL;
		uint64_t h;

		if (!w || w->sync != s)
			continue; /* already let go */
		h = w->horizon;
		ring__shift(&v->waits);
		while (v->base <= h && v->epochs.n > 1) {
			uint32_t c = *epoch__at(v, 0);

			ring__shift(&v->epochs);
			v->base++;
			*epoch__at(v, 0) += c;
		}
	}
	s->waiting = 0;
	sync__settle(s, 1);
}

/* The earliest begin of a pending sync on @d (or on every device). */
static uint64_t pending__pin(uint32_t d)
{
	uint64_t pin = UINT64_MAX;

	for (const struct blame_sync *s = bl.oldest; s; s = s->newer)
		if ((s->device == GT_BLAME_NO_DEVICE || s->device == d) && s->begin < pin)
			pin = s->begin;
	return pin;
}

/* Settles the oldest syncs while too many wait or they waited too long. */
static void pending__expire(void)
{
	while (bl.oldest &&
	       (bl.priv.pending > GT_BLAME_PENDING_MAX ||
		(bl.newest_ns > GT_BLAME_PENDING_NS &&
		 bl.oldest->end < bl.newest_ns - GT_BLAME_PENDING_NS)))
		sync__force(bl.oldest);
}

/*
 * Lets go what no sync to come can need: finished operations that ended
 * GT_BLAME_RETAIN_NS before the newest time seen and before every pending
 * sync on the device began; busy intervals that ended before that time,
 * summed.
 */
static void dev__trim(uint32_t d)
{
	struct blame_dev *v = &bl.dev[d];
	uint64_t horizon = bl.newest_ns > GT_BLAME_RETAIN_NS ? bl.newest_ns - GT_BLAME_RETAIN_NS : 0;
	uint64_t pin = pending__pin(d), limit = pin < horizon ? pin : horizon;

	while (v->ops.n && ((struct blame_op *)ring__at(&v->ops, 0))->end <= limit)
		ring__shift(&v->ops);
	while (v->busy.n) {
		struct interval *iv = ring__at(&v->busy, 0);

		if (iv->end > horizon)
			break;
		v->busy_ns += iv->end - iv->start;
		v->frontier = iv->end;
		ring__shift(&v->busy);
	}
	v->since_trim = 0;
}

/* ---- the monitor's events ---- */

void gt_blame__issued(struct corr_entry *e, uint32_t device)
{
	struct blame_dev *v;

	e->device = GT_BLAME_NO_DEVICE;
	e->epoch = 0;
	if (device >= GT_BLAME_MAX_DEVICES)
		return;
	v = dev__get(device);
	if (!v) {
		/* Not counted here: give the launch back, or the device would
		 * look busy for ever. */
		gt_blame__unlaunched(device);
		return;
	}
	++*epoch__at(v, v->epochs.n - 1);
	v->outstanding++;
	e->device = device;
	e->epoch = dev__current_epoch(v);
}

/* Adds [start, end) to @v's busy time: merged into the disjoint, sorted
 * intervals; the part before the frontier (already summed) is left out. */
static void busy__add(struct blame_dev *v, uint64_t start, uint64_t end)
{
	struct interval *iv, *prev;
	uint32_t i;

	if (start < v->frontier)
		start = v->frontier;
	if (end <= start)
		return;
	if (v->busy.n) {
		iv = ring__at(&v->busy, v->busy.n - 1);
		if (start >= iv->start && start <= iv->end) { /* the usual case */
			if (end > iv->end)
				iv->end = end;
			return;
		}
	}
	if (v->busy.n >= GT_BLAME_RETAIN_MAX) {
		iv = ring__at(&v->busy, 0);
		v->busy_ns += iv->end - iv->start;
		v->frontier = iv->end;
		ring__shift(&v->busy);
		if (start < v->frontier)
			start = v->frontier;
		if (end <= start)
			return;
	}
	iv = ring__push(&v->busy);
	if (!iv)
		return;
	iv->start = start;
	iv->end = end;
	/* Out of order: move it to its place, then merge with neighbours. */
	for (i = v->busy.n - 1; i > 0; i--) {
		prev = ring__at(&v->busy, i - 1);
		if (prev->start <= start)
			break;
		memcpy(ring__at(&v->busy, i), prev, sizeof(*prev));
	}
	iv = ring__at(&v->busy, i);
	iv->start = start;
	iv->end = end;
	if (i > 0) {
		prev = ring__at(&v->busy, i - 1);
		if (prev->end >= iv->start) {
			if (iv->end > prev->end)
				prev->end = iv->end;
			ring__remove(&v->busy, i);
			i--;
			iv = prev;
		}
	}
	while (i + 1 < v->busy.n) {
		struct interval *next = ring__at(&v->busy, i + 1);

		if (next->start > iv->end)
			break;
		if (next->end > iv->end)
			iv->end = next->end;
		ring__remove(&v->busy, i + 1);
	}
}

void gt_blame__finished(const struct corr_entry *e, const struct gt_device_op *op)
{
	uint32_t d = e->device;
	struct blame_dev *v;
	struct blame_op *slot;
	uint32_t i;

	if (op->kind != GT_DEVOP_KERNEL && op->kind != GT_DEVOP_COPY &&
	    op->kind != GT_DEVOP_MEMSET)
		return; /* not work the device runs */
	if (d == GT_BLAME_NO_DEVICE) {
		/* Launched with gt_monitor__correlate: syncs do not wait for it,
		 * so it takes no part. */
		bl.priv.ignored++;
		return;
	}
	if (op->end_ns <= op->start_ns)
		return; /* ran for no time: nothing to blame, nothing busy */
	v = &bl.dev[d];
	time__seen(op->end_ns);
	busy__add(v, op->start_ns, op->end_ns);
	if (v->ops.n >= GT_BLAME_RETAIN_MAX)
		ring__shift(&v->ops); /* the oldest; see GT_BLAME_RETAIN_MAX */
	slot = ring__push(&v->ops);
	if (!slot) {
		bl.priv.ignored++;
		return;
	}
	/* Sorted by end: activities arrive nearly in that order. */
	for (i = v->ops.n - 1; i > 0; i--) {
		struct blame_op *prev = ring__at(&v->ops, i - 1);

		if (prev->end <= op->end_ns)
			break;
		memcpy(ring__at(&v->ops, i), prev, sizeof(*prev));
	}
	slot = ring__at(&v->ops, i);
	*slot = (struct blame_op){
		.start = op->start_ns,
		.end = op->end_ns,
		.stream = op->stream,
		.owner = e->owner,
		.placeholder = e->placeholder,
		.name = op->name,
		.kind = op->kind,
		.copy = op->copy,
	};
	if (++v->since_trim >= TRIM_EVERY) {
		pending__expire();
		dev__trim(d);
	}
}

void gt_blame__completed(const struct corr_entry *e)
{
	struct blame_dev *v;
	uint32_t *c;

	if (e->device == GT_BLAME_NO_DEVICE)
		return;
	/* After the monitor saw the completion: samples taken from now on see
	 * the device idle (if nothing else is in flight). */
	gt_blame__unlaunched(e->device);
	v = &bl.dev[e->device];
	/* An epoch merged away by a forced sync lives on in the front one. */
	c = epoch__at(v, e->epoch < v->base ? 0 : (uint32_t)(e->epoch - v->base));
	if (*c)
		--*c;
	if (v->outstanding)
		v->outstanding--;
	dev__advance(v);
}

void gt_blame__on_sync(struct gt_gpu_thread *owner, struct gt_cct_node *sync_node,
		       const struct gt_device_op *sync)
{
	uint64_t devs;
	struct blame_sync *s;

	bl.priv.syncs++;
	time__seen(sync->end_ns);
	s = sync__new();
	if (!s) {
		gt_debug("gpu", "blame: out of memory; a sync goes unblamed");
		return;
	}
	s->owner = owner;
	s->node = sync_node;
	s->begin = sync->start_ns;
	s->end = sync->end_ns;
	s->stream = sync->stream;
	s->device = sync->device < GT_BLAME_MAX_DEVICES ? sync->device : GT_BLAME_NO_DEVICE;
	s->older = bl.newest;
	if (bl.newest)
		bl.newest->newer = s;
	else
		bl.oldest = s;
	bl.newest = s;
	if (++bl.priv.pending > bl.priv.pending_peak)
		bl.priv.pending_peak = bl.priv.pending;

	devs = s->device == GT_BLAME_NO_DEVICE ? bl.active : (bl.active & (1ull << s->device));
	for (uint64_t m = devs; m; m &= m - 1) {
		uint32_t d = (uint32_t)__builtin_ctzll(m);
		struct blame_dev *v = &bl.dev[d];
		struct blame_wait *w;
		uint32_t *next;

		if (!v->outstanding)
			continue;
		/* The horizon is the current epoch; later launches go to a new
		 * one. Without memory, the sync does not wait for this device. */
		w = ring__push(&v->waits);
		if (!w)
			continue;
		next = ring__push(&v->epochs);
		if (!next) {
			v->waits.n--;
			continue;
		}
		*next = 0;
		w->sync = s;
		w->horizon = dev__current_epoch(v) - 1;
		s->waiting++;
		s->devices |= 1ull << d;
	}
	if (!s->waiting)
		sync__settle(s, 0);
	pending__expire();
	for (uint64_t m = devs; m; m &= m - 1)
		dev__trim((uint32_t)__builtin_ctzll(m));
}

/* ---- counters and exit ---- */

void gt_blame__publish(void)
{
	uint64_t v[BSTAT_N];

	bl.priv.retained = bl.priv.epochs = bl.priv.intervals = 0;
	for (uint64_t m = bl.active; m; m &= m - 1) {
		int d = __builtin_ctzll(m);
		const struct blame_dev *dv = &bl.dev[d];

		bl.priv.retained += dv->ops.n;
		bl.priv.epochs += dv->epochs.n;
		bl.priv.intervals += dv->busy.n;
		atomic_store_explicit(&bl.pub_busy[d], dv->busy_ns, memory_order_relaxed);
	}
	if (bl.priv.retained > bl.priv.retained_peak)
		bl.priv.retained_peak = bl.priv.retained;
	if (bl.priv.epochs > bl.priv.epochs_peak)
		bl.priv.epochs_peak = bl.priv.epochs;
	if (bl.priv.intervals > bl.priv.intervals_peak)
		bl.priv.intervals_peak = bl.priv.intervals;
#define X(field, desc) v[BSTAT_##field] = bl.priv.field;
	GT_BLAME_STATS(X)
#undef X
	for (int i = 0; i < BSTAT_N; i++)
		atomic_store_explicit(&bl.pub[i], v[i], memory_order_relaxed);
}

void gt_blame__stats(struct gt_blame_stats *s)
{
#define X(field, desc) s->field = atomic_load_explicit(&bl.pub[BSTAT_##field], memory_order_relaxed);
	GT_BLAME_STATS(X)
#undef X
	for (int d = 0; d < GT_BLAME_MAX_DEVICES; d++)
		s->busy_ns[d] = atomic_load_explicit(&bl.pub_busy[d], memory_order_relaxed);
	s->used = gt_blame__used_mask();
}

/*
 * The busy time of each device the process used, for the report's device
 * idle fractions: "gpu_busy_ns" = "D:NS D:NS ...". Devices that would not
 * fit in one fact are left out (and logged).
 */
static void busy__fact(void)
{
	char buf[FACT_BYTES];
	size_t len = 0;
	uint64_t u = gt_blame__used_mask() | bl.active;

	buf[0] = 0;
	for (uint64_t m = u; m; m &= m - 1) {
		int d = __builtin_ctzll(m);
		char one[48];
		int n = snprintf(one, sizeof(one), "%s%d:%" PRIu64, len ? " " : "", d,
				 bl.dev[d].busy_ns);

		if (n < 0 || len + (size_t)n >= sizeof(buf)) {
			gt_info("gpu", "blame: busy time of devices from %d on left out of the profile", d);
			break;
		}
		memcpy(buf + len, one, (size_t)n + 1);
		len += (size_t)n;
	}
	if (len)
		gt_tool__set_fact("gpu_busy_ns", buf);
}

void gt_blame__fini(void)
{
	while (bl.oldest)
		sync__force(bl.oldest);
	for (uint64_t m = bl.active; m; m &= m - 1) {
		struct blame_dev *v = &bl.dev[__builtin_ctzll(m)];

		for (uint32_t i = 0; i < v->busy.n; i++) {
			const struct interval *iv = ring__at(&v->busy, i);

			v->busy_ns += iv->end - iv->start;
		}
		v->busy.n = 0;
	}
	busy__fact();
	if (bl.priv.forced)
		gt_info("gpu", "blame: %" PRIu64 " of %" PRIu64
			       " syncs blamed before all their operations were reported",
			bl.priv.forced, bl.priv.syncs);
	gt_blame__publish();
	for (int d = 0; d < GT_BLAME_MAX_DEVICES; d++) {
		ring__fini(&bl.dev[d].ops);
		ring__fini(&bl.dev[d].epochs);
		ring__fini(&bl.dev[d].waits);
		ring__fini(&bl.dev[d].busy);
		bl.dev[d].active = 0;
	}
	bl.active = 0;
	while (bl.free_syncs) {
		struct blame_sync *s = bl.free_syncs;

		bl.free_syncs = s->newer;
		free(s);
	}
	free(bl.parts);
	free(bl.events);
	bl.parts = NULL;
	bl.events = NULL;
	bl.cap_parts = 0;
}
