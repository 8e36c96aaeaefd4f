/* SPDX-License-Identifier: MIT */
/*
 * The OpenACC profiling interface (OpenACC 2.6+, §5): the runtime loads the
 * library named by ACC_PROFLIB and calls acc_register_library, and the tool
 * registers a callback for every event it handles (acc-events.h).
 *
 * Constructs (compute, enter/exit data, update, wait) get the user's call
 * site, unwound once at their start, and a placeholder under it; launches,
 * transfers and data events that the runtime reports in between nest under
 * the construct in progress on that thread. All callbacks arrive on the host
 * thread that runs the construct, so the state is per thread and lock-free.
 */
#include <acc_prof.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc/acc-events.h"
#include "acc/acc.h"
#include "core/clock.h"
#include "core/construct.h"
#include "core/log.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"
#include "core/unwind.h"
#include "gpu/blame.h"
#include "gpu/backend.h"

#define ACC_DEPTH 16

struct acc_site {
	const char *file;
	int line;
	const char *name; /* "func (file:line)", lives until exit */
};

struct acc_thread {
	struct {
		struct gt_cct_node *node;
		uint64_t t0;
	} stack[ACC_DEPTH];
	int depth;
	int overflow; /* constructs past ACC_DEPTH, counted so that ends still pair */
	struct gt_cct_node *op_node; /* the launch or transfer being enqueued */
	uint64_t op_t0, init_t0;
	/* Source positions the runtime reported (NVHPC does; GCC does not). */
	struct acc_site *sites;
	unsigned n_sites, cap_sites;
};

/* A thread's OpenACC state, made at its first event; its CPU sampling
 * starts then too (a no-op when OpenMP started it already). */
static struct acc_thread *acc__thread(struct gt_thread *t)
{
	if (!t->acc) {
		t->acc = calloc(1, sizeof(struct acc_thread));
		gt_sample__thread_start(t);
	}
	return t->acc;
}

/* The thread ends: constructs it left open close with it, so that the
 * record's next thread (see struct gt_thread) starts with none. The state
 * itself stays with the record, which keeps its site names. */
static void acc__thread_end(struct gt_thread *t)
{
	struct acc_thread *at = t->acc;

	if (!at)
		return;
	at->depth = 0;
	at->overflow = 0;
	at->op_node = NULL;
}

static void add_time(struct gt_thread *t, struct gt_cct_node *n, enum gt_metric m, uint64_t ticks)
{
	if (n)
		gt_cct__add(&t->cct, n, m, gt_clock__ticks_to_ns(ticks), 0);
}

static void add(struct gt_thread *t, struct gt_cct_node *n, enum gt_metric m, uint64_t v)
{
	if (n)
		gt_cct__add(&t->cct, n, m, v, 0);
}

/* "func (file:line)" for a runtime-reported position, one string per site;
 * with no line (line_no < 0), a copy of src_file: how kernel names are kept. */
static const char *acc__site_name(struct acc_thread *at, const acc_prof_info *pi)
{
	struct acc_site *s;
	char buf[512];

	for (unsigned i = 0; i < at->n_sites; i++)
		if (at->sites[i].file == pi->src_file && at->sites[i].line == pi->line_no)
			return at->sites[i].name;
	if (at->n_sites == at->cap_sites) {
		unsigned cap = at->cap_sites ? at->cap_sites * 2 : 16;
		struct acc_site *grown = realloc(at->sites, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		at->sites = grown;
		at->cap_sites = cap;
	}
	s = &at->sites[at->n_sites];
	if (pi->line_no < 0)
		snprintf(buf, sizeof(buf), "%s", pi->src_file);
	else
		snprintf(buf, sizeof(buf), "%s (%s:%d)", pi->func_name ? pi->func_name : "?",
			 pi->src_file, pi->line_no);
	s->name = strdup(buf);
	if (!s->name)
		return NULL;
	s->file = pi->src_file;
	s->line = pi->line_no;
	at->n_sites++;
	return s->name;
}

static enum gt_placeholder construct_placeholder(acc_event_t ev)
{
	switch (ev) {
	case acc_ev_enter_data_start:
		return GT_PH_ACC_ENTER_DATA;
	case acc_ev_exit_data_start:
		return GT_PH_ACC_EXIT_DATA;
	case acc_ev_update_start:
		return GT_PH_ACC_UPDATE;
	case acc_ev_wait_start:
		return GT_PH_ACC_WAIT;
	default:
		return GT_PH_ACC_COMPUTE;
	}
}

/*
 * The node of a new construct: the user's call site (no return address to
 * memoize on: the fast unwind each time; the runtime's frames
 * and the tool's are elided; inside an OpenMP task the context hangs under
 * the task), the construct's placeholder, and the source position the
 * runtime reported, when it did.
 */
static struct gt_cct_node *construct_node(struct gt_thread *t, struct acc_thread *at,
					  const acc_prof_info *pi, enum gt_placeholder ph)
{
	struct gt_stitch st;
	struct gt_cct_node *n;
	const char *site;

	gt_sample__stitch(t, &st);
	n = gt_unwind__ips_context(t, &st);
	n = gt_cct__placeholder(&t->cct, n ? n : t->cct.root, ph);
	if (n && pi->src_file && pi->line_no > 0 && (site = acc__site_name(at, pi)))
		n = gt_cct__child(&t->cct, n, GT_NODE_NAME, (uint64_t)(uintptr_t)site, 0);
	return n;
}

/* Where an event that belongs to a construct goes: the innermost construct
 * in progress, or the event's own context when there is none. */
static struct gt_cct_node *current(struct gt_thread *t, struct acc_thread *at,
				   const acc_prof_info *pi)
{
	if (at->depth > 0)
		return at->stack[at->depth - 1].node;
	return construct_node(t, at, pi, GT_PH_ACC_COMPUTE);
}

static void device_fact(const acc_prof_info *pi)
{
	static int said;
	static const char *const names[] = {
		[acc_device_none] = "none",	  [acc_device_default] = "default",
		[acc_device_host] = "host",	  [acc_device_not_host] = "not host",
		[acc_device_nvidia] = "nvidia", [acc_device_radeon] = "radeon",
	};
	char buf[64];
	const char *name = pi->device_type >= 0 &&
					   (size_t)pi->device_type < sizeof(names) / sizeof(*names) &&
					   names[pi->device_type]
				   ? names[pi->device_type]
				   : "other";

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	snprintf(buf, sizeof(buf), "%s, device %d", name, pi->device_number);
	gt_tool__set_fact("acc_device", buf);
}

static void acc__device_init(acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	struct acc_thread *at;
	uint64_t now = gt_clock__ticks();

	(void)ei, (void)ai;
	if (!t || !(at = acc__thread(t)))
		return;
	if (pi->event_type == acc_ev_device_init_start) {
		at->init_t0 = now;
		return;
	}
	gt_thread__enter(t);
	add_time(t, gt_cct__placeholder(&t->cct, t->cct.root, GT_PH_ACC_DEVICE_INIT),
		 GT_M_ACC_DEVICE_INIT_TIME, now - at->init_t0);
	gt_thread__leave(t);
	/* The runtime has loaded the CUDA driver for an NVIDIA device. */
	gt_backend__probe("OpenACC device init");
}

struct gt_cct_node *gt_acc__current(struct gt_thread *t)
{
	struct acc_thread *at = t->acc;

	if (!at)
		return NULL;
	if (at->op_node)
		return at->op_node;
	return at->depth > 0 && at->depth <= ACC_DEPTH ? at->stack[at->depth - 1].node : NULL;
}

static void acc__construct(acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	struct acc_thread *at;
	struct gt_cct_node *wait_node = NULL;
	uint64_t wait_ticks = 0;
	int start;

	(void)ai;
	if (!t || !(at = acc__thread(t)))
		return;
	start = pi->event_type == acc_ev_compute_construct_start ||
		pi->event_type == acc_ev_enter_data_start || pi->event_type == acc_ev_exit_data_start ||
		pi->event_type == acc_ev_update_start || pi->event_type == acc_ev_wait_start;
	if (pi->event_type == acc_ev_compute_construct_start)
		device_fact(pi);
	gt_thread__enter(t);
	if (start) {
		enum gt_placeholder ph = construct_placeholder(pi->event_type);

		if (at->depth == ACC_DEPTH) {
			at->overflow++;
		} else {
			/* The data movement a compute construct implies is reported
			 * as enter/exit data "constructs" of its own: they belong
			 * inside it, not beside it. */
			at->stack[at->depth].node =
				at->depth > 0 && ei->other_event.implicit
					? gt_cct__placeholder(&t->cct, at->stack[at->depth - 1].node, ph)
					: construct_node(t, at, pi, ph);
			at->stack[at->depth].t0 = gt_clock__ticks();
			at->depth++;
		}
	} else if (at->overflow) {
		at->overflow--;
	} else if (at->depth > 0) {
		struct gt_cct_node *n = at->stack[--at->depth].node;

		wait_ticks = gt_clock__ticks() - at->stack[at->depth].t0;
		add_time(t, n, GT_M_ACC_TIME, wait_ticks);
		add(t, n, GT_M_ACC_COUNT, 1);
		if (pi->event_type == acc_ev_wait_end)
			wait_node = n;
	}
	gt_thread__leave(t);
	/* An OpenACC wait is a sync point for blame when a device backend
	 * reports the operations it waits for. */
	if (wait_node && gt_blame__devices_used()) {
		uint64_t end_ns = gt_clock__now();

		gt_blame__sync(t, wait_node, end_ns - gt_clock__ticks_to_ns(wait_ticks), end_ns, -1, 0);
	}
}

static void acc__launch(acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	const acc_launch_event_info *li = &ei->launch_event;
	struct acc_thread *at;
	struct gt_cct_node *n;

	(void)ai;
	if (!t || !(at = acc__thread(t)))
		return;
	gt_thread__enter(t);
	if (pi->event_type == acc_ev_enqueue_launch_start) {
		n = gt_cct__placeholder(&t->cct, current(t, at, pi), GT_PH_ACC_LAUNCH);
		/* The runtime's kernel name string need not outlive the event:
		 * keep a copy, one per distinct string. */
		if (n && li->kernel_name) {
			const char *name = acc__site_name(
				at, &(acc_prof_info){ .src_file = li->kernel_name, .line_no = -1 });

			if (name)
				n = gt_cct__child(&t->cct, n, GT_NODE_NAME, (uint64_t)(uintptr_t)name, 0);
		}
		at->op_node = n;
		add(t, n, GT_M_ACC_LAUNCHES, 1);
		add(t, n, GT_M_ACC_GANGS, li->num_gangs);
		add(t, n, GT_M_ACC_WORKERS, li->num_workers);
		add(t, n, GT_M_ACC_VECTOR_LENGTH, li->vector_length);
		at->op_t0 = gt_clock__ticks();
	} else if (at->op_node) {
		add_time(t, at->op_node, GT_M_ACC_LAUNCH_TIME, gt_clock__ticks() - at->op_t0);
		at->op_node = NULL;
	}
	gt_thread__leave(t);
}

static void acc__transfer(acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	const acc_data_event_info *di = &ei->data_event;
	struct acc_thread *at;
	int up = pi->event_type == acc_ev_enqueue_upload_start ||
		 pi->event_type == acc_ev_enqueue_upload_end;

	(void)ai;
	if (!t || !(at = acc__thread(t)))
		return;
	gt_thread__enter(t);
	if (pi->event_type == acc_ev_enqueue_upload_start ||
	    pi->event_type == acc_ev_enqueue_download_start) {
		struct gt_cct_node *n = gt_cct__placeholder(
			&t->cct, current(t, at, pi), up ? GT_PH_ACC_UPLOAD : GT_PH_ACC_DOWNLOAD);

		if (di->bytes != (_acc_prof_size_t)-1)
			add(t, n, up ? GT_M_ACC_UP_BYTES : GT_M_ACC_DOWN_BYTES, di->bytes);
		add(t, n, up ? GT_M_ACC_UP_COUNT : GT_M_ACC_DOWN_COUNT, 1);
		at->op_node = n;
		at->op_t0 = gt_clock__ticks();
	} else if (at->op_node) {
		add_time(t, at->op_node, up ? GT_M_ACC_UP_TIME : GT_M_ACC_DOWN_TIME,
			 gt_clock__ticks() - at->op_t0);
		at->op_node = NULL;
	}
	gt_thread__leave(t);
}

static void acc__data(acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	const acc_data_event_info *di = &ei->data_event;
	struct acc_thread *at;
	enum gt_placeholder ph;
	enum gt_metric bytes, count;

	(void)ai;
	if (!t || !(at = acc__thread(t)))
		return;
	switch (pi->event_type) {
	case acc_ev_create:
		ph = GT_PH_ACC_CREATE, bytes = GT_M_ACC_CREATE_BYTES, count = GT_M_ACC_CREATE_COUNT;
		break;
	case acc_ev_delete:
		ph = GT_PH_ACC_DELETE, bytes = GT_M_ACC_DELETE_BYTES, count = GT_M_ACC_DELETE_COUNT;
		break;
	case acc_ev_alloc:
		ph = GT_PH_ACC_ALLOC, bytes = GT_M_ACC_ALLOC_BYTES, count = GT_M_ACC_ALLOC_COUNT;
		break;
	default:
		ph = GT_PH_ACC_FREE, bytes = GT_M_ACC_FREE_BYTES, count = GT_M_ACC_FREE_COUNT;
		break;
	}
	gt_thread__enter(t);
	{
		struct gt_cct_node *n = gt_cct__placeholder(&t->cct, current(t, at, pi), ph);

		if (di->bytes != (_acc_prof_size_t)-1) /* GCC's "size unknown" */
			add(t, n, bytes, di->bytes);
		add(t, n, count, 1);
	}
	gt_thread__leave(t);
}

__attribute__((visibility("default"))) void acc_register_library(acc_prof_reg reg, acc_prof_reg unreg,
								 acc_prof_lookup_func lookup)
{
	static int registered;

	(void)unreg, (void)lookup;
	/* Loaded for OMPT or by the launcher as well: register once. */
	if (__atomic_exchange_n(&registered, 1, __ATOMIC_ACQ_REL) || gt_tool__start())
		return;
	acc__thread(gt_thread__self(GT_THREAD_INITIAL));
	gt_thread__on_exit(acc__thread_end);
	/* Device backends hang their work under this layer's constructs. */
	gt_construct__provide(gt_acc__current);
#define X(event, handler) reg(acc_ev_##event, acc__##handler, acc_reg);
	GT_ACC_EVENTS(X)
#undef X
	gt_backend__probe("OpenACC");
	gt_info("acc", "OpenACC profiling interface registered");
}
