/* SPDX-License-Identifier: MIT */
/*
 * The activity side of the CUDA backend. CUPTI fills buffers we give it
 * (buffer__requested) with records of completed kernels, copies and
 * memsets, and hands each full buffer back (buffer__completed) on a thread
 * of its own, several at once in CUPTI 13, or on a thread that called
 * cuptiActivityFlushAll. That thread converts each record into a struct
 * gt_device_op and passes it to the monitor, which matches it with the
 * operation the application thread issued. Nothing else happens there.
 *
 * Times: CUPTI asks gt_clock__now() for every timestamp
 * (cuptiActivityRegisterTimestampCallback), so device times are on the
 * tool's CLOCK_MONOTONIC timeline already; with a CUPTI that cannot, a
 * fixed offset measured at start converts them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/thread.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/monitor.h"

/* CUPTI delivers buffers at least this often, full or not, so that the
 * monitor and blame shifting see activities while the program runs. */
#define FLUSH_PERIOD_MS 100

static int64_t ts_offset;

/* ---- kernel names ----------------------------------------------------------- */

/*
 * Two lock-free tables, insert-only, entries published with a CAS:
 *   by_ptr   CUPTI's name pointer (one per kernel per module) → our string
 *   by_text  a string's text → its one interned copy, so that two modules'
 *            kernels of the same name are one node of the tree
 * A table that fills up (more than NAME_SLOTS kernels) leaves further
 * kernels unnamed: their time stays on <gpu kernel>.
 */
#define NAME_SLOTS 16384 /* a power of two */

struct name_entry {
	const void *key; /* by_ptr: CUPTI's pointer; by_text: unused */
	uint64_t hash;	 /* by_text */
	const char *name;
};

static struct name_entry *_Atomic by_ptr[NAME_SLOTS];
static struct name_entry *_Atomic by_text[NAME_SLOTS];

static uint64_t hash_ptr(const void *p)
{
	return gt_hash__mix64((uintptr_t)p);
}

/* The slot holding @probe's key, or the one @fresh was installed in;
 * NULL when the table is full. @same compares an entry with the key. */
static struct name_entry *table_insert(struct name_entry *_Atomic *table, uint64_t h,
				       struct name_entry *fresh,
				       int (*same)(const struct name_entry *, const struct name_entry *))
{
	for (unsigned i = 0; i < NAME_SLOTS; i++) {
		struct name_entry *_Atomic *slot = &table[(h + i) & (NAME_SLOTS - 1)];
		struct name_entry *e = atomic_load_explicit(slot, memory_order_acquire);

		if (!e) {
			if (atomic_compare_exchange_strong_explicit(slot, &e, fresh,
								    memory_order_acq_rel,
								    memory_order_acquire))
				return fresh;
			/* Lost to another inserter: e is theirs. */
		}
		if (same(e, fresh))
			return e;
	}
	return NULL;
}

static int same_ptr(const struct name_entry *a, const struct name_entry *b)
{
	return a->key == b->key;
}

static int same_text(const struct name_entry *a, const struct name_entry *b)
{
	return a->hash == b->hash && !strcmp(a->name, b->name);
}

static const char *intern_text(char *s)
{
	struct name_entry *e = malloc(sizeof(*e)), *got;

	if (!e) {
		free(s);
		return NULL;
	}
	e->key = NULL;
	e->hash = gt_hash__str(s) | 1;
	e->name = s;
	got = table_insert(by_text, e->hash, e, same_text);
	if (got != e) {
		free(s);
		free(e);
	}
	return got ? got->name : NULL;
}

const char *gt_cupti__peer_name(uint32_t src, uint32_t dst)
{
	static _Atomic(const char *) names[PEER_DEVICES][PEER_DEVICES];
	const char *got;
	char *text;

	if (src >= PEER_DEVICES || dst >= PEER_DEVICES)
		return NULL;
	got = atomic_load_explicit(&names[src][dst], memory_order_acquire);
	if (got)
		return got;
	if (asprintf(&text, "device %u -> device %u", src, dst) < 0)
		return NULL;
	/* Interned: every thread that makes it gets the one pointer. */
	got = intern_text(text);
	atomic_store_explicit(&names[src][dst], got, memory_order_release);
	return got;
}

/*
 * A demangled name without its return type and parameters, as DWARF's
 * DW_AT_name has it: "add_kernel<double>" of "void add_kernel<double>(double
 * const*, double*)". Written into out (size cap); 0 if it does not fit.
 */
static int bare_name(const char *full, char *out, size_t cap)
{
	const char *start = full, *end = NULL;
	int depth = 0;

	for (const char *p = full; *p && !end; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (!depth && *p == ' ')
			start = p + 1;
		else if (!depth && *p == '(')
			end = p;
	}
	if (!end || (size_t)(end - start) >= cap)
		return 0;
	memcpy(out, start, (size_t)(end - start));
	out[end - start] = 0;
	return 1;
}

/* The kernels' bare names, sorted, made once when first asked for: by then
 * (the end of the run) the name table no longer changes. */
static char **bare_names;
static size_t n_bare;
static pthread_once_t bare_once = PTHREAD_ONCE_INIT;

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bare__build(void)
{
	char buf[1024];

	bare_names = calloc(NAME_SLOTS, sizeof(*bare_names));
	for (unsigned i = 0; bare_names && i < NAME_SLOTS; i++) {
		/* Acquire: pairs with the CAS that installed the entry. */
		struct name_entry *e = atomic_load_explicit(&by_text[i], memory_order_acquire);

		if (e && bare_name(e->name, buf, sizeof(buf)) && (bare_names[n_bare] = strdup(buf)))
			n_bare++;
	}
	if (n_bare)
		qsort(bare_names, n_bare, sizeof(*bare_names), by_str);
}

int gt_cupti__kernel_seen(const char *text)
{
	uint64_t h;

	if (!text)
		return 0;
	h = gt_hash__str(text) | 1;
	for (unsigned i = 0; i < NAME_SLOTS; i++) {
		/* Acquire: pairs with the CAS that installed the entry. */
		struct name_entry *e =
			atomic_load_explicit(&by_text[(h + i) & (NAME_SLOTS - 1)], memory_order_acquire);

		if (!e)
			break;
		if (e->hash == h && !strcmp(e->name, text))
			return 1;
	}
	if (strchr(text, '('))
		return 0;
	pthread_once(&bare_once, bare__build);
	return n_bare && bsearch(&text, bare_names, n_bare, sizeof(*bare_names), by_str);
}

int64_t gt_cupti_activity__offset(void)
{
	return ts_offset;
}

const char *gt_cupti__kernel_name(const char *cupti_name)
{
	struct name_entry probe = { .key = cupti_name }, *e, *got;
	uint64_t h = hash_ptr(cupti_name);
	char *text = NULL;
	int status = -1;

	if (!cupti_name)
		return NULL;
	/* The common case: seen before, a few loads. */
	for (unsigned i = 0; i < NAME_SLOTS; i++) {
		e = atomic_load_explicit(&by_ptr[(h + i) & (NAME_SLOTS - 1)], memory_order_acquire);
		if (!e)
			break;
		if (same_ptr(e, &probe))
			return e->name;
	}
	if (gt_cupti_lib.demangle)
		text = gt_cupti_lib.demangle(cupti_name, NULL, NULL, &status);
	if (!text || status != 0) {
		free(text);
		text = strdup(cupti_name);
	}
	if (!text)
		return NULL;
	e = malloc(sizeof(*e));
	if (!e) {
		free(text);
		return NULL;
	}
	e->key = cupti_name;
	e->hash = 0;
	e->name = intern_text(text);
	if (!e->name) {
		free(e);
		return NULL;
	}
	got = table_insert(by_ptr, h, e, same_ptr);
	if (got != e)
		free(e);
	else if (gt_cupti_pcsamp__kept())
		gt_cupti_pcsamp__launched(cupti_name);
	return got ? got->name : NULL;
}

/* ---- occupancy ---------------------------------------------------------------- */

static uint32_t round_up(uint32_t v, uint32_t unit)
{
	return (v + unit - 1) / unit * unit;
}

/*
 * The CUDA occupancy calculator's model: resident blocks per SM are bounded
 * by the SM's warp slots and block slots, its registers (allocated per warp
 * in units of 256) and its shared memory (the block's static and dynamic
 * shared memory plus what the driver reserves per block, in units of 128
 * bytes). Occupancy is resident warps over warp slots; lim[] gets what each
 * bound alone allows (GT_OCC_SLOTS, _REGS, _SMEM; 1000 for a bound that
 * does not apply), so that the report can name the limit and what lifting
 * it gives. The carve-out the driver picks for shared memory is not known
 * here: the largest is assumed.
 */
uint32_t gt_cupti__occupancy(const struct gt_cupti_device *d, uint32_t threads, uint32_t regs,
			     uint32_t smem, uint32_t lim[GT_OCC_LIMITS])
{
	uint32_t warp, warps, max_warps, by[GT_OCC_LIMITS], blocks;

	for (int i = 0; lim && i < GT_OCC_LIMITS; i++)
		lim[i] = 0;
	if (!d || !threads || d->warp_size <= 0 || d->max_threads_per_sm <= 0)
		return 0;
	warp = (uint32_t)d->warp_size;
	warps = (threads + warp - 1) / warp;
	max_warps = (uint32_t)d->max_threads_per_sm / warp;
	if (!max_warps || warps > max_warps)
		return 0;
	by[GT_OCC_SLOTS] = max_warps / warps;
	if (d->max_blocks_per_sm > 0 && by[GT_OCC_SLOTS] > (uint32_t)d->max_blocks_per_sm)
		by[GT_OCC_SLOTS] = (uint32_t)d->max_blocks_per_sm;
	by[GT_OCC_REGS] = by[GT_OCC_SMEM] = by[GT_OCC_SLOTS];
	if (regs && d->regs_per_sm > 0) {
		uint32_t per_warp = round_up(regs * warp, 256);

		if (d->regs_per_block > 0 && per_warp * warps > (uint32_t)d->regs_per_block)
			return 0;
		by[GT_OCC_REGS] = (uint32_t)d->regs_per_sm / per_warp / warps;
	}
	if (d->smem_per_sm > 0) {
		uint32_t per_block = round_up(smem + (uint32_t)d->smem_reserved_per_block, 128);

		if (per_block)
			by[GT_OCC_SMEM] = (uint32_t)d->smem_per_sm / per_block;
	}
	blocks = by[GT_OCC_SLOTS];
	for (int i = 0; i < GT_OCC_LIMITS; i++) {
		uint32_t b = by[i] < by[GT_OCC_SLOTS] ? by[i] : by[GT_OCC_SLOTS];

		if (lim)
			lim[i] = b * warps * 1000 / max_warps;
		if (b < blocks)
			blocks = b;
	}
	return blocks * warps * 1000 / max_warps;
}

/* ---- conversion ------------------------------------------------------------------ */

static uint8_t copy_dir(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return GT_COPY_H2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return GT_COPY_D2H;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return GT_COPY_D2D;
	default:
		return GT_COPY_OTHER;
	}
}

static uint32_t dim(int32_t v)
{
	return v > 0 ? (uint32_t)v : 0;
}

/* What every record kind that makes an operation has, whatever its
 * structure's version. */
#define OP_COMMON(op, m, cid)                                                            \
	((cid) = (m)->correlationId, (op)->start_ns = (m)->start, (op)->end_ns = (m)->end, \
	 (op)->device = (m)->deviceId, (op)->context = (m)->contextId, (op)->stream = (m)->streamId)

int gt_cupti__convert(const CUpti_Activity *r, struct gt_device_op *op)
{
	uint32_t cid;
	uint64_t id;
	int more;

	memset(op, 0, sizeof(*op));
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)r;
		const struct gt_cupti_device *d = NULL;
		struct gt_kernel_launch *l = &op->launch;

		OP_COMMON(op, k, cid);
		op->kind = GT_DEVOP_KERNEL;
		op->name = gt_cupti__kernel_name(k->name);
		l->grid[0] = dim(k->gridX), l->grid[1] = dim(k->gridY), l->grid[2] = dim(k->gridZ);
		l->block[0] = dim(k->blockX), l->block[1] = dim(k->blockY);
		l->block[2] = dim(k->blockZ);
		l->registers = k->registersPerThread;
		l->static_shared = dim(k->staticSharedMemory);
		l->dynamic_shared = dim(k->dynamicSharedMemory);
		if (k->deviceId < GT_CUPTI_MAX_DEVICES &&
		    atomic_load_explicit(&gt_cupti_devices[k->deviceId].ready, memory_order_acquire))
			d = &gt_cupti_devices[k->deviceId];
		l->occupancy = gt_cupti__occupancy(d, l->block[0] * l->block[1] * l->block[2],
						   l->registers, l->static_shared + l->dynamic_shared,
						   l->occ_limit);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;

		OP_COMMON(op, m, cid);
		op->kind = GT_DEVOP_COPY;
		op->copy = copy_dir(m->copyKind);
		op->bytes = m->bytes;
		if ((op->copy == GT_COPY_H2D && m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) ||
		    (op->copy == GT_COPY_D2H && m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE))
			op->flags |= GT_DEVOP_F_PAGEABLE;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const void *)r;

		OP_COMMON(op, m, cid);
		op->kind = GT_DEVOP_COPY;
		op->copy = GT_COPY_D2D;
		op->bytes = m->bytes;
		op->name = gt_cupti__peer_name(m->srcDeviceId, m->dstDeviceId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;

		OP_COMMON(op, m, cid);
		op->kind = GT_DEVOP_MEMSET;
		op->bytes = m->bytes;
		break;
	}
	default:
		return 0;
	}
	if (!gt_cupti_corr__get(cid, &id, &more)) {
		/* Issued by a call the tool did not see (before it started, or
		 * a function it does not intercept). */
		atomic_fetch_add_explicit(&gt_cupti_stats.untracked, 1, memory_order_relaxed);
		return 0;
	}
	op->correlation = id;
	if (more)
		op->flags |= GT_DEVOP_F_MORE;
	op->start_ns = (uint64_t)((int64_t)op->start_ns + ts_offset);
	op->end_ns = (uint64_t)((int64_t)op->end_ns + ts_offset);
	return 1;
}

void gt_cupti_activity__deliver(uint8_t *buf, size_t valid, gt_cupti_next_fn next)
{
	struct gt_thread *self = gt_thread__self(GT_THREAD_OTHER);
	CUpti_Activity *r = NULL;
	struct gt_device_op op;
	uint64_t n = 0;

	if (!self)
		return;
	while (next(buf, valid, &r) == 0) {
		if (gt_cupti__convert(r, &op)) {
			gt_monitor__activity(self, &op);
			n++;
		}
	}
	atomic_fetch_add_explicit(&gt_cupti_stats.records, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&gt_cupti_stats.buffers, 1, memory_order_relaxed);
	if (n)
		gt_monitor__notify();
}

/* ---- buffers ------------------------------------------------------------------------ */

static int next_record(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	return gt_cupti_lib.cuptiActivityGetNextRecord(buf, valid, rec) == CUPTI_SUCCESS ? 0 : -1;
}

static void CUPTIAPI buffer__requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, GT_CUPTI_BUFFER_SIZE);
	*size = *buf ? GT_CUPTI_BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer__completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				       size_t valid)
{
	size_t dropped = 0;

	(void)size;
	if (buf && valid && atomic_load_explicit(&gt_cupti_live, memory_order_acquire)) {
		if (gt_cupti_recording)
			gt_cupti_record__buffer(buf, valid, next_record);
		gt_cupti_activity__deliver(buf, valid, next_record);
	}
	if (gt_cupti_lib.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		atomic_fetch_add_explicit(&gt_cupti_stats.dropped, dropped, memory_order_relaxed);
	free(buf);
}

static uint64_t CUPTIAPI cupti__timestamp(void)
{
	return gt_clock__now();
}

int gt_cupti_activity__start(void)
{
	CUpti_ActivityKind kinds[] = {
#define X(kind) CUPTI_ACTIVITY_KIND_##kind,
		GT_CUPTI_ACTIVITY_KINDS(X)
#undef X
	};
	CUptiResult r;
	uint64_t ts;

	/* Counting instructions: the kernels' records of the serial kind.
	 * With the concurrent kind, CUPTI's SASS metrics count nothing
	 * (zeros at every instruction; CUDA 13.0, driver 580, H100). */
	if (gt_cupti_sasscount__on())
		for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
			if (kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
				kinds[i] = CUPTI_ACTIVITY_KIND_KERNEL;
	r = gt_cupti_lib.cuptiActivityRegisterCallbacks(buffer__requested, buffer__completed);
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	if (!gt_cupti_lib.cuptiActivityRegisterTimestampCallback ||
	    gt_cupti_lib.cuptiActivityRegisterTimestampCallback(cupti__timestamp) !=
		    CUPTI_SUCCESS) {
		if (gt_cupti_lib.cuptiGetTimestamp && gt_cupti_lib.cuptiGetTimestamp(&ts) ==
							      CUPTI_SUCCESS)
			ts_offset = (int64_t)gt_clock__now() - (int64_t)ts;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		r = gt_cupti_lib.cuptiActivityEnable(kinds[i]);
		/* Peer copies are optional: a single-GPU system may refuse them. */
		if (r != CUPTI_SUCCESS && kinds[i] != CUPTI_ACTIVITY_KIND_MEMCPY2)
			goto out_disable;
	}
	if (gt_cupti_lib.cuptiActivityFlushPeriod)
		gt_cupti_lib.cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
	return 0;

out_disable:
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
		gt_cupti_lib.cuptiActivityDisable(kinds[i]);
out_fail:
	gt_info("cupti", "activity API: error %d", (int)r);
	return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? -EACCES : -ENOTSUP;
}

void gt_cupti_activity__stop(void)
{
	/* Nothing to call into CUPTI for at exit: disabling kinds there races
	 * with the driver's own teardown. Buffers still in CUPTI's hands were
	 * flushed; those it completes later are freed unread. */
}
