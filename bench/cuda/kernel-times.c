/* SPDX-License-Identifier: MIT */
/*
 * libgtkerneltimes.so: per-kernel GPU time of a CUDA program, without
 * gputool, as the reference its kernel advice is checked against
 * (CUDA_INJECTION64_PATH=libgtkerneltimes.so ./app). It enables only
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (which, unlike KIND_KERNEL, does
 * not serialize kernels) and at exit prints one line per kernel name:
 *
 *   gt-kernel-times\t<launches>\t<total ns>\t<mangled name>
 *
 * to stderr, or appended to the file GT_KERNEL_TIMES_FILE names. The name
 * comes last because nothing else in the line may contain a tab.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

/* Open addressing, never resized: a program with more distinct kernels
 * than this counts the rest under "(other)". */
#define KT_SLOTS 4096

struct kt_kernel {
	char *name; /* strdup'ed: CUPTI owns the record's string */
	uint64_t hash;
	unsigned long long launches;
	unsigned long long total_ns;
};

/* Guards kt_table and kt_other; taken by CUPTI's buffer-completed thread
 * and at exit, never from a signal handler. */
static pthread_mutex_t kt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kt_kernel kt_table[KT_SLOTS];
static struct kt_kernel kt_other = { .name = "(other)" };

static uint64_t kt__hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Caller holds kt_lock. */
static struct kt_kernel *kt__slot(const char *name)
{
	uint64_t h = kt__hash(name);

	for (unsigned i = 0; i < KT_SLOTS; i++) {
		struct kt_kernel *k = &kt_table[(h + i) % KT_SLOTS];

		if (!k->name) {
			k->name = strdup(name);
			if (!k->name)
				return &kt_other;
			k->hash = h;
			return k;
		}
		if (k->hash == h && !strcmp(k->name, name))
			return k;
	}
	return &kt_other;
}

static void CUPTIAPI kt__requested(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 8u << 20;
	*buf = (uint8_t *)aligned_alloc(8, *size);
	if (!*buf)
		*size = 0;
	*max = 0;
}

static void CUPTIAPI kt__completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				   size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx, (void)stream, (void)size;
	pthread_mutex_lock(&kt_lock);
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		/* The layout is CUPTI 13's, as gpu/cupti/activity.c reads it. */
		const CUpti_ActivityKernel10 *a = (const void *)r;
		struct kt_kernel *k;

		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    r->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		k = kt__slot(a->name ? a->name : "(unnamed)");
		k->launches++;
		if (a->end > a->start)
			k->total_ns += a->end - a->start;
	}
	pthread_mutex_unlock(&kt_lock);
	free(buf);
}

static void kt__print(FILE *f, const struct kt_kernel *k)
{
	fprintf(f, "gt-kernel-times\t%llu\t%llu\t%s\n", k->launches, k->total_ns, k->name);
}

static void kt__exit(void)
{
	const char *path = getenv("GT_KERNEL_TIMES_FILE");
	FILE *f = NULL;

	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (path && *path)
		f = fopen(path, "a");
	if (!f)
		f = stderr;
	pthread_mutex_lock(&kt_lock);
	for (unsigned i = 0; i < KT_SLOTS; i++)
		if (kt_table[i].name)
			kt__print(f, &kt_table[i]);
	if (kt_other.launches)
		kt__print(f, &kt_other);
	pthread_mutex_unlock(&kt_lock);
	if (f != stderr)
		fclose(f);
	else
		fflush(f);
}

/* Called by the CUDA driver at its initialization. */
__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	if (cuptiActivityRegisterCallbacks(kt__requested, kt__completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "gt-kernel-times: cannot enable CUPTI kernel records\n");
		return 0;
	}
	atexit(kt__exit);
	return 1;
}
