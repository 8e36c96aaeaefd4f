// SPDX-License-Identifier: MIT
//
// A launch-bound loop: an empty kernel launched N times on the default
// stream, one synchronization at the end. Prints ns per launch.
//
//   launch none   N    no tool in the process (run it without gputool)
//   launch cupti  N    a minimal CUPTI subscriber of its own
//                      (bench/cuda/cupti-only.h): the baseline gputool is
//                      compared against
//   launch plain  N    no subscriber of its own: run it with
//                      CUDA_INJECTION64_PATH=libgputool.so
//   launch memory N    like plain, printing the resident set size every
//                      N/10 launches (memory must stay flat)
//
// A third argument waits after every launch: "sync" with
// cudaStreamSynchronize on the default stream, "devsync" with
// cudaDeviceSynchronize (a launch-and-wait loop; ns per iteration).
//
// bench/cuda/run.sh runs them in one go and prints the comparison.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

#include "bench/cuda/cupti-only.h"

__global__ void empty_kernel() {}

static double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long rss_kib()
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	long n = argc > 2 ? atol(argv[2]) : 200000;
	int memory = !strcmp(mode, "memory");
	const char *wait = argc > 3 ? argv[3] : "";
	int sync = !strcmp(wait, "sync"), devsync = !strcmp(wait, "devsync");
	double t0, t1;

	if (!strcmp(mode, "cupti") && cupti_only__subscribe()) {
		fprintf(stderr, "cannot subscribe to CUPTI\n");
		return 1;
	}
	// Warm up: context, module, the tool's first contexts.
	for (int i = 0; i < 2000; i++)
		empty_kernel<<<1, 1>>>();
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "CUDA error\n");
		return 1;
	}
	if (memory)
		printf("launches 0 rss_kib %ld\n", rss_kib());
	t0 = now_s();
	for (long i = 1; i <= n; i++) {
		empty_kernel<<<1, 1>>>();
		if (sync)
			cudaStreamSynchronize(0);
		else if (devsync)
			cudaDeviceSynchronize();
		if (memory && i % (n / 10) == 0) {
			cudaDeviceSynchronize();
			printf("launches %ld rss_kib %ld\n", i, rss_kib());
		}
	}
	cudaDeviceSynchronize();
	t1 = now_s();
	printf("mode %s%s%s launches %ld ns_per_launch %.1f\n", mode, *wait ? "_" : "", wait, n,
	       (t1 - t0) * 1e9 / n);
	if (!strcmp(mode, "cupti")) {
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		printf("records %llu\n", (unsigned long long)cupti_only__count());
	}
	return 0;
}
