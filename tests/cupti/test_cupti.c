/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend without a GPU: its record conversion, correlation table,
 * kernel names, occupancy, and the whole path from CUPTI's buffers to the
 * calling-context tree, through the real code and the monitor thread.
 *
 *   test_cupti                    synthetic records (always)
 *   test_cupti replay FILE SHORT  a recording made on a GPU machine by
 *                                 samples/cuda/ops SHORT under
 *                                 GPUTOOL_CUPTI_RECORD (tests/cupti/data/)
 *   test_cupti elide EXE          the static CUDA runtime and nvcc's stubs
 *                                 of an nvcc-built program are found
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/construct.h"
#include "core/config.h"
#include "core/clock.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/blame.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/monitor.h"
#include "tests/cupti/cupti-test.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

static const struct gt_cupti_device h100 = {
	.cc_major = 9, .warp_size = 32, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
	.regs_per_sm = 65536, .regs_per_block = 65536, .smem_per_sm = 233472,
	.smem_reserved_per_block = 1024, .sm_count = 132,
};

static void test_occupancy(void)
{
	uint32_t lim[GT_OCC_LIMITS];

	/* 8 blocks of 8 warps fill the 64 warp slots. */
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 256, 16, 0, lim), 1000);
	CHECK(lim[GT_OCC_SLOTS] == 1000 && lim[GT_OCC_REGS] == 1000 && lim[GT_OCC_SMEM] == 1000);
	/* 64 registers: 2048 per warp, 32 warps fit: 4 blocks. */
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 256, 64, 0, lim), 500);
	CHECK(lim[GT_OCC_SLOTS] == 1000 && lim[GT_OCC_REGS] == 500 && lim[GT_OCC_SMEM] == 1000);
	/* 48 KiB + 1 KiB reserved per block: 4 blocks; with 64 registers too,
	 * each bound alone allows half. */
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 256, 16, 48 << 10, lim), 500);
	CHECK(lim[GT_OCC_REGS] == 1000 && lim[GT_OCC_SMEM] == 500);
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 256, 64, 100 << 10, lim), 250);
	CHECK(lim[GT_OCC_REGS] == 500 && lim[GT_OCC_SMEM] == 250);
	/* One warp per block: the 32 block slots bound it. */
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 32, 16, 0, lim), 500);
	CHECK(lim[GT_OCC_SLOTS] == 500 && lim[GT_OCC_REGS] == 500);
	/* 255 registers with 1024 threads do not fit at all. */
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 1024, 255, 0, lim), 0);
	CHECK(lim[GT_OCC_SLOTS] == 0);
	CHECK_EQ_U(gt_cupti__occupancy(NULL, 256, 16, 0, NULL), 0);
	CHECK_EQ_U(gt_cupti__occupancy(&h100, 0, 16, 0, NULL), 0);
}

static void test_names(void)
{
	char a[] = "_Z5scalePffi", b[] = "_Z5scalePffi", c[] = "empty_kernel";
	const char *na, *nb, *nc;

	/* Without a C++ runtime names stay mangled; one text, one pointer. */
	gt_cupti_lib.demangle = NULL;
	na = gt_cupti__kernel_name(a);
	nb = gt_cupti__kernel_name(b);
	nc = gt_cupti__kernel_name(c);
	CHECK(na && nb && nc);
	CHECK(!strcmp(na, "_Z5scalePffi") && na == nb && na != a);
	CHECK(!strcmp(nc, "empty_kernel"));
	CHECK(gt_cupti__kernel_name(a) == na);
	CHECK(gt_cupti__kernel_name(NULL) == NULL);
}

static void test_corr(void)
{
	uint64_t id = 0;
	int more = 1;

	gt_cupti_corr__put(7, 1007, 1);
	CHECK(gt_cupti_corr__get(7, &id, &more) && id == 1007 && !more);
	CHECK(!gt_cupti_corr__get(8, &id, &more));
	/* A graph: three parts, the last one without "more". */
	gt_cupti_corr__put(9, 1009, 3);
	CHECK(gt_cupti_corr__get(9, &id, &more) && id == 1009 && more);
	CHECK(gt_cupti_corr__get(9, &id, &more) && more);
	CHECK(gt_cupti_corr__get(9, &id, &more) && !more);
	/* The slot of a later id: the earlier one is gone, and counted. */
	gt_cupti_corr__put(7 + GT_CUPTI_CORR_SLOTS, 2007, 1);
	CHECK(!gt_cupti_corr__get(7, &id, &more));
	CHECK(atomic_load(&gt_cupti_stats.overwritten) == 1);
	CHECK(gt_cupti_corr__get(7 + GT_CUPTI_CORR_SLOTS, &id, &more) && id == 2007);
}

/* ---- synthetic buffers ----------------------------------------------------- */

struct synth {
	uint8_t buf[4096] __attribute__((aligned(8)));
	size_t len;
	uint32_t offs[32];
	size_t n;
};

static void *synth__add(struct synth *s, size_t size)
{
	void *p = s->buf + s->len;

	memset(p, 0, size);
	s->offs[s->n++] = (uint32_t)s->len;
	s->len += (size + 7) / 8 * 8;
	return p;
}

/* A kernel record of one thread in one block, over [start, end]. */
static CUpti_ActivityKernel10 *synth__kernel(struct synth *s, uint32_t cid, uint64_t start, uint64_t end,
					     const char *name)
{
	CUpti_ActivityKernel10 *kr = synth__add(s, sizeof(*kr));

	kr->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	kr->correlationId = cid, kr->start = start, kr->end = end;
	kr->gridX = kr->gridY = kr->gridZ = 1;
	kr->blockX = kr->blockY = kr->blockZ = 1;
	kr->name = name;
	return kr;
}

/* Iterates the records of the buffer being delivered, by recorded offsets. */
static const uint32_t *iter_offs;
static size_t iter_n, iter_i;

static int iter_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	(void)valid;
	if (iter_i == iter_n)
		return -1;
	*rec = (CUpti_Activity *)(buf + iter_offs[iter_i++]);
	return 0;
}

void deliver(uint8_t *buf, size_t len, const uint32_t *offs, size_t n)
{
	iter_offs = offs;
	iter_n = n;
	iter_i = 0;
	gt_cupti_activity__deliver(buf, len, iter_next);
}

uint64_t metric_at(struct gt_cct_node *n, enum gt_metric m)
{
	return n ? gt_cct__get(n, m) : 0;
}

struct gt_cct_node *child(struct gt_cct_node *parent, enum gt_node_kind kind, uint64_t key)
{
	for (struct gt_cct_node *c = parent ? parent->children : NULL; c; c = c->sibling)
		if (c->kind == (uint32_t)kind && c->key == key)
			return c;
	return NULL;
}

static struct gt_cct_node *child_named(struct gt_cct_node *parent, const char *name)
{
	for (struct gt_cct_node *c = parent ? parent->children : NULL; c; c = c->sibling)
		if (c->kind == GT_NODE_NAME && !strcmp((const char *)(uintptr_t)c->key, name))
			return c;
	return NULL;
}

static void test_synthetic(void)
{
	static const char site_a[] = "site_a", site_b[] = "site_b";
	static char kname[] = "_Z4axpyPfPKffi";
	struct gt_thread *t;
	struct gt_cct_node *a, *b, *kph, *k, *h2d, *ms;
	struct synth s = { 0 };
	CUpti_ActivityKernel10 *kr;
	CUpti_ActivityMemcpy6 *mr;
	CUpti_ActivityMemset4 *sr;
	struct gt_monitor_stats st;

	gt_cupti_lib.demangle = NULL;
	memcpy((void *)&gt_cupti_devices[0], &h100, sizeof(h100));
	atomic_store(&gt_cupti_devices[0].ready, 1);
	CHECK(gt_monitor__start() == 0);
	t = gt_thread__self(GT_THREAD_INITIAL);
	gt_thread__enter(t);
	a = gt_cct__child(&t->cct, t->cct.root, GT_NODE_NAME, (uintptr_t)site_a, 0);
	b = gt_cct__child(&t->cct, t->cct.root, GT_NODE_NAME, (uintptr_t)site_b, 0);
	/* Two launches from a (CUPTI ids 11, 12), a copy and a memset from b
	 * (13; 14 under a driver call too), and a graph of two kernels (15). */
	CHECK(gt_cupti__issue(t, a, GT_PH_GPU_KERNEL, 11, 1, 0, 0));
	CHECK(gt_cupti__issue(t, a, GT_PH_GPU_KERNEL, 12, 1, 0, 0));
	CHECK(gt_cupti__issue(t, b, GT_PH__COUNT, 13, 1, 0, 0));
	gt_cupti_corr__put(14, gt_cupti__issue(t, b, GT_PH_GPU_MEMSET, 16, 1, 0, 0), 1);
	CHECK(gt_cupti__issue(t, b, GT_PH__COUNT, 15, 2, 0, 0));
	/* Peer copies (17, 18: device 0 to 1, twice; 19: 1 to 0). */
	for (uint32_t id = 17; id <= 19; id++)
		CHECK(gt_cupti__issue(t, b, GT_PH_GPU_COPY_D2D, id, 1, id == 19, 0));
	gt_thread__leave(t);

	for (int i = 0; i < 2; i++) {
		kr = synth__add(&s, sizeof(*kr));
		kr->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		kr->correlationId = 11 + (uint32_t)i;
		kr->start = 1000;
		kr->end = 1500 + (uint64_t)i * 100;
		kr->gridX = 64, kr->gridY = 1, kr->gridZ = 1;
		kr->blockX = 256, kr->blockY = 1, kr->blockZ = 1;
		kr->registersPerThread = 16;
		kr->dynamicSharedMemory = 1024;
		kr->name = kname;
	}
	mr = synth__add(&s, sizeof(*mr));
	mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mr->correlationId = 13, mr->bytes = 1 << 20, mr->start = 10, mr->end = 20;
	sr = synth__add(&s, sizeof(*sr));
	sr->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	sr->correlationId = 14, sr->bytes = 4096, sr->start = 30, sr->end = 35;
	for (int i = 0; i < 2; i++)
		synth__kernel(&s, 15, 100, 200, kname);
	for (uint32_t id = 17; id <= 19; id++) {
		CUpti_ActivityMemcpyPtoP4 *pr = synth__add(&s, sizeof(*pr));

		pr->kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
		pr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
		pr->correlationId = id, pr->start = 40, pr->end = 50;
		pr->srcDeviceId = id == 19, pr->dstDeviceId = id != 19;
		pr->deviceId = id == 19;
		pr->bytes = id == 19 ? 1 << 20 : 8 << 20;
	}
	/* A record of a call the tool never saw. */
	mr = synth__add(&s, sizeof(*mr));
	mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mr->correlationId = 99;
	deliver(s.buf, s.len, s.offs, s.n);

	monitor_test__flush();
	gt_monitor__drain(t);
	kph = child(a, GT_NODE_PLACEHOLDER, GT_PH_GPU_KERNEL);
	k = kph ? kph->children : NULL;
	CHECK(k && k->kind == GT_NODE_NAME && !strcmp((const char *)(uintptr_t)k->key, kname));
	CHECK_EQ_U(metric_at(k, GT_M_GKER_COUNT), 2);
	CHECK_EQ_U(metric_at(k, GT_M_GKER), 500 + 600);
	CHECK_EQ_U(metric_at(k, GT_M_GKER_BLKS), 2 * 64);
	CHECK_EQ_U(metric_at(k, GT_M_GKER_BLK_THR), 2 * 256);
	CHECK_EQ_U(metric_at(k, GT_M_GKER_THR_REG), 2 * 16);
	CHECK_EQ_U(metric_at(k, GT_M_GKER_DYMEM), 2 * 1024);
	/* 256 threads, 16 registers, 1 KiB + 1 KiB: 8 blocks, full. */
	CHECK_EQ_U(metric_at(k, GT_M_GKER_OCC_THR), 2 * 1000);
	/* The copy issued without a placeholder got the one of its direction. */
	h2d = child(b, GT_NODE_PLACEHOLDER, GT_PH_GPU_COPY_H2D);
	CHECK_EQ_U(metric_at(h2d, GT_M_GXCOPY_H2D_BYTES), 1 << 20);
	CHECK_EQ_U(metric_at(h2d, GT_M_GXCOPY_H2D_COUNT), 1);
	CHECK_EQ_U(metric_at(h2d, GT_M_GXCOPY_H2D), 10);
	ms = child(b, GT_NODE_PLACEHOLDER, GT_PH_GPU_MEMSET);
	CHECK_EQ_U(metric_at(ms, GT_M_GMSET_BYTES), 4096);
	/* Both kernels of the graph, under the call site's own <gpu kernel>. */
	k = child_named(child(b, GT_NODE_PLACEHOLDER, GT_PH_GPU_KERNEL), kname);
	CHECK_EQ_U(metric_at(k, GT_M_GKER_COUNT), 2);
	/* Peer copies: bytes, count and time by direction, as names. */
	k = child_named(child(b, GT_NODE_PLACEHOLDER, GT_PH_GPU_COPY_D2D), "device 0 -> device 1");
	CHECK_EQ_U(metric_at(k, GT_M_GXCOPY_D2D_BYTES), 2 * (8 << 20));
	CHECK_EQ_U(metric_at(k, GT_M_GXCOPY_D2D_COUNT), 2);
	CHECK_EQ_U(metric_at(k, GT_M_GXCOPY_D2D), 20);
	k = child_named(child(b, GT_NODE_PLACEHOLDER, GT_PH_GPU_COPY_D2D), "device 1 -> device 0");
	CHECK_EQ_U(metric_at(k, GT_M_GXCOPY_D2D_BYTES), 1 << 20);
	CHECK(atomic_load(&gt_cupti_stats.untracked) == 1);
	gt_monitor__stats(&st);
	CHECK_EQ_U(st.map_size, 0);
	CHECK_EQ_U(st.pending, 0);
}

/* ---- the API callbacks ----------------------------------------------------------- */

struct ph_sum {
	enum gt_placeholder ph;
	enum gt_metric m;
	uint64_t v;
	unsigned nodes;
};

static void ph_sum__visit(struct gt_cct_node *n, void *arg)
{
	struct ph_sum *s = arg;

	if (n->kind != GT_NODE_PLACEHOLDER || n->key != (uint64_t)s->ph)
		return;
	s->nodes++;
	s->v += gt_cct__get(n, s->m);
	for (struct gt_cct_node *c = n->children; c; c = c->sibling)
		s->v += gt_cct__get(c, s->m);
}

uint64_t tree_sum(struct gt_thread *t, enum gt_placeholder ph, enum gt_metric m)
{
	struct ph_sum s = { ph, m, 0, 0 };

	gt_cct__walk(t->cct.root, ph_sum__visit, &s);
	return s.v;
}

static void api(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, uint32_t cid, const void *params,
		int ret, void (*inner)(void))
{
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = params,
				  .functionReturnValue = &ret, .correlationId = cid };

	gt_cupti__callback(NULL, dom, cbid, &cb);
	if (inner)
		inner();
	cb.callbackSite = CUPTI_API_EXIT;
	gt_cupti__callback(NULL, dom, cbid, &cb);
}

static void driver_copy(void)
{
	cuMemcpyHtoD_v2_params p = { 0 };

	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 102, &p, 0, NULL);
}

static CUptiResult CUPTIAPI enable(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
				   CUpti_CallbackId c)
{
	(void)e, (void)h, (void)d, (void)c;
	return CUPTI_SUCCESS;
}

/* The backend live on this thread, its API callbacks enabled. */
static struct gt_thread *callbacks__start(void)
{
	CHECK(gt_monitor__start() == 0);
	/* The class table is filled when callbacks are enabled. */
	gt_cupti_lib.cuptiEnableCallback = enable;
	CHECK(gt_cupti__enable_callbacks(NULL) == CUPTI_SUCCESS);
	atomic_store(&gt_cupti_live, 1);
	return gt_thread__self(GT_THREAD_INITIAL);
}

static void test_callbacks(void)
{
	cudaMemcpy_v3020_params h2d = { .count = 4096, .kind = cudaMemcpyHostToDevice };
	cudaMemcpy_v3020_params dflt = { .count = 8192, .kind = cudaMemcpyDefault };
	cudaMalloc_v3020_params alloc = { .size = 1 << 20 };
	cudaLaunchKernel_v7000_params launch = { 0 };
	struct gt_thread *t;
	struct synth s = { 0 };
	CUpti_ActivityMemcpy6 *mr;
	struct gt_monitor_stats st;

	t = callbacks__start();
	/* A runtime copy with the driver call it makes inside (CUPTI ids 101,
	 * 102); an allocation; a synchronization; a launch that fails; a copy
	 * whose direction only the activity knows (106). */
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 101, &h2d, 0,
	    driver_copy);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 103, &alloc, 0,
	    NULL);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 104,
	    NULL, 0, NULL);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 105,
	    &launch, 1, NULL);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 106, &dflt, 0,
	    NULL);
	/* A function the backend does not intercept. */
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 107, NULL, 0,
	    NULL);

	/* The copy's record carries the driver call's id. */
	mr = synth__add(&s, sizeof(*mr));
	mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mr->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, mr->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mr->correlationId = 102, mr->bytes = 4096, mr->start = 5, mr->end = 9;
	mr = synth__add(&s, sizeof(*mr));
	mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	mr->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, mr->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	mr->correlationId = 106, mr->bytes = 8192, mr->start = 10, mr->end = 30;
	deliver(s.buf, s.len, s.offs, s.n);
	monitor_test__flush();
	gt_monitor__drain(t);

	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_H2D_BYTES), 4096);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_H2D), 4);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_D2H, GT_M_GXCOPY_D2H_BYTES), 8192);
	/* From pageable memory: advice; into pinned memory: none. */
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_PAGEABLE_BYTES), 4096);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_D2H, GT_M_GXCOPY_PAGEABLE_BYTES), 0);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_ALLOC, GT_M_GMEM_BYTES), 1 << 20);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_ALLOC, GT_M_GMEM_COUNT), 1);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_SYNC, GT_M_GSYNC_COUNT), 1);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_KERNEL, GT_M_GKER_COUNT), 0);
	CHECK_EQ_U(atomic_load(&gt_cupti_stats.failed_calls), 1);
	CHECK_EQ_U(atomic_load(&gt_cupti_stats.api_calls), 5);
	gt_monitor__stats(&st);
	CHECK_EQ_U(st.map_size, 0);
	CHECK_EQ_U(st.pending, 0);
	atomic_store(&gt_cupti_live, 0);
}

/* Uploads of the same host bytes again: counted at the copy's call site,
 * from the runtime's call (not again for the driver call inside it) and
 * from the driver's; failed calls and downloads are not uploads. */
static unsigned char up_small[4096];
static unsigned char up_big[3 << 20];

static void driver_copy_small(void)
{
	cuMemcpyHtoD_v2_params p = { .srcHost = up_small, .ByteCount = sizeof(up_small) };

	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 0, &p, 0, NULL);
}

/* A programming model's operation in progress (core/construct.h): the
 * uploads its runtime makes are the layer's to judge. */
static struct gt_cct_node *in_construct;

static struct gt_cct_node *construct_now(struct gt_thread *t)
{
	(void)t;
	return in_construct;
}

static void all_sum__visit(struct gt_cct_node *n, void *arg)
{
	struct ph_sum *s = arg;

	s->v += gt_cct__get(n, s->m);
}

static void test_resent_uploads(void)
{
	cudaMemcpy_v3020_params h2d = { .src = up_small, .count = sizeof(up_small),
					.kind = cudaMemcpyHostToDevice };
	cudaMemcpy_v3020_params d2h = { .dst = up_small, .src = up_small, .count = sizeof(up_small),
					.kind = cudaMemcpyDeviceToHost };
	cuMemcpyHtoDAsync_v2_params big = { .srcHost = up_big, .ByteCount = sizeof(up_big) };
	struct gt_thread *t;
	uint32_t cid = 200;

	t = callbacks__start();
	for (size_t i = 0; i < sizeof(up_big); i++)
		up_big[i] = (unsigned char)(i * 31);
	/* 4 KiB, every byte compared: the 2nd and 3rd upload are resent; a
	 * download between them is not an upload; the 4th changed. */
	for (int i = 0; i < 3; i++) {
		api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, cid++, &h2d, 0,
		    driver_copy_small);
		api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, cid++, &d2h, 0,
		    NULL);
	}
	up_small[100] = 1;
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, cid++, &h2d, 0,
	    driver_copy_small);
	/* A failed call: neither counted nor remembered. */
	up_small[100] = 2;
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, cid++, &h2d, 1,
	    NULL);
	up_small[100] = 1;
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, cid++, &h2d, 0,
	    driver_copy_small);
	/* 3 MiB from the driver, compared by its sample: the 2nd to 4th are
	 * resent; a change to its first byte makes the 5th new. */
	for (int i = 0; i < 4; i++)
		api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, cid++, &big,
		    0, NULL);
	up_big[0] ^= 1;
	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, cid++, &big, 0,
	    NULL);
	/* Inside another layer's operation: neither counted here nor
	 * remembered (the next upload outside is not a resend of it). */
	CHECK(gt_construct__provide(construct_now) == 0);
	in_construct = t->cct.root;
	for (int i = 0; i < 2; i++)
		api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, cid++, &h2d, 0,
		    driver_copy_small);
	in_construct = NULL;
	gt_monitor__drain(t);

	{
		struct ph_sum all = { .m = GT_M_GXCOPY_RESENT_COUNT };

		gt_cct__walk(t->cct.root, all_sum__visit, &all);
		CHECK_EQ_U(all.v, 3 + 3);
	}
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_RESENT_COUNT), 3 + 3);
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_RESENT_BYTES),
		   3 * sizeof(up_small) + 3 * sizeof(up_big));
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_D2H, GT_M_GXCOPY_RESENT_COUNT), 0);
	atomic_store(&gt_cupti_live, 0);
}

/* ---- inlined runtime code --------------------------------------------------------- */

static void test_inline_runtime(void)
{
	static char kname[] = "_Z4axpyPfPKffi";
	static char tname[] = "_Z10add_kernelIdEvPKT_S2_PS0_";

	gt_cupti_lib.demangle = NULL;
	CHECK(gt_cupti__kernel_name(kname));
	/* A template kernel, demangled as CUPTI's names are when libstdc++
	 * is there; DWARF names its inlined host stub "add_kernel<double>". */
	gt_cupti_lib.demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!gt_cupti_lib.demangle) {
		void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY);

		gt_cupti_lib.demangle = cxx ? dlsym(cxx, "__cxa_demangle") : NULL;
	}
	CHECK(gt_cupti_lib.demangle);
	CHECK(gt_cupti__kernel_name(tname));
	CHECK(gt_cupti_elide__inline("add_kernel<double>", "/home/u/stream.cu"));
	CHECK(gt_cupti_elide__inline("void add_kernel<double>(double const*, double const*, double*)", NULL));
	CHECK(!gt_cupti_elide__inline("add_kernel<float>", "/home/u/stream.cu"));
	/* nvcc's stubs, by name and by their generated file. */
	CHECK(gt_cupti_elide__inline("__device_stub__Z4axpyPfPKffi", NULL));
	CHECK(gt_cupti_elide__inline("__wrapper__device_stub_axpy", "/tmp/x.cudafe1.stub.c"));
	CHECK(gt_cupti_elide__inline(NULL, "/tmp/tmpxft_00007c8c_00000000-14_Simulation.cudafe1.stub.c"));
	CHECK(gt_cupti_elide__inline("__cudaLaunchKernel_helper",
				     "/usr/local/cuda-13.0/include/crt/device_functions.h"));
	CHECK(gt_cupti_elide__inline("cudaError cudaLaunchKernel<char>(char const*, dim3, dim3, void**, unsigned long, CUstream_st*)",
				     "/usr/local/cuda/targets/x86_64-linux/include/cuda_runtime.h"));
	/* The host stub named after a kernel that ran. */
	CHECK(gt_cupti_elide__inline("_Z4axpyPfPKffi", "/home/u/app.cu"));
	/* Libraries beside the runtime, and the user's code, stay. */
	CHECK(!gt_cupti_elide__inline("thrust::reduce", "/usr/local/cuda/include/cccl/thrust/detail/reduce.inl"));
	CHECK(!gt_cupti_elide__inline("scale(double*, int)", "/home/u/app.cu"));
	CHECK(!gt_cupti_elide__inline(NULL, NULL));
}

/* ---- implicit synchronizations ------------------------------------------------ */

static CUptiResult CUPTIAPI device_zero(CUcontext ctx, uint32_t *dev)
{
	(void)ctx;
	*dev = 0;
	return CUPTI_SUCCESS;
}

static uint64_t wait_ns;

struct found {
	struct gt_cct_node *n[2];
	int count;
};

static void find_d2h(struct gt_cct_node *n, void *arg)
{
	struct found *f = arg;

	if (n->kind == GT_NODE_PLACEHOLDER && n->key == GT_PH_GPU_COPY_D2H && f->count < 2)
		f->n[f->count++] = n;
}

static void find_kernel(struct gt_cct_node *n, void *arg)
{
	struct gt_cct_node **out = arg;

	if (n->kind == GT_NODE_PLACEHOLDER && n->key == GT_PH_GPU_KERNEL && !*out)
		*out = n;
}

/* What the device does while the host is blocked in a copy: WAIT_NS. */
static void block(void)
{
	struct timespec ts = { 0, (long)wait_ns };

	nanosleep(&ts, NULL);
}

/* An API call in context ctx (0x1000: device 0's, 0x2000: device 1's, for
 * device_by_ctx). */
static void api_ctx(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const char *name, uint32_t cid,
		    const void *params, void (*inner)(void), uintptr_t ctx)
{
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = params,
				  .functionName = name, .correlationId = cid, .context = (CUcontext)ctx };
	int ret = 0;

	cb.functionReturnValue = &ret;
	gt_cupti__callback(NULL, dom, cbid, &cb);
	if (inner)
		inner();
	cb.callbackSite = CUPTI_API_EXIT;
	gt_cupti__callback(NULL, dom, cbid, &cb);
}

static void api_named(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const char *name, uint32_t cid,
		      const void *params, void (*inner)(void))
{
	api_ctx(dom, cbid, name, cid, params, inner, 0x1000);
}

/*
 * A kernel, then a blocking cudaMemcpy back that waits for it (the copy's
 * API call lasts while the kernel runs): CPU_IDLE at the copy, as long as
 * the call, and CPU_IDLE_CAUSE at the kernel's launch. The same with
 * cudaMemcpyAsync: no wait, no blame.
 */
static void test_implicit_sync(void)
{
	cudaLaunchKernel_v7000_params launch = { 0 };
	cudaMemcpy_v3020_params d2h = { .count = 64, .kind = cudaMemcpyDeviceToHost };
	cudaMemcpyAsync_v3020_params d2h_async = { .count = 64, .kind = cudaMemcpyDeviceToHost };
	static char kname[] = "busy";
	struct gt_cct_node *copy, *async, *kernel;
	struct found found = { { NULL, NULL }, 0 };
	struct synth s = { 0 };
	CUpti_ActivityMemcpy6 *mr;
	uint64_t t_launch, t_copy0, t_copy1, t_async;
	struct gt_thread *t;

	gt_cupti_lib.demangle = NULL;
	memcpy((void *)&gt_cupti_devices[0], &h100, sizeof(h100));
	atomic_store(&gt_cupti_devices[0].ready, 1);
	CHECK(gt_monitor__start() == 0);
	t = gt_thread__self(GT_THREAD_INITIAL);
	gt_cupti_lib.cuptiEnableCallback = enable;
	gt_cupti_lib.cuptiGetDeviceId = device_zero;
	CHECK(gt_cupti__enable_callbacks(NULL) == CUPTI_SUCCESS);
	atomic_store(&gt_cupti_live, 1);

	t_launch = gt_clock__now();
	api_named(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		  "cudaLaunchKernel", 301, &launch, NULL);
	wait_ns = 50000000;
	t_copy0 = gt_clock__now();
	api_named(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", 302,
		  &d2h, block);
	t_copy1 = gt_clock__now();
	t_async = gt_clock__now();
	api_named(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		  "cudaMemcpyAsync", 303, &d2h_async, NULL);

	/* The kernel ran from its launch until just before the copy returned;
	 * the copies took a microsecond each. */
	synth__kernel(&s, 301, t_launch, t_copy1 - 2000, kname);
	mr = synth__add(&s, sizeof(*mr));
	mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	mr->correlationId = 302, mr->bytes = 64, mr->start = t_copy1 - 2000, mr->end = t_copy1 - 1000;
	mr = synth__add(&s, sizeof(*mr));
	mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	mr->correlationId = 303, mr->bytes = 64, mr->start = t_async, mr->end = t_async + 1000;
	deliver(s.buf, s.len, s.offs, s.n);
	monitor_test__flush();
	monitor_test__flush(); /* the sync settles once its operations are in */
	gt_monitor__drain(t);

	/* Each copy under its call site: the blocking one has CPU_IDLE, as
	 * long as the call (no more than measured around it); the other none. */
	gt_cct__walk(t->cct.root, find_d2h, &found);
	CHECK_EQ_U(found.count, 2);
	copy = found.n[metric_at(found.n[0], GT_M_CPU_IDLE) ? 0 : 1];
	async = found.n[metric_at(found.n[0], GT_M_CPU_IDLE) ? 1 : 0];
	CHECK_EQ_U(tree_sum(t, GT_PH_GPU_COPY_D2H, GT_M_GXCOPY_D2H_COUNT), 2);
	CHECK_EQ_U(metric_at(async, GT_M_CPU_IDLE), 0);
	CHECK(metric_at(copy, GT_M_CPU_IDLE) >= wait_ns);
	CHECK(metric_at(copy, GT_M_CPU_IDLE) <= t_copy1 - t_copy0);
	kernel = NULL;
	gt_cct__walk(t->cct.root, find_kernel, &kernel);
	CHECK(kernel);
	/* The wait, charged to the kernel that ran during it (shared with the
	 * copy for the microsecond it ran too). */
	CHECK(tree_sum(t, GT_PH_GPU_KERNEL, GT_M_CPU_IDLE_CAUSE) >= wait_ns - 2000);
	CHECK(tree_sum(t, GT_PH_GPU_KERNEL, GT_M_CPU_IDLE_CAUSE) <= metric_at(copy, GT_M_CPU_IDLE));
	atomic_store(&gt_cupti_live, 0);
}

/*
 * One thread driving two GPUs: a kernel launched on device 1's stream, then,
 * with device 0 current, cudaStreamSynchronize on that stream. The wait is
 * device 1's: blamed on the kernel (CPU_IDLE_CAUSE), not counted as time
 * when nothing the sync waited for ran.
 */
static CUptiResult CUPTIAPI device_by_ctx(CUcontext ctx, uint32_t *dev)
{
	*dev = (uintptr_t)ctx == 0x2000;
	return CUPTI_SUCCESS;
}

static CUresult CUDAAPI stream_ctx(CUstream s, CUcontext *ctx)
{
	(void)s;
	*ctx = (CUcontext)(uintptr_t)0x2000;
	return CUDA_SUCCESS;
}

static CUptiResult CUPTIAPI stream_id(CUcontext ctx, CUstream s, uint32_t *id)
{
	(void)s;
	*id = (uintptr_t)ctx == 0x2000 ? 7 : 3; /* 3: what device 0's context would make of it */
	return CUPTI_SUCCESS;
}

static struct gt_cct_node *ph_of(struct gt_thread *t)
{
	struct gt_cct_node *ph = NULL;

	gt_cct__walk(t->cct.root, find_kernel, &ph);
	return ph;
}

static void test_stream_device(void)
{
	cudaLaunchKernel_v7000_params launch = { 0 };
	cudaStreamSynchronize_v3020_params sync = { .stream = (cudaStream_t)(uintptr_t)0x5550 };
	static char kname[] = "on_device_1", kname0[] = "on_device_0";
	struct synth s = { 0 };
	CUpti_ActivityKernel10 *kr;
	uint64_t t_launch, t_sync1;
	struct gt_thread *t;

	gt_cupti_lib.demangle = NULL;
	for (int d = 0; d < 2; d++) {
		memcpy((void *)&gt_cupti_devices[d], &h100, sizeof(h100));
		atomic_store(&gt_cupti_devices[d].ready, 1);
	}
	CHECK(gt_monitor__start() == 0);
	t = gt_thread__self(GT_THREAD_INITIAL);
	gt_cupti_lib.cuptiEnableCallback = enable;
	gt_cupti_lib.cuptiGetDeviceId = device_by_ctx;
	gt_cupti_lib.cuStreamGetCtx = stream_ctx;
	gt_cupti_lib.cuptiGetStreamId = stream_id;
	CHECK(gt_cupti__enable_callbacks(NULL) == CUPTI_SUCCESS);
	atomic_store(&gt_cupti_live, 1);

	t_launch = gt_clock__now();
	/* Device 0 has had work too: a short kernel, measured before the sync. */
	api_ctx(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
		400, &launch, NULL, 0x1000);
	kr = synth__kernel(&s, 400, t_launch, t_launch + 1000, kname0);
	kr->deviceId = 0, kr->streamId = 3;
	deliver(s.buf, s.len, s.offs, s.n);
	monitor_test__flush();
	s = (struct synth){ 0 };
	api_ctx(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
		401, &launch, NULL, 0x2000);
	wait_ns = 50000000;
	api_ctx(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
		"cudaStreamSynchronize", 402, &sync, block, 0x1000);
	t_sync1 = gt_clock__now();
	kr = synth__kernel(&s, 401, t_launch, t_sync1 - 1000, kname);
	kr->deviceId = 1, kr->streamId = 7;
	deliver(s.buf, s.len, s.offs, s.n);
	monitor_test__flush();
	monitor_test__flush();
	gt_monitor__drain(t);
	CHECK(tree_sum(t, GT_PH_GPU_SYNC, GT_M_CPU_IDLE) >= wait_ns);
	CHECK(child_named(ph_of(t), kname) && metric_at(child_named(ph_of(t), kname), GT_M_CPU_IDLE_CAUSE) >= wait_ns - 2000);
	CHECK_EQ_U(metric_at(child_named(ph_of(t), kname0), GT_M_CPU_IDLE_CAUSE), 0);
	CHECK(tree_sum(t, GT_PH_GPU_SYNC, GT_M_CPU_IDLE_OVERHEAD) < 1000000);
	gt_cupti_lib.cuStreamGetCtx = NULL;
	gt_cupti_lib.cuptiGetStreamId = NULL;
	atomic_store(&gt_cupti_live, 0);
}

/* ---- threads that come and go ------------------------------------------------- */

/*
 * A program whose threads each make one copy and end, BATCH alive at a time,
 * THREADS in all: the activities come after their thread has ended, so the
 * measurements wait in the channels of ended threads' records until the next
 * threads take those records over. Every byte reaches a tree, and the
 * tool's memory does not grow with the number of threads.
 */
enum { THREADS = 10000, BATCH = 4, COPY_BYTES = 4096 };

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static pthread_barrier_t batch_barrier;

static void *copy_thread(void *arg)
{
	cudaMemcpy_v3020_params h2d = { .count = COPY_BYTES, .kind = cudaMemcpyHostToDevice };

	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	    (uint32_t)(uintptr_t)arg, &h2d, 0, NULL);
	/* All of a batch alive at once: each holds a record of its own. */
	pthread_barrier_wait(&batch_barrier);
	return NULL;
}

/* Takes a record over, applies what waits in it, and ends. */
static void *drain_thread(void *arg)
{
	(void)arg;
	gt_monitor__drain(gt_thread__self(GT_THREAD_OTHER));
	pthread_barrier_wait(&batch_barrier);
	return NULL;
}

static void run_batch(void *(*fn)(void *), uint32_t first_cid)
{
	pthread_t th[BATCH];

	for (int i = 0; i < BATCH; i++)
		CHECK(!pthread_create(&th[i], NULL, fn, (void *)(uintptr_t)(first_cid + (uint32_t)i)));
	for (int i = 0; i < BATCH; i++)
		CHECK(!pthread_join(th[i], NULL));
}

/* The activities of a batch's copies, delivered on this thread (CUPTI's). */
static void deliver_batch(uint32_t first_cid)
{
	struct synth s = { 0 };

	for (uint32_t i = 0; i < BATCH; i++) {
		CUpti_ActivityMemcpy6 *mr = synth__add(&s, sizeof(*mr));

		mr->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		mr->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		mr->correlationId = first_cid + i, mr->bytes = COPY_BYTES;
		mr->start = 100, mr->end = 101;
	}
	deliver(s.buf, s.len, s.offs, s.n);
	monitor_test__flush();
}

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void test_short_threads(void)
{
	uint64_t bytes = 0, time = 0;
	uint32_t records_before, records;
	long rss_warm = 0, rss_end;

	CHECK(gt_monitor__start() == 0);
	gt_thread__self(GT_THREAD_INITIAL);
	gt_cupti_lib.cuptiEnableCallback = enable;
	CHECK(gt_cupti__enable_callbacks(NULL) == CUPTI_SUCCESS);
	atomic_store(&gt_cupti_live, 1);
	CHECK(!pthread_barrier_init(&batch_barrier, NULL, BATCH));
	records_before = gt_thread__count();
	for (uint32_t cid = 1000; cid < 1000 + THREADS; cid += BATCH) {
		run_batch(copy_thread, cid);
		deliver_batch(cid);
		if (cid - 1000 == THREADS / 10)
			rss_warm = rss_kb();
	}
	run_batch(drain_thread, 0);
	rss_end = rss_kb();

	/* One record per thread alive at once (and this thread's, which the
	 * deliveries use), however many threads there were. */
	records = gt_thread__count();
	CHECK(records - records_before <= BATCH + 1);
	CHECK(gt_thread__reused() >= THREADS + BATCH - (records - records_before));
	for (uint32_t i = 0; i < records; i++) {
		struct gt_thread *t = gt_thread__at(i);

		bytes += tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_H2D_BYTES);
		time += tree_sum(t, GT_PH_GPU_COPY_H2D, GT_M_GXCOPY_H2D);
	}
	CHECK_EQ_U(bytes, (uint64_t)THREADS * COPY_BYTES);
	CHECK_EQ_U(time, THREADS);
	/* 9,000 threads after the first thousand: before records were shared,
	 * each kept about 9 KB. */
	fprintf(stderr, "resident memory: %ld KB after %u threads, %ld KB after %u\n", rss_warm,
		THREADS / 10, rss_end, THREADS);
	/* AddressSanitizer keeps freed memory and every thread's shadow. */
	if (!UNDER_ASAN)
		CHECK(rss_end - rss_warm < 1024);
	atomic_store(&gt_cupti_live, 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		{ "SM clock: no reading while idle", test_smclock_idle },
		{ "SM clock: NVML's readings while busy", test_smclock_busy },
		{ "occupancy", test_occupancy },
		{ "kernel names", test_names },
		{ "correlation table", test_corr },
		{ "records through the monitor", test_synthetic },
		{ "API callbacks: nesting, API-measured operations, failures", test_callbacks },
		{ "uploads of unchanged host bytes", test_resent_uploads },
		{ "blocking copies: CPU_IDLE and CPU_IDLE_CAUSE", test_implicit_sync },
		{ "a stream of another device than the current one: its device's blame", test_stream_device },
		{ "runtime code inlined into the program", test_inline_runtime },
		{ "10,000 short-lived threads: every copy measured, memory flat", test_short_threads },
		{ "PC samples: the period for a budget, the hardware buffer for a period", test_pc_period },
		{ "PC samples: CUPTI's profiler library loaded ahead, beside libcupti", test_pc_preload },
		{ "PC samples: stall classes, source lines, shares by launch time", test_pc_sampling },
		{ "instruction counts: warps and threads at their lines, shares by launch time", test_sass_counts },
		{ "instruction counts: the kernels' activity of the serial kind", test_counts_serial_kind },
	};

	if (argc > 3 && !strcmp(argv[1], "replay"))
		return replay(argv[2], (unsigned)atoi(argv[3])) ? 1 : 0;
	if (argc > 3 && !strcmp(argv[1], "replay-advice"))
		return replay_advice(argv[2], (unsigned)atoi(argv[3])) ? 1 : 0;
	if (argc > 2 && !strcmp(argv[1], "replay-profile"))
		return replay_profile(argv[2]) ? 1 : 0;
	if (argc > 3 && !strcmp(argv[1], "replay-pc"))
		return replay_pc(argv[2], argv[3], argc > 4 ? (unsigned)atoi(argv[4]) : 1) ? 1 : 0;
	if (argc > 2 && !strcmp(argv[1], "replay-blame"))
		return replay_blame(argv[2]) ? 1 : 0;
	if (argc > 1 && !strcmp(argv[1], "pcsamp-bg"))
		return test_pc_bg();
	if (argc > 2 && !strcmp(argv[1], "elide"))
		return elide(argv[2]) ? 1 : 0;
	return test__run(cases, sizeof(cases) / sizeof(*cases));
}
