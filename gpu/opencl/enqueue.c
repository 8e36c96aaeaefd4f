/* SPDX-License-Identifier: MIT */
/*
 * Commands, synchronization and run-time compilation.
 *
 * A measured command (its queue profiles, see objects.c) gets an operation
 * record from the issuing thread's pool, a placeholder under the user's call
 * site and a correlation id; then a CL_COMPLETE callback on its event. When
 * the application passed no event, the command gets one of ours, which the
 * application never sees.
 *
 *   application thread T                    OpenCL runtime thread R
 *   enqueue (event E) ─ correlate(T, P) ─┐
 *   clSetEventCallback(E, op) ───────────┼──► gt_ocl__complete(E, op):
 *                                        │      profiling times of E
 *                                        │      gt_monitor__activity(R, op)
 *   next call: reclaim ◄── T.returned ◄──┴───── push op (release CAS)
 *     clReleaseEvent(E) if it is ours; op back to T's pool
 *
 * The callback does only that: two or three profiling queries, one record
 * into the monitor, one push. Events of ours are released by their issuing
 * thread, after completion, never inside the callback (some runtimes free an
 * event whose last reference goes while its callbacks run).
 */
#include <stdlib.h>
#include <string.h>

#include "core/trace-format.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"
#include "core/trace.h"
#include "core/unwind.h"
#include "gpu/blame.h"
#include "gpu/monitor.h"
#include "gpu/opencl/ocl-internal.h"

struct ocl_op {
	struct ocl_op *next;
	struct ocl_thread *owner;
	struct ocl_device *dev;
	cl_event internal; /* ours: released by the owner once returned */
	uint64_t after_ns; /* host time just after the enqueue returned */
	struct gt_device_op d;
};

atomic_long gt_ocl_inflight;

/*
 * The budget of measured commands in flight: GPUTOOL_MAX_INFLIGHT (65,536
 * by default, core/config.h) per device. A measured command holds, until
 * the monitor has matched its completion, an operation record and an event
 * here, a correlation record and a completion record in the monitor's
 * channels, and an entry in its correlation map; after that, one
 * measurement record in its thread's channel, applied (added to the
 * counts, bytes and times of its calling context, kernel or direction in
 * the thread's tree) at that thread's next OpenCL call. Its device's
 * in-flight count (gt_blame__in_flight, from gt_monitor__correlate_device
 * until the monitor matched the completion) covers every stage but the
 * last, so a command is measured only while that count is under the
 * budget: whether the runtime's completion callbacks or the monitor fall
 * behind the enqueues (a CPU device beside busy threads, millions of tiny
 * kernels), the memory held stays bounded. gt_ocl_inflight, the callbacks
 * not yet run, is held to the same budget for devices without a count.
 * A command beyond passes through untouched, with no event of ours, and
 * is counted as not measured (gt_tool__unmeasured_ops).
 */

/* ---- a call on an application thread ---- */

int gt_ocl__begin(struct ocl_call *c, uintptr_t ra, uintptr_t key)
{
	if (!gt_ocl__live() || !(c->ot = gt_ocl__thread()))
		return 0;
	c->t = c->ot->t;
	c->ra = ra;
	c->key = key;
	c->site = NULL;
	if (atomic_load_explicit(&c->ot->returned, memory_order_relaxed))
		gt_ocl__reclaim(c->ot, 1);
	gt_monitor__drain(c->t);
	return 1;
}

void gt_ocl__touch(void)
{
	struct ocl_call c;

	gt_ocl__begin(&c, 0, 0);
}

struct gt_cct_node *gt_ocl__site(struct ocl_call *c)
{
	struct gt_stitch st;
	struct gt_cct_node *n;

	if (c->site)
		return c->site;
	/* Inside an OpenMP region or task the call hangs under its construct. */
	gt_sample__stitch(c->t, &st);
	if (st.base && !st.boundary)
		return c->site = st.base;
	n = gt_unwind__memo_lookup(c->t, c->ra, c->key, &st);
	if (!n)
		n = gt_unwind__context(c->t, c->ra, c->key, &st);
	c->site = n ? n : c->t->cct.root;
	return c->site;
}

void gt_ocl__add(struct ocl_call *c, enum gt_placeholder ph, enum gt_metric m, uint64_t v)
{
	struct gt_cct_node *n;

	gt_thread__enter(c->t);
	n = gt_ocl__site(c);
	if (ph < GT_PH__COUNT)
		n = gt_cct__placeholder(&c->t->cct, n, ph);
	if (n)
		gt_cct__add(&c->t->cct, n, m, v, 0);
	gt_thread__leave(c->t);
}

/* Host time of a wait, charged to <gpu sync> under the call site, which it
 * returns. Under gt_thread__enter. */
static struct gt_cct_node *sync__charge(struct ocl_call *c, uint64_t t0, uint64_t t1)
{
	struct gt_device_op d = { .kind = GT_DEVOP_SYNC, .start_ns = t0, .end_ns = t1 };
	struct gt_cct_node *n = gt_cct__placeholder(&c->t->cct, gt_ocl__site(c), GT_PH_GPU_SYNC);

	if (n)
		gt_device_op__attribute(&c->t->cct, n, &d);
	return n;
}

/* Blame for a wait on a queue's device and stream (qr NULL: every device);
 * after gt_thread__leave. */
static void sync__blame(struct ocl_call *c, struct gt_cct_node *n, uint64_t t0, uint64_t t1,
			const struct ocl_queue *qr)
{
	if (n)
		gt_blame__sync(c->t, n, t0, t1, qr && qr->dev ? qr->dev->index : -1, qr ? qr->id : 0);
}

/* ---- operation records ---- */

static struct ocl_op *op__get(struct ocl_thread *ot)
{
	struct ocl_op *op = ot->free;

	if (op)
		ot->free = op->next;
	else
		op = malloc(sizeof(*op));
	if (op) {
		memset(op, 0, sizeof(*op));
		op->owner = ot;
	}
	return op;
}

void gt_ocl__reclaim(struct ocl_thread *ot, int owner)
{
	/* Acquire: pairs with the callbacks' release CAS; their writes to the
	 * records come before. */
	struct ocl_op *op = atomic_exchange_explicit(&ot->returned, NULL, memory_order_acquire);

	while (op) {
		struct ocl_op *next = op->next;

		if (op->internal)
			gt_ocl_next.clReleaseEvent(op->internal);
		if (owner) {
			op->next = ot->free;
			ot->free = op;
		}
		op = next;
	}
}

void gt_ocl__sweep(void)
{
	for (struct ocl_thread *ot = atomic_load_explicit(&gt_ocl_threads, memory_order_acquire); ot;
	     ot = ot->next_all)
		gt_ocl__reclaim(ot, 0);
}

/* The activity that closes a correlation that will not be measured. */
static void op__cancel(struct gt_thread *t, uint64_t id)
{
	struct gt_device_op d = { .correlation = id, .kind = GT_DEVOP_OTHER };

	gt_monitor__activity(t, &d);
}

/* The device offset, tightened by this command when the device has no host
 * timer (see struct ocl_device). */
static int64_t op__offset(struct ocl_op *op, cl_event ev)
{
	struct ocl_device *dev = op->dev;
	int64_t cur = atomic_load_explicit(&dev->offset, memory_order_relaxed), est;
	cl_ulong queued;

	if (dev->host_timer)
		return cur;
	if (gt_ocl_next.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof(queued), &queued,
						NULL) != CL_SUCCESS)
		/* No estimate yet: take the device's timer for the host's. */
		return cur == INT64_MAX ? 0 : cur;
	est = (int64_t)op->after_ns - (int64_t)queued;
	while (est < cur &&
	       !atomic_compare_exchange_weak_explicit(&dev->offset, &cur, est, memory_order_relaxed,
						      memory_order_relaxed))
		;
	return est < cur ? est : cur;
}

static void CL_CALLBACK gt_ocl__complete(cl_event ev, cl_int status, void *data)
{
	struct ocl_op *op = data;
	struct ocl_thread *owner = op->owner;
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	cl_ulong s = 0, e = 0;
	struct ocl_op *head;

	if (t) {
		if (status == CL_COMPLETE &&
		    gt_ocl_next.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(s), &s, NULL) ==
			    CL_SUCCESS &&
		    gt_ocl_next.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(e), &e, NULL) ==
			    CL_SUCCESS &&
		    e >= s) {
			int64_t off = op__offset(op, ev);

			op->d.start_ns = (uint64_t)((int64_t)s + off);
			op->d.end_ns = (uint64_t)((int64_t)e + off);
		} else {
			/* Failed, or no times: the correlation is closed, nothing charged. */
			op->d.kind = GT_DEVOP_OTHER;
		}
		gt_monitor__activity(t, &op->d);
	}
	/* Release: the record and its event reach the owner's acquire exchange.
	 * The owner may reuse op at once: it is not touched after the push. */
	head = atomic_load_explicit(&owner->returned, memory_order_relaxed);
	do
		op->next = head;
	while (!atomic_compare_exchange_weak_explicit(&owner->returned, &head, op, memory_order_release,
						      memory_order_relaxed));
	atomic_fetch_sub_explicit(&gt_ocl_inflight, 1, memory_order_release);
}

/* ---- commands ---- */

struct ocl_cmd {
	struct ocl_call c;
	struct ocl_queue *qr;
	cl_event *app_ev; /* the application's event argument */
	cl_event *evp;	  /* what the layer below gets */
	cl_event mine;
	int over; /* too many commands in flight: this one is not measured */
	uint64_t t0, t1;
	uint64_t t_call; /* when the call began, for the trace */
	struct gt_device_op d;
};

/* 1 when a command on qr's device would exceed the budget (see above).
 * Relaxed loads: a bound, not an order; the counts may be a little stale,
 * which moves the bound by at most the commands issued meanwhile. */
static int cmd__over_budget(const struct ocl_queue *qr)
{
	long budget = (long)gt_config.max_inflight;

	return atomic_load_explicit(&gt_ocl_inflight, memory_order_relaxed) >= budget ||
	       (qr->dev && gt_blame__in_flight(qr->dev->index) >= budget);
}

/* Returns 0 when the call passes through untouched. */
static int cmd__begin(struct ocl_cmd *m, cl_command_queue q, cl_event *ev, uintptr_t ra, uintptr_t key)
{
	if (!gt_ocl__begin(&m->c, ra, key))
		return 0;
	m->qr = gt_ocl__queue(q);
	m->app_ev = ev;
	m->mine = NULL;
	m->over = m->qr && m->qr->measured && cmd__over_budget(m->qr);
	if (m->over)
		gt_tool__unmeasured_ops(1);
	m->evp = (m->qr && m->qr->measured && !ev && !m->over) ? &m->mine : ev;
	memset(&m->d, 0, sizeof(m->d));
	m->t0 = 0;
	m->t_call = gt_tracer__on() ? gt_clock__now() : 0;
	return 1;
}

/* The start of a call that may wait (a blocking read, write or map). */
static void cmd__may_wait(struct ocl_cmd *m, cl_bool blocking)
{
	if (blocking)
		m->t0 = gt_clock__now();
}

/*
 * After the command was enqueued (err): charges a blocking call's wait, runs
 * the kernel checks (kr), and measures the command when its queue profiles.
 */
static void cmd__end(struct ocl_cmd *m, cl_int err, int blocking, enum gt_placeholder ph,
		     struct ocl_kernel *kr)
{
	struct ocl_call *c = &m->c;
	struct gt_thread *t = c->t;
	struct gt_cct_node *node, *sync = NULL;
	struct ocl_op *op;
	uint64_t id = 0;
	cl_event ev;
	int measure;

	m->t1 = gt_clock__now();
	if (err != CL_SUCCESS)
		return;
	ev = m->app_ev ? *m->app_ev : m->mine;
	measure = m->qr && m->qr->measured && ev && !m->over;
	gt_thread__enter(t);
	if (blocking)
		sync = sync__charge(c, m->t0, m->t1);
	node = gt_cct__placeholder(&t->cct, gt_ocl__site(c), ph);
	if (node && kr)
		gt_ocl__advise_dispatch(c, node, kr);
	/* Counted in flight on its device until its activity arrives, for
	 * the blame of the waits that follow (gpu/blame.h). */
	if (node && measure)
		id = gt_monitor__correlate_device(t, node, m->qr->dev->index);
	gt_thread__leave(t);
	if (m->t_call)
		gt_tracer__span(t, GT_EV_API, gt_placeholder_names[ph], node, m->t_call, m->t1, id);
	if (blocking) {
		sync__blame(c, sync, m->t0, m->t1, m->qr);
		if (m->qr && m->qr->in_order)
			gt_ocl__reads_visible(c->ot, m->qr->q, NULL, 0);
	}
	if (!id || !(op = op__get(c->ot)))
		goto out_unmeasured;
	op->dev = m->qr->dev;
	op->internal = m->mine;
	op->after_ns = m->t1;
	op->d = m->d;
	op->d.correlation = id;
	op->d.stream = m->qr->id;
	op->d.device = (uint32_t)m->qr->dev->index;
	atomic_fetch_add_explicit(&gt_ocl_inflight, 1, memory_order_relaxed);
	if (gt_ocl_next.clSetEventCallback(ev, CL_COMPLETE, gt_ocl__complete, op) == CL_SUCCESS)
		return;
	atomic_fetch_sub_explicit(&gt_ocl_inflight, 1, memory_order_relaxed);
	op->next = c->ot->free;
	c->ot->free = op;
out_unmeasured:
	if (id)
		op__cancel(t, id);
	if (m->mine)
		gt_ocl_next.clReleaseEvent(m->mine);
}

#define CALL_SITE() uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0)

static void launch__facts(struct gt_kernel_launch *l, cl_uint dim, const size_t *gws, const size_t *lws)
{
	for (cl_uint i = 0; i < 3; i++) {
		size_t g = i < dim && gws ? gws[i] : 1, b = i < dim && lws ? lws[i] : 1;

		if (!lws)
			return; /* the runtime chooses the work-group size: unknown */
		l->block[i] = (uint32_t)b;
		l->grid[i] = (uint32_t)(b ? (g + b - 1) / b : 0);
	}
}

static cl_int CL_API_CALL w_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
						   const size_t *off, const size_t *gws, const size_t *lws,
						   cl_uint nw, const cl_event *wl, cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	struct ocl_kernel *kr;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nw, wl, ev);
	err = gt_ocl_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nw, wl, m.evp);
	kr = gt_ocl__kernel_or_register(k);
	m.d.kind = GT_DEVOP_KERNEL;
	m.d.name = kr ? kr->name : NULL;
	launch__facts(&m.d.launch, dim, gws, lws);
	cmd__end(&m, err, 0, GT_PH_GPU_KERNEL, kr);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *wl,
					  cl_event *ev)
{
	CALL_SITE();
	const size_t one = 1;
	struct ocl_cmd m;
	struct ocl_kernel *kr;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueTask(q, k, nw, wl, ev);
	err = gt_ocl_next.clEnqueueTask(q, k, nw, wl, m.evp);
	kr = gt_ocl__kernel_or_register(k);
	m.d.kind = GT_DEVOP_KERNEL;
	m.d.name = kr ? kr->name : NULL;
	launch__facts(&m.d.launch, 1, &one, &one);
	cmd__end(&m, err, 0, GT_PH_GPU_KERNEL, kr);
	return err;
}

static void cmd__copy(struct ocl_cmd *m, enum gt_copy_dir dir, uint64_t bytes)
{
	m->d.kind = GT_DEVOP_COPY;
	m->d.copy = (uint8_t)dir;
	m->d.bytes = bytes;
}

static const enum gt_placeholder copy_ph[] = {
	[GT_COPY_OTHER] = GT_PH_GPU_COPY,
	[GT_COPY_H2D] = GT_PH_GPU_COPY_H2D,
	[GT_COPY_D2H] = GT_PH_GPU_COPY_D2H,
	[GT_COPY_D2D] = GT_PH_GPU_COPY_D2D,
};

static uint64_t region_bytes(const size_t *region)
{
	return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

static cl_int CL_API_CALL w_clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off,
						size_t size, void *ptr, cl_uint nw, const cl_event *wl,
						cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueReadBuffer(q, buf, blocking, off, size, ptr, nw, wl, ev);
	cmd__may_wait(&m, blocking);
	err = gt_ocl_next.clEnqueueReadBuffer(q, buf, blocking, off, size, ptr, nw, wl, m.evp);
	cmd__copy(&m, GT_COPY_D2H, size);
	cmd__end(&m, err, blocking, GT_PH_GPU_COPY_D2H, NULL);
	if (err == CL_SUCCESS)
		gt_ocl__note_read(m.c.ot, ptr, size, q, ev ? *ev : NULL, blocking);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off,
						 size_t size, const void *ptr, cl_uint nw, const cl_event *wl,
						 cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueWriteBuffer(q, buf, blocking, off, size, ptr, nw, wl, ev);
	cmd__may_wait(&m, blocking);
	err = gt_ocl_next.clEnqueueWriteBuffer(q, buf, blocking, off, size, ptr, nw, wl, m.evp);
	cmd__copy(&m, GT_COPY_H2D, size);
	cmd__end(&m, err, blocking, GT_PH_GPU_COPY_H2D, NULL);
	/* The host data is unchanged until the write completes (the
	 * application may not touch it before), so hashing it now is exact. */
	if (err == CL_SUCCESS && gt_ocl__is_resend(m.c.ot, ptr, size))
		gt_ocl__add(&m.c, GT_PH_GPU_COPY_H2D, GT_M_OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL, 1);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueReadBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
						    const size_t *bo, const size_t *ho, const size_t *region,
						    size_t brp, size_t bsp, size_t hrp, size_t hsp, void *ptr,
						    cl_uint nw, const cl_event *wl, cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueReadBufferRect(q, buf, blocking, bo, ho, region, brp, bsp, hrp, hsp,
							   ptr, nw, wl, ev);
	cmd__may_wait(&m, blocking);
	err = gt_ocl_next.clEnqueueReadBufferRect(q, buf, blocking, bo, ho, region, brp, bsp, hrp, hsp, ptr,
						  nw, wl, m.evp);
	cmd__copy(&m, GT_COPY_D2H, region_bytes(region));
	cmd__end(&m, err, blocking, GT_PH_GPU_COPY_D2H, NULL);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
						     const size_t *bo, const size_t *ho, const size_t *region,
						     size_t brp, size_t bsp, size_t hrp, size_t hsp,
						     const void *ptr, cl_uint nw, const cl_event *wl,
						     cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueWriteBufferRect(q, buf, blocking, bo, ho, region, brp, bsp, hrp,
							    hsp, ptr, nw, wl, ev);
	cmd__may_wait(&m, blocking);
	err = gt_ocl_next.clEnqueueWriteBufferRect(q, buf, blocking, bo, ho, region, brp, bsp, hrp, hsp, ptr,
						   nw, wl, m.evp);
	cmd__copy(&m, GT_COPY_H2D, region_bytes(region));
	cmd__end(&m, err, blocking, GT_PH_GPU_COPY_H2D, NULL);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so,
						size_t dof, size_t size, cl_uint nw, const cl_event *wl,
						cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueCopyBuffer(q, src, dst, so, dof, size, nw, wl, ev);
	err = gt_ocl_next.clEnqueueCopyBuffer(q, src, dst, so, dof, size, nw, wl, m.evp);
	cmd__copy(&m, GT_COPY_D2D, size);
	cmd__end(&m, err, 0, GT_PH_GPU_COPY_D2D, NULL);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst,
						    const size_t *so, const size_t *dof, const size_t *region,
						    size_t srp, size_t ssp, size_t drp, size_t dsp, cl_uint nw,
						    const cl_event *wl, cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueCopyBufferRect(q, src, dst, so, dof, region, srp, ssp, drp, dsp, nw,
							   wl, ev);
	err = gt_ocl_next.clEnqueueCopyBufferRect(q, src, dst, so, dof, region, srp, ssp, drp, dsp, nw, wl,
						  m.evp);
	cmd__copy(&m, GT_COPY_D2D, region_bytes(region));
	cmd__end(&m, err, 0, GT_PH_GPU_COPY_D2D, NULL);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void *pat, size_t psize,
						size_t off, size_t size, cl_uint nw, const cl_event *wl,
						cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueFillBuffer(q, buf, pat, psize, off, size, nw, wl, ev);
	err = gt_ocl_next.clEnqueueFillBuffer(q, buf, pat, psize, off, size, nw, wl, m.evp);
	m.d.kind = GT_DEVOP_MEMSET;
	m.d.bytes = size;
	cmd__end(&m, err, 0, GT_PH_GPU_MEMSET, NULL);
	return err;
}

/* Maps are remembered per thread, so that their unmap knows the bytes that
 * go back; an unmap on another thread, or of a forgotten map, moves 0. */
static void map__note(struct ocl_thread *ot, void *ptr, uint64_t size, cl_map_flags flags)
{
	uint32_t i = ot->next_map++ % OCL_MAPS;

	ot->maps[i].ptr = ptr;
	ot->maps[i].size = size;
	ot->maps[i].flags = flags;
}

static uint64_t map__take(struct ocl_thread *ot, void *ptr)
{
	for (uint32_t i = 0; i < OCL_MAPS; i++) {
		if (ot->maps[i].ptr == ptr && ptr) {
			uint64_t n = (ot->maps[i].flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
					     ? ot->maps[i].size
					     : 0;

			ot->maps[i].ptr = NULL;
			return n;
		}
	}
	return 0;
}

static void *CL_API_CALL w_clEnqueueMapBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
					      cl_map_flags flags, size_t off, size_t size, cl_uint nw,
					      const cl_event *wl, cl_event *ev, cl_int *errp)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err = CL_SUCCESS;
	void *p;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueMapBuffer(q, buf, blocking, flags, off, size, nw, wl, ev, errp);
	cmd__may_wait(&m, blocking);
	p = gt_ocl_next.clEnqueueMapBuffer(q, buf, blocking, flags, off, size, nw, wl, m.evp, &err);
	if (errp)
		*errp = err;
	cmd__copy(&m, GT_COPY_D2H, (flags & CL_MAP_WRITE_INVALIDATE_REGION) ? 0 : size);
	cmd__end(&m, err, blocking, GT_PH_GPU_COPY_D2H, NULL);
	if (p)
		map__note(m.c.ot, p, size, flags);
	return p;
}

static cl_int CL_API_CALL w_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem mem, void *ptr, cl_uint nw,
						    const cl_event *wl, cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	cl_int err;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueUnmapMemObject(q, mem, ptr, nw, wl, ev);
	err = gt_ocl_next.clEnqueueUnmapMemObject(q, mem, ptr, nw, wl, m.evp);
	cmd__copy(&m, GT_COPY_H2D, err == CL_SUCCESS ? map__take(m.c.ot, ptr) : 0);
	cmd__end(&m, err, 0, GT_PH_GPU_COPY_H2D, NULL);
	return err;
}

static cl_int CL_API_CALL w_clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint n, const cl_mem *mems,
						       cl_mem_migration_flags flags, cl_uint nw,
						       const cl_event *wl, cl_event *ev)
{
	CALL_SITE();
	struct ocl_cmd m;
	uint64_t bytes = 0;
	cl_int err;
	enum gt_copy_dir dir = (flags & CL_MIGRATE_MEM_OBJECT_HOST) ? GT_COPY_D2H : GT_COPY_H2D;

	if (!cmd__begin(&m, q, ev, ra, key))
		return gt_ocl_next.clEnqueueMigrateMemObjects(q, n, mems, flags, nw, wl, ev);
	err = gt_ocl_next.clEnqueueMigrateMemObjects(q, n, mems, flags, nw, wl, m.evp);
	for (cl_uint i = 0; err == CL_SUCCESS && !(flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) && i < n;
	     i++) {
		struct ocl_mem *mr = gt_ocl_map__find(&gt_ocl_mems, mems[i]);
		size_t sz = 0;

		if (mr)
			bytes += mr->r.size;
		else if (gt_ocl_next.clGetMemObjectInfo(mems[i], CL_MEM_SIZE, sizeof(sz), &sz, NULL) == CL_SUCCESS)
			bytes += sz;
	}
	cmd__copy(&m, dir, bytes);
	cmd__end(&m, err, 0, copy_ph[dir], NULL);
	return err;
}

/* ---- synchronization ---- */

static cl_int CL_API_CALL w_clFinish(cl_command_queue q)
{
	CALL_SITE();
	struct ocl_call c;
	struct gt_cct_node *n;
	uint64_t t0, t1;
	cl_int err;

	if (!gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clFinish(q);
	t0 = gt_clock__now();
	err = gt_ocl_next.clFinish(q);
	t1 = gt_clock__now();
	gt_thread__enter(c.t);
	n = sync__charge(&c, t0, t1);
	gt_thread__leave(c.t);
	if (err == CL_SUCCESS) {
		sync__blame(&c, n, t0, t1, gt_ocl__queue(q));
		gt_ocl__reads_visible(c.ot, q, NULL, 0);
	}
	return err;
}

static cl_int CL_API_CALL w_clWaitForEvents(cl_uint n, const cl_event *list)
{
	CALL_SITE();
	struct ocl_call c;
	struct gt_cct_node *node;
	uint64_t t0, t1;
	cl_int err;

	if (!gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clWaitForEvents(n, list);
	t0 = gt_clock__now();
	err = gt_ocl_next.clWaitForEvents(n, list);
	t1 = gt_clock__now();
	gt_thread__enter(c.t);
	node = sync__charge(&c, t0, t1);
	gt_thread__leave(c.t);
	if (err == CL_SUCCESS) {
		/* The events may be of several queues: blame covers every device. */
		sync__blame(&c, node, t0, t1, NULL);
		gt_ocl__reads_visible(c.ot, NULL, list, n);
	}
	return err;
}

/* ---- run-time compilation ---- */

/* Host time of a build at <gpu jit>; the single-device check for programs
 * compiled from source or IL. */
static void jit__charge(struct ocl_call *c, uint64_t t0, int jit)
{
	uint64_t ns = gt_clock__now() - t0;

	gt_ocl__add(c, GT_PH_GPU_JIT, GT_M_GJIT, ns ? ns : 1);
	gt_ocl__add(c, GT_PH_GPU_JIT, GT_M_GJIT_COUNT, 1);
	if (jit && gt_ocl__n_devices_used() == 1)
		gt_ocl__add(c, GT_PH_GPU_JIT, GT_M_SINGLE_DEVICE_USE_AOT_COMPILATION, 1);
}

static cl_int CL_API_CALL w_clBuildProgram(cl_program p, cl_uint n, const cl_device_id *devs, const char *opts,
					   void(CL_CALLBACK *notify)(cl_program, void *), void *ud)
{
	CALL_SITE();
	struct ocl_call c;
	uint64_t t0;
	cl_int err;

	if (!gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clBuildProgram(p, n, devs, opts, notify, ud);
	t0 = gt_clock__now();
	err = gt_ocl_next.clBuildProgram(p, n, devs, opts, notify, ud);
	jit__charge(&c, t0, gt_ocl__program_jit(p));
	return err;
}

static cl_int CL_API_CALL w_clCompileProgram(cl_program p, cl_uint n, const cl_device_id *devs,
					     const char *opts, cl_uint nh, const cl_program *hdrs,
					     const char **names, void(CL_CALLBACK *notify)(cl_program, void *),
					     void *ud)
{
	CALL_SITE();
	struct ocl_call c;
	uint64_t t0;
	cl_int err;

	if (!gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clCompileProgram(p, n, devs, opts, nh, hdrs, names, notify, ud);
	t0 = gt_clock__now();
	err = gt_ocl_next.clCompileProgram(p, n, devs, opts, nh, hdrs, names, notify, ud);
	jit__charge(&c, t0, gt_ocl__program_jit(p));
	return err;
}

static cl_program CL_API_CALL w_clLinkProgram(cl_context ctx, cl_uint n, const cl_device_id *devs,
					      const char *opts, cl_uint nin, const cl_program *in,
					      void(CL_CALLBACK *notify)(cl_program, void *), void *ud,
					      cl_int *errp)
{
	CALL_SITE();
	struct ocl_call c;
	uint64_t t0;
	cl_program p;

	if (!gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clLinkProgram(ctx, n, devs, opts, nin, in, notify, ud, errp);
	t0 = gt_clock__now();
	p = gt_ocl_next.clLinkProgram(ctx, n, devs, opts, nin, in, notify, ud, errp);
	if (p)
		gt_ocl__program_linked(p, ctx, in, nin);
	jit__charge(&c, t0, p ? gt_ocl__program_jit(p) : 0);
	return p;
}

void gt_ocl__enqueue_dispatch(struct _cl_icd_dispatch *d)
{
#define SET(fn)                          \
	do {                             \
		if (gt_ocl_next.fn)      \
			d->fn = w_##fn; \
	} while (0)
	SET(clEnqueueNDRangeKernel);
	SET(clEnqueueTask);
	SET(clEnqueueReadBuffer);
	SET(clEnqueueWriteBuffer);
	SET(clEnqueueReadBufferRect);
	SET(clEnqueueWriteBufferRect);
	SET(clEnqueueCopyBuffer);
	SET(clEnqueueCopyBufferRect);
	SET(clEnqueueFillBuffer);
	SET(clEnqueueMapBuffer);
	SET(clEnqueueUnmapMemObject);
	SET(clEnqueueMigrateMemObjects);
	SET(clFinish);
	SET(clWaitForEvents);
	SET(clBuildProgram);
	SET(clCompileProgram);
	SET(clLinkProgram);
#undef SET
}
