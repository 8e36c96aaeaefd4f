/* SPDX-License-Identifier: MIT */
/*
 * Two independent chains of work on two in-order queues, first with the
 * host waiting for each queue before it feeds the other, then with both
 * fed before any wait (docs/ADVICE.md, serializing-sync). STEPS steps per
 * round, ROUNDS rounds of each side:
 *
 *   serial()    spin on q1; wait_first() (clFinish q1); spin on q2;
 *               wait_second() (clFinish q2)
 *   together()  spin on q1; spin on q2; wait_both() (clFinish q1, q2)
 *
 * Each spin is one work-group whose items run a loop of ITER steps. Prints
 * the sums of the results (the same on both sides); the times of both
 * sides, the means of ROUNDS, go to stderr:
 *   pair overlap slow_ms S fast_ms F speedup X
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <time.h>

#include "common.h"

#define STEPS 10
#define ROUNDS 3
#define ITEMS 64
#define ITER 50000

static const char *source =
	"kernel void spin(global float *out, int n)\n"
	"{\n"
	"	size_t i = get_global_id(0);\n"
	"	float v = i;\n"
	"	for (int k = 0; k < n; k++)\n"
	"		v = v * 0.999f + 1.0f;\n"
	"	out[i] += v;\n"
	"}\n";

struct env {
	cl_command_queue q[2];
	cl_kernel k[2];
	cl_mem out[2];
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void spin(struct env *e, int i)
{
	size_t g = ITEMS;

	CHECK(clEnqueueNDRangeKernel(e->q[i], e->k[i], 1, NULL, &g, NULL, 0, NULL, NULL));
}

static NOINLINE void wait_first(struct env *e)
{
	CHECK(clFinish(e->q[0])); // WAIT_FIRST
}

static NOINLINE void wait_second(struct env *e)
{
	CHECK(clFinish(e->q[1])); // WAIT_SECOND
}

static NOINLINE void wait_both(struct env *e)
{
	CHECK(clFinish(e->q[0]));
	CHECK(clFinish(e->q[1]));
}

static NOINLINE void serial(struct env *e)
{
	for (int s = 0; s < STEPS; s++) {
		spin(e, 0);
		wait_first(e);
		spin(e, 1);
		wait_second(e);
	}
}

static NOINLINE void together(struct env *e)
{
	for (int s = 0; s < STEPS; s++) {
		spin(e, 0);
		spin(e, 1);
		wait_both(e);
	}
}

int main(void)
{
	float zero = 0, host[2][ITEMS];
	double ms[2] = { 0, 0 }, sum[2];
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_program prog;
	struct env e;
	int n = ITER;
	cl_int err;

	sample_devices(&plat, &dev, 1);
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK_OBJ(ctx, err);
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	CHECK_OBJ(prog, err);
	CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
	for (int i = 0; i < 2; i++) {
		e.q[i] = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
		CHECK_OBJ(e.q[i], err);
		e.k[i] = clCreateKernel(prog, "spin", &err);
		CHECK_OBJ(e.k[i], err);
		e.out[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host[0]), NULL, &err);
		CHECK_OBJ(e.out[i], err);
		CHECK(clSetKernelArg(e.k[i], 0, sizeof(e.out[i]), &e.out[i]));
		CHECK(clSetKernelArg(e.k[i], 1, sizeof(n), &n));
	}
	for (int side = 0; side < 2; side++) {
		for (int i = 0; i < 2; i++) {
			CHECK(clEnqueueFillBuffer(e.q[i], e.out[i], &zero, sizeof(zero), 0, sizeof(host[0]), 0, NULL,
						  NULL));
			CHECK(clFinish(e.q[i]));
		}
		for (int r = 0; r < ROUNDS; r++) {
			double t0 = now_ms();

			if (side)
				together(&e);
			else
				serial(&e);
			ms[side] += now_ms() - t0;
		}
		for (int i = 0; i < 2; i++)
			CHECK(clEnqueueReadBuffer(e.q[i], e.out[i], CL_TRUE, 0, sizeof(host[i]), host[i], 0, NULL, NULL));
		sum[side] = sample_sum(host[0], ITEMS) + sample_sum(host[1], ITEMS);
	}
	printf("streams: sums %.1f and %.1f\n", sum[0], sum[1]);
	fprintf(stderr, "pair overlap slow_ms %.3f fast_ms %.3f speedup %.3f\n", ms[0] / ROUNDS, ms[1] / ROUNDS,
		ms[0] / ms[1]);
	for (int i = 0; i < 2; i++) {
		clReleaseMemObject(e.out[i]);
		clReleaseKernel(e.k[i]);
		clReleaseCommandQueue(e.q[i]);
	}
	clReleaseProgram(prog);
	clReleaseContext(ctx);
	return 0;
}
