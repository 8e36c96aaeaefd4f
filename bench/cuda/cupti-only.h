/* SPDX-License-Identifier: MIT */
/*
 * The baseline gputool's CUDA overhead is measured against: a minimal CUPTI
 * subscriber that enables the callbacks and activity kinds gputool enables
 * (the same tables, gpu/cupti/cupti-apis.h), with empty callbacks, records
 * counted, the same buffer size, timestamp callback and flush period. Used
 * in-process by bench/cuda/launch.cu ("cupti" mode) and as an injection
 * library by bench/cuda/cupti-only.c (CUDA_INJECTION64_PATH), for programs
 * the benchmarks do not build (OpenMP target, BabelStream).
 *
 * Static functions: include it once per program or library. C and C++.
 */
#ifndef GT_BENCH_CUPTI_ONLY_H
#define GT_BENCH_CUPTI_ONLY_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cupti.h>

#include "gpu/cupti/cupti-apis.h"

/* Activity records CUPTI handed over (relaxed: a count read at the end). */
#ifdef __cplusplus
#include <atomic>
static std::atomic<unsigned long long> cupti_only_records;
#define cupti_only__add(n) cupti_only_records.fetch_add((n), std::memory_order_relaxed)
#define cupti_only__count() cupti_only_records.load(std::memory_order_relaxed)
#else
#include <stdatomic.h>
static _Atomic unsigned long long cupti_only_records;
#define cupti_only__add(n) atomic_fetch_add_explicit(&cupti_only_records, (n), memory_order_relaxed)
#define cupti_only__count() atomic_load_explicit(&cupti_only_records, memory_order_relaxed)
#endif

static void CUPTIAPI cupti_only__api(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *p)
{
	(void)u, (void)d, (void)c, (void)p;
}

static void CUPTIAPI cupti_only__requested(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 2u << 20; /* as gputool */
	*buf = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI cupti_only__completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
					   size_t valid)
{
	CUpti_Activity *r = NULL;
	unsigned long long n = 0;

	(void)ctx, (void)stream, (void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		n++;
	cupti_only__add(n);
	free(buf);
}

static uint64_t CUPTIAPI cupti_only__timestamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 0, or -1 when CUPTI has another subscriber or cannot start. */
static int cupti_only__subscribe(void)
{
	CUpti_SubscriberHandle sub;

	if (cuptiSubscribe(&sub, cupti_only__api, NULL) != CUPTI_SUCCESS)
		return -1;
#define GT_CUPTI_EN(dom, cbid) cuptiEnableCallback(1, sub, dom, cbid);
	GT_CUPTI_CALLBACKS
#undef GT_CUPTI_EN
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	cuptiActivityRegisterCallbacks(cupti_only__requested, cupti_only__completed);
	cuptiActivityRegisterTimestampCallback(cupti_only__timestamp);
#define X(kind) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_##kind);
	GT_CUPTI_ACTIVITY_KINDS(X)
#undef X
	cuptiActivityFlushPeriod(100);
	return 0;
}

#endif
