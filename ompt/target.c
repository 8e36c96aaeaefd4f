/* SPDX-License-Identifier: MIT */
/*
 * OpenMP target offload through the OMPT target callbacks; what the tree
 * looks like is in ompt/target.h, what is measured in docs/OMP-TARGET.md.
 *
 * State lives with each operation, never in a per-thread "current region":
 *   - a target construct's record travels in target_data->ptr from begin to
 *     end (EMI callbacks), or is found by the runtime's target_id among the
 *     constructs its thread has in progress (OpenMP 5.0 callbacks);
 *   - a data operation's or kernel submission's record is found by the id
 *     the tool stored in *host_op_id at its begin, among the operations in
 *     progress on the calling thread.
 * So constructs that overlap on one thread (a nowait target run inside a
 * taskwait, a data operation outside any construct) keep their own state.
 *
 * Ownership. A construct record belongs to the thread that began it (its
 * owner): only the owner links, unlinks and recycles it. Runtimes report
 * all callbacks of a construct on one thread (LLVM does); should an end come
 * on another thread u, u charges its own tree (through gt_thread__import of
 * the construct's node) and stores `ended` (release); the owner unlinks the
 * record when it next walks its list (acquire). The fields u reads were
 * written by the owner before the runtime handed the construct over. An
 * operation record lives on the list of the thread that began it, and its
 * node is in that thread's tree.
 *
 * Counts and bytes are charged at begin (the runtime knows them then, and
 * an end that never comes loses only a time); times at end.
 */
#include "ompt/target.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/construct.h"
#include "core/log.h"
#include "core/symbolize.h"
#include "core/thread.h"
#include "core/tool.h"
#include "core/unwind.h"
#include "gpu/blame.h"
#include "gpu/backend.h"
#include "gpu/monitor.h"
#include "gpu/resend.h"
#include "ompt/ompt-internal.h"
#include "ompt/target-internal.h"

#define REGION_MAGIC 0x74677472u /* "tgtr" */
/* Operations in progress on one thread; past this, the oldest is forgotten
 * (its time is lost), so that ends that never come cannot grow the list. */
#define OPS_MAX 64

struct gt_ompt_device gt_ompt_devices[GT_OMPT_MAX_DEVICES];
static const char unknown_device[] = "device ?";
static atomic_int data_ops_reported = 1;
static atomic_int warned_unknown;

enum op_what {
	OP_ALLOC,
	OP_H2D,
	OP_D2H,
	OP_D2D,
	OP_DELETE,
	OP_KERNEL,
	OP_ASSOCIATE,
	OP_DISASSOCIATE,
	OP__COUNT,
};

/* What each kind of operation charges: amount is bytes, or teams for a
 * kernel; GT_M__COUNT where there is none. */
static const struct {
	enum gt_placeholder ph;
	enum gt_metric count, amount, time;
} op_desc[OP__COUNT] = {
	[OP_ALLOC] = { GT_PH_OMP_ALLOC, GT_M_OMP_TGT_ALLOC_COUNT, GT_M_OMP_TGT_ALLOC_BYTES,
		       GT_M_OMP_TGT_ALLOC_TIME },
	[OP_H2D] = { GT_PH_OMP_COPY_H2D, GT_M_OMP_TGT_H2D_COUNT, GT_M_OMP_TGT_H2D_BYTES,
		     GT_M_OMP_TGT_H2D_TIME },
	[OP_D2H] = { GT_PH_OMP_COPY_D2H, GT_M_OMP_TGT_D2H_COUNT, GT_M_OMP_TGT_D2H_BYTES,
		     GT_M_OMP_TGT_D2H_TIME },
	[OP_D2D] = { GT_PH_OMP_COPY_D2D, GT_M_OMP_TGT_D2D_COUNT, GT_M_OMP_TGT_D2D_BYTES,
		     GT_M_OMP_TGT_D2D_TIME },
	[OP_DELETE] = { GT_PH_OMP_DELETE, GT_M_OMP_TGT_DELETE_COUNT, GT_M__COUNT,
			GT_M_OMP_TGT_DELETE_TIME },
	[OP_KERNEL] = { GT_PH_OMP_KERNEL, GT_M_OMP_TGT_KERNEL_COUNT, GT_M_OMP_TGT_KERNEL_TEAMS,
			GT_M_OMP_TGT_KERNEL_TIME },
	[OP_ASSOCIATE] = { GT_PH_OMP_ASSOCIATE, GT_M_OMP_TGT_OTHER_COUNT, GT_M__COUNT,
			   GT_M_OMP_TGT_OTHER_TIME },
	[OP_DISASSOCIATE] = { GT_PH_OMP_DISASSOCIATE, GT_M_OMP_TGT_OTHER_COUNT, GT_M__COUNT,
			      GT_M_OMP_TGT_OTHER_TIME },
};

/* A target construct in progress. */
struct tgt_region {
	struct tgt_region *next;  /* the owner's constructs in progress, or its free list */
	struct gt_cct_node *dev;  /* its device node, in the owner's tree */
	struct gt_thread *owner;
	uint64_t t0;		  /* ticks */
	uint64_t target_id;	  /* the runtime's id (OpenMP 5.0 callbacks); 0 with EMI */
	uint64_t begin_ns;	  /* on the tool's timeline */
	uint64_t idle0;		  /* the owner's idle_ns at the begin */
	int blocking;		  /* the encountering thread waits for it (not nowait) */
	atomic_int ended;	  /* ended on another thread: the owner recycles it */
	uint32_t magic;		  /* REGION_MAGIC while in progress */
	int device;
};

/* A data operation or kernel submission in progress. */
struct tgt_op {
	struct tgt_op *next;	 /* the thread's operations in progress, or its free list */
	struct gt_cct_node *node; /* its placeholder, in this thread's tree */
	uint64_t id;		 /* what the runtime holds in *host_op_id */
	uint64_t t0;		 /* ticks */
	uint64_t begin_ns;	 /* host kernels: start on the tool's timeline */
	int device;
	int host_op;		 /* a kernel or copy of the host device, reported to the monitor */
	uint64_t bytes;		 /* a copy's */
	enum op_what what;
};

/* Per thread; only that thread touches it (see `ended` for the exception). */
struct omp_target_thread {
	struct tgt_region *active, *free_regions;
	struct tgt_op *ops, *free_ops;
	unsigned n_ops;
	uint64_t seq;
};

/* ---- threads, devices, ids ---- */

static struct omp_target_thread *target_state(struct gt_thread *t)
{
	struct omp_thread *ot = t->ompt ? t->ompt : ompt__thread_state(t);

	if (!ot)
		return NULL;
	if (!ot->target)
		ot->target = calloc(1, sizeof(*ot->target));
	return ot->target;
}

/* The calling thread and its target state; NULL when nothing is measured. */
static struct gt_thread *self(struct omp_target_thread **ts)
{
	struct gt_thread *t;

	if (gt_tool__stopping())
		return NULL;
	t = gt_thread__self(GT_THREAD_OTHER);
	if (!t || !(*ts = target_state(t)))
		return NULL;
	return t;
}

static const char *device_name(int num)
{
	const char *name = NULL;

	if (num >= 0 && num < GT_OMPT_MAX_DEVICES)
		name = atomic_load_explicit(&gt_ompt_devices[num].name, memory_order_acquire);
	return name ? name : unknown_device;
}

/* Target work for a device the runtime never initialized is measured under
 * "device N" (or "device ?"); said once. */
static void check_device(int num)
{
	/* A load first: every thread comes here, and a store per construct
	 * would bounce the line between them. */
	if (!atomic_load_explicit(&gt_ompt_target_seen, memory_order_relaxed))
		atomic_store_explicit(&gt_ompt_target_seen, 1, memory_order_relaxed);
	if (gt_ompt__device(num) || atomic_exchange_explicit(&warned_unknown, 1, memory_order_relaxed))
		return;
	gt_info("ompt", "target work for device %d, which the runtime never initialized", num);
}

/* Ids of operations not traced: never 0, and apart from the monitor's ids
 * (the top sequence bit is set), so the two kinds cannot meet in one list. */
static uint64_t local_id(struct gt_thread *t, struct omp_target_thread *ts)
{
	const uint64_t top = UINT64_C(1) << (GT_CORRELATION_SEQ_BITS - 1);

	return gt_correlation__make(t->index, top | (++ts->seq & (top - 1)));
}

static void add(struct gt_thread *t, struct gt_cct_node *n, enum gt_metric m, uint64_t v)
{
	if (n && v && m != GT_M__COUNT)
		gt_cct__add(&t->cct, n, m, v, 0);
}

/* A node of owner's tree as a node of t's tree. */
static struct gt_cct_node *in_tree(struct gt_thread *t, struct gt_thread *owner,
				    struct gt_cct_node *node)
{
	return owner == t ? node : gt_thread__import(t, node);
}

static struct gt_cct_node *device_node(struct gt_thread *t, struct gt_cct_node *under, int device)
{
	/* A load first, as in check_device: every construct comes here. */
	if (device >= 0 && device < GT_OMPT_MAX_DEVICES &&
	    !atomic_load_explicit(&gt_ompt_devices[device].used, memory_order_relaxed))
		atomic_store_explicit(&gt_ompt_devices[device].used, 1, memory_order_relaxed);
	return gt_cct__child(&t->cct, under, GT_NODE_NAME, (uint64_t)(uintptr_t)device_name(device), 0);
}

/* The OpenMP task the calling thread runs, as host.c recorded it. */
static struct omp_task *current_task(struct gt_thread *t)
{
	ompt_data_t *d = NULL;

	if (gt_ompt_get_task_info && gt_ompt_get_task_info(0, NULL, &d, NULL, NULL, NULL) == 2 && d)
		return ompt__task_here(t, d);
	return NULL;
}

/* Where a construct (or an operation outside any) encountered by task at
 * user address ra hangs. A deferred target task hangs under the call site
 * of its construct, recorded when the task was created: its own frames are
 * the runtime's. Under gt_thread__enter(t). */
static struct gt_cct_node *context(struct gt_thread *t, struct omp_task *task, const void *ra,
				   uintptr_t key)
{
	if (task && task->is_target)
		return task->node ? task->node : t->cct.root;
	return ompt__context_of(t, ra, key, task, NULL);
}

/* ---- constructs ---- */

static enum gt_placeholder construct_placeholder(ompt_target_t kind)
{
	/* The nowait kinds are the others plus 8. */
	switch (kind > 8 ? kind - 8 : kind) {
	case ompt_target_enter_data:
		return GT_PH_OMP_TARGET_ENTER_DATA;
	case ompt_target_exit_data:
		return GT_PH_OMP_TARGET_EXIT_DATA;
	case ompt_target_update:
		return GT_PH_OMP_TARGET_UPDATE;
	default:
		return GT_PH_OMP_TARGET;
	}
}

/* Recycles the records of constructs that ended on other threads. */
static void regions__prune(struct omp_target_thread *ts)
{
	struct tgt_region **p = &ts->active;

	while (*p) {
		struct tgt_region *r = *p;

		/* Pairs with the release store in region__end. */
		if (atomic_load_explicit(&r->ended, memory_order_acquire)) {
			*p = r->next;
			r->next = ts->free_regions;
			ts->free_regions = r;
		} else {
			p = &r->next;
		}
	}
}

static struct tgt_region *region__begin(struct gt_thread *t, struct omp_target_thread *ts,
					ompt_target_t kind, int device, struct omp_task *task,
					const void *ra, uintptr_t key)
{
	struct gt_cct_node *ph;
	struct tgt_region *r;

	if (ts->active)
		regions__prune(ts);
	r = ts->free_regions;
	if (r)
		ts->free_regions = r->next;
	else if (!(r = malloc(sizeof(*r))))
		return NULL;
	check_device(device);
	gt_thread__enter(t);
	ph = gt_cct__placeholder(&t->cct, context(t, task, ra, key), construct_placeholder(kind));
	r->dev = device_node(t, ph, device);
	add(t, r->dev, GT_M_OMP_TGT_COUNT, 1);
	gt_thread__leave(t);
	if (task && task->is_target) {
		task->target_dev = r->dev;
		task->target_owner = t;
	}
	r->owner = t;
	r->device = device;
	r->target_id = 0;
	r->blocking = kind < 8; /* the nowait kinds are the others plus 8 */
	r->idle0 = t->idle_ns;
	r->begin_ns = gt_clock__now();
	atomic_store_explicit(&r->ended, 0, memory_order_relaxed);
	r->magic = REGION_MAGIC;
	r->next = ts->active;
	ts->active = r;
	r->t0 = gt_clock__ticks();
	return r;
}

static int host_device(int device);

/*
 * A construct the encountering thread waited for: from its begin to its end
 * the thread was in the runtime, waiting for the device (the runtime polls
 * the device while it runs the kernel, a wait no device backend sees); the
 * waits inside that a device backend did see (a blocking copy, a stream
 * synchronization) were charged already and are not charged again. Blame
 * then charges the wait to the operations that ran meanwhile. On the host
 * device the kernel runs on this very thread: no wait.
 */
static void region__blame(struct gt_thread *t, struct tgt_region *r)
{
	uint64_t end = gt_clock__now(), begin = r->begin_ns + (t->idle_ns - r->idle0);

	if (r->blocking && !host_device(r->device) && gt_blame__devices_used() && end > begin)
		gt_blame__sync(t, r->dev, begin, end, -1, 0);
}

static void region__end(struct gt_thread *t, struct omp_target_thread *ts, struct tgt_region *r)
{
	uint64_t now = gt_clock__ticks();
	uint64_t ns = gt_clock__ticks_to_ns(now > r->t0 ? now - r->t0 : 0);

	if (r->owner == t)
		region__blame(t, r);

	r->magic = 0;
	gt_thread__enter(t);
	if (r->owner == t) {
		add(t, r->dev, GT_M_OMP_TGT_TIME, ns);
		for (struct tgt_region **p = &ts->active; *p; p = &(*p)->next) {
			if (*p == r) {
				*p = r->next;
				break;
			}
		}
		r->next = ts->free_regions;
		ts->free_regions = r;
	} else {
		add(t, in_tree(t, r->owner, r->dev), GT_M_OMP_TGT_TIME, ns);
		/* Pairs with the acquire load in regions__prune; r is the
		 * owner's from here on. */
		atomic_store_explicit(&r->ended, 1, memory_order_release);
	}
	gt_thread__leave(t);
}

/* The construct t runs with the runtime's target_id (OpenMP 5.0 callbacks). */
static struct tgt_region *region__by_id(struct omp_target_thread *ts, uint64_t target_id)
{
	for (struct tgt_region *r = ts->active; r; r = r->next)
		if (r->target_id == target_id && r->magic == REGION_MAGIC)
			return r;
	return NULL;
}

/* ---- operations ---- */

static enum op_what data_op_what(ompt_target_data_op_t optype, int src, int dst, int *device)
{
	switch (optype > 16 ? optype - 16 : optype) { /* the _async kinds are the others plus 16 */
	case ompt_target_data_alloc:
		*device = dst;
		return OP_ALLOC;
	case ompt_target_data_transfer_to_device:
		*device = dst;
		return gt_ompt__device(src) && src != dst ? OP_D2D : OP_H2D;
	case ompt_target_data_transfer_from_device:
		*device = src;
		return gt_ompt__device(dst) && src != dst ? OP_D2D : OP_D2H;
	case ompt_target_data_delete:
		*device = src;
		return OP_DELETE;
	case ompt_target_data_associate:
		*device = dst;
		return OP_ASSOCIATE;
	case ompt_target_data_disassociate:
		*device = dst;
		return OP_DISASSOCIATE;
	default:
		return OP__COUNT;
	}
}

/*
 * The device node, in t's tree, under which an operation of the construct
 * whose record is r goes. With no construct: in a deferred target task, its
 * construct's (an asynchronous plugin releases the construct's data after
 * its end callback); else a device node under the operation's call site
 * (omp_target_alloc, omp_target_memcpy, ...). Under gt_thread__enter(t).
 */
static struct gt_cct_node *op_parent(struct gt_thread *t, struct tgt_region *r, int device,
				     const void *ra, uintptr_t key)
{
	struct omp_task *task;

	if (r)
		return in_tree(t, r->owner, r->dev);
	task = current_task(t);
	if (task && task->is_target && task->target_dev)
		return in_tree(t, task->target_owner, task->target_dev);
	check_device(device);
	return device_node(t, context(t, task, ra, key), device);
}

/* Charges one operation's count and amount; returns its node. */
static struct gt_cct_node *op__charge(struct gt_thread *t, struct gt_cct_node *parent,
				      enum op_what what, uint64_t amount)
{
	struct gt_cct_node *node = parent ? gt_cct__placeholder(&t->cct, parent, op_desc[what].ph)
					  : NULL;

	add(t, node, op_desc[what].count, 1);
	add(t, node, op_desc[what].amount, amount);
	return node;
}

/* Records an operation in progress on t; returns the id for *host_op_id. */
/*
 * The host-offload device runs a kernel inside its submission, on the thread
 * that submits it: the submission's begin and end are the kernel's, as a
 * device would report them. Such kernels go through the monitor like any
 * device operation, so that blame shifting sees them.
 */
static int host_device(int device)
{
	struct gt_ompt_device *d = gt_ompt__device(device);

	return d && (strstr(d->type, "generic") || strstr(d->type, "x86_64"));
}

/* The host device's kernels and copies, as device operations. */
static int host_measured(enum op_what what)
{
	return what == OP_KERNEL || what == OP_H2D || what == OP_D2H || what == OP_D2D;
}

static uint64_t op__begin(struct gt_thread *t, struct omp_target_thread *ts, struct gt_cct_node *node,
			  enum op_what what, int device, uint64_t bytes)
{
	struct tgt_op *op = ts->free_ops;
	uint64_t id = 0;

	if (op)
		ts->free_ops = op->next;
	else if (!(op = malloc(sizeof(*op))))
		return 0;
	op->host_op = 0;
	op->device = device;
	op->bytes = bytes;
	/* A traced device reports the operation back under this id: the
	 * monitor matches it to node. */
	if (ompt__trace_on(device)) {
		id = gt_monitor__correlate(t, node);
	} else if (host_measured(what) && host_device(device) && !gt_monitor__start()) {
		id = gt_monitor__correlate_device(t, node, device);
		op->host_op = id != 0;
		op->begin_ns = gt_clock__now();
	}
	op->id = id ? id : local_id(t, ts);
	op->node = node;
	op->what = what;
	op->next = ts->ops;
	ts->ops = op;
	if (++ts->n_ops > OPS_MAX) {
		struct tgt_op **p = &ts->ops;

		while ((*p)->next)
			p = &(*p)->next;
		(*p)->next = ts->free_ops;
		ts->free_ops = *p;
		*p = NULL;
		ts->n_ops--;
	}
	op->t0 = gt_clock__ticks();
	return op->id;
}

static void op__end(struct gt_thread *t, struct omp_target_thread *ts, uint64_t id, const char *name)
{
	uint64_t now = gt_clock__ticks();

	for (struct tgt_op **p = &ts->ops; *p; p = &(*p)->next) {
		struct tgt_op *op = *p;

		if (op->id != id)
			continue;
		*p = op->next;
		ts->n_ops--;
		gt_thread__enter(t);
		add(t, op->node, op_desc[op->what].time,
		    gt_clock__ticks_to_ns(now > op->t0 ? now - op->t0 : 0));
		gt_thread__leave(t);
		if (op->host_op) {
			struct gt_device_op dop = {
				.correlation = op->id,
				.start_ns = op->begin_ns,
				.end_ns = gt_clock__now(),
				.device = (uint32_t)op->device,
				.kind = op->what == OP_KERNEL ? GT_DEVOP_KERNEL : GT_DEVOP_COPY,
				.copy = op->what == OP_H2D   ? GT_COPY_H2D
					: op->what == OP_D2H ? GT_COPY_D2H
					: op->what == OP_D2D ? GT_COPY_D2D
							     : GT_COPY_OTHER,
				.bytes = op->bytes,
				.name = name,
			};

			gt_monitor__activity(t, &dop);
			gt_monitor__notify();
		}
		op->next = ts->free_ops;
		ts->free_ops = op;
		return;
	}
}

static struct tgt_region *region_of(ompt_data_t *target_data)
{
	struct tgt_region *r = target_data ? target_data->ptr : NULL;

	return r && r->magic == REGION_MAGIC ? r : NULL;
}

/*
 * Host kernels' names, interned: a device record's name is a tree node's
 * key, one pointer per name for the whole run. Few (one per offloaded
 * construct that runs), added under the lock, never removed.
 */
#define KERNEL_NAMES 256
static struct {
	pthread_mutex_t lock;
	unsigned n;
	char *names[KERNEL_NAMES];
} kernel_names = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Under kernel_names.lock. */
static const char *kernel_name__intern_locked(const char *s)
{
	const char *out = NULL;

	for (unsigned i = 0; i < kernel_names.n && !out; i++)
		if (!strcmp(kernel_names.names[i], s))
			out = kernel_names.names[i];
	if (!out && kernel_names.n < KERNEL_NAMES && (kernel_names.names[kernel_names.n] = strdup(s)))
		out = kernel_names.names[kernel_names.n++];
	return out;
}

/*
 * An offload entry's symbol, as clang names it (also the prefix of the
 * functions outlined from it): __omp_offloading_<dev>_<file>_<function>_l<line>,
 * <dev> and <file> in hex. "function:line", the function demangled when
 * it is a C++ name and libstdc++'s demangler is loaded; -1 otherwise.
 */
static int kernel_name__parse(const char *sym, char *out, size_t size)
{
	static const char prefix[] = "__omp_offloading_";
	const char *p = sym, *fn, *line = NULL;
	char mangled[256];
	size_t fn_len;

	if (strncmp(p, prefix, sizeof(prefix) - 1))
		return -1;
	p += sizeof(prefix) - 1;
	for (int field = 0; field < 2; field++) {
		const char *h = p;

		while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
			p++;
		if (p == h || *p != '_')
			return -1;
		p++;
	}
	fn = p;
	/* The first "_l<digits>" that ends the name or a part of it. */
	for (const char *q = fn; (q = strstr(q, "_l")); q++) {
		const char *d = q + 2;

		while (*d >= '0' && *d <= '9')
			d++;
		if (d > q + 2 && (!*d || *d == '_' || *d == '.') && q > fn) {
			line = q;
			break;
		}
	}
	if (!line || (fn_len = (size_t)(line - fn)) >= sizeof(mangled))
		return -1;
	memcpy(mangled, fn, fn_len);
	mangled[fn_len] = 0;
	if (mangled[0] == '_' && mangled[1] == 'Z') {
		char *(*demangle)(const char *, char *, size_t *, int *);
		char *d;
		int status = -1;

		*(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		d = demangle ? demangle(mangled, NULL, NULL, &status) : NULL;
		if (d && !status) {
			snprintf(out, size, "%s:%ld", d, strtol(line + 2, NULL, 10));
			free(d);
			return 0;
		}
		free(d);
	}
	snprintf(out, size, "%s:%ld", mangled, strtol(line + 2, NULL, 10));
	return 0;
}

const char *ompt__kernel_name(const void *pc)
{
	static struct gt_symbolizer *sym;
	static uintptr_t last_pc;
	static const char *last_name;
	struct gt_symbol fn;
	const char *out = NULL;
	char name[320];

	if (!pc)
		return NULL;
	/*
	 * The host plugin loads the device image from a file of its own and
	 * runs the entry's outlined functions, which are local symbols: the
	 * image's symbol table names them (dladdr sees only exported ones).
	 * One symbolizer, under the names' lock; a kernel that runs again asks
	 * at the same pc.
	 */
	pthread_mutex_lock(&kernel_names.lock);
	if ((uintptr_t)pc == last_pc) {
		out = last_name;
		goto out_unlock;
	}
	if (!sym)
		sym = gt_symbolizer__new();
	if (sym && !gt_symbolizer__lookup(sym, (uintptr_t)pc - 1, &fn) &&
	    !kernel_name__parse(fn.linkage ? fn.linkage : fn.function, name, sizeof(name)))
		out = kernel_name__intern_locked(name);
	last_pc = (uintptr_t)pc;
	last_name = out;
out_unlock:
	pthread_mutex_unlock(&kernel_names.lock);
	return out;
}

/* ---- EMI callbacks ---- */

void ompt__on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
			 ompt_data_t *task_data, ompt_data_t *target_task_data,
			 ompt_data_t *target_data, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct tgt_region *r;
	struct gt_thread *t;

	(void)target_task_data;
	if (!target_data)
		return;
	if (endpoint == ompt_scope_begin) {
		target_data->ptr = NULL;
		if (!(t = self(&ts)))
			return;
		if (ompt__trace_any())
			gt_monitor__drain(t);
		target_data->ptr = region__begin(t, ts, kind, device_num,
						 ompt__task_here(t, task_data), codeptr_ra, key);
	} else if (endpoint == ompt_scope_end) {
		r = region_of(target_data);
		/* Operations outside constructs get the same target_data:
		 * they must not see this construct. */
		target_data->ptr = NULL;
		if (!r || !(t = self(&ts)))
			return;
		region__end(t, ts, r);
		if (ompt__trace_any())
			gt_monitor__drain(t);
	}
}

void ompt__on_target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data,
				 ompt_data_t *target_data, ompt_id_t *host_op_id,
				 ompt_target_data_op_t optype, void *src_addr, int src_device_num,
				 void *dest_addr, int dest_device_num, size_t bytes,
				 const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct gt_cct_node *node;
	struct gt_thread *t;
	enum op_what what;
	int device = -1;

	(void)target_task_data, (void)dest_addr;
	if (!host_op_id || !(t = self(&ts)))
		return;
	if (endpoint == ompt_scope_end) {
		op__end(t, ts, *host_op_id, NULL);
		return;
	}
	if (endpoint != ompt_scope_begin)
		return;
	*host_op_id = 0;
	what = data_op_what(optype, src_device_num, dest_device_num, &device);
	if (what == OP__COUNT)
		return;
	gt_thread__enter(t);
	node = op__charge(t, op_parent(t, region_of(target_data), device, codeptr_ra, key), what,
			  bytes);
	/* The host bytes, unchanged since the buffer's previous upload? The
	 * device's runtime makes the copy inside this operation, which backends
	 * see as the construct in progress and leave to it. */
	if (node && what == OP_H2D && gt_resend__upload(src_addr, bytes)) {
		add(t, node, GT_M_GXCOPY_RESENT_BYTES, bytes);
		add(t, node, GT_M_GXCOPY_RESENT_COUNT, 1);
	}
	gt_thread__leave(t);
	if (node)
		*host_op_id = op__begin(t, ts, node, what, device, bytes);
}

void ompt__on_target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data,
				ompt_id_t *host_op_id, unsigned int requested_num_teams)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct omp_thread *ot;
	struct gt_cct_node *node;
	struct tgt_region *r;
	struct gt_thread *t;

	if (!host_op_id || !(t = self(&ts)))
		return;
	ot = t->ompt;
	if (endpoint == ompt_scope_end) {
		op__end(t, ts, *host_op_id, ot ? ot->kernel_name : NULL);
		if (ot)
			ot->kernel = NULL;
		return;
	}
	if (endpoint != ompt_scope_begin)
		return;
	*host_op_id = 0;
	r = region_of(target_data);
	gt_thread__enter(t);
	/* A submission names no device: its construct's, else "device ?". */
	node = op__charge(t, op_parent(t, r, -1, NULL, key), OP_KERNEL, requested_num_teams);
	gt_thread__leave(t);
	if (node)
		*host_op_id = op__begin(t, ts, node, OP_KERNEL, r ? r->device : -1, 0);
	/* The host device runs the kernel inside this submission, on this
	 * thread, in parallel regions the submitting task opens: they hang
	 * under the kernel's node (ompt/host.c, parallel_begin). */
	if (node && ot && r && host_device(r->device)) {
		ompt_data_t *task_data = NULL;

		ot->kernel = node;
		ot->kernel_task = NULL;
		ot->kernel_name = NULL;
		if (gt_ompt_get_task_info && gt_ompt_get_task_info(0, NULL, &task_data, NULL, NULL, NULL) == 2 &&
		    task_data)
			ot->kernel_task = ompt__task_here(t, task_data);
	}
}

/*
 * The mapped items of a construct. Used only when the runtime reports no
 * data operations, which otherwise count the same bytes; no times then.
 */
static void map_items(struct gt_thread *t, struct tgt_region *r, unsigned int nitems,
		      const size_t *bytes, const unsigned int *flags, const void *ra, uintptr_t key)
{
	struct gt_cct_node *parent;

	if (atomic_load_explicit(&data_ops_reported, memory_order_relaxed) || !bytes || !flags)
		return;
	gt_thread__enter(t);
	parent = op_parent(t, r, r ? r->device : -1, ra, key);
	for (unsigned int i = 0; i < nitems; i++) {
		if (flags[i] & ompt_target_map_flag_alloc)
			op__charge(t, parent, OP_ALLOC, bytes[i]);
		if (flags[i] & ompt_target_map_flag_to)
			op__charge(t, parent, OP_H2D, bytes[i]);
		if (flags[i] & ompt_target_map_flag_from)
			op__charge(t, parent, OP_D2H, bytes[i]);
		if (flags[i] & (ompt_target_map_flag_release | ompt_target_map_flag_delete))
			op__charge(t, parent, OP_DELETE, 0);
	}
	gt_thread__leave(t);
}

void ompt__on_target_map_emi(ompt_data_t *target_data, unsigned int nitems, void **host_addr,
			     void **device_addr, size_t *bytes, unsigned int *mapping_flags,
			     const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct gt_thread *t;

	(void)host_addr, (void)device_addr;
	if ((t = self(&ts)))
		map_items(t, region_of(target_data), nitems, bytes, mapping_flags, codeptr_ra, key);
}

/* ---- OpenMP 5.0 callbacks (no EMI): constructs by target_id, operations
 * in one callback each, so counts and bytes but no operation times ---- */

void ompt__on_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
		     ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct tgt_region *r;
	struct gt_thread *t;

	if (!(t = self(&ts)))
		return;
	if (endpoint == ompt_scope_begin) {
		r = region__begin(t, ts, kind, device_num, ompt__task_here(t, task_data),
				  codeptr_ra, key);
		if (r)
			r->target_id = target_id;
	} else if (endpoint == ompt_scope_end && (r = region__by_id(ts, target_id))) {
		region__end(t, ts, r);
	}
}

void ompt__on_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id,
			     ompt_target_data_op_t optype, void *src_addr, int src_device_num,
			     void *dest_addr, int dest_device_num, size_t bytes,
			     const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct gt_thread *t;
	enum op_what what;
	int device = -1;

	(void)host_op_id, (void)src_addr, (void)dest_addr;
	if (!(t = self(&ts)))
		return;
	what = data_op_what(optype, src_device_num, dest_device_num, &device);
	if (what == OP__COUNT)
		return;
	gt_thread__enter(t);
	op__charge(t, op_parent(t, region__by_id(ts, target_id), device, codeptr_ra, key), what,
		   bytes);
	gt_thread__leave(t);
}

void ompt__on_target_submit(ompt_id_t target_id, ompt_id_t host_op_id,
			    unsigned int requested_num_teams)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct gt_thread *t;

	(void)host_op_id;
	if (!(t = self(&ts)))
		return;
	gt_thread__enter(t);
	op__charge(t, op_parent(t, region__by_id(ts, target_id), -1, NULL, key), OP_KERNEL,
		   requested_num_teams);
	gt_thread__leave(t);
}

void ompt__on_target_map(ompt_id_t target_id, unsigned int nitems, void **host_addr,
			 void **device_addr, size_t *bytes, unsigned int *mapping_flags,
			 const void *codeptr_ra)
{
	uintptr_t key = GT_UNWIND_KEY();
	struct omp_target_thread *ts;
	struct gt_thread *t;

	(void)host_addr, (void)device_addr;
	if ((t = self(&ts)))
		map_items(t, region__by_id(ts, target_id), nitems, bytes, mapping_flags, codeptr_ra,
			  key);
}

/* ---- setup and the query for device backends ---- */

void ompt__target_set_data_ops_reported(int yes)
{
	atomic_store_explicit(&data_ops_reported, yes, memory_order_relaxed);
}

void ompt__target_init(void)
{
	static atomic_int done;

	if (atomic_exchange_explicit(&done, 1, memory_order_acq_rel))
		return;
	for (int i = 0; i < GT_OMPT_MAX_DEVICES; i++) {
		struct gt_ompt_device *d = &gt_ompt_devices[i];

		snprintf(d->plain_name, sizeof(d->plain_name), "device %d", i);
		atomic_store_explicit(&d->name, d->plain_name, memory_order_release);
	}
	gt_tool__on_stop(gt_ompt__target_facts);
	/* Device backends hang their work under this layer's constructs. */
	gt_construct__provide(gt_ompt__current_target_placeholder);
}

struct gt_cct_node *gt_ompt__current_target_placeholder(struct gt_thread *t)
{
	struct omp_thread *ot = t ? t->ompt : NULL;
	struct omp_target_thread *ts = ot ? ot->target : NULL;

	if (!ts)
		return NULL;
	if (ts->ops)
		return ts->ops->node;
	for (struct tgt_region *r = ts->active; r; r = r->next)
		if (!atomic_load_explicit(&r->ended, memory_order_acquire))
			return r->dev;
	return NULL;
}
