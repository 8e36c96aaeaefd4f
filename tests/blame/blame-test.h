/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_BLAME_TEST_H
#define GT_TESTS_BLAME_TEST_H

/*
 * What the blame tests share: a fake device backend driven by hand. A test
 * thread launches (gt_monitor__correlate_device at a placeholder of its own
 * tree), a device delivers activities with the timestamps the test chose,
 * and syncs report the windows the test chose, so every figure is exact.
 */
#include <stdint.h>
#include <string.h>

#include "core/cct.h"
#include "core/thread.h"
#include "gpu/blame.h"
#include "gpu/device-op.h"
#include "gpu/monitor.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull

/* A placeholder under a frame of @t's tree: a call site. */
static inline struct gt_cct_node *site(struct gt_thread *t, uintptr_t pc, enum gt_placeholder ph)
{
	struct gt_cct_node *n;

	gt_thread__enter(t);
	n = gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, pc, 0);
	n = n ? gt_cct__placeholder(&t->cct, n, ph) : NULL;
	gt_thread__leave(t);
	CHECK(n);
	return n;
}

/* What a backend does at a launch. */
static inline uint64_t launch(struct gt_thread *t, struct gt_cct_node *ph, int device)
{
	uint64_t id;

	gt_monitor__drain(t);
	id = gt_monitor__correlate_device(t, ph, device);
	CHECK(id != 0);
	return id;
}

/* What a device reports when a kernel completed; @t delivers it. */
static inline void complete(struct gt_thread *t, uint64_t id, uint64_t start, uint64_t end,
			    int device, uint64_t stream, const char *name)
{
	struct gt_device_op op;

	memset(&op, 0, sizeof(op));
	op.correlation = id;
	op.kind = GT_DEVOP_KERNEL;
	op.start_ns = start;
	op.end_ns = end;
	op.device = (uint32_t)device;
	op.stream = stream;
	op.name = name;
	gt_monitor__activity(t, &op);
	gt_monitor__notify();
}

/* Everything delivered so far is processed and @t's share applied. */
static inline void settle(struct gt_thread *t)
{
	monitor_test__flush();
	gt_monitor__drain(t);
}

struct incl_arg {
	enum gt_metric m;
	uint64_t sum;
};

static inline void incl__visit(struct gt_cct_node *n, void *arg)
{
	struct incl_arg *a = arg;

	a->sum += gt_cct__get(n, a->m);
}

/* Metric @m summed over @n and everything below it. */
static inline uint64_t incl(struct gt_cct_node *n, enum gt_metric m)
{
	struct incl_arg a = { m, 0 };

	gt_cct__walk(n, incl__visit, &a);
	return a.sum;
}

#endif
