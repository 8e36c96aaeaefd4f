/* SPDX-License-Identifier: MIT */
/*
 * The parts of the OpenCL layer that need no OpenCL runtime: the handle map
 * (single-threaded, and looked up by readers while a writer churns it through
 * rebuilds), interning, the source scan for restrict, the host-data hash and
 * the read-then-resend bookkeeping.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gpu/opencl/ocl-internal.h"
#include "tests/unit/test.h"

static void *key(uintptr_t i)
{
	return (void *)(uintptr_t)(0x10000 + i * 64);
}

static void test_map_basic(void)
{
	static struct ocl_map m = { .lock = PTHREAD_MUTEX_INITIALIZER };
	int a, b;

	CHECK(!gt_ocl_map__find(&m, key(1)));
	CHECK(!gt_ocl_map__put(&m, key(1), &a));
	CHECK(gt_ocl_map__find(&m, key(1)) == &a);
	/* A reused handle replaces the record. */
	CHECK(!gt_ocl_map__put(&m, key(1), &b));
	CHECK(gt_ocl_map__find(&m, key(1)) == &b);
	CHECK(gt_ocl_map__del(&m, key(1)) == &b);
	CHECK(!gt_ocl_map__find(&m, key(1)));
	CHECK(!gt_ocl_map__del(&m, key(1)));
	CHECK(!gt_ocl_map__find(&m, NULL));
	CHECK(gt_ocl_map__put(&m, NULL, &a) < 0);
}

/* Growth, and rebuilds that clear tombstones: the table stays small when the
 * number of live handles does, however many come and go. */
static void test_map_churn(void)
{
	static struct ocl_map m = { .lock = PTHREAD_MUTEX_INITIALIZER };
	static int v[20000];

	for (uintptr_t i = 0; i < 20000; i++)
		CHECK(!gt_ocl_map__put(&m, key(i), &v[i]));
	for (uintptr_t i = 0; i < 20000; i++)
		CHECK(gt_ocl_map__find(&m, key(i)) == &v[i]);
	for (uintptr_t i = 0; i < 20000; i++)
		CHECK(gt_ocl_map__del(&m, key(i)) == &v[i]);
	CHECK_EQ_U(m.live, 0);
	for (uintptr_t round = 0; round < 200; round++) {
		for (uintptr_t i = 0; i < 100; i++)
			CHECK(!gt_ocl_map__put(&m, key(100000 + round * 100 + i), &v[i]));
		for (uintptr_t i = 0; i < 100; i++)
			CHECK(gt_ocl_map__find(&m, key(100000 + round * 100 + i)) == &v[i]);
		for (uintptr_t i = 0; i < 100; i++)
			CHECK(gt_ocl_map__del(&m, key(100000 + round * 100 + i)) == &v[i]);
	}
	CHECK_EQ_U(m.live, 0);
	CHECK(m.used <= 3 * 65536 / 4);
}

#define STABLE 512
static struct ocl_map shared = { .lock = PTHREAD_MUTEX_INITIALIZER };
static int stable_val[STABLE];
static atomic_int stop_readers;
static atomic_long wrong, unexplained, lookups;

/* A miss is explained only by a rebuild that overlapped the lookup: the
 * sequence number was odd or moved on. How many lookups overlap one depends
 * on how the threads are scheduled, so only that is checked. */
static void *reader(void *arg)
{
	(void)arg;
	do {
		for (uintptr_t i = 0; i < STABLE; i++) {
			/* Acquire: pair with the release stores that end rebuilds. */
			unsigned s0 = atomic_load_explicit(&shared.seq, memory_order_acquire);
			void *v = gt_ocl_map__find(&shared, key(i));
			unsigned s1 = atomic_load_explicit(&shared.seq, memory_order_acquire);

			if (!v && s0 == s1 && !(s0 & 1))
				atomic_fetch_add_explicit(&unexplained, 1, memory_order_relaxed);
			else if (v && v != &stable_val[i])
				atomic_fetch_add_explicit(&wrong, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&lookups, 1, memory_order_relaxed);
		}
	} while (!atomic_load_explicit(&stop_readers, memory_order_relaxed));
	return NULL;
}

/* Readers never see a wrong record while a writer grows and rebuilds the
 * table under them; a lookup may miss only while a rebuild runs. */
static void test_map_concurrent(void)
{
	static int churn_val;
	pthread_t r[2];

	for (uintptr_t i = 0; i < STABLE; i++)
		CHECK(!gt_ocl_map__put(&shared, key(i), &stable_val[i]));
	for (int i = 0; i < 2; i++)
		CHECK(!pthread_create(&r[i], NULL, reader, NULL));
	for (uintptr_t round = 0; round < 300; round++) {
		for (uintptr_t i = 0; i < 200; i++)
			CHECK(!gt_ocl_map__put(&shared, key(1000000 + round * 200 + i), &churn_val));
		for (uintptr_t i = 0; i < 200; i++)
			CHECK(gt_ocl_map__del(&shared, key(1000000 + round * 200 + i)) == &churn_val);
	}
	atomic_store(&stop_readers, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	CHECK_EQ_U(atomic_load(&wrong), 0);
	CHECK_EQ_U(atomic_load(&unexplained), 0);
	CHECK(atomic_load(&lookups) >= 2 * STABLE);
	/* The writer did rebuild under the readers. */
	CHECK(atomic_load_explicit(&shared.seq, memory_order_relaxed) >= 2);
	for (uintptr_t i = 0; i < STABLE; i++)
		CHECK(gt_ocl_map__find(&shared, key(i)) == &stable_val[i]);
}

static void test_intern(void)
{
	char buf[] = "scale_kernel";
	const char *a = gt_ocl__intern("scale_kernel", 12), *b = gt_ocl__intern(buf, strlen(buf));

	CHECK(a && a == b && !strcmp(a, "scale_kernel"));
	CHECK(gt_ocl__intern("scale", 5) != a);
	CHECK(gt_ocl__intern("scale_kernel_x", 12) == a);
}

static int says(struct ocl_program *pr, const char *name)
{
	return gt_ocl__program_says_restrict(pr, gt_ocl__intern(name, strlen(name)));
}

static void test_scan_source(void)
{
	static const char *part1 =
		"// kernel void fake(global float *restrict a) in a comment\n"
		"/* __kernel void fake2(global int *restrict x) */\n"
		"kernel void plain(global float *a, global float *b) { a[0] = b[0]; }\n"
		"__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void attr(\n"
		"    __global float * restrict out, __global const float *in) { }\n";
	static const char *part2 =
		"kernel void under(global float *__restrict__ p) { }\n"
		"void helper(global float *restrict q) { }\n"
		"kernel void restricted_name_only(global float *restrictive) { }\n";
	const char *strs[] = { part1, part2 };
	struct ocl_program pr = { 0 };

	gt_ocl__scan_source(&pr, 2, strs, NULL);
	CHECK(says(&pr, "attr"));
	CHECK(says(&pr, "under"));
	CHECK(!says(&pr, "plain"));
	CHECK(!says(&pr, "fake"));
	CHECK(!says(&pr, "fake2"));
	CHECK(!says(&pr, "helper"));
	CHECK(!says(&pr, "restricted_name_only"));
	CHECK_EQ_U(pr.n_restrict, 2);
	free(pr.restrict_names);
}

static void test_resend(void)
{
	static struct ocl_thread ot;
	static float data[256], other[256];
	cl_command_queue q = (cl_command_queue)key(5);
	cl_event ev = (cl_event)key(6);

	for (int i = 0; i < 256; i++)
		data[i] = (float)i;
	/* Blocking read: hashed at once; an unchanged write is a resend. */
	gt_ocl__note_read(&ot, data, sizeof(data), q, NULL, 1);
	CHECK(gt_ocl__is_resend(&ot, data, sizeof(data)));
	CHECK(!gt_ocl__is_resend(&ot, data, sizeof(data) / 2));
	CHECK(!gt_ocl__is_resend(&ot, other, sizeof(other)));
	data[17] += 1;
	CHECK(!gt_ocl__is_resend(&ot, data, sizeof(data)));
	/* Non-blocking read: unknown until the application may see the data. */
	gt_ocl__note_read(&ot, other, sizeof(other), q, ev, 0);
	CHECK(!gt_ocl__is_resend(&ot, other, sizeof(other)));
	gt_ocl__reads_visible(&ot, NULL, (const cl_event[]){ (cl_event)key(7) }, 1);
	CHECK(!gt_ocl__is_resend(&ot, other, sizeof(other)));
	gt_ocl__reads_visible(&ot, NULL, &ev, 1);
	CHECK(gt_ocl__is_resend(&ot, other, sizeof(other)));
	/* Made visible by its queue. */
	gt_ocl__note_read(&ot, data, sizeof(data), q, NULL, 0);
	CHECK(!gt_ocl__is_resend(&ot, data, sizeof(data)));
	gt_ocl__reads_visible(&ot, q, NULL, 0);
	CHECK(gt_ocl__is_resend(&ot, data, sizeof(data)));
	/* The ring keeps the latest reads. */
	for (int i = 0; i < 2 * OCL_READS; i++)
		gt_ocl__note_read(&ot, &other[i % 128], 4, q, NULL, 1);
	CHECK(ot.n_reads == OCL_READS);
}

TEST_MAIN({ "map: put, find, replace, delete", test_map_basic },
	  { "map: growth and tombstone rebuilds stay bounded", test_map_churn },
	  { "map: lock-free readers during rebuilds", test_map_concurrent },
	  { "interned names", test_intern },
	  { "restrict found in kernel source", test_scan_source },
	  { "read back, then sent back unchanged", test_resend })
