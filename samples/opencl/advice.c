/* SPDX-License-Identifier: MIT */
/*
 * Each OpenCL best-practice problem gputool checks for, planted at a known
 * place, beside its harmless twin. Run it with two devices (with PoCL:
 * POCL_DEVICES="pthread pthread"): it uses only the first.
 *
 *   make_context_one       a context on one device of two (twice)
 *                          -> ALL_DEVICES_NOT_USED
 *   build                  programs compiled from source, one device in use (twice)
 *                          -> SINGLE_DEVICE_USE_AOT_COMPILATION
 *   make_inorder_queue     -> INORDER_QUEUE (the other queues are out of order)
 *   dispatch_distinct      add(a, b, c) on three buffers, 3 launches
 *                          -> KERNEL_PARAMS_NOT_ALIASED
 *   dispatch_sub_disjoint  pair on two disjoint sub-buffers -> KERNEL_PARAMS_NOT_ALIASED
 *   dispatch_restrict      add_r: the same, declared restrict: nothing
 *   dispatch_same          pair(a, a): nothing
 *   dispatch_sub_overlap   pair on overlapping sub-buffers: nothing
 *   run_in_second_context  add in a second context
 *                          -> KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS
 *   resend_unchanged       read back, write back unchanged
 *                          -> OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL
 *   resend_async           the same with a non-blocking read and its event
 *                          -> OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL
 *   resend_create          a new buffer made from data read back unchanged
 *                          -> OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL
 *   resend_modified        read back, change, write back: nothing
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <string.h>

#include "common.h"

#define N 1024
#define BYTES (N * sizeof(float))

static const char *source =
	"kernel void add(global float *a, global const float *b, global const float *c)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	a[i] = b[i] + c[i];\n"
	"}\n"
	"kernel void add_r(global float *restrict a, global const float *restrict b,\n"
	"		   global const float *restrict c)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	a[i] = b[i] + c[i];\n"
	"}\n"
	"/* two pointers that may be the same */\n"
	"__kernel void pair(__global float *a, __global float *b)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	a[i] = b[i] * 0.5f + 1.0f;\n"
	"}\n"
	"kernel void seq(global float *a)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	a[i] = (float)(i % 7);\n"
	"}\n";

static const cl_queue_properties ooo[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };

struct env {
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel add, add_r, pair, seq;
	cl_mem a, b, c, big;
	float host[N];
};

static NOINLINE cl_context make_context_one(cl_device_id dev)
{
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);

	CHECK_OBJ(ctx, err);
	return ctx;
}

static NOINLINE cl_program build(cl_context ctx)
{
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);

	CHECK_OBJ(p, err);
	CHECK(clBuildProgram(p, 0, NULL, "", NULL, NULL));
	return p;
}

static NOINLINE cl_command_queue make_inorder_queue(struct env *e)
{
	cl_int err;
	cl_command_queue q = clCreateCommandQueueWithProperties(e->ctx, e->dev, NULL, &err);

	CHECK_OBJ(q, err);
	return q;
}

static NOINLINE cl_command_queue make_ooo_queue(cl_context ctx, cl_device_id dev)
{
	cl_int err;
	cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, ooo, &err);

	CHECK_OBJ(q, err);
	return q;
}

static cl_kernel kernel(cl_program p, const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(p, name, &err);

	CHECK_OBJ(k, err);
	return k;
}

static cl_mem buffer(cl_context ctx, size_t bytes)
{
	cl_int err;
	cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);

	CHECK_OBJ(m, err);
	return m;
}

static cl_mem sub(cl_mem parent, size_t origin, size_t size)
{
	cl_buffer_region r = { .origin = origin, .size = size };
	cl_int err;
	cl_mem m = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);

	CHECK_OBJ(m, err);
	return m;
}

static void args(cl_kernel k, int n, cl_mem *m)
{
	for (int i = 0; i < n; i++)
		CHECK(clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &m[i]));
}

static double read_sum(struct env *e, cl_mem m)
{
	CHECK(clFinish(e->q));
	CHECK(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
	return sample_sum(e->host, N);
}

static NOINLINE double dispatch_distinct(struct env *e)
{
	const size_t n = N;
	cl_mem m[3] = { e->a, e->b, e->c };

	args(e->add, 3, m);
	for (int r = 0; r < 3; r++)
		CHECK(clEnqueueNDRangeKernel(e->q, e->add, 1, NULL, &n, NULL, 0, NULL, NULL));
	return read_sum(e, e->a);
}

static NOINLINE double dispatch_restrict(struct env *e)
{
	const size_t n = N;
	cl_mem m[3] = { e->b, e->a, e->c };

	args(e->add_r, 3, m);
	CHECK(clEnqueueNDRangeKernel(e->q, e->add_r, 1, NULL, &n, NULL, 0, NULL, NULL));
	return read_sum(e, e->b);
}

static NOINLINE double dispatch_same(struct env *e)
{
	const size_t n = N;
	cl_mem m[2] = { e->c, e->c };

	args(e->pair, 2, m);
	for (int r = 0; r < 2; r++) {
		CHECK(clEnqueueNDRangeKernel(e->q, e->pair, 1, NULL, &n, NULL, 0, NULL, NULL));
		CHECK(clFinish(e->q));
	}
	return read_sum(e, e->c);
}

static NOINLINE double dispatch_sub_overlap(struct env *e)
{
	const size_t n = 256;
	cl_mem m[2] = { sub(e->big, 0, BYTES / 2), sub(e->big, BYTES / 4, BYTES / 2) };

	args(e->pair, 2, m);
	CHECK(clEnqueueNDRangeKernel(e->q, e->pair, 1, NULL, &n, NULL, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clReleaseMemObject(m[0]));
	CHECK(clReleaseMemObject(m[1]));
	return read_sum(e, e->big);
}

static NOINLINE double dispatch_sub_disjoint(struct env *e)
{
	const size_t n = 256;
	cl_mem m[2] = { sub(e->big, 0, BYTES / 2), sub(e->big, BYTES / 2, BYTES / 2) };

	args(e->pair, 2, m);
	CHECK(clEnqueueNDRangeKernel(e->q, e->pair, 1, NULL, &n, NULL, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clReleaseMemObject(m[0]));
	CHECK(clReleaseMemObject(m[1]));
	return read_sum(e, e->big);
}

static NOINLINE double run_in_second_context(struct env *e)
{
	const size_t n = N;
	cl_context ctx = make_context_one(e->dev);
	cl_command_queue q = make_ooo_queue(ctx, e->dev);
	cl_program p = build(ctx);
	cl_kernel k = kernel(p, "add");
	cl_mem m = buffer(ctx, BYTES), ms[3] = { m, m, m };
	float pattern = 2.0f;
	double sum;

	CHECK(clEnqueueFillBuffer(q, m, &pattern, sizeof(pattern), 0, BYTES, 0, NULL, NULL));
	CHECK(clFinish(q));
	args(k, 3, ms);
	CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
	CHECK(clFinish(q));
	CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
	sum = sample_sum(e->host, N);
	CHECK(clReleaseMemObject(m));
	CHECK(clReleaseKernel(k));
	CHECK(clReleaseProgram(p));
	CHECK(clReleaseCommandQueue(q));
	CHECK(clReleaseContext(ctx));
	return sum;
}

/* Kernel output into e->host, read back blocking. */
static void produce(struct env *e, cl_mem m)
{
	const size_t n = N;

	CHECK(clSetKernelArg(e->seq, 0, sizeof(cl_mem), &m));
	CHECK(clEnqueueNDRangeKernel(e->q, e->seq, 1, NULL, &n, NULL, 0, NULL, NULL));
	CHECK(clFinish(e->q));
}

static NOINLINE double resend_unchanged(struct env *e)
{
	produce(e, e->a);
	CHECK(clEnqueueReadBuffer(e->q, e->a, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
	CHECK(clEnqueueWriteBuffer(e->q, e->b, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
	return read_sum(e, e->b);
}

static NOINLINE double resend_modified(struct env *e)
{
	produce(e, e->a);
	CHECK(clEnqueueReadBuffer(e->q, e->a, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
	e->host[5] += 1.0f;
	CHECK(clEnqueueWriteBuffer(e->q, e->b, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
	return read_sum(e, e->b);
}

static NOINLINE double resend_async(struct env *e)
{
	static float later[N];
	cl_event done;

	produce(e, e->c);
	CHECK(clEnqueueReadBuffer(e->q, e->c, CL_FALSE, 0, BYTES, later, 0, NULL, &done));
	CHECK(clWaitForEvents(1, &done));
	CHECK(clReleaseEvent(done));
	CHECK(clEnqueueWriteBuffer(e->q, e->a, CL_TRUE, 0, BYTES, later, 0, NULL, NULL));
	return read_sum(e, e->a);
}

static NOINLINE double resend_create(struct env *e)
{
	static float back[N];
	cl_mem m;
	cl_int err;
	double sum;

	produce(e, e->b);
	CHECK(clEnqueueReadBuffer(e->q, e->b, CL_TRUE, 0, BYTES, back, 0, NULL, NULL));
	m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, BYTES, back, &err);
	CHECK_OBJ(m, err);
	sum = read_sum(e, m);
	CHECK(clReleaseMemObject(m));
	return sum;
}

int main(void)
{
	static struct env e;
	cl_device_id devs[8];
	cl_platform_id plat;
	cl_command_queue inorder;
	cl_uint nd = sample_devices(&plat, devs, 8);
	float one = 1.0f;

	e.dev = devs[0];
	e.ctx = make_context_one(e.dev);
	e.q = make_ooo_queue(e.ctx, e.dev);
	inorder = make_inorder_queue(&e);
	e.prog = build(e.ctx);
	e.add = kernel(e.prog, "add");
	e.add_r = kernel(e.prog, "add_r");
	e.pair = kernel(e.prog, "pair");
	e.seq = kernel(e.prog, "seq");
	e.a = buffer(e.ctx, BYTES);
	e.b = buffer(e.ctx, BYTES);
	e.c = buffer(e.ctx, BYTES);
	e.big = buffer(e.ctx, BYTES);
	CHECK(clEnqueueFillBuffer(inorder, e.b, &one, sizeof(one), 0, BYTES, 0, NULL, NULL));
	CHECK(clEnqueueFillBuffer(inorder, e.c, &one, sizeof(one), 0, BYTES, 0, NULL, NULL));
	CHECK(clEnqueueFillBuffer(inorder, e.big, &one, sizeof(one), 0, BYTES, 0, NULL, NULL));
	CHECK(clFinish(inorder));

	printf("devices %s\n", nd > 1 ? "several" : "one");
	printf("distinct %.1f\n", dispatch_distinct(&e));
	printf("restrict %.1f\n", dispatch_restrict(&e));
	printf("same %.1f\n", dispatch_same(&e));
	printf("overlap %.1f\n", dispatch_sub_overlap(&e));
	printf("disjoint %.1f\n", dispatch_sub_disjoint(&e));
	printf("second %.1f\n", run_in_second_context(&e));
	printf("unchanged %.1f\n", resend_unchanged(&e));
	printf("modified %.1f\n", resend_modified(&e));
	printf("async %.1f\n", resend_async(&e));
	printf("create %.1f\n", resend_create(&e));

	CHECK(clReleaseMemObject(e.a));
	CHECK(clReleaseMemObject(e.b));
	CHECK(clReleaseMemObject(e.c));
	CHECK(clReleaseMemObject(e.big));
	CHECK(clReleaseKernel(e.add));
	CHECK(clReleaseKernel(e.add_r));
	CHECK(clReleaseKernel(e.pair));
	CHECK(clReleaseKernel(e.seq));
	CHECK(clReleaseProgram(e.prog));
	CHECK(clReleaseCommandQueue(inorder));
	CHECK(clReleaseCommandQueue(e.q));
	CHECK(clReleaseContext(e.ctx));
	return 0;
}
