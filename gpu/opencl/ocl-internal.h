/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_OPENCL_INTERNAL_H
#define GT_GPU_OPENCL_INTERNAL_H

/*
 * The OpenCL layer (docs/OPENCL.md). The ICD loader calls clInitLayer with
 * the dispatch table of the layer below (another layer or the loader's own
 * table, which calls the driver); we keep a copy in gt_ocl_next and return a
 * table in which only the entry points we intercept are set, so that every
 * other call goes straight to the layer below.
 *
 *   layer.c     clGetLayerInfo, clInitLayer, the backend, per-thread state,
 *               the wrappers that keep profiling invisible to the application
 *   objects.c   the maps from OpenCL handles to what we know of them
 *               (devices, queues, kernels, buffers, programs), string interning
 *   enqueue.c   enqueues, synchronization, JIT builds; the completion callback
 *   advice.c    the best-practice checks (metrics SINGLE_DEVICE_USE_..., ...)
 *
 * Threads: application threads call the wrappers; OpenCL runtime threads run
 * the completion callback (gt_ocl__complete); the thread that stops the tool
 * runs the backend's flush and stop.
 */

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cct.h"
#include "gpu/device-op.h"

struct gt_thread;

/* The layer below, copied at clInitLayer; entries it lacks are NULL. */
extern struct _cl_icd_dispatch gt_ocl_next;

/* Layer states: measuring, or passing everything through. */
enum ocl_state {
	OCL_OFF = 0,  /* not started, tool disabled, or stopped */
	OCL_LIVE = 1, /* measuring */
};
extern atomic_int gt_ocl_state;

static inline int gt_ocl__live(void)
{
	/* Pairs with the release store in clInitLayer: a caller that sees LIVE
	 * sees the maps and the backend set up. */
	return atomic_load_explicit(&gt_ocl_state, memory_order_acquire) == OCL_LIVE;
}

/* ---- handle maps (objects.c) ---- */

/*
 * Handle -> record. Inserts and removals take the map's mutex (object
 * creation and release are rare); lookups take no lock: they run under a
 * sequence counter and retry a bounded number of times while the table is
 * being rebuilt, returning NULL after that (the operation is then treated as
 * one on an unknown object). Tables are never freed while the process runs,
 * so a lookup never reads freed memory; a replaced table is kept as the spare
 * for the next rebuild of the same size.
 */
struct ocl_map_table;
struct ocl_map {
	pthread_mutex_t lock;
	struct ocl_map_table *_Atomic tab;
	struct ocl_map_table *spare; /* same capacity as tab, or NULL */
	atomic_uint seq;	     /* odd while a rebuild runs */
	uint32_t used;		     /* live + tombstones, in tab */
	uint32_t live;
};

void *gt_ocl_map__find(struct ocl_map *m, const void *key);
/* Sets key -> val (replacing a record of a handle the driver reused). */
int gt_ocl_map__put(struct ocl_map *m, const void *key, void *val);
/* Removes key; returns the record it had, or NULL. */
void *gt_ocl_map__del(struct ocl_map *m, const void *key);

/* One pointer per distinct string, alive until exit. */
const char *gt_ocl__intern(const char *s, size_t len);

/* ---- records ---- */

struct ocl_device {
	cl_device_id id;
	int index; /* from 0, in order of first use: gt_device_op.device */
	/*
	 * Device timestamps + offset = CLOCK_MONOTONIC ns. Known once when the
	 * runtime has clGetDeviceAndHostTimer; otherwise estimated from each
	 * completed command as (host time just after its enqueue returned) -
	 * (its CL_PROFILING_COMMAND_QUEUED), keeping the smallest: that bound
	 * only tightens. INT64_MAX until the first estimate.
	 */
	_Atomic int64_t offset;
	int host_timer; /* 1: offset from clGetDeviceAndHostTimer */
};

struct ocl_queue {
	cl_command_queue q;
	cl_context ctx;
	struct ocl_device *dev;
	cl_command_queue_properties app_props; /* what the application asked for */
	uint64_t id;			       /* the op stream number */
	uint8_t forced;			       /* we added CL_QUEUE_PROFILING_ENABLE */
	uint8_t measured;		       /* commands on it are timed */
	uint8_t in_order;
	uint8_t with_array; /* created by clCreateCommandQueueWithProperties */
	uint32_t n_props;   /* entries of props, with the terminating 0 */
	cl_queue_properties props[32]; /* the application's array, as given */
};

/* What a kernel argument refers to, for the overlap check. */
struct ocl_range {
	uintptr_t space; /* 0: not memory; a root buffer; or OCL_SPACE_HOST */
	uintptr_t start;
	uint64_t size;
};
#define OCL_SPACE_HOST ((uintptr_t)1)
#define OCL_MAX_ARGS 64

struct ocl_kernel {
	cl_kernel k;
	cl_context ctx;
	const char *name; /* interned; NULL when unknown */
	uint8_t restrict_declared;
	/* Dispatches may come from several threads at once (clSetKernelArg may
	 * not, OpenCL 3.0 A.2): these two are atomic. */
	atomic_uchar dispatched; /* 1 after its first dispatch (context check done) */
	atomic_uchar verdict;	 /* 0 unknown, 1 aliased or too few buffers, 2 not aliased */
	uint32_t n_args;	 /* 1 + highest argument index set */
	struct ocl_range args[OCL_MAX_ARGS];
};

struct ocl_mem {
	cl_mem m;
	struct ocl_range r; /* where its bytes are */
};

enum ocl_origin {
	OCL_FROM_SOURCE = 1,
	OCL_FROM_IL = 2,
	OCL_FROM_BINARY = 3,
	OCL_FROM_BUILTIN = 4,
	OCL_FROM_LINK = 5,
};

struct ocl_program {
	cl_program p;
	cl_context ctx;
	int origin; /* enum ocl_origin */
	int jit;    /* built from source or IL (directly or by linking such) */
	/* Kernels whose parameter list in the source says restrict. */
	const char **restrict_names;
	uint32_t n_restrict;
};

extern struct ocl_map gt_ocl_queues, gt_ocl_kernels, gt_ocl_mems, gt_ocl_programs;

struct ocl_device *gt_ocl__device(cl_device_id id);
struct ocl_queue *gt_ocl__queue(cl_command_queue q);
struct ocl_kernel *gt_ocl__kernel(cl_kernel k);
/* The record of a kernel, registered on first sight if it was created in a
 * way we did not see (an extension's entry point). */
struct ocl_kernel *gt_ocl__kernel_or_register(cl_kernel k);
/* A program made by clLinkProgram: compiled at run time when any input was,
 * restrict where an input's source said so. */
void gt_ocl__program_linked(cl_program out, cl_context ctx, const cl_program *in, cl_uint n);
/* 1 when p was compiled from source or IL at run time. */
int gt_ocl__program_jit(cl_program p);
/* Records a queue the application created (a record is recycled or made). */
struct ocl_queue *gt_ocl__queue_new(cl_command_queue q, cl_context ctx, cl_device_id dev);
/* 1 when some queue had profiling added by us: only then can an
 * application's profiling query need an answer of ours. */
extern atomic_int gt_ocl_any_forced;

/* The reference count of an object, or 0 when it cannot be read. */
cl_uint gt_ocl__refcount_queue(cl_command_queue q);

/* ---- per-thread state (layer.c) ---- */

struct ocl_op;

/* A non-blocking read whose data is hashed once the application may see it. */
struct ocl_read {
	const void *ptr;
	uint64_t size;
	uint64_t hash;
	cl_command_queue q; /* pending: the queue; NULL once hashed */
	cl_event ev;	    /* pending: the application's event, or NULL */
};
#define OCL_READS 32
#define OCL_MAPS 32

struct ocl_thread {
	struct gt_thread *t;
	struct ocl_thread *next_all; /* the list of every ocl_thread */
	/* Ops whose completion callback ran, pushed by callback threads
	 * (release CAS), taken all at once by the owner (acquire exchange). */
	struct ocl_op *_Atomic returned;
	struct ocl_op *free; /* owner only */
	uint32_t n_reads, next_read;
	struct ocl_read reads[OCL_READS];
	struct {
		void *ptr;
		uint64_t size;
		cl_map_flags flags;
	} maps[OCL_MAPS];
	uint32_t next_map;
};

/* The calling thread's state (created, with CPU sampling started, on first
 * use); NULL when the tool cannot track it. */
struct ocl_thread *gt_ocl__thread(void);

/* ---- operations (enqueue.c) ---- */

/*
 * One intercepted call on a measuring thread. begin: returns 0 when the call
 * must simply pass through (layer not live, no thread state); otherwise
 * applies what the monitor sent and releases the events of completed
 * operations. ra and key locate the user's call site (core/unwind.h).
 */
struct ocl_call {
	struct ocl_thread *ot;
	struct gt_thread *t;
	uintptr_t ra, key;
	struct gt_cct_node *site; /* the call site, once computed */
};
int gt_ocl__begin(struct ocl_call *c, uintptr_t ra, uintptr_t key);
/* The same for calls that record nothing at their call site. */
void gt_ocl__touch(void);
/* The call site's node in the thread's tree, under gt_thread__enter. */
struct gt_cct_node *gt_ocl__site(struct ocl_call *c);
/* Adds v to metric m at the call site (or at placeholder ph under it when
 * ph < GT_PH__COUNT). */
void gt_ocl__add(struct ocl_call *c, enum gt_placeholder ph, enum gt_metric m, uint64_t v);

/* Installs the enqueue, synchronization and build wrappers into d. */
void gt_ocl__enqueue_dispatch(struct _cl_icd_dispatch *d);
/* Installs the object wrappers (objects.c) into d. */
void gt_ocl__object_dispatch(struct _cl_icd_dispatch *d);

/* In-flight measured operations (callbacks not yet run). */
extern atomic_long gt_ocl_inflight;
/* Releases the events of every thread's completed operations (at stop). */
void gt_ocl__sweep(void);
/* Applies the completed operations of ot (its own thread, or at stop). */
void gt_ocl__reclaim(struct ocl_thread *ot, int owner);
extern struct ocl_thread *_Atomic gt_ocl_threads;

/* ---- best-practice checks (advice.c) ---- */

/* Scans OpenCL C source for kernels whose parameters say restrict. */
void gt_ocl__scan_source(struct ocl_program *pr, cl_uint count, const char **strings,
			 const size_t *lengths);
int gt_ocl__program_says_restrict(const struct ocl_program *pr, const char *name);

/* Devices in every platform, and the devices contexts have used so far. */
void gt_ocl__devices_used(const cl_device_id *devs, cl_uint n, uint32_t *used, uint32_t *available);
uint32_t gt_ocl__n_devices_used(void);

/* Kernel dispatch checks: aliasing, and a kernel dispatched in more than one
 * context. Adds the metrics to the kernel's name node under ph. */
void gt_ocl__advise_dispatch(struct ocl_call *c, struct gt_cct_node *ph, struct ocl_kernel *kr);

/* A read back from a device into host memory [ptr, ptr + size). */
void gt_ocl__note_read(struct ocl_thread *ot, const void *ptr, uint64_t size, cl_command_queue q,
		       cl_event ev, int done);
/* Hashes the pending reads the application may now look at: all of q's
 * (q non-NULL), those of the events in list. */
void gt_ocl__reads_visible(struct ocl_thread *ot, cl_command_queue q, const cl_event *list,
			   cl_uint n);
/* 1 when [ptr, ptr + size) is data read back from a device and unchanged. */
int gt_ocl__is_resend(struct ocl_thread *ot, const void *ptr, uint64_t size);

#endif
