/* SPDX-License-Identifier: MIT */
/*
 * bench/cuda/cupti-only.h as a CUDA injection library: what CUPTI alone
 * costs a program gputool measures, with the same callbacks and activity
 * kinds enabled. CUDA_INJECTION64_PATH=libgtcuptionly.so ./app. At exit it
 * flushes CUPTI and prints the records it counted to stderr.
 */
#include <stdio.h>

#include "bench/cuda/cupti-only.h"

static void cupti_only__exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "cupti-only: %llu records\n",
		(unsigned long long)cupti_only__count());
}

/* Called by the CUDA driver at its initialization. */
__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	if (cupti_only__subscribe()) {
		fprintf(stderr, "cupti-only: cannot subscribe to CUPTI\n");
		return 0;
	}
	atexit(cupti_only__exit);
	return 1;
}
