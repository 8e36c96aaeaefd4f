/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpu/device-op.c (what each kind of device operation charges,
 * and where) and of the monitor's correlation map (gpu/corrmap.c).
 */
#include <stdint.h>
#include <string.h>

#include "core/arena.h"
#include "core/cct.h"
#include "gpu/device-op.h"
#include "gpu/monitor-internal.h"
#include "gpu/monitor.h"
#include "tests/unit/test.h"

struct tree {
	struct gt_arena arena;
	struct gt_cct cct;
	struct gt_cct_node *site;
};

static void tree__init(struct tree *t)
{
	gt_arena__init(&t->arena);
	gt_cct__init(&t->cct, &t->arena);
	CHECK(t->cct.root);
	t->site = gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 0x4000, 0);
}

static unsigned n_metrics(const struct gt_cct_node *n)
{
	unsigned k = 0;

	for (const struct gt_metric_cell *c = n->metrics; c; c = c->next)
		k++;
	return k;
}

static unsigned n_children(const struct gt_cct_node *n)
{
	unsigned k = 0;

	for (const struct gt_cct_node *c = n->children; c; c = c->sibling)
		k++;
	return k;
}

static void test_kernel_named(void)
{
	static const char name[] = "saxpy";
	struct tree t;
	struct gt_device_op op = { .kind = GT_DEVOP_KERNEL, .start_ns = 1000, .end_ns = 1750,
				   .name = name };
	struct gt_cct_node *ph, *k;

	tree__init(&t);
	op.launch = (struct gt_kernel_launch){ .grid = { 4, 2, 1 }, .block = { 128, 2, 1 },
					       .registers = 32, .static_shared = 1024,
					       .dynamic_shared = 512, .occupancy = 750 };
	ph = gt_cct__placeholder(&t.cct, t.site, GT_PH_GPU_KERNEL);
	CHECK(gt_device_op__attribute(&t.cct, ph, &op) == 0);
	CHECK(gt_device_op__attribute(&t.cct, ph, &op) == 0);
	/* The placeholder carries nothing itself: its name child does. */
	CHECK_EQ_U(n_metrics(ph), 0);
	CHECK_EQ_U(n_children(ph), 1);
	k = ph->children;
	CHECK_EQ_U(k->kind, GT_NODE_NAME);
	CHECK(k->key == (uint64_t)(uintptr_t)name);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER), 1500);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_COUNT), 2);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_BLKS), 16);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_BLK_THR), 512);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_THR_REG), 64);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_STMEM), 2048);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_DYMEM), 1024);
	CHECK_EQ_U(gt_cct__get(k, GT_M_GKER_OCC_THR), 1500);
	CHECK_EQ_U(n_metrics(k), 8);
}

static void test_kernel_unnamed_under_frame(void)
{
	struct tree t;
	struct gt_device_op op = { .kind = GT_DEVOP_KERNEL, .start_ns = 10, .end_ns = 30 };
	struct gt_cct_node *ph;

	tree__init(&t);
	/* Issued at a frame, not a GPU placeholder: <gpu kernel> is created. */
	CHECK(gt_device_op__attribute(&t.cct, t.site, &op) == 0);
	CHECK_EQ_U(n_metrics(t.site), 0);
	ph = t.site->children;
	CHECK(ph && ph->kind == GT_NODE_PLACEHOLDER && ph->key == GT_PH_GPU_KERNEL);
	CHECK_EQ_U(gt_cct__get(ph, GT_M_GKER), 20);
	CHECK_EQ_U(gt_cct__get(ph, GT_M_GKER_COUNT), 1);
	/* Launch facts that are zero allocate no cell. */
	CHECK_EQ_U(n_metrics(ph), 2);
	CHECK_EQ_U(n_children(ph), 0);
}

static void test_copies(void)
{
	static const struct {
		uint8_t dir;
		enum gt_placeholder ph;
		enum gt_metric ns, bytes, count;
	} c[] = {
		{ GT_COPY_H2D, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_H2D, GT_M_GXCOPY_H2D_BYTES,
		  GT_M_GXCOPY_H2D_COUNT },
		{ GT_COPY_D2H, GT_PH_GPU_COPY_D2H, GT_M_GXCOPY_D2H, GT_M_GXCOPY_D2H_BYTES,
		  GT_M_GXCOPY_D2H_COUNT },
		{ GT_COPY_D2D, GT_PH_GPU_COPY_D2D, GT_M_GXCOPY_D2D, GT_M_GXCOPY_D2D_BYTES,
		  GT_M_GXCOPY_D2D_COUNT },
		{ GT_COPY_OTHER, GT_PH_GPU_COPY, GT_M_GXCOPY_OTHER, GT_M_GXCOPY_OTHER_BYTES,
		  GT_M_GXCOPY_OTHER_COUNT },
	};
	struct tree t;

	tree__init(&t);
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct gt_device_op op = { .kind = GT_DEVOP_COPY, .copy = c[i].dir,
					   .start_ns = 100, .end_ns = 100 + 10 * (i + 1),
					   .bytes = 4096u << i };
		struct gt_cct_node *ph;

		CHECK(gt_device_op__placeholder(&op) == c[i].ph);
		ph = gt_cct__placeholder(&t.cct, t.site, c[i].ph);
		CHECK(gt_device_op__attribute(&t.cct, ph, &op) == 0);
		CHECK_EQ_U(gt_cct__get(ph, c[i].ns), 10 * (i + 1));
		CHECK_EQ_U(gt_cct__get(ph, c[i].bytes), 4096u << i);
		CHECK_EQ_U(gt_cct__get(ph, c[i].count), 1);
		CHECK_EQ_U(n_metrics(ph), 3);
	}
	/* A placeholder chosen at the API call wins over the direction's own
	 * placeholder: cudaMemcpyDefault is issued as <gpu copy>. */
	{
		struct gt_device_op op = { .kind = GT_DEVOP_COPY, .copy = GT_COPY_D2H,
					   .start_ns = 0, .end_ns = 7, .bytes = 9 };
		struct gt_cct_node *ph = gt_cct__placeholder(&t.cct, t.site, GT_PH_GPU_COPY);

		CHECK(gt_device_op__attribute(&t.cct, ph, &op) == 0);
		CHECK_EQ_U(gt_cct__get(ph, GT_M_GXCOPY_D2H), 7);
		CHECK_EQ_U(gt_cct__get(ph, GT_M_GXCOPY_OTHER), 10 * 4);
		CHECK_EQ_U(n_children(ph), 0);
	}
}

static void test_other_kinds(void)
{
	struct tree t;
	struct gt_device_op ms = { .kind = GT_DEVOP_MEMSET, .start_ns = 5, .end_ns = 8,
				   .bytes = 64 };
	struct gt_device_op al = { .kind = GT_DEVOP_ALLOC, .start_ns = 5, .end_ns = 15,
				   .bytes = 1 << 20 };
	struct gt_device_op fr = { .kind = GT_DEVOP_FREE, .start_ns = 5, .end_ns = 9,
				   .bytes = 1 << 20 };
	struct gt_device_op sy = { .kind = GT_DEVOP_SYNC, .start_ns = 50, .end_ns = 40 };
	struct gt_device_op ot = { .kind = GT_DEVOP_OTHER, .start_ns = 1, .end_ns = 2 };
	struct gt_cct_node *n;

	tree__init(&t);
	CHECK(gt_device_op__attribute(&t.cct, NULL, &ms) == 0); /* NULL: under the root */
	n = gt_cct__placeholder(&t.cct, t.cct.root, GT_PH_GPU_MEMSET);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMSET), 3);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMSET_BYTES), 64);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMSET_COUNT), 1);

	n = gt_cct__placeholder(&t.cct, t.site, GT_PH_GPU_ALLOC);
	CHECK(gt_device_op__attribute(&t.cct, n, &al) == 0);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMEM), 10);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMEM_BYTES), 1 << 20);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMEM_COUNT), 1);

	n = gt_cct__placeholder(&t.cct, t.site, GT_PH_GPU_FREE);
	CHECK(gt_device_op__attribute(&t.cct, n, &fr) == 0);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMEM), 4);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMEM_BYTES), 0); /* bytes count allocations only */
	CHECK_EQ_U(gt_cct__get(n, GT_M_GMEM_COUNT), 1);

	n = gt_cct__placeholder(&t.cct, t.site, GT_PH_GPU_SYNC);
	CHECK(gt_device_op__attribute(&t.cct, n, &sy) == 0);
	CHECK_EQ_U(gt_cct__get(n, GT_M_GSYNC), 0); /* end before start: no time */
	CHECK_EQ_U(gt_cct__get(n, GT_M_GSYNC_COUNT), 1);

	n = gt_cct__placeholder(&t.cct, t.site, GT_PH_OMP_TASK);
	CHECK(gt_device_op__attribute(&t.cct, n, &ot) == 0);
	CHECK_EQ_U(n_children(n), 0);
	CHECK(gt_device_op__placeholder(&ot) == GT_PH__COUNT);
}

static void test_correlation_id(void)
{
	uint64_t id = gt_correlation__make(65535, 12345);

	CHECK_EQ_U(gt_correlation__thread(id), 65535);
	CHECK_EQ_U(id & GT_CORRELATION_SEQ_MASK, 12345);
	CHECK(gt_correlation__make(0, 1) != 0);
}

/* ---- the correlation map ---- */

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_map_random(void)
{
	enum { N = 20000, KEYS = 3000 };
	static uint8_t in[KEYS];
	struct corr_map m;
	uint32_t size = 0;

	gt_corrmap__init(&m, 16);
	for (int round = 0; round < N * 10; round++) {
		uint32_t k = (uint32_t)(next_rand() % KEYS);
		/* Ids like the real ones: a few threads, sequential numbers. */
		uint64_t id = gt_correlation__make(k % 5, k / 5 + 1);
		struct corr_entry *e = gt_corrmap__find(&m, id);

		CHECK((e != NULL) == in[k]);
		if (e) {
			CHECK(e->owner == (void *)(uintptr_t)(id * 8));
			gt_corrmap__remove(&m, e);
			in[k] = 0;
			size--;
		} else {
			e = gt_corrmap__insert(&m, id);
			CHECK(e);
			e->owner = (void *)(uintptr_t)(id * 8);
			in[k] = 1;
			size++;
		}
		CHECK_EQ_U(m.size, size);
	}
	for (uint32_t k = 0; k < KEYS; k++) {
		uint64_t id = gt_correlation__make(k % 5, k / 5 + 1);

		CHECK((gt_corrmap__find(&m, id) != NULL) == in[k]);
	}
	CHECK(m.cap <= 4 * KEYS);
	gt_corrmap__fini(&m);
}

static void test_map_park(void)
{
	struct corr_map m;
	struct gt_device_op op = { 0 }, out;
	struct corr_entry *e;

	gt_corrmap__init(&m, 64);
	/* Two activities for id 7, then 62 others fill the pool. */
	for (uint64_t i = 0; i < 64; i++) {
		op.correlation = i < 2 ? 7 : 100 + i;
		op.bytes = i;
		CHECK(gt_corrmap__park(&m, &op) == 0);
	}
	CHECK_EQ_U(m.parked, 64);
	CHECK_EQ_U(m.size, 63);
	/* The pool is full: the oldest (id 7, bytes 0) goes. */
	op.correlation = 5000;
	op.bytes = 5000;
	CHECK(gt_corrmap__park(&m, &op) == 0);
	CHECK_EQ_U(m.evicted, 1);
	e = gt_corrmap__find(&m, 7);
	CHECK(e && !e->owner);
	CHECK(gt_corrmap__unpark(&m, e, &out) == 1);
	CHECK_EQ_U(out.bytes, 1);
	CHECK(gt_corrmap__unpark(&m, e, &out) == 0);
	gt_corrmap__remove(&m, e);
	/* Evict again: the next oldest is id 102 (bytes 2), whose entry goes. */
	CHECK(gt_corrmap__park(&m, &op) == 0);
	CHECK(gt_corrmap__park(&m, &op) == 0);
	CHECK_EQ_U(m.evicted, 2);
	CHECK(!gt_corrmap__find(&m, 102));
	e = gt_corrmap__find(&m, 5000);
	CHECK(e);
	for (int i = 0; i < 3; i++) {
		CHECK(gt_corrmap__unpark(&m, e, &out) == 1);
		CHECK_EQ_U(out.bytes, 5000);
	}
	CHECK_EQ_U(m.parked, 61);
	gt_corrmap__fini(&m);
}

TEST_MAIN({ "kernel_named", test_kernel_named },
	  { "kernel_unnamed_under_frame", test_kernel_unnamed_under_frame },
	  { "copies", test_copies }, { "other_kinds", test_other_kinds },
	  { "correlation_id", test_correlation_id }, { "map_random", test_map_random },
	  { "map_park", test_map_park })
