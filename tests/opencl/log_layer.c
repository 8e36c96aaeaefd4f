/* SPDX-License-Identifier: MIT */
/*
 * An OpenCL layer that logs the calls that go through it, one line each:
 *
 *   <tid> <function> <arguments> -> <result>
 *
 * Built twice (liboclog_app.so, liboclog_drv.so; LOG_ENV names the variable
 * holding the log file) and stacked around gputool, the way the Khronos
 * loader's tests compare what an application called with what a driver got:
 *
 *   OPENCL_LAYERS=liboclog_drv.so:libgputool.so:liboclog_app.so ./app
 *
 * (the last layer listed is the closest to the application). Handles print
 * as pointers, so that the two logs can be matched; an event output argument
 * prints "-" when the caller passed none, else the event returned.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LOG_ENV
#error "LOG_ENV must name the variable with the log file"
#endif

#define EXPORT __attribute__((visibility("default")))

EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value, size_t *size_ret);
EXPORT cl_int CL_API_CALL clInitLayer(cl_uint n, const cl_icd_dispatch *target, cl_uint *n_ret,
				      const cl_icd_dispatch **ret);

static struct _cl_icd_dispatch next, mine;
static int fd = -1;

__attribute__((format(printf, 1, 2))) static void logline(const char *fmt, ...)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%ld ", (long)syscall(SYS_gettid));
	va_list ap;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(fd, buf, (size_t)n) < 0)
		return;
}

static const char *ev_out(const cl_event *ev, char *buf, size_t n)
{
	if (!ev)
		return "-";
	snprintf(buf, n, "%p", (void *)*ev);
	return buf;
}

static const char *props_str(const cl_queue_properties *p, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	if (!p)
		return "null";
	for (int i = 0; p[i] && i < 30; i += 2)
		len += (size_t)snprintf(buf + len, n - len, "%s%llu:%llu", i ? "," : "",
					(unsigned long long)p[i], (unsigned long long)p[i + 1]);
	return len ? buf : "[]";
}

static unsigned long long value_of(const void *v, size_t size)
{
	unsigned long long x = 0;

	if (v)
		memcpy(&x, v, size < sizeof(x) ? size : sizeof(x));
	return x;
}

#define E(ev) ev_out(ev, eb, sizeof(eb))

/* ---- platforms, devices, contexts ---- */

static cl_int CL_API_CALL l_clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *nr)
{
	cl_int r = next.clGetPlatformIDs(n, p, nr);

	logline("clGetPlatformIDs %u -> %d", n, r);
	return r;
}

static cl_int CL_API_CALL l_clGetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id *d,
					   cl_uint *nr)
{
	cl_int r = next.clGetDeviceIDs(p, t, n, d, nr);

	logline("clGetDeviceIDs %p %llu %u -> %d", (void *)p, (unsigned long long)t, n, r);
	return r;
}

static cl_int CL_API_CALL l_clGetDeviceInfo(cl_device_id d, cl_device_info name, size_t s, void *v, size_t *sr)
{
	cl_int r = next.clGetDeviceInfo(d, name, s, v, sr);

	logline("clGetDeviceInfo %p 0x%x -> %d", (void *)d, name, r);
	return r;
}

static cl_context CL_API_CALL l_clCreateContext(const cl_context_properties *props, cl_uint n,
						const cl_device_id *d,
						void(CL_CALLBACK *fn)(const char *, const void *, size_t, void *),
						void *ud, cl_int *err)
{
	cl_context c = next.clCreateContext(props, n, d, fn, ud, err);

	logline("clCreateContext %u %p -> %p", n, n ? (void *)d[0] : NULL, (void *)c);
	return c;
}

static cl_int CL_API_CALL l_clGetContextInfo(cl_context c, cl_context_info name, size_t s, void *v, size_t *sr)
{
	cl_int r = next.clGetContextInfo(c, name, s, v, sr);

	logline("clGetContextInfo %p 0x%x -> %d", (void *)c, name, r);
	return r;
}

static cl_int CL_API_CALL l_clReleaseContext(cl_context c)
{
	cl_int r = next.clReleaseContext(c);

	logline("clReleaseContext %p -> %d", (void *)c, r);
	return r;
}

/* ---- queues ---- */

static cl_command_queue CL_API_CALL l_clCreateCommandQueue(cl_context c, cl_device_id d,
							   cl_command_queue_properties p, cl_int *err)
{
	cl_command_queue q = next.clCreateCommandQueue(c, d, p, err);

	logline("clCreateCommandQueue %p %p %llu -> %p", (void *)c, (void *)d, (unsigned long long)p, (void *)q);
	return q;
}

static cl_command_queue CL_API_CALL l_clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
									 const cl_queue_properties *p,
									 cl_int *err)
{
	char pb[512];
	cl_command_queue q = next.clCreateCommandQueueWithProperties(c, d, p, err);

	logline("clCreateCommandQueueWithProperties %p %p %s -> %p", (void *)c, (void *)d, props_str(p, pb, sizeof(pb)),
	     (void *)q);
	return q;
}

static cl_int CL_API_CALL l_clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info name, size_t s,
						  void *v, size_t *sr)
{
	cl_int r = next.clGetCommandQueueInfo(q, name, s, v, sr);

	logline("clGetCommandQueueInfo %p 0x%x -> %d %llu", (void *)q, name, r, r ? 0ull : value_of(v, s));
	return r;
}

static cl_int CL_API_CALL l_clReleaseCommandQueue(cl_command_queue q)
{
	cl_int r = next.clReleaseCommandQueue(q);

	logline("clReleaseCommandQueue %p -> %d", (void *)q, r);
	return r;
}

static cl_int CL_API_CALL l_clFinish(cl_command_queue q)
{
	cl_int r = next.clFinish(q);

	logline("clFinish %p -> %d", (void *)q, r);
	return r;
}

static cl_int CL_API_CALL l_clFlush(cl_command_queue q)
{
	cl_int r = next.clFlush(q);

	logline("clFlush %p -> %d", (void *)q, r);
	return r;
}

/* ---- memory ---- */

static cl_mem CL_API_CALL l_clCreateBuffer(cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *err)
{
	cl_mem m = next.clCreateBuffer(c, f, s, h, err);

	logline("clCreateBuffer %p %llu %zu %p -> %p", (void *)c, (unsigned long long)f, s, h, (void *)m);
	return m;
}

static cl_mem CL_API_CALL l_clCreateSubBuffer(cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void *i,
					      cl_int *err)
{
	cl_mem m = next.clCreateSubBuffer(b, f, t, i, err);

	logline("clCreateSubBuffer %p %llu %u -> %p", (void *)b, (unsigned long long)f, t, (void *)m);
	return m;
}

static cl_int CL_API_CALL l_clGetMemObjectInfo(cl_mem m, cl_mem_info name, size_t s, void *v, size_t *sr)
{
	cl_int r = next.clGetMemObjectInfo(m, name, s, v, sr);

	logline("clGetMemObjectInfo %p 0x%x -> %d", (void *)m, name, r);
	return r;
}

static cl_int CL_API_CALL l_clReleaseMemObject(cl_mem m)
{
	cl_int r = next.clReleaseMemObject(m);

	logline("clReleaseMemObject %p -> %d", (void *)m, r);
	return r;
}

/* ---- programs and kernels ---- */

static cl_program CL_API_CALL l_clCreateProgramWithSource(cl_context c, cl_uint n, const char **s,
							  const size_t *l, cl_int *err)
{
	cl_program p = next.clCreateProgramWithSource(c, n, s, l, err);

	logline("clCreateProgramWithSource %p %u -> %p", (void *)c, n, (void *)p);
	return p;
}

static cl_int CL_API_CALL l_clBuildProgram(cl_program p, cl_uint n, const cl_device_id *d, const char *o,
					   void(CL_CALLBACK *fn)(cl_program, void *), void *ud)
{
	cl_int r = next.clBuildProgram(p, n, d, o, fn, ud);

	logline("clBuildProgram %p %u %s -> %d", (void *)p, n, o ? o : "null", r);
	return r;
}

static cl_int CL_API_CALL l_clGetProgramInfo(cl_program p, cl_program_info name, size_t s, void *v, size_t *sr)
{
	cl_int r = next.clGetProgramInfo(p, name, s, v, sr);

	logline("clGetProgramInfo %p 0x%x -> %d", (void *)p, name, r);
	return r;
}

static cl_int CL_API_CALL l_clReleaseProgram(cl_program p)
{
	cl_int r = next.clReleaseProgram(p);

	logline("clReleaseProgram %p -> %d", (void *)p, r);
	return r;
}

static cl_kernel CL_API_CALL l_clCreateKernel(cl_program p, const char *name, cl_int *err)
{
	cl_kernel k = next.clCreateKernel(p, name, err);

	logline("clCreateKernel %p %s -> %p", (void *)p, name, (void *)k);
	return k;
}

static cl_int CL_API_CALL l_clSetKernelArg(cl_kernel k, cl_uint i, size_t s, const void *v)
{
	cl_int r = next.clSetKernelArg(k, i, s, v);

	logline("clSetKernelArg %p %u %zu %llu -> %d", (void *)k, i, s, value_of(v, s), r);
	return r;
}

static cl_int CL_API_CALL l_clGetKernelInfo(cl_kernel k, cl_kernel_info name, size_t s, void *v, size_t *sr)
{
	cl_int r = next.clGetKernelInfo(k, name, s, v, sr);

	logline("clGetKernelInfo %p 0x%x -> %d", (void *)k, name, r);
	return r;
}

static cl_int CL_API_CALL l_clGetKernelArgInfo(cl_kernel k, cl_uint i, cl_kernel_arg_info name, size_t s,
					       void *v, size_t *sr)
{
	cl_int r = next.clGetKernelArgInfo(k, i, name, s, v, sr);

	logline("clGetKernelArgInfo %p %u 0x%x -> %d", (void *)k, i, name, r);
	return r;
}

static cl_int CL_API_CALL l_clReleaseKernel(cl_kernel k)
{
	cl_int r = next.clReleaseKernel(k);

	logline("clReleaseKernel %p -> %d", (void *)k, r);
	return r;
}

/* ---- commands ---- */

static cl_int CL_API_CALL l_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *o,
						   const size_t *g, const size_t *l, cl_uint nw, const cl_event *wl,
						   cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueNDRangeKernel(q, k, dim, o, g, l, nw, wl, ev);

	logline("clEnqueueNDRangeKernel %p %p %u %zu %u ev=%s -> %d", (void *)q, (void *)k, dim, g ? g[0] : 0, nw,
	     r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *wl,
					  cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueTask(q, k, nw, wl, ev);

	logline("clEnqueueTask %p %p %u ev=%s -> %d", (void *)q, (void *)k, nw, r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s,
						void *p, cl_uint nw, const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueReadBuffer(q, m, b, o, s, p, nw, wl, ev);

	logline("clEnqueueReadBuffer %p %p %u %zu %zu %p %u ev=%s -> %d", (void *)q, (void *)m, b, o, s, p, nw,
	     r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s,
						 const void *p, cl_uint nw, const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueWriteBuffer(q, m, b, o, s, p, nw, wl, ev);

	logline("clEnqueueWriteBuffer %p %p %u %zu %zu %p %u ev=%s -> %d", (void *)q, (void *)m, b, o, s, p, nw,
	     r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo,
						    const size_t *ho, const size_t *rg, size_t brp, size_t bsp,
						    size_t hrp, size_t hsp, void *p, cl_uint nw, const cl_event *wl,
						    cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueReadBufferRect(q, m, b, bo, ho, rg, brp, bsp, hrp, hsp, p, nw, wl, ev);

	logline("clEnqueueReadBufferRect %p %p %u %zu %zu %zu ev=%s -> %d", (void *)q, (void *)m, b, rg[0], rg[1],
	     rg[2], r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo,
						     const size_t *ho, const size_t *rg, size_t brp, size_t bsp,
						     size_t hrp, size_t hsp, const void *p, cl_uint nw,
						     const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueWriteBufferRect(q, m, b, bo, ho, rg, brp, bsp, hrp, hsp, p, nw, wl, ev);

	logline("clEnqueueWriteBufferRect %p %p %u %zu %zu %zu ev=%s -> %d", (void *)q, (void *)m, b, rg[0], rg[1],
	     rg[2], r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof,
						size_t n, cl_uint nw, const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueCopyBuffer(q, s, d, so, dof, n, nw, wl, ev);

	logline("clEnqueueCopyBuffer %p %p %p %zu ev=%s -> %d", (void *)q, (void *)s, (void *)d, n, r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueCopyBufferRect(cl_command_queue q, cl_mem s, cl_mem d, const size_t *so,
						    const size_t *dof, const size_t *rg, size_t a, size_t b,
						    size_t c, size_t e, cl_uint nw, const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueCopyBufferRect(q, s, d, so, dof, rg, a, b, c, e, nw, wl, ev);

	logline("clEnqueueCopyBufferRect %p %p %p %zu %zu %zu ev=%s -> %d", (void *)q, (void *)s, (void *)d, rg[0],
	     rg[1], rg[2], r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *pat, size_t ps,
						size_t o, size_t s, cl_uint nw, const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueFillBuffer(q, m, pat, ps, o, s, nw, wl, ev);

	logline("clEnqueueFillBuffer %p %p %zu %zu %zu ev=%s -> %d", (void *)q, (void *)m, ps, o, s, r ? "-" : E(ev), r);
	return r;
}

static void *CL_API_CALL l_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o,
					      size_t s, cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *err)
{
	char eb[32];
	void *p = next.clEnqueueMapBuffer(q, m, b, f, o, s, nw, wl, ev, err);

	logline("clEnqueueMapBuffer %p %p %u %llu %zu %zu ev=%s -> %p", (void *)q, (void *)m, b, (unsigned long long)f, o,
	     s, p ? E(ev) : "-", p);
	return p;
}

static cl_int CL_API_CALL l_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint nw,
						    const cl_event *wl, cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueUnmapMemObject(q, m, p, nw, wl, ev);

	logline("clEnqueueUnmapMemObject %p %p %p ev=%s -> %d", (void *)q, (void *)m, p, r ? "-" : E(ev), r);
	return r;
}

static cl_int CL_API_CALL l_clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint n, const cl_mem *m,
						       cl_mem_migration_flags f, cl_uint nw, const cl_event *wl,
						       cl_event *ev)
{
	char eb[32];
	cl_int r = next.clEnqueueMigrateMemObjects(q, n, m, f, nw, wl, ev);

	logline("clEnqueueMigrateMemObjects %p %u %llu ev=%s -> %d", (void *)q, n, (unsigned long long)f, r ? "-" : E(ev),
	     r);
	return r;
}

/* ---- events ---- */

static cl_int CL_API_CALL l_clWaitForEvents(cl_uint n, const cl_event *list)
{
	cl_int r = next.clWaitForEvents(n, list);

	logline("clWaitForEvents %u %p -> %d", n, n ? (void *)list[0] : NULL, r);
	return r;
}

static cl_int CL_API_CALL l_clGetEventInfo(cl_event e, cl_event_info name, size_t s, void *v, size_t *sr)
{
	cl_int r = next.clGetEventInfo(e, name, s, v, sr);

	logline("clGetEventInfo %p 0x%x -> %d", (void *)e, name, r);
	return r;
}

static cl_int CL_API_CALL l_clGetEventProfilingInfo(cl_event e, cl_profiling_info name, size_t s, void *v,
						    size_t *sr)
{
	cl_int r = next.clGetEventProfilingInfo(e, name, s, v, sr);

	logline("clGetEventProfilingInfo %p 0x%x -> %d", (void *)e, name, r);
	return r;
}

static cl_int CL_API_CALL l_clSetEventCallback(cl_event e, cl_int type,
					       void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *ud)
{
	cl_int r;

	/* Logged first: a runtime may run the callback inside this call. */
	logline("clSetEventCallback %p %d", (void *)e, type);
	r = next.clSetEventCallback(e, type, fn, ud);
	return r;
}

static cl_int CL_API_CALL l_clRetainEvent(cl_event e)
{
	cl_int r = next.clRetainEvent(e);

	logline("clRetainEvent %p -> %d", (void *)e, r);
	return r;
}

static cl_int CL_API_CALL l_clReleaseEvent(cl_event e)
{
	cl_int r = next.clReleaseEvent(e);

	logline("clReleaseEvent %p -> %d", (void *)e, r);
	return r;
}

static cl_event CL_API_CALL l_clCreateUserEvent(cl_context c, cl_int *err)
{
	cl_event e = next.clCreateUserEvent(c, err);

	logline("clCreateUserEvent %p -> %p", (void *)c, (void *)e);
	return e;
}

static cl_int CL_API_CALL l_clSetUserEventStatus(cl_event e, cl_int st)
{
	cl_int r = next.clSetUserEventStatus(e, st);

	logline("clSetUserEventStatus %p %d -> %d", (void *)e, st, r);
	return r;
}

static cl_int CL_API_CALL l_clGetDeviceAndHostTimer(cl_device_id d, cl_ulong *dt, cl_ulong *ht)
{
	cl_int r = next.clGetDeviceAndHostTimer(d, dt, ht);

	logline("clGetDeviceAndHostTimer %p -> %d", (void *)d, r);
	return r;
}

static cl_int CL_API_CALL l_clGetHostTimer(cl_device_id d, cl_ulong *ht)
{
	cl_int r = next.clGetHostTimer(d, ht);

	logline("clGetHostTimer %p -> %d", (void *)d, r);
	return r;
}

/* ---- the layer ---- */

cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value, size_t *size_ret)
{
	cl_layer_api_version v = CL_LAYER_API_VERSION_100;

	if (name != CL_LAYER_API_VERSION)
		return CL_INVALID_VALUE;
	if (value && size < sizeof(v))
		return CL_INVALID_VALUE;
	if (value)
		memcpy(value, &v, sizeof(v));
	if (size_ret)
		*size_ret = sizeof(v);
	return CL_SUCCESS;
}

cl_int CL_API_CALL clInitLayer(cl_uint n, const cl_icd_dispatch *target, cl_uint *n_ret,
			       const cl_icd_dispatch **ret)
{
	const cl_uint ours = sizeof(next) / sizeof(void *);
	const char *path = getenv(LOG_ENV);

	memcpy(&next, target, (n < ours ? n : ours) * sizeof(void *));
	if (path)
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
#define L(fn) mine.fn = l_##fn
	L(clGetPlatformIDs);
	L(clGetDeviceIDs);
	L(clGetDeviceInfo);
	L(clCreateContext);
	L(clGetContextInfo);
	L(clReleaseContext);
	L(clCreateCommandQueue);
	L(clCreateCommandQueueWithProperties);
	L(clGetCommandQueueInfo);
	L(clReleaseCommandQueue);
	L(clFinish);
	L(clFlush);
	L(clCreateBuffer);
	L(clCreateSubBuffer);
	L(clGetMemObjectInfo);
	L(clReleaseMemObject);
	L(clCreateProgramWithSource);
	L(clBuildProgram);
	L(clGetProgramInfo);
	L(clReleaseProgram);
	L(clCreateKernel);
	L(clSetKernelArg);
	L(clGetKernelInfo);
	L(clGetKernelArgInfo);
	L(clReleaseKernel);
	L(clEnqueueNDRangeKernel);
	L(clEnqueueTask);
	L(clEnqueueReadBuffer);
	L(clEnqueueWriteBuffer);
	L(clEnqueueReadBufferRect);
	L(clEnqueueWriteBufferRect);
	L(clEnqueueCopyBuffer);
	L(clEnqueueCopyBufferRect);
	L(clEnqueueFillBuffer);
	L(clEnqueueMapBuffer);
	L(clEnqueueUnmapMemObject);
	L(clEnqueueMigrateMemObjects);
	L(clWaitForEvents);
	L(clGetEventInfo);
	L(clGetEventProfilingInfo);
	L(clSetEventCallback);
	L(clRetainEvent);
	L(clReleaseEvent);
	L(clCreateUserEvent);
	L(clSetUserEventStatus);
	L(clGetDeviceAndHostTimer);
	L(clGetHostTimer);
#undef L
	*n_ret = ours;
	*ret = &mine;
	return CL_SUCCESS;
}
