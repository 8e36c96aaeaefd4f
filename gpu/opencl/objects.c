/* SPDX-License-Identifier: MIT */
/*
 * What the layer knows of OpenCL objects: one record per device, queue,
 * kernel, buffer and program, found by handle; and the wrappers that create
 * and release them. See ocl-internal.h for who calls what.
 *
 * Records are never given back to malloc while the process runs: a record of
 * a released object goes to its type's free list and is reused for a new
 * object. A thread that uses an object while another releases it for the last
 * time (an application error) may therefore read another object's record,
 * but never freed memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/trace.h"
#include "core/unwind.h"
#include "gpu/opencl/ocl-internal.h"

/* ---- devices ---- */

#define MAX_DEVICES 64

static struct {
	pthread_mutex_t lock;
	atomic_uint n;
	struct ocl_device *_Atomic dev[MAX_DEVICES];
} devices = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The offset from the device's timer to CLOCK_MONOTONIC through the
 * runtime's host timer, when it has one: the host timer is read between two
 * clock reads, the narrowest of a few tries kept.
 */
static void device__calibrate(struct ocl_device *d)
{
	uint64_t best = UINT64_MAX;
	int64_t host_to_mono = 0;
	cl_ulong dev_ts, host_ts, h;

	atomic_init(&d->offset, INT64_MAX);
	if (!gt_ocl_next.clGetDeviceAndHostTimer || !gt_ocl_next.clGetHostTimer)
		return;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = gt_clock__now(), t1;

		if (gt_ocl_next.clGetHostTimer(d->id, &h) != CL_SUCCESS)
			return;
		t1 = gt_clock__now();
		if (t1 - t0 < best) {
			best = t1 - t0;
			host_to_mono = (int64_t)(t0 + (t1 - t0) / 2) - (int64_t)h;
		}
	}
	if (gt_ocl_next.clGetDeviceAndHostTimer(d->id, &dev_ts, &host_ts) != CL_SUCCESS)
		return;
	atomic_store_explicit(&d->offset, (int64_t)host_ts + host_to_mono - (int64_t)dev_ts,
			      memory_order_relaxed);
	d->host_timer = 1;
}

/* The device's tracks in a trace: "OpenCL CPU 0: pthread-...", not "GPU". */
static void device__label(const struct ocl_device *d)
{
	cl_device_type type = 0;
	char name[96] = "", label[160];
	const char *kind;

	if (gt_ocl_next.clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof(type), &type, NULL) != CL_SUCCESS)
		type = 0;
	if (gt_ocl_next.clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof(name) - 1, name, NULL) != CL_SUCCESS)
		name[0] = 0;
	name[sizeof(name) - 1] = 0;
	kind = type & CL_DEVICE_TYPE_GPU ? "GPU" : type & CL_DEVICE_TYPE_CPU ? "CPU"
		: type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "device";
	snprintf(label, sizeof(label), "OpenCL %s %d%s%s", kind, d->index, name[0] ? ": " : "", name);
	gt_tracer__device_label((uint32_t)d->index, label);
}

struct ocl_device *gt_ocl__device(cl_device_id id)
{
	unsigned n = atomic_load_explicit(&devices.n, memory_order_acquire);
	struct ocl_device *d = NULL;

	for (unsigned i = 0; i < n; i++) {
		d = atomic_load_explicit(&devices.dev[i], memory_order_acquire);
		if (d && d->id == id)
			return d;
	}
	pthread_mutex_lock(&devices.lock);
	n = atomic_load_explicit(&devices.n, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++) {
		d = atomic_load_explicit(&devices.dev[i], memory_order_relaxed);
		if (d->id == id)
			goto out_unlock;
	}
	d = NULL;
	if (n == MAX_DEVICES || !(d = calloc(1, sizeof(*d))))
		goto out_unlock;
	d->id = id;
	d->index = (int)n;
	device__calibrate(d);
	device__label(d);
	gt_debug("opencl", "device %p: clock offset %s", (void *)id,
		 d->host_timer ? "from the host timer" : "estimated from each command");
	/* Release: the record is complete before readers can see it. */
	atomic_store_explicit(&devices.dev[n], d, memory_order_release);
	atomic_store_explicit(&devices.n, n + 1, memory_order_release);
out_unlock:
	pthread_mutex_unlock(&devices.lock);
	return d;
}

/* ---- records: free lists ---- */

static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static void *free_rec[4];
enum { FREE_QUEUE, FREE_KERNEL, FREE_MEM, FREE_PROGRAM };
static const size_t rec_size[4] = { sizeof(struct ocl_queue), sizeof(struct ocl_kernel),
				    sizeof(struct ocl_mem), sizeof(struct ocl_program) };

/* A zeroed record; the first word of a free record links the list. */
static void *rec__get(int type)
{
	void *r;

	pthread_mutex_lock(&free_lock);
	r = free_rec[type];
	if (r)
		memcpy(&free_rec[type], r, sizeof(void *));
	pthread_mutex_unlock(&free_lock);
	if (r)
		memset(r, 0, rec_size[type]);
	else
		r = calloc(1, rec_size[type]);
	return r;
}

static void rec__put(int type, void *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&free_lock);
	memcpy(r, &free_rec[type], sizeof(void *));
	free_rec[type] = r;
	pthread_mutex_unlock(&free_lock);
}

struct ocl_queue *gt_ocl__queue(cl_command_queue q)
{
	return gt_ocl_map__find(&gt_ocl_queues, q);
}

struct ocl_kernel *gt_ocl__kernel(cl_kernel k)
{
	return gt_ocl_map__find(&gt_ocl_kernels, k);
}

static atomic_uint_fast64_t next_queue_id;

struct ocl_queue *gt_ocl__queue_new(cl_command_queue q, cl_context ctx, cl_device_id dev)
{
	struct ocl_queue *qr = rec__get(FREE_QUEUE);

	if (!qr)
		return NULL;
	qr->q = q;
	qr->ctx = ctx;
	qr->dev = gt_ocl__device(dev);
	qr->id = atomic_fetch_add_explicit(&next_queue_id, 1, memory_order_relaxed) + 1;
	return qr;
}

static void queue__publish(struct ocl_queue *qr)
{
	if (gt_ocl_map__put(&gt_ocl_queues, qr->q, qr))
		rec__put(FREE_QUEUE, qr);
}

cl_uint gt_ocl__refcount_queue(cl_command_queue q)
{
	cl_uint rc = 0;

	if (gt_ocl_next.clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof(rc), &rc, NULL))
		return 0;
	return rc;
}

/* ---- contexts ---- */

static void context__advise(struct ocl_call *c, const cl_device_id *devs, cl_uint n)
{
	uint32_t used, available;

	gt_ocl__devices_used(devs, n, &used, &available);
	if (used < available)
		gt_ocl__add(c, GT_PH__COUNT, GT_M_ALL_DEVICES_NOT_USED, 1);
}

static cl_context CL_API_CALL w_clCreateContext(const cl_context_properties *props, cl_uint n,
						 const cl_device_id *devs,
						 void(CL_CALLBACK *notify)(const char *, const void *, size_t,
									    void *),
						 void *ud, cl_int *err)
{
	uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0);
	struct ocl_call c;
	cl_context ctx = gt_ocl_next.clCreateContext(props, n, devs, notify, ud, err);

	if (ctx && devs && gt_ocl__begin(&c, ra, key))
		context__advise(&c, devs, n);
	return ctx;
}

static cl_context CL_API_CALL w_clCreateContextFromType(
	const cl_context_properties *props, cl_device_type type,
	void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *ud, cl_int *err)
{
	uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0);
	struct ocl_call c;
	cl_context ctx = gt_ocl_next.clCreateContextFromType(props, type, notify, ud, err);
	cl_device_id devs[64];
	size_t sz = 0;

	if (!ctx || !gt_ocl__begin(&c, ra, key))
		return ctx;
	if (gt_ocl_next.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof(devs), devs, &sz) == CL_SUCCESS)
		context__advise(&c, devs, (cl_uint)(sz / sizeof(devs[0])));
	return ctx;
}

/* ---- queues ---- */

/* Records a new queue; the in-order check is charged to its creation site. */
static void queue__created(struct ocl_call *c, cl_command_queue q, cl_context ctx, cl_device_id dev,
			   cl_command_queue_properties props, int forced, int measured,
			   const cl_queue_properties *array, uint32_t n_array)
{
	struct ocl_queue *qr = gt_ocl__queue_new(q, ctx, dev);

	if (!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
		gt_ocl__add(c, GT_PH__COUNT, GT_M_INORDER_QUEUE, 1);
	if (!qr)
		return;
	qr->app_props = props;
	qr->forced = (uint8_t)forced;
	qr->measured = (uint8_t)(measured && qr->dev);
	qr->in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
	if (array) {
		qr->with_array = 1;
		qr->n_props = n_array;
		memcpy(qr->props, array, n_array * sizeof(*array));
	}
	if (forced)
		atomic_store_explicit(&gt_ocl_any_forced, 1, memory_order_release);
	queue__publish(qr);
}

static cl_command_queue CL_API_CALL w_clCreateCommandQueue(cl_context ctx, cl_device_id dev,
							   cl_command_queue_properties props, cl_int *err)
{
	uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0);
	struct ocl_call c;
	int forced = !(props & CL_QUEUE_PROFILING_ENABLE), measured = 1;
	cl_command_queue q;
	cl_int e = CL_SUCCESS;

	if ((props & CL_QUEUE_ON_DEVICE) || !gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clCreateCommandQueue(ctx, dev, props, err);
	q = gt_ocl_next.clCreateCommandQueue(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, &e);
	if (!q && forced) {
		/* The device cannot profile: the application's queue, untimed. */
		forced = measured = 0;
		q = gt_ocl_next.clCreateCommandQueue(ctx, dev, props, &e);
	}
	if (err)
		*err = e;
	if (q)
		queue__created(&c, q, ctx, dev, props, forced, measured, NULL, 0);
	return q;
}

static cl_command_queue CL_API_CALL w_clCreateCommandQueueWithProperties(
	cl_context ctx, cl_device_id dev, const cl_queue_properties *props, cl_int *err)
{
	uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0);
	struct ocl_call c;
	cl_queue_properties mine[sizeof(((struct ocl_queue *)0)->props) / sizeof(cl_queue_properties)];
	const uint32_t max = sizeof(mine) / sizeof(mine[0]);
	cl_command_queue_properties bits = 0;
	uint32_t n = 0, at = UINT32_MAX;
	int forced, measured = 1;
	cl_command_queue q;
	cl_int e = CL_SUCCESS;

	if (!gt_ocl__begin(&c, ra, key))
		return gt_ocl_next.clCreateCommandQueueWithProperties(ctx, dev, props, err);
	/* Copy (key, value) pairs and the terminating 0; find the bits. */
	while (props && props[n] && n + 5 < max) {
		if (props[n] == CL_QUEUE_PROPERTIES) {
			bits = (cl_command_queue_properties)props[n + 1];
			at = n + 1;
		}
		mine[n] = props[n];
		mine[n + 1] = props[n + 1];
		n += 2;
	}
	if ((props && props[n]) || (bits & CL_QUEUE_ON_DEVICE))
		/* Too long to copy, or a device-side queue: left alone. */
		return gt_ocl_next.clCreateCommandQueueWithProperties(ctx, dev, props, err);
	forced = !(bits & CL_QUEUE_PROFILING_ENABLE);
	if (forced) {
		if (at == UINT32_MAX) {
			mine[n++] = CL_QUEUE_PROPERTIES;
			at = n++;
		}
		mine[at] = (cl_queue_properties)(bits | CL_QUEUE_PROFILING_ENABLE);
	}
	mine[n] = 0;
	q = gt_ocl_next.clCreateCommandQueueWithProperties(ctx, dev, mine, &e);
	if (!q && forced) {
		forced = measured = 0;
		q = gt_ocl_next.clCreateCommandQueueWithProperties(ctx, dev, props, &e);
	}
	if (err)
		*err = e;
	if (q) {
		uint32_t n_app = 0;

		while (props && props[n_app])
			n_app += 2;
		queue__created(&c, q, ctx, dev, bits, forced, measured, props, props ? n_app + 1 : 0);
	}
	return q;
}

static cl_int CL_API_CALL w_clReleaseCommandQueue(cl_command_queue q)
{
	struct ocl_queue *qr = gt_ocl__queue(q);
	cl_uint rc = qr ? gt_ocl__refcount_queue(q) : 0;
	cl_int err = gt_ocl_next.clReleaseCommandQueue(q);

	gt_ocl__touch();
	/* A queue we made profile keeps its record: its events may outlive it,
	 * and their profiling queries must still fail as the application expects
	 * (the record is replaced if the driver reuses the handle). */
	if (err == CL_SUCCESS && rc == 1 && !qr->forced && gt_ocl_map__del(&gt_ocl_queues, q) == qr)
		rec__put(FREE_QUEUE, qr);
	return err;
}

/* ---- kernels ---- */

static cl_context program__context(cl_program p)
{
	struct ocl_program *pr = gt_ocl_map__find(&gt_ocl_programs, p);
	cl_context ctx = NULL;

	if (pr)
		return pr->ctx;
	gt_ocl_next.clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof(ctx), &ctx, NULL);
	return ctx;
}

/* Whether the kernel's own declaration says restrict: from the source we saw,
 * else from the argument information, when the runtime has kept it. */
static int kernel__says_restrict(cl_kernel k, cl_program p, const char *name)
{
	struct ocl_program *pr = gt_ocl_map__find(&gt_ocl_programs, p);
	cl_uint nargs = 0;

	if (pr && pr->origin == OCL_FROM_SOURCE)
		return gt_ocl__program_says_restrict(pr, name);
	if (pr && pr->n_restrict && gt_ocl__program_says_restrict(pr, name))
		return 1;
	if (!gt_ocl_next.clGetKernelArgInfo ||
	    gt_ocl_next.clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL))
		return 0;
	for (cl_uint i = 0; i < nargs && i < OCL_MAX_ARGS; i++) {
		cl_kernel_arg_type_qualifier q = 0;

		if (gt_ocl_next.clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof(q), &q, NULL))
			return 0;
		if (q & CL_KERNEL_ARG_TYPE_RESTRICT)
			return 1;
	}
	return 0;
}

static struct ocl_kernel *kernel__register(cl_kernel k, cl_program p, const char *name)
{
	struct ocl_kernel *kr = rec__get(FREE_KERNEL);
	char buf[256];

	if (!kr)
		return NULL;
	if (!name && gt_ocl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(buf), buf, NULL) ==
			     CL_SUCCESS) {
		buf[sizeof(buf) - 1] = 0;
		name = buf;
	}
	if (!p)
		gt_ocl_next.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(p), &p, NULL);
	kr->k = k;
	kr->name = name ? gt_ocl__intern(name, strlen(name)) : NULL;
	kr->ctx = p ? program__context(p) : NULL;
	kr->restrict_declared = p && kr->name ? (uint8_t)kernel__says_restrict(k, p, kr->name) : 0;
	if (gt_ocl_map__put(&gt_ocl_kernels, k, kr)) {
		rec__put(FREE_KERNEL, kr);
		return NULL;
	}
	return kr;
}

struct ocl_kernel *gt_ocl__kernel_or_register(cl_kernel k)
{
	struct ocl_kernel *kr = gt_ocl__kernel(k);

	return kr ? kr : kernel__register(k, NULL, NULL);
}

static cl_kernel CL_API_CALL w_clCreateKernel(cl_program p, const char *name, cl_int *err)
{
	cl_kernel k = gt_ocl_next.clCreateKernel(p, name, err);

	gt_ocl__touch();
	if (k && gt_ocl__live())
		kernel__register(k, p, name);
	return k;
}

static cl_int CL_API_CALL w_clCreateKernelsInProgram(cl_program p, cl_uint n, cl_kernel *ks,
						     cl_uint *n_ret)
{
	cl_uint made = 0;
	cl_int err = gt_ocl_next.clCreateKernelsInProgram(p, n, ks, n_ret ? n_ret : &made);

	gt_ocl__touch();
	if (err == CL_SUCCESS && ks && gt_ocl__live()) {
		made = n_ret ? *n_ret : made;
		for (cl_uint i = 0; i < made && i < n; i++)
			kernel__register(ks[i], p, NULL);
	}
	return err;
}

static cl_kernel CL_API_CALL w_clCloneKernel(cl_kernel src, cl_int *err)
{
	cl_kernel k = gt_ocl_next.clCloneKernel(src, err);
	struct ocl_kernel *from, *kr;

	gt_ocl__touch();
	if (!k || !gt_ocl__live() || !(from = gt_ocl__kernel(src)) || !(kr = rec__get(FREE_KERNEL)))
		return k;
	kr->k = k;
	kr->ctx = from->ctx;
	kr->name = from->name;
	kr->restrict_declared = from->restrict_declared;
	kr->n_args = from->n_args;
	memcpy(kr->args, from->args, sizeof(kr->args));
	if (gt_ocl_map__put(&gt_ocl_kernels, k, kr))
		rec__put(FREE_KERNEL, kr);
	return k;
}

static cl_int CL_API_CALL w_clReleaseKernel(cl_kernel k)
{
	struct ocl_kernel *kr = gt_ocl__kernel(k);
	cl_uint rc = 0;
	cl_int err;

	gt_ocl__touch();
	if (kr)
		gt_ocl_next.clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(rc), &rc, NULL);
	err = gt_ocl_next.clReleaseKernel(k);
	if (err == CL_SUCCESS && rc == 1 && gt_ocl_map__del(&gt_ocl_kernels, k) == kr)
		rec__put(FREE_KERNEL, kr);
	return err;
}

static void kernel__set_arg(cl_kernel k, cl_uint i, struct ocl_range r)
{
	struct ocl_kernel *kr;

	if (i >= OCL_MAX_ARGS || !gt_ocl__live() || !(kr = gt_ocl__kernel_or_register(k)))
		return;
	/* clSetKernelArg is not thread-safe for one kernel (OpenCL 3.0,
	 * A.2): the application orders it with the dispatches that read it. */
	kr->args[i] = r;
	if (i >= kr->n_args)
		kr->n_args = i + 1;
	kr->verdict = 0;
}

static cl_int CL_API_CALL w_clSetKernelArg(cl_kernel k, cl_uint i, size_t size, const void *val)
{
	cl_int err = gt_ocl_next.clSetKernelArg(k, i, size, val);
	struct ocl_range r = { 0 };
	struct ocl_mem *mr;
	cl_mem m;

	gt_ocl__touch();
	if (err != CL_SUCCESS)
		return err;
	if (size == sizeof(cl_mem) && val) {
		memcpy(&m, val, sizeof(m));
		if ((mr = gt_ocl_map__find(&gt_ocl_mems, m)))
			r = mr->r;
	}
	kernel__set_arg(k, i, r);
	return err;
}

static cl_int CL_API_CALL w_clSetKernelArgSVMPointer(cl_kernel k, cl_uint i, const void *ptr)
{
	cl_int err = gt_ocl_next.clSetKernelArgSVMPointer(k, i, ptr);
	const struct ocl_range none = { 0 };

	gt_ocl__touch();
	if (err == CL_SUCCESS)
		kernel__set_arg(k, i, none); /* extent unknown: not checked */
	return err;
}

/* ---- buffers ---- */

static void mem__register(cl_mem m, struct ocl_range r)
{
	struct ocl_mem *mr = rec__get(FREE_MEM);

	if (!mr)
		return;
	mr->m = m;
	mr->r = r;
	if (gt_ocl_map__put(&gt_ocl_mems, m, mr))
		rec__put(FREE_MEM, mr);
}

/* A buffer made from host data: that data goes to the device. */
static void buffer__created(struct ocl_call *c, cl_mem m, cl_mem_flags flags, size_t size, void *host)
{
	struct ocl_range r = { .space = (uintptr_t)m, .start = 0, .size = size };

	if ((flags & CL_MEM_USE_HOST_PTR) && host)
		r = (struct ocl_range){ .space = OCL_SPACE_HOST, .start = (uintptr_t)host, .size = size };
	mem__register(m, r);
	if ((flags & CL_MEM_COPY_HOST_PTR) && host && gt_ocl__is_resend(c->ot, host, size))
		gt_ocl__add(c, GT_PH__COUNT, GT_M_OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL, 1);
}

static cl_mem CL_API_CALL w_clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host,
					   cl_int *err)
{
	uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0);
	struct ocl_call c;
	cl_mem m = gt_ocl_next.clCreateBuffer(ctx, flags, size, host, err);

	if (m && gt_ocl__begin(&c, ra, key))
		buffer__created(&c, m, flags, size, host);
	return m;
}

static cl_mem CL_API_CALL w_clCreateBufferWithProperties(cl_context ctx, const cl_mem_properties *props,
							 cl_mem_flags flags, size_t size, void *host,
							 cl_int *err)
{
	uintptr_t key = GT_UNWIND_KEY(), ra = (uintptr_t)__builtin_return_address(0);
	struct ocl_call c;
	cl_mem m = gt_ocl_next.clCreateBufferWithProperties(ctx, props, flags, size, host, err);

	if (m && gt_ocl__begin(&c, ra, key))
		buffer__created(&c, m, flags, size, host);
	return m;
}

static cl_mem CL_API_CALL w_clCreateSubBuffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
					      const void *info, cl_int *err)
{
	cl_mem m = gt_ocl_next.clCreateSubBuffer(parent, flags, type, info, err);
	const cl_buffer_region *reg = info;
	struct ocl_mem *pr;

	gt_ocl__touch();
	if (!m || !gt_ocl__live() || type != CL_BUFFER_CREATE_TYPE_REGION || !reg ||
	    !(pr = gt_ocl_map__find(&gt_ocl_mems, parent)))
		return m;
	mem__register(m, (struct ocl_range){ .space = pr->r.space,
					      .start = pr->r.start + reg->origin,
					      .size = reg->size });
	return m;
}

static cl_int CL_API_CALL w_clReleaseMemObject(cl_mem m)
{
	struct ocl_mem *mr = gt_ocl_map__find(&gt_ocl_mems, m);
	cl_uint rc = 0;
	cl_int err;

	gt_ocl__touch();
	if (mr)
		gt_ocl_next.clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof(rc), &rc, NULL);
	err = gt_ocl_next.clReleaseMemObject(m);
	if (err == CL_SUCCESS && rc == 1 && gt_ocl_map__del(&gt_ocl_mems, m) == mr)
		rec__put(FREE_MEM, mr);
	return err;
}

/* ---- programs ---- */

static struct ocl_program *program__register(cl_program p, cl_context ctx, int origin)
{
	struct ocl_program *pr = rec__get(FREE_PROGRAM);

	if (!pr)
		return NULL;
	pr->p = p;
	pr->ctx = ctx;
	pr->origin = origin;
	pr->jit = origin == OCL_FROM_SOURCE || origin == OCL_FROM_IL;
	return pr;
}

static void program__publish(struct ocl_program *pr)
{
	if (pr && gt_ocl_map__put(&gt_ocl_programs, pr->p, pr)) {
		free(pr->restrict_names);
		rec__put(FREE_PROGRAM, pr);
	}
}

static cl_program CL_API_CALL w_clCreateProgramWithSource(cl_context ctx, cl_uint count, const char **strs,
							  const size_t *lens, cl_int *err)
{
	cl_program p = gt_ocl_next.clCreateProgramWithSource(ctx, count, strs, lens, err);
	struct ocl_program *pr;

	gt_ocl__touch();
	if (p && gt_ocl__live() && (pr = program__register(p, ctx, OCL_FROM_SOURCE))) {
		gt_ocl__scan_source(pr, count, strs, lens);
		program__publish(pr);
	}
	return p;
}

static cl_program CL_API_CALL w_clCreateProgramWithIL(cl_context ctx, const void *il, size_t len, cl_int *err)
{
	cl_program p = gt_ocl_next.clCreateProgramWithIL(ctx, il, len, err);

	gt_ocl__touch();
	if (p && gt_ocl__live())
		program__publish(program__register(p, ctx, OCL_FROM_IL));
	return p;
}

static cl_program CL_API_CALL w_clCreateProgramWithBinary(cl_context ctx, cl_uint n, const cl_device_id *devs,
							  const size_t *lens, const unsigned char **bins,
							  cl_int *status, cl_int *err)
{
	cl_program p = gt_ocl_next.clCreateProgramWithBinary(ctx, n, devs, lens, bins, status, err);

	gt_ocl__touch();
	if (p && gt_ocl__live())
		program__publish(program__register(p, ctx, OCL_FROM_BINARY));
	return p;
}

static cl_program CL_API_CALL w_clCreateProgramWithBuiltInKernels(cl_context ctx, cl_uint n,
								  const cl_device_id *devs, const char *names,
								  cl_int *err)
{
	cl_program p = gt_ocl_next.clCreateProgramWithBuiltInKernels(ctx, n, devs, names, err);

	gt_ocl__touch();
	if (p && gt_ocl__live())
		program__publish(program__register(p, ctx, OCL_FROM_BUILTIN));
	return p;
}

void gt_ocl__program_linked(cl_program out, cl_context ctx, const cl_program *in, cl_uint n)
{
	struct ocl_program *pr = program__register(out, ctx, OCL_FROM_LINK);
	uint32_t total = 0;

	if (!pr)
		return;
	for (cl_uint i = 0; i < n; i++) {
		struct ocl_program *ip = gt_ocl_map__find(&gt_ocl_programs, in[i]);

		if (ip) {
			pr->jit |= ip->jit;
			total += ip->n_restrict;
		}
	}
	if (total && (pr->restrict_names = calloc(total, sizeof(*pr->restrict_names)))) {
		for (cl_uint i = 0; i < n; i++) {
			struct ocl_program *ip = gt_ocl_map__find(&gt_ocl_programs, in[i]);

			for (uint32_t j = 0; ip && j < ip->n_restrict && pr->n_restrict < total; j++)
				pr->restrict_names[pr->n_restrict++] = ip->restrict_names[j];
		}
	}
	program__publish(pr);
}

int gt_ocl__program_jit(cl_program p)
{
	struct ocl_program *pr = gt_ocl_map__find(&gt_ocl_programs, p);

	return pr ? pr->jit : 0;
}

static cl_int CL_API_CALL w_clReleaseProgram(cl_program p)
{
	struct ocl_program *pr = gt_ocl_map__find(&gt_ocl_programs, p);
	cl_uint rc = 0;
	cl_int err;

	gt_ocl__touch();
	if (pr)
		gt_ocl_next.clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof(rc), &rc, NULL);
	err = gt_ocl_next.clReleaseProgram(p);
	if (err == CL_SUCCESS && rc == 1 && gt_ocl_map__del(&gt_ocl_programs, p) == pr) {
		free(pr->restrict_names);
		rec__put(FREE_PROGRAM, pr);
	}
	return err;
}

void gt_ocl__object_dispatch(struct _cl_icd_dispatch *d)
{
#define SET(fn)                          \
	do {                             \
		if (gt_ocl_next.fn)      \
			d->fn = w_##fn; \
	} while (0)
	SET(clCreateContext);
	SET(clCreateContextFromType);
	SET(clCreateCommandQueue);
	SET(clCreateCommandQueueWithProperties);
	SET(clReleaseCommandQueue);
	SET(clCreateKernel);
	SET(clCreateKernelsInProgram);
	SET(clCloneKernel);
	SET(clReleaseKernel);
	SET(clSetKernelArg);
	SET(clSetKernelArgSVMPointer);
	SET(clCreateBuffer);
	SET(clCreateBufferWithProperties);
	SET(clCreateSubBuffer);
	SET(clReleaseMemObject);
	SET(clCreateProgramWithSource);
	SET(clCreateProgramWithIL);
	SET(clCreateProgramWithBinary);
	SET(clCreateProgramWithBuiltInKernels);
	SET(clReleaseProgram);
#undef SET
}
