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

/* The mean time of @rounds runs of launch(arg) on the default stream, by
 * CUDA events around each. */
static inline float mean_event_ms(void (*launch)(void *), void *arg, int rounds)
{
	cudaEvent_t a, b;
	float sum = 0, ms;

	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	for (int r = 0; r < rounds; r++) {
		CHECK(cudaEventRecord(a));
		launch(arg);
		CHECK(cudaEventRecord(b));
		CHECK(cudaEventSynchronize(b));
		CHECK(cudaEventElapsedTime(&ms, a, b));
		sum += ms;
	}
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
	return sum / rounds;
}

#endif
