/* SPDX-License-Identifier: MIT */
/*
 * Enqueues N tiny kernels on one in-order profiling queue without waiting,
 * then waits once: completions fall behind the enqueues. Prints
 * "enqueued N". Usage: ocl_flood N
 */
#define CL_TARGET_OPENCL_VERSION 300
#include "../../samples/opencl/common.h"

static const char *source = "kernel void nop(global int *out) { if (get_global_id(0) == 0) out[0]++; }\n";

NOINLINE static void flood(cl_command_queue q, cl_kernel k, long n)
{
	size_t one = 1;

	for (long i = 0; i < n; i++)
		CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
	CHECK(clFinish(q));
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	cl_platform_id plat;
	cl_device_id dev;
	cl_int err;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel k;
	cl_mem buf;
	cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };

	sample_devices(&plat, &dev, 1);
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK_OBJ(ctx, err);
	q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
	CHECK_OBJ(q, err);
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	CHECK_OBJ(prog, err);
	CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
	k = clCreateKernel(prog, "nop", &err);
	CHECK_OBJ(k, err);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
	CHECK_OBJ(buf, err);
	CHECK(clSetKernelArg(k, 0, sizeof(buf), &buf));
	flood(q, k, n);
	printf("enqueued %ld\n", n);
	clReleaseMemObject(buf);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	return 0;
}
