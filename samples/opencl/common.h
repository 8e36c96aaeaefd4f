/* SPDX-License-Identifier: MIT */
#ifndef GT_SAMPLES_OPENCL_COMMON_H
#define GT_SAMPLES_OPENCL_COMMON_H

/* What the OpenCL samples share: error checks and device discovery. The
 * OpenCL calls whose calling context matters are made in the samples
 * themselves, in functions that are never inlined. */

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                       \
	do {                                                                              \
		cl_int check_err_ = (call);                                               \
		if (check_err_ != CL_SUCCESS) {                                           \
			fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, \
				(int)check_err_);                                         \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

#define CHECK_OBJ(obj, err)                                                                   \
	do {                                                                                  \
		if (!(obj) || (err) != CL_SUCCESS) {                                          \
			fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #obj, (int)(err)); \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

#define NOINLINE __attribute__((noinline))

/* The devices of the first platform (at most max). */
static inline cl_uint sample_devices(cl_platform_id *plat, cl_device_id *devs, cl_uint max)
{
	cl_uint n = 0;

	CHECK(clGetPlatformIDs(1, plat, NULL));
	CHECK(clGetDeviceIDs(*plat, CL_DEVICE_TYPE_ALL, max, devs, &n));
	return n < max ? n : max;
}

static inline double sample_sum(const float *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

#endif
