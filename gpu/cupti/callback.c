/* SPDX-License-Identifier: MIT */
/*
 * The API side of the CUDA backend: CUPTI calls gt_cupti__callback on the
 * application thread at the entry and exit of every function of
 * cupti-apis.h. At the entry of the outermost one (a runtime call, or a
 * driver call made outside any runtime call) the thread finds where the
 * operation belongs, inserts its placeholder, sends the correlation to the
 * monitor and files CUPTI's correlation id in the correlation table; driver
 * calls the runtime makes underneath only file their own CUPTI id under the
 * same operation. Allocations and synchronizations are measured here too:
 * their operation record is built at the exit of the outermost call.
 *
 * Where an operation belongs, in order:
 *   1. inside an OpenMP target operation (the OpenMP runtime's plugin calls
 *      the driver): under that operation's node (ompt/target.h);
 *   2. inside an OpenACC construct: under the construct's node (acc/acc.h);
 *   3. else the user's calling context: unwound once per call path, the
 *      static CUDA runtime's frames removed (elide.c), the runtime's and
 *      the tool's elided by the unwinder; memoized per thread and checked
 *      against the return addresses on the stack (see context()).
 *
 * Everything here runs on the application thread: no lock, no system call
 * on the steady path; memory grows only with new contexts.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace-format.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/construct.h"
#include "core/modmap.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/trace.h"
#include "gpu/blame.h"
/* Through cupti.h, also the functions' parameter structures
 * (generated_cuda_meta.h, generated_cuda_runtime_api_meta.h). */
#include "gpu/cupti/cupti-internal.h"
#include "gpu/monitor.h"
#include "gpu/resend.h"

#define CUPTI_FRAMES 320
#define CUPTI_MEMO 64 /* a power of two */

/* ---- classes ------------------------------------------------------------ */

#define RT_IDS CUPTI_RUNTIME_TRACE_CBID_SIZE
#define DRV_IDS CUPTI_DRIVER_TRACE_CBID_SIZE

static uint8_t rt_class[RT_IDS], drv_class[DRV_IDS];
static pthread_once_t classes_once = PTHREAD_ONCE_INIT;

static void classes__init(void)
{
#define SET_RUNTIME(name, cls) rt_class[CUPTI_RUNTIME_TRACE_CBID_##name] = GT_CUPTI_##cls;
#define SET_DRIVER(name, cls) drv_class[CUPTI_DRIVER_TRACE_CBID_##name] = GT_CUPTI_##cls;
#define A(dom, name, cls) SET_##dom(name, cls)
#define K(dom, name, field) SET_##dom(name, COPY_KIND)
#define Z(dom, name, field) SET_##dom(name, ALLOC_SIZE)
	GT_CUPTI_APIS(A, K, Z)
#undef A
#undef K
#undef Z
#undef SET_RUNTIME
#undef SET_DRIVER
}

enum gt_cupti_class gt_cupti__class(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < RT_IDS)
		return (enum gt_cupti_class)rt_class[cbid];
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < DRV_IDS)
		return (enum gt_cupti_class)drv_class[cbid];
	return GT_CUPTI_NONE;
}

CUptiResult gt_cupti__enable_callbacks(CUpti_SubscriberHandle sub)
{
	CUptiResult r = CUPTI_SUCCESS, e;

	pthread_once(&classes_once, classes__init);
#define EN(dom, cbid)                                                                      \
	e = gt_cupti_lib.cuptiEnableCallback(1, sub, dom, cbid);                           \
	if (e != CUPTI_SUCCESS && r == CUPTI_SUCCESS)                                      \
		r = e;
#define GT_CUPTI_EN(dom, cbid) EN(dom, cbid)
	GT_CUPTI_CALLBACKS
#undef GT_CUPTI_EN
	EN(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
	EN(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
	if (gt_cupti_pcsamp__kept()) {
		EN(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED)
	}
#undef EN
	return r;
}

/* The cudaMemcpyKind of a COPY_KIND call. */
static int copy_kind(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
#define K_RUNTIME(name, field)                                                              \
	case CUPTI_RUNTIME_TRACE_CBID_##name:                                               \
		return (int)((const name##_params *)p)->field;
#define A(dom, name, cls)
#define K(dom, name, field) K_##dom(name, field)
#define Z(dom, name, field)
		GT_CUPTI_APIS(A, K, Z)
#undef A
#undef K
#undef Z
#undef K_RUNTIME
	default:
		return cudaMemcpyDefault;
	}
}

/* The size of an ALLOC_SIZE call. */
static uint64_t alloc_size(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *p)
{
#define Z_RUNTIME(name, field)                                                              \
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_##name) \
		return (uint64_t)((const name##_params *)p)->field;
#define Z_DRIVER(name, field)                                                               \
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_##name)   \
		return (uint64_t)((const name##_params *)p)->field;
#define A(dom, name, cls)
#define K(dom, name, field)
#define Z(dom, name, field) Z_##dom(name, field)
	GT_CUPTI_APIS(A, K, Z)
#undef A
#undef K
#undef Z
#undef Z_RUNTIME
#undef Z_DRIVER
	return 0;
}

static enum gt_placeholder class_placeholder(enum gt_cupti_class cls, CUpti_CallbackId cbid,
					     const void *params)
{
	switch (cls) {
	case GT_CUPTI_LAUNCH:
		return GT_PH_GPU_KERNEL;
	case GT_CUPTI_COPY_KIND:
		switch (copy_kind(cbid, params)) {
		case cudaMemcpyHostToDevice:
			return GT_PH_GPU_COPY_H2D;
		case cudaMemcpyDeviceToHost:
			return GT_PH_GPU_COPY_D2H;
		case cudaMemcpyDeviceToDevice:
			return GT_PH_GPU_COPY_D2D;
		case cudaMemcpyHostToHost:
			return GT_PH_GPU_COPY;
		default:
			/* Unified addressing: the activity says, and the
			 * monitor makes the placeholder of its direction. */
			return GT_PH__COUNT;
		}
	case GT_CUPTI_COPY_H2D:
		return GT_PH_GPU_COPY_H2D;
	case GT_CUPTI_COPY_D2H:
		return GT_PH_GPU_COPY_D2H;
	case GT_CUPTI_COPY_D2D:
		return GT_PH_GPU_COPY_D2D;
	case GT_CUPTI_MEMSET:
		return GT_PH_GPU_MEMSET;
	case GT_CUPTI_ALLOC_SIZE:
	case GT_CUPTI_ALLOC:
		return GT_PH_GPU_ALLOC;
	case GT_CUPTI_FREE:
		return GT_PH_GPU_FREE;
	case GT_CUPTI_SYNC:
		return GT_PH_GPU_SYNC;
	default:
		/* A graph may hold kernels, copies and memsets: each activity
		 * makes its own placeholder under the call site. */
		return GT_PH__COUNT;
	}
}

/*
 * The host bytes a copy to a device reads, for the calls that name them (a
 * contiguous copy whose direction the call says); 0 for the others.
 */
static uint64_t upload_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *p,
			  const void **src)
{
#define UP(name, s, n)                                                                      \
	case CUPTI_RUNTIME_TRACE_CBID_##name:                                               \
		if (((const name##_params *)p)->kind != cudaMemcpyHostToDevice)             \
			return 0;                                                           \
		*src = ((const name##_params *)p)->s;                                       \
		return ((const name##_params *)p)->n;
#define UP_DRV(name)                                                                        \
	case CUPTI_DRIVER_TRACE_CBID_##name:                                                \
		*src = ((const name##_params *)p)->srcHost;                                 \
		return ((const name##_params *)p)->ByteCount;

	if (!p)
		return 0;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
			UP(cudaMemcpy_v3020, src, count)
			UP(cudaMemcpy_ptds_v7000, src, count)
			UP(cudaMemcpyAsync_v3020, src, count)
			UP(cudaMemcpyAsync_ptsz_v7000, src, count)
			UP(cudaMemcpyToSymbol_v3020, src, count)
			UP(cudaMemcpyToSymbol_ptds_v7000, src, count)
			UP(cudaMemcpyToSymbolAsync_v3020, src, count)
			UP(cudaMemcpyToSymbolAsync_ptsz_v7000, src, count)
		default:
			return 0;
		}
	}
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		switch (cbid) {
			UP_DRV(cuMemcpyHtoD_v2)
			UP_DRV(cuMemcpyHtoD_v2_ptds)
			UP_DRV(cuMemcpyHtoDAsync_v2)
			UP_DRV(cuMemcpyHtoDAsync_v2_ptsz)
		default:
			return 0;
		}
	}
	return 0;
#undef UP
#undef UP_DRV
}

/* Operations measured at the API, not by an activity record. */
static int api_measured(enum gt_cupti_class cls)
{
	return cls == GT_CUPTI_ALLOC_SIZE || cls == GT_CUPTI_ALLOC || cls == GT_CUPTI_FREE ||
	       cls == GT_CUPTI_SYNC;
}

/* ---- per-thread state ---------------------------------------------------- */

/*
 * A call path seen before costs a lookup and a few loads: an entry is keyed
 * by the stack position of the callback's own frame, the placeholder and the
 * stitch point, and holds the return-address slots of the user frames of
 * that path (address on the stack, value); it hits only while every slot
 * still holds its value, that is while the same callers are on the stack
 * (as the unwinder's memo for OpenMP events). Filling an entry takes a full
 * unwind with stack pointers, which is slow (about 1 µs a frame): a thread
 * whose entries keep missing (call paths that never repeat) spends at most
 * SLOW_BUDGET of those, earning one back every 16 hits, and otherwise takes
 * libunwind's fast path without remembering.
 */
#define MEMO_SLOTS 32
#define SLOW_BUDGET 64

struct memo_entry {
	uint64_t hash;
	struct gt_cct_node *node;
	uint32_t nslots;
	struct {
		uintptr_t addr, val;
	} slots[MEMO_SLOTS];
};

struct cupti_thread {
	struct gt_thread *t;
	int depth;		  /* intercepted calls in progress (nesting) */
	enum gt_cupti_class cls;  /* of the outermost */
	uint64_t id;		  /* its monitor id; 0: not measured */
	int32_t parts;		  /* activities it expects */
	uint32_t cupti_id;	  /* CUPTI's id of the outermost call */
	int device;		  /* its device (CUPTI's numbering), -1: unknown */
	uint64_t stream;	  /* a stream sync's CUPTI stream id, 0: all */
	struct gt_cct_node *node; /* its placeholder (or context) */
	uint64_t t0, bytes;	  /* API-measured operations */
	uint64_t wait0;		  /* an implicit synchronization's start, 0: none */
	uint64_t mark;		  /* a device-wide sync's gt_blame__mark */
	int device_wide;	  /* the outermost call waits for the whole device */
	CUcontext last_ctx;	  /* the device of the last context seen */
	int last_device;
	const void *up_src;	  /* an upload's host bytes (gpu/resend.h), up_n of them */
	uint64_t up_n;
	int capture_calls;	  /* capture functions in progress (nesting) */
	int capturing;		  /* stream captures begun and not ended */
	uint32_t hits, slow_budget;
	struct memo_entry memo[CUPTI_MEMO];
};

static __thread struct cupti_thread *self_ct;

/* At thread exit (core/thread.c's exit hook): what the monitor measured for
 * this thread is applied while its tree is still its own, and its state is
 * freed. */
static void thread__end(struct gt_thread *t)
{
	struct cupti_thread *ct = self_ct;

	if (!ct || ct->t != t)
		return;
	gt_monitor__drain(t);
	self_ct = NULL;
	free(ct);
}

static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

static void hook__init(void)
{
	gt_thread__on_exit(thread__end);
}

static struct cupti_thread *thread__self(void)
{
	struct cupti_thread *ct = self_ct;
	struct gt_thread *t;

	if (ct)
		return ct;
	t = gt_thread__self(GT_THREAD_OTHER);
	if (!t)
		return NULL;
	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return NULL;
	ct->t = t;
	ct->slow_budget = SLOW_BUDGET;
	pthread_once(&hook_once, hook__init);
	self_ct = ct;
	/* A thread that only CUDA saw gets CPU-time samples too (a no-op when
	 * OpenMP or OpenACC started them). */
	gt_sample__thread_start(t);
	return ct;
}

/* ---- calling context ------------------------------------------------------ */

static uint64_t memo__hash(uintptr_t key, const struct gt_stitch *st, enum gt_placeholder ph)
{
	return gt_hash__mix64(gt_hash__mix64(key ^ (uint64_t)ph << 56) ^ (uintptr_t)st->base ^ st->boundary << 1) | 1;
}

static struct gt_cct_node *memo__lookup(struct cupti_thread *ct, uint64_t h)
{
	const struct memo_entry *m = &ct->memo[h & (CUPTI_MEMO - 1)];

	if (m->hash != h)
		return NULL;
	for (uint32_t i = 0; i < m->nslots; i++)
		if (*(const uintptr_t *)m->slots[i].addr != m->slots[i].val)
			return NULL;
	if (++ct->hits % 16 == 0 && ct->slow_budget < SLOW_BUDGET)
		ct->slow_budget++;
	return m->node;
}

/* Remembers @node for the user frames of f[0..n) (with stack pointers). */
static void memo__store(struct cupti_thread *ct, uint64_t h, const struct gt_frame *f, int n,
			struct gt_cct_node *node)
{
	struct memo_entry *m = &ct->memo[h & (CUPTI_MEMO - 1)];
	uint32_t k = 0;

	m->hash = 0;
	for (int i = 1; i < n; i++) {
		if (gt_modmap__class(f[i].ip) != GT_MOD_USER || !f[i].sp)
			continue;
		if (k == MEMO_SLOTS)
			return; /* too deep to check cheaply: not remembered */
		m->slots[k].addr = f[i].sp - sizeof(uintptr_t);
		m->slots[k].val = f[i].ip;
		k++;
	}
	m->nslots = k;
	m->node = node;
	m->hash = h;
}

/*
 * The placeholder @ph (none: GT_PH__COUNT) under the calling thread's user
 * context. @key: the stack position of the callback's frame.
 */
static struct gt_cct_node *context(struct cupti_thread *ct, enum gt_placeholder ph, uintptr_t key)
{
	struct gt_thread *t = ct->t;
	struct gt_frame f[CUPTI_FRAMES];
	struct gt_stitch st = { 0 };
	struct gt_cct_node *node;
	uint64_t h;
	int n, slow, max = (int)gt_config.max_depth + 64;

	if (max > CUPTI_FRAMES)
		max = CUPTI_FRAMES;
	gt_sample__stitch(t, &st);
	h = memo__hash(key, &st, ph);
	node = memo__lookup(ct, h);
	if (node)
		return node;
	if (gt_modmap__stale())
		gt_modmap__refresh();
	slow = ct->slow_budget > 0;
	if (slow) {
		ct->slow_budget--;
		n = gt_unwind__raw(NULL, f, max);
	} else {
		n = gt_unwind__ips(f, max);
	}
	n = gt_cupti_elide__filter(f, n);
	node = gt_unwind__frames_context(t, f, n, 0, &st, 0);
	if (gt_modmap__stale()) {
		/* A module loaded since the last look (the driver, CUPTI): its
		 * frames were taken for the user's. Once more, knowing it. */
		gt_modmap__refresh();
		node = gt_unwind__frames_context(t, f, n, 0, &st, 0);
		slow = slow && !gt_modmap__stale();
	}
	if (!node)
		node = t->cct.root;
	if (ph < GT_PH__COUNT)
		node = gt_cct__placeholder(&t->cct, node, ph);
	if (node && slow && n < max)
		memo__store(ct, h, f, n, node);
	return node;
}

uint64_t gt_cupti__issue(struct gt_thread *t, struct gt_cct_node *node, enum gt_placeholder ph,
			 uint32_t cupti_id, int32_t parts, int device, uint64_t issued_ns)
{
	uint64_t id;

	if (ph < GT_PH__COUNT && node)
		node = gt_cct__placeholder(&t->cct, node, ph);
	id = gt_monitor__correlate_at(t, node, cupti_id ? device : -1, issued_ns);
	if (id && cupti_id)
		gt_cupti_corr__put(cupti_id, id, parts);
	return id;
}

/* The call-site address a recording names an operation by. */
static uintptr_t site_of(const struct gt_cct_node *p, enum gt_placeholder ph)
{
	const struct gt_cct_node *n = ph < GT_PH__COUNT && p ? p->parent : p;

	return n && n->kind == GT_NODE_FRAME ? (uintptr_t)n->key : 0;
}

/* CUPTI's number for the device of @ctx (as activity records number
 * devices), cached for the thread's last context; -1 if unknown. */
static int device_of(struct cupti_thread *ct, CUcontext ctx)
{
	uint32_t dev;

	if (!ctx)
		return -1;
	if (ctx != ct->last_ctx) {
		ct->last_ctx = ctx;
		ct->last_device = gt_cupti_lib.cuptiGetDeviceId &&
						  gt_cupti_lib.cuptiGetDeviceId(ctx, &dev) == CUPTI_SUCCESS
					  ? (int)dev
					  : -1;
	}
	return ct->last_device;
}

/* For a stream synchronization, CUPTI's id of the stream; 0 (all streams of
 * the device) for the others. The stream may belong to another device than
 * the current one (a thread that drives several GPUs): the sync is then that
 * device's, in ct->device. */
static uint64_t sync_stream(struct cupti_thread *ct, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const CUpti_CallbackData *cb)
{
	CUcontext ctx = cb->context;
	CUstream s = NULL;
	uint32_t id;

	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 ||
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000))
		s = (CUstream)((const cudaStreamSynchronize_v3020_params *)cb->functionParams)->stream;
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		 (cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize ||
		  cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz))
		s = ((const cuStreamSynchronize_params *)cb->functionParams)->hStream;
	if (!s)
		return 0;
	/* Handles 0x1 and 0x2 are the legacy and per-thread default streams:
	 * the current context's. */
	if ((uintptr_t)s > 2 && gt_cupti_lib.cuStreamGetCtx && gt_cupti_lib.cuStreamGetCtx(s, &ctx) == CUDA_SUCCESS &&
	    ctx != cb->context)
		ct->device = device_of(ct, ctx);
	if (!gt_cupti_lib.cuptiGetStreamId || gt_cupti_lib.cuptiGetStreamId(ctx, s, &id) != CUPTI_SUCCESS)
		return 0;
	return id;
}

/*
 * Copies, memsets and frees that are not *Async block the host until what
 * was launched before them has run (CUDA's "API synchronization behavior":
 * cudaMemcpy to or from pageable memory, cudaFree, ...): implicit
 * synchronizations, blamed like cudaDeviceSynchronize.
 */
static int implicit_sync(enum gt_cupti_class cls, const CUpti_CallbackData *cb)
{
	switch (cls) {
	case GT_CUPTI_COPY_KIND:
	case GT_CUPTI_COPY_H2D:
	case GT_CUPTI_COPY_D2H:
	case GT_CUPTI_COPY_D2D:
	case GT_CUPTI_COPY:
	case GT_CUPTI_MEMSET:
	case GT_CUPTI_FREE:
		return cb->functionName && !strstr(cb->functionName, "Async");
	default:
		return 0;
	}
}

/* A host wait: not cudaStreamWaitEvent, which only orders two streams. */
static int host_wait(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API
		       ? cbid != CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020 &&
				 cbid != CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000
		       : cbid != CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent &&
				 cbid != CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz;
}

/* Waits for everything launched on the device (a stream's or an event's
 * wait covers less, and blocking copies skip non-blocking streams). */
static int device_wide(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 ||
		       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020;
	return cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize || cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2;
}

static void enter(struct cupti_thread *ct, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		  enum gt_cupti_class cls, const CUpti_CallbackData *cb, uintptr_t key)
{
	struct gt_thread *t = ct->t;
	struct gt_cct_node *node = NULL;
	enum gt_placeholder ph;
	uint64_t issued;
	int from_ctx = 0;

	if (ct->depth++ > 0) {
		/* A driver call under an intercepted runtime call: the same
		 * operation, under CUPTI's id for this call as well. */
		if (ct->id && !api_measured(ct->cls) && cb->correlationId != ct->cupti_id) {
			gt_cupti_corr__put(cb->correlationId, ct->id, ct->parts);
			if (gt_cupti_recording)
				gt_cupti_record__api(cb->correlationId, ct->id, ct->parts,
						     GT_PH__COUNT, 0, 0);
		}
		return;
	}
	ct->cls = cls;
	ct->id = 0;
	ct->wait0 = 0;
	ct->t0 = gt_tracer__on() ? gt_clock__now() : 0;
	/* CUDA 13 gives a driver call made by a runtime call the runtime
	 * call's id: filed once. */
	ct->cupti_id = cb->correlationId;
	/* While this thread captures a stream, what it launches becomes a
	 * graph node and runs (and is measured) when the graph is launched. */
	if (ct->capturing)
		return;
	ct->parts = cls == GT_CUPTI_GRAPH_LAUNCH
			    ? gt_cupti_graph__parts((uintptr_t)((const void *const *)cb->functionParams)[0])
			    : 1;
	ph = class_placeholder(cls, cbid, cb->functionParams);
	gt_monitor__drain(t);
	gt_thread__enter(t);
	/* A programming model's construct or operation in progress (an
	 * OpenMP target construct, an OpenACC one): its node. */
	node = gt_construct__current(t);
	if (node) {
		/* The runtime's operation node: the activity makes the GPU
		 * placeholder beneath it. */
		ph = GT_PH__COUNT;
	} else {
		node = context(ct, ph, key);
		from_ctx = 1;
	}
	ct->node = node;
	/* An upload of a programming model's construct is the construct's. */
	ct->up_src = NULL;
	ct->up_n = from_ctx ? upload_of(domain, cbid, cb->functionParams, &ct->up_src) : 0;
	ct->device = device_of(ct, cb->context);
	ct->stream = 0;
	/* A recording keeps the issue time the monitor gets. */
	issued = gt_cupti_recording ? gt_clock__now() : 0;
	ct->id = gt_cupti__issue(t, node, GT_PH__COUNT, api_measured(cls) ? 0 : cb->correlationId,
				 ct->parts, ct->device, issued);
	gt_thread__leave(t);
	if (!ct->id)
		return;
	atomic_fetch_add_explicit(&gt_cupti_stats.api_calls, 1, memory_order_relaxed);
	if (gt_cupti_recording)
		gt_cupti_record__api(api_measured(cls) ? 0 : cb->correlationId, ct->id, ct->parts,
				     from_ctx ? ph : GT_PH__COUNT, from_ctx ? site_of(node, ph) : 0, issued);
	ct->device_wide = cls == GT_CUPTI_SYNC && device_wide(domain, cbid);
	if (ct->device_wide)
		ct->mark = gt_blame__mark(ct->device);
	if (api_measured(cls)) {
		ct->bytes = cls == GT_CUPTI_ALLOC_SIZE ? alloc_size(domain, cbid, cb->functionParams)
						       : 0;
		if (cls == GT_CUPTI_SYNC)
			ct->stream = host_wait(domain, cbid) ? sync_stream(ct, domain, cbid, cb) : UINT64_MAX;
		ct->t0 = gt_clock__now();
	}
	ct->wait0 = implicit_sync(cls, cb) ? gt_clock__now() : 0;
}

/*
 * Blame for a wait of the calling thread over [t0, t1] (CPU_IDLE at @node
 * now, CPU_IDLE_CAUSE at the launches that kept the device busy later). The
 * kernels' activities reach the monitor when CUPTI hands their buffer over:
 * the monitor polls CUPTI for them when the sync arrives (gpu/backend.h),
 * off this thread, and holds the sync until then. A device-wide wait makes
 * the device count as idle at once.
 */
static void blame_wait(struct cupti_thread *ct, uint64_t id, struct gt_cct_node *node, uint64_t t0,
		       uint64_t t1, uint64_t stream)
{
	if (ct->device_wide)
		gt_blame__covered(ct->device, ct->mark);
	if (gt_cupti_recording) {
		struct gt_cupti_wait w = {
			.id = id, .begin_ns = t0, .end_ns = t1, .stream = stream,
			.cupti_offset = gt_cupti_activity__offset(), .device = ct->device,
		};

		gt_cupti_record__wait(&w);
	}
	gt_blame__sync(ct->t, node, t0, t1, ct->device, stream);
}

static void leave(struct cupti_thread *ct, const CUpti_CallbackData *cb)
{
	const int *ret = cb->functionReturnValue;
	struct gt_device_op op;

	if (ct->depth == 0)
		return; /* the backend started inside this call */
	if (--ct->depth > 0 || !ct->id)
		return;
	if (ct->wait0 && !(ret && *ret)) {
		/* A copy, memset or free that blocked: the same wait as a
		 * device synchronization, on every stream of the device (the
		 * legacy default stream waits for them all). */
		uint64_t wait0 = ct->wait0;

		ct->wait0 = 0;
		blame_wait(ct, ct->id, ct->node, wait0, gt_clock__now(), 0);
	}
	/* The bytes stay as they were until the copy is done (the
	 * application may not change them before): hashed now, exactly. */
	if (ct->up_n && !(ret && *ret) && gt_resend__upload(ct->up_src, ct->up_n)) {
		gt_thread__enter(ct->t);
		gt_cct__add(&ct->t->cct, ct->node, GT_M_GXCOPY_RESENT_BYTES, ct->up_n, 0);
		gt_cct__add(&ct->t->cct, ct->node, GT_M_GXCOPY_RESENT_COUNT, 1, 0);
		gt_thread__leave(ct->t);
	}
	ct->up_n = 0;
	if (gt_tracer__on() && ct->t0)
		gt_tracer__span(ct->t, GT_EV_API, cb->functionName, ct->node, ct->t0, gt_clock__now(), ct->id);
	memset(&op, 0, sizeof(op));
	op.correlation = ct->id;
	if (api_measured(ct->cls)) {
		op.end_ns = gt_clock__now();
		op.start_ns = ct->t0;
		op.bytes = ct->bytes;
		op.kind = ct->cls == GT_CUPTI_SYNC   ? GT_DEVOP_SYNC
			  : ct->cls == GT_CUPTI_FREE ? GT_DEVOP_FREE
						     : GT_DEVOP_ALLOC;
		if (ret && *ret)
			op.kind = GT_DEVOP_OTHER;
	} else if (ret && *ret) {
		/* Failed: no activity will come; close the operation. */
		op.kind = GT_DEVOP_OTHER;
	} else {
		return;
	}
	if (op.kind == GT_DEVOP_OTHER)
		atomic_fetch_add_explicit(&gt_cupti_stats.failed_calls, 1, memory_order_relaxed);
	op.device = ct->device >= 0 ? (uint32_t)ct->device : 0;
	if (gt_cupti_recording)
		gt_cupti_record__op(&op);
	gt_monitor__activity(ct->t, &op);
	ct->id = 0;
	if (op.kind == GT_DEVOP_SYNC && ct->stream != UINT64_MAX)
		blame_wait(ct, op.correlation, ct->node, op.start_ns, op.end_ns, ct->stream);
	if (op.kind == GT_DEVOP_SYNC && gt_config.sass_counts)
		gt_cupti_sasscount__synced();
}

void CUPTIAPI gt_cupti__callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	uintptr_t key = GT_UNWIND_KEY();
	enum gt_cupti_class cls;
	struct cupti_thread *ct;

	(void)userdata;
	if (!atomic_load_explicit(&gt_cupti_live, memory_order_acquire))
		return;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;
		/* What these do (probing devices, setting up PC sampling in
		 * CUPTI's profiler libraries, reading modules) is the tool's
		 * time: the samples that land in it count as the tool's. */
		struct gt_thread *t = gt_thread__peek();

		if (t)
			gt_thread__enter(t);
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			int n = 0;

			if (gt_cupti_lib.cuDeviceGetCount(&n) == CUDA_SUCCESS)
				for (int i = 0; i < n && i < GT_CUPTI_MAX_DEVICES; i++)
					gt_cupti__device_probe(i);
			gt_cupti_pcsamp__context_created(rd ? rd->context : NULL);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			gt_cupti__poll_off();
			gt_cupti_pcsamp__context_ending(rd ? rd->context : NULL);
		} else if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED && rd && rd->resourceDescriptor) {
			const CUpti_ModuleResourceData *m = rd->resourceDescriptor;

			gt_cupti_pcsamp__module_loaded(m->pCubin, m->cubinSize);
		}
		if (t)
			gt_thread__leave(t);
		return;
	}
	cls = gt_cupti__class(domain, cbid);
	if (cls == GT_CUPTI_NONE)
		return;
	if (cls == GT_CUPTI_GRAPH_INSTANTIATE) {
		const int *ret = cb->functionReturnValue;

		if (cb->callbackSite == CUPTI_API_EXIT && ret && !*ret)
			gt_cupti_graph__instantiated(cb->functionParams);
		return;
	}
	ct = thread__self();
	if (!ct)
		return;
	if (cls == GT_CUPTI_CAPTURE_BEGIN || cls == GT_CUPTI_CAPTURE_END) {
		const int *ret = cb->functionReturnValue;

		/* Counted once for a runtime call and the driver call in it. */
		if (cb->callbackSite == CUPTI_API_ENTER)
			ct->capture_calls++;
		else if (ct->capture_calls > 0 && --ct->capture_calls == 0 && ret && !*ret)
			ct->capturing += cls == GT_CUPTI_CAPTURE_BEGIN ? 1 : ct->capturing > 0 ? -1 : 0;
		return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER)
		enter(ct, domain, cbid, cls, cb, key);
	else
		leave(ct, cb);
}
