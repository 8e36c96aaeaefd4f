// SPDX-License-Identifier: MIT
// The CUDA samples' error check: a failed call ends the sample with its
// message and status 1.
#ifndef GT_SAMPLES_CUDA_CHECK_H
#define GT_SAMPLES_CUDA_CHECK_H

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                         \
	do {                                                                             \
		cudaError_t e_ = (x);                                                    \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

#define NOINLINE __attribute__((noinline))

#endif
