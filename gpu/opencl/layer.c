/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL layer: OPENCL_LAYERS=libgputool.so ./app. See docs/OPENCL.md.
 *
 * Setup (clInitLayer, once, under the loader's initialization): copy the
 * layer below into gt_ocl_next, start the tool, fill our table, register the
 * backend, then switch to LIVE. When the tool is disabled or cannot start,
 * the table stays empty and the loader routes every call around us.
 *
 * Teardown runs in reverse, from the monitor's stop at exit: flush waits
 * (bounded) for the completion callbacks of commands in flight, stop switches
 * to OFF, so that every wrapper becomes a plain call to the layer below, and
 * then releases the events of ours that completed. Nothing is freed: a call
 * or a callback that arrives later still finds valid memory, and the
 * wrappers that keep profiling invisible to the application go on working.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/backend.h"
#include "gpu/monitor.h"
#include "gpu/opencl/ocl-internal.h"

/* Exported through libgputool.map. */
CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value, size_t *size_ret)
	__attribute__((visibility("default")));
CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target,
					    cl_uint *num_entries_ret, const cl_icd_dispatch **dispatch_ret)
	__attribute__((visibility("default")));

#define LAYER_NAME "gputool"
/* How long the flush at exit waits for callbacks of commands in flight (by
 * the clock): the exit's bound, with the budget of commands in flight. */
#define FLUSH_WAIT_NS 1000000000ull

struct _cl_icd_dispatch gt_ocl_next;
atomic_int gt_ocl_state;
struct ocl_thread *_Atomic gt_ocl_threads;

static struct _cl_icd_dispatch table; /* ours: NULL entries fall through */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;

/* ---- per-thread state ---- */

/* Initial-exec, as core/thread.c's: one load on every intercepted call. */
static __thread struct ocl_thread *self __attribute__((tls_model("initial-exec")));
/* At the end of an application thread (core/thread.c's exit hook): apply
 * what it is owed before it is retired. */
static void thread__exit(struct gt_thread *t)
{
	struct ocl_thread *ot = self;

	if (!ot || ot->t != t || !gt_ocl__live())
		return;
	gt_ocl__reclaim(ot, 1);
	gt_monitor__drain(t);
}

struct ocl_thread *gt_ocl__thread(void)
{
	struct ocl_thread *ot = self;
	enum gt_thread_kind kind;
	struct gt_thread *t;

	if (ot)
		return ot;
	kind = syscall(SYS_gettid) == getpid() ? GT_THREAD_INITIAL : GT_THREAD_OTHER;
	if (!(t = gt_thread__self(kind)) || !(ot = calloc(1, sizeof(*ot))))
		return NULL;
	ot->t = t;
	/* Never freed: callbacks may still return operations to it after the
	 * thread has ended, and the stop sweeps every thread's. Its record
	 * stays this thread's too. */
	gt_thread__pin(t);
	ot->next_all = atomic_load_explicit(&gt_ocl_threads, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&gt_ocl_threads, &ot->next_all, ot, memory_order_release,
						      memory_order_relaxed))
		;
	self = ot;
	gt_sample__thread_start(t);
	return ot;
}

/* ---- what the application must not notice ---- */

/*
 * A queue the application created without CL_QUEUE_PROFILING_ENABLE profiles
 * for us only: its commands' profiling queries fail as they would have
 * (CL_PROFILING_INFO_NOT_AVAILABLE, which the runtime checks before the
 * parameter name), and its properties read as the application set them.
 */
static cl_int CL_API_CALL w_clGetEventProfilingInfo(cl_event ev, cl_profiling_info name, size_t size,
						    void *value, size_t *size_ret)
{
	if (atomic_load_explicit(&gt_ocl_any_forced, memory_order_acquire)) {
		cl_command_queue q = NULL;
		struct ocl_queue *qr;

		if (gt_ocl_next.clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof(q), &q, NULL) == CL_SUCCESS &&
		    q && (qr = gt_ocl__queue(q)) && qr->forced)
			return CL_PROFILING_INFO_NOT_AVAILABLE;
	}
	return gt_ocl_next.clGetEventProfilingInfo(ev, name, size, value, size_ret);
}

static cl_int CL_API_CALL w_clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info name, size_t size,
						  void *value, size_t *size_ret)
{
	struct ocl_queue *qr = NULL;
	cl_int err;

	if ((name == CL_QUEUE_PROPERTIES || name == CL_QUEUE_PROPERTIES_ARRAY) &&
	    atomic_load_explicit(&gt_ocl_any_forced, memory_order_acquire))
		qr = gt_ocl__queue(q);
	if (!qr || !qr->forced)
		return gt_ocl_next.clGetCommandQueueInfo(q, name, size, value, size_ret);
	if (name == CL_QUEUE_PROPERTIES_ARRAY && qr->with_array) {
		size_t need = qr->n_props * sizeof(cl_queue_properties);

		if (value && size < need)
			return CL_INVALID_VALUE;
		if (value && need)
			memcpy(value, qr->props, need);
		if (size_ret)
			*size_ret = need;
		return CL_SUCCESS;
	}
	err = gt_ocl_next.clGetCommandQueueInfo(q, name, size, value, size_ret);
	if (err == CL_SUCCESS && name == CL_QUEUE_PROPERTIES && value &&
	    size >= sizeof(cl_command_queue_properties)) {
		cl_command_queue_properties p;

		memcpy(&p, value, sizeof(p));
		p &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
		memcpy(value, &p, sizeof(p));
	}
	return err;
}

/* ---- the backend ---- */

static int backend__start(void)
{
	return 0;
}

/*
 * At exit, with the monitor running: let commands in flight complete, so
 * that their callbacks hand their times over while they are still taken.
 * The wait ends FLUSH_WAIT_NS after it began, by the clock (a sleep asked
 * for 1 ms may last far longer on a loaded machine). What is left after it
 * is bounded by the budget (enqueue.c): at most GPUTOOL_MAX_INFLIGHT
 * commands per device for the monitor's final rounds. Commands whose
 * callback has not run by then are not measured: the monitor counts them
 * with the other unmeasured operations (the report's header), and their
 * number is the profile's fact opencl_unflushed.
 */
static void backend__flush(void)
{
	const struct timespec ms = { .tv_sec = 0, .tv_nsec = 1000000 };
	uint64_t t0 = gt_clock__now();
	long left;
	char buf[24];

	/* Acquire: pairs with the callbacks' release decrement; the activities
	 * they sent are in their channels before the monitor's final rounds. */
	while ((left = atomic_load_explicit(&gt_ocl_inflight, memory_order_acquire)) > 0 &&
	       gt_clock__now() - t0 < FLUSH_WAIT_NS)
		nanosleep(&ms, NULL);
	if (left <= 0)
		return;
	snprintf(buf, sizeof(buf), "%ld", left);
	gt_tool__set_fact("opencl_unflushed", buf);
	gt_info("opencl", "%ld commands still running %.0f ms into the exit: not measured", left,
		(double)(gt_clock__now() - t0) / 1e6);
}

static void backend__stop(void)
{
	/* Every wrapper passes straight through from here on. */
	atomic_store_explicit(&gt_ocl_state, OCL_OFF, memory_order_release);
	if (atomic_load_explicit(&gt_ocl_inflight, memory_order_acquire) == 0)
		gt_ocl__sweep();
}

static const struct gt_backend backend = {
	.name = "opencl",
	.start = backend__start,
	.flush = backend__flush,
	.stop = backend__stop,
};

/* ---- entry points ---- */

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value, size_t *size_ret)
{
	static const char layer_name[] = LAYER_NAME;
	cl_layer_api_version version = CL_LAYER_API_VERSION_100;
	const void *src;
	size_t need;

	switch (name) {
	case CL_LAYER_API_VERSION:
		src = &version;
		need = sizeof(version);
		break;
	case CL_LAYER_NAME:
		src = layer_name;
		need = sizeof(layer_name);
		break;
	default:
		return CL_INVALID_VALUE;
	}
	if (value && size < need)
		return CL_INVALID_VALUE;
	if (value)
		memcpy(value, src, need);
	if (size_ret)
		*size_ret = need;
	return CL_SUCCESS;
}

/* The entries the layer cannot work without. */
static int next__complete(void)
{
	return gt_ocl_next.clSetEventCallback && gt_ocl_next.clGetEventProfilingInfo &&
	       gt_ocl_next.clGetEventInfo && gt_ocl_next.clReleaseEvent && gt_ocl_next.clGetCommandQueueInfo &&
	       gt_ocl_next.clGetKernelInfo && gt_ocl_next.clGetProgramInfo && gt_ocl_next.clGetMemObjectInfo &&
	       gt_ocl_next.clGetContextInfo && gt_ocl_next.clGetDeviceInfo && gt_ocl_next.clGetPlatformIDs &&
	       gt_ocl_next.clGetDeviceIDs;
}

static void layer__setup(void)
{
	struct _cl_icd_dispatch mine;

	if (gt_tool__start())
		return;
	if (!next__complete()) {
		gt_warn("gpu", "opencl: off (the layer below lacks entry points the layer needs)");
		return;
	}
	memset(&mine, 0, sizeof(mine));
	gt_ocl__object_dispatch(&mine);
	gt_ocl__enqueue_dispatch(&mine);
	mine.clGetEventProfilingInfo = w_clGetEventProfilingInfo;
	mine.clGetCommandQueueInfo = w_clGetCommandQueueInfo;
	gt_thread__on_exit(thread__exit);
	if (gt_backend__register(&backend))
		return;
	gt_tool__set_fact("opencl_layer", LAYER_NAME);
	table = mine;
	atomic_store_explicit(&gt_ocl_state, OCL_LIVE, memory_order_release);
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target,
					    cl_uint *num_entries_ret, const cl_icd_dispatch **dispatch_ret)
{
	const cl_uint ours = sizeof(struct _cl_icd_dispatch) / sizeof(void *);

	if (!target || !num_entries_ret || !dispatch_ret)
		return CL_INVALID_VALUE;
	pthread_mutex_lock(&init_lock);
	if (!initialized) {
		memcpy(&gt_ocl_next, target, (num_entries < ours ? num_entries : ours) * sizeof(void *));
		layer__setup();
		initialized = 1;
	}
	pthread_mutex_unlock(&init_lock);
	*num_entries_ret = ours;
	*dispatch_ret = &table;
	return CL_SUCCESS;
}
