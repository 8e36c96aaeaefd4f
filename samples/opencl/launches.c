/* SPDX-License-Identifier: MIT */
/*
 * A time loop of tiny kernels, then the same work fused (docs/ADVICE.md,
 * launch-bound): STEPS steps, each a chain of CHAIN launches of link_axpy
 * on one work-group of WIDTH items (y = a_k x + y, a_k = 1 / (k + 1)),
 * enqueued one by one on an in-order queue from step(); then chain_axpy,
 * one launch per step doing the chain's updates in a loop, from
 * step_fused(). Both give the same y (printed). Times of both sides, the
 * means of ROUNDS, go to stderr:
 *   pair fuse slow_ms S fast_ms F speedup X
 *
 *   launches [chain] [steps]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <string.h>
#include <time.h>

#include "common.h"

#define WIDTH 128
#define ROUNDS 3

static const char *source =
	"kernel void link_axpy(global const float *x, global float *y, float a)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	y[i] = a * x[i] + y[i];\n"
	"}\n"
	"kernel void chain_axpy(global const float *x, global float *y, int n)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	float v = y[i];\n"
	"	for (int k = 0; k < n; k++)\n"
	"		v = (1.0f / (k + 1)) * x[i] + v;\n"
	"	y[i] = v;\n"
	"}\n";

struct env {
	cl_command_queue q;
	cl_kernel link, chain;
	cl_mem x, y;
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static NOINLINE void step(struct env *e, int chain)
{
	size_t g = WIDTH;

	for (int k = 0; k < chain; k++) {
		float a = 1.0f / (k + 1);

		CHECK(clSetKernelArg(e->link, 2, sizeof(a), &a));
		CHECK(clEnqueueNDRangeKernel(e->q, e->link, 1, NULL, &g, NULL, 0, NULL, NULL)); // LAUNCH
	}
}

static NOINLINE void step_fused(struct env *e, int chain)
{
	size_t g = WIDTH;

	CHECK(clSetKernelArg(e->chain, 2, sizeof(chain), &chain));
	CHECK(clEnqueueNDRangeKernel(e->q, e->chain, 1, NULL, &g, NULL, 0, NULL, NULL)); // FUSED
}

int main(int argc, char **argv)
{
	int chain = argc > 1 ? atoi(argv[1]) : 1000, steps = argc > 2 ? atoi(argv[2]) : 10;
	float hx[WIDTH], hy[2][WIDTH], zero = 0;
	double ms[2] = { 0, 0 };
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_program prog;
	struct env e;
	cl_int err;

	sample_devices(&plat, &dev, 1);
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK_OBJ(ctx, err);
	e.q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	CHECK_OBJ(e.q, err);
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	CHECK_OBJ(prog, err);
	CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
	e.link = clCreateKernel(prog, "link_axpy", &err);
	CHECK_OBJ(e.link, err);
	e.chain = clCreateKernel(prog, "chain_axpy", &err);
	CHECK_OBJ(e.chain, err);
	for (int i = 0; i < WIDTH; i++)
		hx[i] = (float)i / WIDTH;
	e.x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(hx), hx, &err);
	CHECK_OBJ(e.x, err);
	e.y = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(hx), NULL, &err);
	CHECK_OBJ(e.y, err);
	for (int i = 0; i < 2; i++) {
		cl_kernel k = i ? e.chain : e.link;

		CHECK(clSetKernelArg(k, 0, sizeof(e.x), &e.x));
		CHECK(clSetKernelArg(k, 1, sizeof(e.y), &e.y));
	}
	for (int r = 0; r < ROUNDS; r++) {
		for (int side = 0; side < 2; side++) {
			double t0;

			CHECK(clEnqueueFillBuffer(e.q, e.y, &zero, sizeof(zero), 0, sizeof(hx), 0, NULL, NULL));
			CHECK(clFinish(e.q));
			t0 = now_ms();
			for (int s = 0; s < steps; s++) {
				if (side)
					step_fused(&e, chain);
				else
					step(&e, chain);
			}
			CHECK(clFinish(e.q));
			ms[side] += now_ms() - t0;
			CHECK(clEnqueueReadBuffer(e.q, e.y, CL_TRUE, 0, sizeof(hx), hy[side], 0, NULL, NULL));
		}
	}
	printf("launches %d steps of %d kernels: y[%d] = %.4f and %.4f\n", steps, chain, WIDTH - 1,
	       hy[0][WIDTH - 1], hy[1][WIDTH - 1]);
	fprintf(stderr, "pair fuse slow_ms %.3f fast_ms %.3f speedup %.3f\n", ms[0] / ROUNDS, ms[1] / ROUNDS,
		ms[0] / ms[1]);
	clReleaseMemObject(e.x);
	clReleaseMemObject(e.y);
	clReleaseKernel(e.link);
	clReleaseKernel(e.chain);
	clReleaseProgram(prog);
	clReleaseCommandQueue(e.q);
	clReleaseContext(ctx);
	return 0;
}
