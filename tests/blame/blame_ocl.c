/* SPDX-License-Identifier: MIT */
/*
 * Blame shifting through the OpenCL layer (test_blame_ocl.py): a kernel of
 * about 0.3 s launched in launch_site() and waited for with clFinish in
 * wait_site(), then about 0.4 s of CPU time in cpu_work() with nothing
 * queued. Prints what it measured itself, one "key value" per line:
 * wait_s (wall time of the clFinish), cpu_s (CPU time of cpu_work), kernel_s
 * (the kernel's own profiled time). Exit 77 when there is no OpenCL device.
 */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define TARGET_S 0.3

#define CHECK(call)                                                                        \
	do {                                                                               \
		cl_int err_ = (call);                                                      \
		if (err_ != CL_SUCCESS) {                                                  \
			fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, \
				(int)err_);                                                \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

static const char *source =
	"__kernel void spin(__global float *out, uint n)\n"
	"{\n"
	"	float x = out[0];\n"
	"	for (uint i = 0; i < n; i++)\n"
	"		x = x * 1.0000001f + 1e-7f;\n"
	"	out[0] = x;\n"
	"}\n";

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct ocl {
	cl_context ctx;
	cl_command_queue q;
	cl_kernel k;
	cl_mem buf;
};

static NOINLINE cl_event launch_site(struct ocl *o, cl_uint n)
{
	size_t one = 1;
	cl_event ev;

	CHECK(clSetKernelArg(o->k, 1, sizeof(n), &n));
	CHECK(clEnqueueNDRangeKernel(o->q, o->k, 1, NULL, &one, &one, 0, NULL, &ev));
	return ev;
}

static NOINLINE void wait_site(struct ocl *o)
{
	CHECK(clFinish(o->q));
}

/* Calibration launches and waits, elsewhere than the sites checked. */
static NOINLINE double calibrate(struct ocl *o, cl_uint n)
{
	size_t one = 1;
	double t0 = now(CLOCK_MONOTONIC);

	CHECK(clSetKernelArg(o->k, 1, sizeof(n), &n));
	CHECK(clEnqueueNDRangeKernel(o->q, o->k, 1, NULL, &one, &one, 0, NULL, NULL));
	CHECK(clFinish(o->q));
	return now(CLOCK_MONOTONIC) - t0;
}

static NOINLINE double cpu_work(double secs)
{
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), t;
	volatile double x = 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
		t = now(CLOCK_THREAD_CPUTIME_ID);
	} while (t - t0 < secs);
	return t - t0;
}

int main(void)
{
	cl_platform_id plat;
	cl_device_id dev;
	cl_program prog;
	cl_event ev;
	cl_ulong start, end;
	cl_int err;
	struct ocl o;
	float zero = 1;
	cl_uint n = 1u << 20;
	double t, wait, cpu;

	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
		return 77;
	o.ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK(err);
	o.q = clCreateCommandQueue(o.ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
	CHECK(err);
	prog = clCreateProgramWithSource(o.ctx, 1, &source, NULL, &err);
	CHECK(err);
	CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
	o.k = clCreateKernel(prog, "spin", &err);
	CHECK(err);
	o.buf = clCreateBuffer(o.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zero), &zero,
			       &err);
	CHECK(err);
	CHECK(clSetKernelArg(o.k, 0, sizeof(o.buf), &o.buf));

	/* Iterations for about TARGET_S, from kernels of 20 ms and more (the
	 * first launch also compiles the kernel). */
	calibrate(&o, 1);
	for (int i = 0; i < 20; i++) {
		t = calibrate(&o, n);
		if (t > 0.02)
			break;
		n *= 4;
	}
	n = (cl_uint)((double)n * TARGET_S / t);

	ev = launch_site(&o, n);
	t = now(CLOCK_MONOTONIC);
	wait_site(&o);
	wait = now(CLOCK_MONOTONIC) - t;
	CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL));
	CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL));
	CHECK(clReleaseEvent(ev));
	cpu = cpu_work(0.4);

	printf("wait_s %.6f\ncpu_s %.6f\nkernel_s %.6f\n", wait, cpu, (double)(end - start) / 1e9);
	clReleaseMemObject(o.buf);
	clReleaseKernel(o.k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(o.q);
	clReleaseContext(o.ctx);
	return 0;
}
