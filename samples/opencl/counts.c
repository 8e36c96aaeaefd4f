/* SPDX-License-Identifier: MIT */
/*
 * Known OpenCL work from known call sites, and nothing the best-practice
 * checks object to: one context with every device of the platform, an
 * out-of-order queue, kernels whose pointers are restrict, no data sent back.
 *
 *   run_small   30 launches of scale (1024 items); writes 4096 B, reads 4096 B
 *   run_big     10 launches of scale (65536 items); writes 262144 B, reads 262144 B
 *   other_ops   fill 4096 B; copy 4096 B; copy rect 256 B; read rect 256 B;
 *               write rect 256 B; map for reading 4096 B and unmap; map for
 *               writing 2048 B and unmap; migrate a 4096 B buffer to the
 *               host; one task (kernel one)
 *
 * Prints checksums of the results (the same with and without a tool).
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <string.h>

#include "common.h"

#define N_SMALL 1024
#define N_BIG 65536
#define REPS_SMALL 30
#define REPS_BIG 10

static const char *source =
	"kernel void scale(global float *restrict out, global const float *restrict in)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	out[i] = in[i] * 2.0f + 1.0f;\n"
	"}\n"
	"kernel void one(global float *restrict out)\n"
	"{\n"
	"	out[0] = 42.0f;\n"
	"}\n";

struct env {
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	cl_kernel scale, one;
};

static NOINLINE double run_scale(struct env *e, size_t n, int reps)
{
	size_t bytes = n * sizeof(float);
	float *host = malloc(bytes), *out = malloc(bytes);
	cl_int err;
	cl_mem in_buf, out_buf;
	double sum;

	for (size_t i = 0; i < n; i++)
		host[i] = (float)(i % 100);
	in_buf = clCreateBuffer(e->ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
	CHECK_OBJ(in_buf, err);
	out_buf = clCreateBuffer(e->ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
	CHECK_OBJ(out_buf, err);
	CHECK(clEnqueueWriteBuffer(e->q, in_buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	CHECK(clSetKernelArg(e->scale, 0, sizeof(cl_mem), &out_buf));
	CHECK(clSetKernelArg(e->scale, 1, sizeof(cl_mem), &in_buf));
	for (int r = 0; r < reps; r++)
		CHECK(clEnqueueNDRangeKernel(e->q, e->scale, 1, NULL, &n, NULL, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clEnqueueReadBuffer(e->q, out_buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
	sum = sample_sum(out, n);
	CHECK(clReleaseMemObject(in_buf));
	CHECK(clReleaseMemObject(out_buf));
	free(host);
	free(out);
	return sum;
}

static NOINLINE double run_small(struct env *e)
{
	return run_scale(e, N_SMALL, REPS_SMALL) + 0.0;
}

static NOINLINE double run_big(struct env *e)
{
	return run_scale(e, N_BIG, REPS_BIG) + 0.0;
}

static NOINLINE double other_ops(struct env *e)
{
	const size_t n = 1024, bytes = n * sizeof(float);
	const size_t origin[3] = { 0, 0, 0 }, region[3] = { 64, 4, 1 }, square[3] = { 16, 16, 1 };
	float pattern = 3.0f, *host = calloc(n, sizeof(float)), *mapped;
	cl_mem a, b;
	cl_int err;
	double sum;

	a = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	CHECK_OBJ(a, err);
	b = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	CHECK_OBJ(b, err);
	CHECK(clEnqueueFillBuffer(e->q, a, &pattern, sizeof(pattern), 0, bytes, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clEnqueueCopyBuffer(e->q, a, b, 0, 0, bytes, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clEnqueueCopyBufferRect(e->q, a, b, origin, origin, square, 64, 0, 64, 0, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clEnqueueReadBufferRect(e->q, b, CL_TRUE, origin, origin, region, 256, 0, 256, 0, host, 0, NULL,
				      NULL));
	for (size_t i = 0; i < 64; i++)
		host[i] += 1.0f;
	CHECK(clEnqueueWriteBufferRect(e->q, b, CL_TRUE, origin, origin, region, 256, 0, 256, 0, host, 0,
				       NULL, NULL));
	mapped = clEnqueueMapBuffer(e->q, b, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
	CHECK_OBJ(mapped, err);
	sum = sample_sum(mapped, n);
	CHECK(clEnqueueUnmapMemObject(e->q, b, mapped, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	mapped = clEnqueueMapBuffer(e->q, a, CL_TRUE, CL_MAP_WRITE, 0, bytes / 2, 0, NULL, NULL, &err);
	CHECK_OBJ(mapped, err);
	for (size_t i = 0; i < n / 2; i++)
		mapped[i] = 5.0f;
	CHECK(clEnqueueUnmapMemObject(e->q, a, mapped, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clEnqueueMigrateMemObjects(e->q, 1, &a, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clSetKernelArg(e->one, 0, sizeof(cl_mem), &a));
	CHECK(clEnqueueTask(e->q, e->one, 0, NULL, NULL));
	CHECK(clFinish(e->q));
	CHECK(clEnqueueReadBuffer(e->q, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	sum += sample_sum(host, n);
	CHECK(clReleaseMemObject(a));
	CHECK(clReleaseMemObject(b));
	free(host);
	return sum;
}

int main(void)
{
	const cl_queue_properties ooo[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };
	cl_device_id devs[8];
	cl_platform_id plat;
	struct env e;
	cl_uint nd = sample_devices(&plat, devs, 8);
	cl_int err;

	e.ctx = clCreateContext(NULL, nd, devs, NULL, NULL, &err);
	CHECK_OBJ(e.ctx, err);
	e.q = clCreateCommandQueueWithProperties(e.ctx, devs[0], ooo, &err);
	CHECK_OBJ(e.q, err);
	e.prog = clCreateProgramWithSource(e.ctx, 1, &source, NULL, &err);
	CHECK_OBJ(e.prog, err);
	CHECK(clBuildProgram(e.prog, 0, NULL, "", NULL, NULL));
	e.scale = clCreateKernel(e.prog, "scale", &err);
	CHECK_OBJ(e.scale, err);
	e.one = clCreateKernel(e.prog, "one", &err);
	CHECK_OBJ(e.one, err);

	printf("small %.1f\n", run_small(&e));
	printf("big %.1f\n", run_big(&e));
	printf("other %.1f\n", other_ops(&e));

	CHECK(clReleaseKernel(e.scale));
	CHECK(clReleaseKernel(e.one));
	CHECK(clReleaseProgram(e.prog));
	CHECK(clReleaseCommandQueue(e.q));
	CHECK(clReleaseContext(e.ctx));
	return 0;
}
