// SPDX-License-Identifier: MIT
//
// Threads that only CUDA sees, started and ended without end: THREADS POSIX
// threads (argument 1, default 2000), AT_ONCE alive at a time, each
// launching one kernel from worker_body() and copying its result back
// (64 KiB, device to host) before it ends. Known numbers for
// tests/gpu/check_threads.py: THREADS kernels, THREADS copies of 64 KiB.
// Prints the process's resident memory after a tenth of the threads and
// after all of them (what the program measured itself), then "ok".
//
// Build: nvcc -arch=sm_90 -O2 -g -ccbin clang-19 threads.cu -lstdc++
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <cuda_runtime.h>

#include "check.h"

enum {
	AT_ONCE = 8,
	COPY_FLOATS = 16384, // 64 KiB
};

__global__ void fill(float *v, float x)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < COPY_FLOATS)
		v[i] = x + (float)i;
}

struct job {
	float *dev;  // this slot's device buffer
	float *host; // and its host buffer
	float x;
};

static NOINLINE void worker_body(struct job *j)
{
	fill<<<COPY_FLOATS / 256, 256>>>(j->dev, j->x);
	CHECK(cudaMemcpy(j->host, j->dev, COPY_FLOATS * sizeof(float), cudaMemcpyDeviceToHost));
}

static void *worker(void *arg)
{
	worker_body(static_cast<struct job *>(arg));
	return nullptr;
}

static long rss_kb()
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2000;
	struct job jobs[AT_ONCE];
	double sum = 0;
	long rss_tenth = 0;

	for (int k = 0; k < AT_ONCE; k++) {
		CHECK(cudaMalloc(&jobs[k].dev, COPY_FLOATS * sizeof(float)));
		jobs[k].host = static_cast<float *>(malloc(COPY_FLOATS * sizeof(float)));
	}
	for (int started = 0; started < threads;) {
		pthread_t th[AT_ONCE];
		int n = threads - started < AT_ONCE ? threads - started : AT_ONCE;

		for (int k = 0; k < n; k++) {
			jobs[k].x = (float)(started + k);
			if (pthread_create(&th[k], nullptr, worker, &jobs[k]))
				return 1;
		}
		for (int k = 0; k < n; k++) {
			pthread_join(th[k], nullptr);
			sum += jobs[k].host[COPY_FLOATS - 1];
		}
		started += n;
		if (!rss_tenth && started >= threads / 10)
			rss_tenth = rss_kb();
	}
	printf("threads %d resident_kb %ld %ld\n", threads, rss_tenth, rss_kb());
	printf("checksum %.1f\n", sum);
	for (int k = 0; k < AT_ONCE; k++) {
		CHECK(cudaFree(jobs[k].dev));
		free(jobs[k].host);
	}
	printf("ok\n");
	return 0;
}
