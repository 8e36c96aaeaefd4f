/* SPDX-License-Identifier: MIT */
/*
 * Three threads share one context and program; each has its own out-of-order
 * queue and kernel object (clSetKernelArg is not thread-safe for one kernel)
 * and launches `bump` a known number of times (10, 20, 30) from worker().
 * Prints checksums.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <pthread.h>

#include "common.h"

#define N 256
#define THREADS 3

static const char *source =
	"kernel void bump(global float *restrict a)\n"
	"{\n"
	"	a[get_global_id(0)] += 1.0f;\n"
	"}\n";

static const cl_queue_properties ooo[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };

struct job {
	cl_context ctx;
	cl_device_id dev;
	cl_kernel k;
	int launches;
	double sum;
};

static NOINLINE void *worker(void *arg)
{
	struct job *j = arg;
	const size_t n = N;
	float host[N] = { 0 };
	cl_int err;
	cl_command_queue q = clCreateCommandQueueWithProperties(j->ctx, j->dev, ooo, &err);
	cl_mem m;

	CHECK_OBJ(q, err);
	m = clCreateBuffer(j->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(host), host, &err);
	CHECK_OBJ(m, err);
	CHECK(clSetKernelArg(j->k, 0, sizeof(m), &m));
	for (int i = 0; i < j->launches; i++) {
		CHECK(clEnqueueNDRangeKernel(q, j->k, 1, NULL, &n, NULL, 0, NULL, NULL));
		CHECK(clFinish(q)); /* out of order: one at a time keeps the sum exact */
	}
	CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL));
	j->sum = sample_sum(host, N);
	CHECK(clReleaseMemObject(m));
	CHECK(clReleaseCommandQueue(q));
	return NULL;
}

int main(void)
{
	cl_device_id devs[8];
	cl_platform_id plat;
	cl_uint nd = sample_devices(&plat, devs, 8);
	struct job jobs[THREADS];
	pthread_t tid[THREADS];
	cl_context ctx;
	cl_program prog;
	cl_int err;

	ctx = clCreateContext(NULL, nd, devs, NULL, NULL, &err);
	CHECK_OBJ(ctx, err);
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	CHECK_OBJ(prog, err);
	CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ .ctx = ctx, .dev = devs[0], .launches = 10 * (i + 1) };
		jobs[i].k = clCreateKernel(prog, "bump", &err);
		CHECK_OBJ(jobs[i].k, err);
	}
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&tid[i], NULL, worker, &jobs[i]))
			return 1;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		printf("thread %d sum %.1f\n", i, jobs[i].sum);
		CHECK(clReleaseKernel(jobs[i].k));
	}
	CHECK(clReleaseProgram(prog));
	CHECK(clReleaseContext(ctx));
	return 0;
}
