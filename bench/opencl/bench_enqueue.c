/* SPDX-License-Identifier: MIT */
/*
 * bench_enqueue [OPS [BATCH [ITEMS [MODE]]]]: enqueues a tiny kernel
 * (ITEMS work-items, default 64) OPS times on an in-order queue, waiting with
 * clFinish after every BATCH launches, and prints the time per launch.
 *
 * With "runtime-work" the program itself asks the runtime for what gputool
 * asks for each launch (a profiling queue, an event, a completion callback
 * that reads the event's times, the event released afterwards), without any
 * tool: the part of gputool's overhead that the OpenCL runtime spends;
 * "runtime-events" leaves the callback out, "runtime-profiling" the event
 * too (a profiling queue only), to tell the parts apart.
 * run-bench.sh runs the three ways; docs/OPENCL.md has the figures.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                          \
	do {                                                                                 \
		cl_int e_ = (call);                                                          \
		if (e_ != CL_SUCCESS) {                                                      \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)e_); \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

static int runtime_work;

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *data)
{
	cl_ulong t[3];

	(void)status, (void)data;
	clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t[0]), &t[0], NULL);
	clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t[1]), &t[1], NULL);
	clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof(t[2]), &t[2], NULL);
}

static const char *source = "kernel void tiny(global int *a) { a[get_global_id(0)] += 1; }\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void launches(cl_command_queue q, cl_kernel k, long ops, long batch, size_t global)
{
	cl_event prev = NULL, ev;

	for (long i = 0; i < ops; i++) {
		CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, runtime_work >= 2 ? &ev : NULL));
		if (runtime_work >= 2) {
			if (runtime_work == 3)
				CHECK(clSetEventCallback(ev, CL_COMPLETE, on_complete, NULL));
			if (prev)
				CHECK(clReleaseEvent(prev));
			prev = ev;
		}
		if ((i + 1) % batch == 0)
			CHECK(clFinish(q));
	}
	CHECK(clFinish(q));
	if (prev)
		CHECK(clReleaseEvent(prev));
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 20000, batch = argc > 2 ? atol(argv[2]) : 32;
	size_t items = argc > 3 ? (size_t)atol(argv[3]) : 64;
	cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, 0, 0 };
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel k;
	cl_mem buf;
	cl_int err;
	int *host;
	double t0, t1;

	/* 1: profiling; 2: and an event per launch; 3: and its callback. */
	runtime_work = argc <= 4				  ? 0
		       : !strcmp(argv[4], "runtime-work")	  ? 3
		       : !strcmp(argv[4], "runtime-events")	  ? 2
		       : !strcmp(argv[4], "runtime-profiling") ? 1
								  : 0;
	if (ops < 1 || batch < 1 || items < 1 || !(host = calloc(items, sizeof(*host))))
		return 2;
	if (runtime_work)
		props[1] = CL_QUEUE_PROFILING_ENABLE;
	CHECK(clGetPlatformIDs(1, &plat, NULL));
	CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK(err);
	q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
	CHECK(err);
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	CHECK(err);
	CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
	k = clCreateKernel(prog, "tiny", &err);
	CHECK(err);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(*host), host, &err);
	CHECK(err);
	CHECK(clSetKernelArg(k, 0, sizeof(buf), &buf));

	launches(q, k, ops / 10 + 1, batch, items); /* warm-up */
	t0 = now();
	launches(q, k, ops, batch, items);
	t1 = now();
	CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, items * sizeof(*host), host, 0, NULL, NULL));
	printf("launches %ld batch %ld items %zu ns/launch %.1f check %d\n", ops, batch, items,
	       (t1 - t0) * 1e9 / (double)ops, host[0]);
	free(host);
	CHECK(clReleaseMemObject(buf));
	CHECK(clReleaseKernel(k));
	CHECK(clReleaseProgram(prog));
	CHECK(clReleaseCommandQueue(q));
	CHECK(clReleaseContext(ctx));
	return 0;
}
