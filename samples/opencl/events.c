/* SPDX-License-Identifier: MIT */
/*
 * An application that uses its own events, callbacks and profiling queries,
 * to check that a tool underneath changes none of what it sees.
 *
 *   timed_launches   20 launches of busy on a queue created with profiling;
 *                    the application sums END - START of its own events
 *   plain_launches   5 launches of busy on a queue without profiling: the
 *                    application's profiling query must fail with
 *                    CL_PROFILING_INFO_NOT_AVAILABLE, and the queue's
 *                    properties must read as it created them
 *   user_event_gate  a kernel that waits for a user event
 *
 * stdout: results and status codes (the same with and without a tool).
 * stderr: what it measured itself, so that a tool's kernel times can be
 * checked against it on a machine of any load:
 *   app-kernel-ns N     the sum of END - START of its profiled launches
 *   app-plain-ns N      host wall time around the unprofiled launches,
 *                       from before the first enqueue to after clFinish
 *   app-plain-cpu-ns N  CPU time of the process's other threads (the
 *                       device's, on a CPU device) over that same window
 *   app-compute-units N the device's compute units: at most that many
 *                       threads run a kernel at once
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "common.h"

#define N 4096
#define TIMED 20
#define PLAIN 5

static const char *source =
	"kernel void busy(global float *restrict out, int rounds)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	float x = (float)i;\n"
	"	for (int r = 0; r < rounds; r++)\n"
	"		x = x * 0.999f + 0.5f;\n"
	"	out[i] = x;\n"
	"}\n";

static atomic_int completions;

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *data)
{
	(void)ev, (void)data;
	if (status == CL_COMPLETE)
		atomic_fetch_add(&completions, 1);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* CPU time of every thread of the process but the calling one. */
static uint64_t others_cpu_ns(void)
{
	uint64_t self = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	return clock_ns(CLOCK_PROCESS_CPUTIME_ID) - self;
}

static NOINLINE cl_ulong timed_launches(cl_command_queue q, cl_kernel k)
{
	const size_t n = N;
	cl_event ev[TIMED];
	cl_ulong total = 0;

	for (int i = 0; i < TIMED; i++) {
		CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev[i]));
		CHECK(clSetEventCallback(ev[i], CL_COMPLETE, on_complete, NULL));
	}
	CHECK(clWaitForEvents(TIMED, ev));
	for (int i = 0; i < TIMED; i++) {
		cl_ulong s, e;

		CHECK(clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_START, sizeof(s), &s, NULL));
		CHECK(clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_END, sizeof(e), &e, NULL));
		total += e - s;
		CHECK(clReleaseEvent(ev[i]));
	}
	return total;
}

static NOINLINE void plain_launches(cl_command_queue q, cl_kernel k)
{
	const size_t n = N;
	cl_command_queue_properties props = 99;
	cl_event ev;
	cl_ulong t;
	uint64_t c0 = others_cpu_ns(), t0 = now_ns(), t1, c1;

	for (int i = 0; i < PLAIN - 1; i++)
		CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
	CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev));
	CHECK(clFinish(q));
	t1 = now_ns();
	c1 = others_cpu_ns();
	fprintf(stderr, "app-plain-ns %llu\n", (unsigned long long)(t1 - t0));
	fprintf(stderr, "app-plain-cpu-ns %llu\n", (unsigned long long)(c1 - c0));
	printf("plain profiling status %d\n",
	       (int)clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL));
	printf("plain profiling bad name %d\n", (int)clGetEventProfilingInfo(ev, 0x1234, sizeof(t), &t, NULL));
	CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL));
	printf("plain properties %llu\n", (unsigned long long)props);
	CHECK(clReleaseEvent(ev));
}

static NOINLINE void array_queue(cl_context ctx, cl_device_id dev, cl_kernel k)
{
	const cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, 0, 0 };
	cl_queue_properties back[8] = { 0 };
	const size_t n = 64;
	size_t size = 0;
	cl_command_queue q;
	cl_event ev;
	cl_ulong t;
	cl_int err;

	q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
	CHECK_OBJ(q, err);
	CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof(back), back, &size));
	printf("array size %zu:", size);
	for (size_t i = 0; i < size / sizeof(back[0]); i++)
		printf(" %llu", (unsigned long long)back[i]);
	printf("\n");
	CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev));
	CHECK(clWaitForEvents(1, &ev));
	printf("array profiling status %d\n",
	       (int)clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t), &t, NULL));
	CHECK(clReleaseEvent(ev));
	CHECK(clReleaseCommandQueue(q));
}

static NOINLINE void user_event_gate(cl_context ctx, cl_command_queue q, cl_kernel k)
{
	const size_t n = N;
	cl_int err, status = 0;
	cl_event gate = clCreateUserEvent(ctx, &err), ev;
	cl_ulong t;

	CHECK_OBJ(gate, err);
	CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &gate, &ev));
	CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL));
	printf("gated before %s\n", status == CL_COMPLETE ? "complete" : "waiting");
	printf("user event profiling status %d\n",
	       (int)clGetEventProfilingInfo(gate, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL));
	CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
	CHECK(clWaitForEvents(1, &ev));
	CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL));
	printf("gated after %d\n", (int)status);
	CHECK(clReleaseEvent(ev));
	CHECK(clReleaseEvent(gate));
}

int main(void)
{
	cl_device_id devs[8];
	cl_platform_id plat;
	cl_context ctx;
	cl_command_queue qt, qp;
	cl_program prog;
	cl_kernel k;
	cl_mem out;
	cl_int err, rounds = 20000;
	cl_command_queue_properties props = 0;
	float host[N];
	cl_ulong app_ns;
	cl_uint units;

	sample_devices(&plat, devs, 8);
	CHECK(clGetDeviceInfo(devs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL));
	fprintf(stderr, "app-compute-units %u\n", (unsigned)units);
	ctx = clCreateContext(NULL, 1, devs, NULL, NULL, &err);
	CHECK_OBJ(ctx, err);
	qt = clCreateCommandQueue(ctx, devs[0], CL_QUEUE_PROFILING_ENABLE, &err);
	CHECK_OBJ(qt, err);
	qp = clCreateCommandQueue(ctx, devs[0], 0, &err);
	CHECK_OBJ(qp, err);
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	CHECK_OBJ(prog, err);
	CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
	k = clCreateKernel(prog, "busy", &err);
	CHECK_OBJ(k, err);
	out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host), NULL, &err);
	CHECK_OBJ(out, err);
	CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &out));
	CHECK(clSetKernelArg(k, 1, sizeof(rounds), &rounds));

	CHECK(clGetCommandQueueInfo(qt, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL));
	printf("timed properties %llu\n", (unsigned long long)props);
	app_ns = timed_launches(qt, k);
	fprintf(stderr, "app-kernel-ns %llu\n", (unsigned long long)app_ns);
	for (int i = 0; i < 1000 && atomic_load(&completions) < TIMED; i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	printf("callbacks %d\n", atomic_load(&completions));
	plain_launches(qp, k);
	array_queue(ctx, devs[0], k);
	user_event_gate(ctx, qp, k);

	CHECK(clEnqueueReadBuffer(qp, out, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL));
	printf("result %.3f\n", sample_sum(host, N));

	CHECK(clReleaseMemObject(out));
	CHECK(clReleaseKernel(k));
	CHECK(clReleaseProgram(prog));
	CHECK(clReleaseCommandQueue(qt));
	CHECK(clReleaseCommandQueue(qp));
	CHECK(clReleaseContext(ctx));
	return 0;
}
