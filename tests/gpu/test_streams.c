/* SPDX-License-Identifier: MIT */
/*
 * The launch-bound measurement (gpu/streams.h): the time a kernel's stream
 * stood idle right before it, the kernel already issued. First the table
 * alone, case by case; then through the monitor, with correlations issued
 * on this thread and activities whose times put known gaps between them,
 * charged as GKER_LAUNCH_GAP at the kernel's node.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/clock.h"
#include "core/thread.h"
#include "gpu/blame.h"
#include "gpu/monitor.h"
#include "gpu/streams.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

static struct gt_device_op op_of(uint8_t kind, uint32_t device, uint64_t stream, uint64_t start,
				 uint64_t end)
{
	struct gt_device_op op = {
		.kind = kind, .device = device, .stream = stream, .start_ns = start, .end_ns = end,
	};

	return op;
}

static void table_cases(void)
{
	struct gt_device_op op;

	/* The first operation of a stream: nothing before it. */
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 1000, 2000);
	CHECK_EQ_U(gt_streams__idle_before(&op, 500, 1), 0);
	/* Issued at 1500, before the previous kernel ended (2000); began at
	 * 2600: 600 ns idle, the launch's. */
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 2600, 3000);
	CHECK_EQ_U(gt_streams__idle_before(&op, 1500, 1), 600);
	/* Issued at 3500, after the stream went idle (3000): the host was
	 * elsewhere, not counted. */
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 4000, 5000);
	CHECK_EQ_U(gt_streams__idle_before(&op, 3500, 1), 0);
	/* A graph's kernel (not the only activity of its issue): not counted,
	 * but it is the stream's latest. */
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 5100, 6000);
	CHECK_EQ_U(gt_streams__idle_before(&op, 4500, 0), 0);
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 6250, 7000);
	CHECK_EQ_U(gt_streams__idle_before(&op, 4500, 1), 250);
	/* Another stream and another device have their own. */
	op = op_of(GT_DEVOP_KERNEL, 0, 8, 6500, 6600);
	CHECK_EQ_U(gt_streams__idle_before(&op, 100, 1), 0);
	op = op_of(GT_DEVOP_KERNEL, 1, 7, 6500, 6600);
	CHECK_EQ_U(gt_streams__idle_before(&op, 100, 1), 0);
	/* A copy and a memset end the stream's busy time; they get no gap. */
	op = op_of(GT_DEVOP_COPY, 0, 7, 7500, 8000);
	CHECK_EQ_U(gt_streams__idle_before(&op, 100, 1), 0);
	op = op_of(GT_DEVOP_MEMSET, 0, 7, 8100, 8200);
	CHECK_EQ_U(gt_streams__idle_before(&op, 100, 1), 0);
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 8300, 8400);
	CHECK_EQ_U(gt_streams__idle_before(&op, 8150, 1), 100);
	/* Out of order: began before the stream's latest end. Nothing, and
	 * the latest end stays. */
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 7000, 7100);
	CHECK_EQ_U(gt_streams__idle_before(&op, 100, 1), 0);
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 8450, 8500);
	CHECK_EQ_U(gt_streams__idle_before(&op, 8350, 1), 50);
	/* Host-side operations (a sync's times are the host's) are not the
	 * stream's. */
	op = op_of(GT_DEVOP_SYNC, 0, 7, 8500, 99999);
	CHECK_EQ_U(gt_streams__idle_before(&op, 100, 1), 0);
	op = op_of(GT_DEVOP_KERNEL, 0, 7, 8600, 8700);
	CHECK_EQ_U(gt_streams__idle_before(&op, 8400, 1), 100);
	/* Two thousand streams: the table grows, each keeps its own. */
	for (uint64_t s = 0; s < 2000; s++) {
		op = op_of(GT_DEVOP_KERNEL, 2, 100 + s, 1000 + s, 2000 + s);
		CHECK_EQ_U(gt_streams__idle_before(&op, 1, 1), 0);
	}
	for (uint64_t s = 0; s < 2000; s++) {
		op = op_of(GT_DEVOP_KERNEL, 2, 100 + s, 2000 + 2 * s + 7, 9000);
		CHECK_EQ_U(gt_streams__idle_before(&op, 1, 1), s + 7);
	}
	gt_streams__fini();
}

static const char name_link[] = "link";

static void activity(struct gt_thread *t, uint64_t id, uint64_t stream, uint64_t start, uint64_t end, uint16_t flags)
{
	struct gt_device_op op = {
		.correlation = id, .kind = GT_DEVOP_KERNEL, .stream = stream, .start_ns = start,
		.end_ns = end, .name = name_link, .flags = flags,
	};

	gt_monitor__activity(t, &op);
}

static uint64_t at(struct gt_thread *t, struct gt_cct_node *ph, enum gt_metric m)
{
	return gt_cct__get(gt_cct__child(&t->cct, ph, GT_NODE_NAME, (uint64_t)(uintptr_t)name_link, 0), m);
}

static struct gt_cct_node *site(struct gt_thread *t, uint64_t pc)
{
	return gt_cct__placeholder(&t->cct, gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, pc, 0),
				   GT_PH_GPU_KERNEL);
}

static void monitor_cases(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *chain, *graph, *late, *nodev;
	uint64_t ids[100], base, gid, id, now;

	CHECK(t);
	CHECK(gt_monitor__start() == 0);
	chain = site(t, 0x1000);
	graph = site(t, 0x2000);
	late = site(t, 0x3000);
	nodev = site(t, 0x6000);
	/* A chain of 100 kernels issued now, run later 1 µs each, 4 µs apart:
	 * 99 gaps of 3 µs, each after the kernel's issue. */
	for (int k = 0; k < 100; k++)
		ids[k] = gt_monitor__correlate_device(t, chain, 0);
	base = gt_clock__now() + 1000000;
	for (int k = 0; k < 100; k++)
		activity(t, ids[k], 1, base + 4000 * k, base + 4000 * k + 1000, 0);
	/* A graph of 3 kernels on the same stream, 2 µs apart: one issue. */
	gid = gt_monitor__correlate_device(t, graph, 0);
	for (int k = 0; k < 3; k++)
		activity(t, gid, 1, base + 500000 + 3000 * k, base + 500000 + 3000 * k + 1000,
			 k < 2 ? GT_DEVOP_F_MORE : 0);
	/* A kernel issued after its stream (2) went idle: the stream's last
	 * operation ended before the issue. */
	id = gt_monitor__correlate_device(t, late, 0);
	activity(t, id, 2, base - 2000000, base - 1900000, 0);
	id = gt_monitor__correlate_device(t, late, 0);
	now = gt_clock__now();
	activity(t, id, 2, now + 5000, now + 6000, 0);
	/* Operations not counted on a device carry no issue time: the same
	 * chain on stream 3, correlated without one, counts no gap. */
	for (int k = 0; k < 10; k++)
		ids[k] = gt_monitor__correlate(t, nodev);
	for (int k = 0; k < 10; k++)
		activity(t, ids[k], 3, base + 4000 * k, base + 4000 * k + 1000, 0);
	monitor_test__flush();
	gt_monitor__drain(t);

	CHECK_EQ_U(at(t, nodev, GT_M_GKER_COUNT), 10);
	CHECK_EQ_U(at(t, nodev, GT_M_GKER_LAUNCH_GAP_COUNT), 0);
	CHECK_EQ_U(at(t, chain, GT_M_GKER_COUNT), 100);
	CHECK_EQ_U(at(t, chain, GT_M_GKER_LAUNCH_GAP_COUNT), 99);
	CHECK_EQ_U(at(t, chain, GT_M_GKER_LAUNCH_GAP), 99 * 3000);
	CHECK_EQ_U(at(t, graph, GT_M_GKER_COUNT), 3);
	CHECK_EQ_U(at(t, graph, GT_M_GKER_LAUNCH_GAP_COUNT), 0);
	CHECK_EQ_U(at(t, late, GT_M_GKER_COUNT), 2);
	CHECK_EQ_U(at(t, late, GT_M_GKER_LAUNCH_GAP), 0);
	gt_monitor__stop();
}

static void kernel_on(struct gt_thread *t, uint64_t id, uint64_t stream, uint64_t start, uint64_t end)
{
	activity(t, id, stream, start, end, 0);
}

/*
 * A wait for stream 1, then a kernel on stream 2: it could have run beside
 * the waited work for min(its time, the wait) (GSYNC_SERIAL at the wait's
 * node). A wait for stream 1 followed by a kernel on stream 1, and a wait
 * for the whole device followed by one on stream 2, serialize nothing.
 */
static void serial_cases(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_cct_node *site_a, *site_b, *w1, *w2, *w3;
	uint64_t a, b, now;

	CHECK(t);
	CHECK(gt_monitor__start() == 0);
	site_a = site(t, 0x1000);
	site_b = site(t, 0x2000);
	w1 = gt_cct__placeholder(&t->cct, gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 0x3000, 0), GT_PH_GPU_SYNC);
	w2 = gt_cct__placeholder(&t->cct, gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 0x4000, 0), GT_PH_GPU_SYNC);
	w3 = gt_cct__placeholder(&t->cct, gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 0x5000, 0), GT_PH_GPU_SYNC);

	now = gt_clock__now();
	a = gt_monitor__correlate_device(t, site_a, 0);
	kernel_on(t, a, 1, now - 900000, now - 600000);
	gt_blame__sync(t, w1, now - 800000, now - 500000, 0, 1); /* 300 us for stream 1 */
	b = gt_monitor__correlate_device(t, site_b, 0);
	now = gt_clock__now();
	kernel_on(t, b, 2, now + 1000, now + 101000); /* 100 us on stream 2 */

	now = gt_clock__now();
	a = gt_monitor__correlate_device(t, site_a, 0);
	kernel_on(t, a, 1, now - 900000, now - 600000);
	gt_blame__sync(t, w2, now - 800000, now - 500000, 0, 1);
	b = gt_monitor__correlate_device(t, site_b, 0);
	now = gt_clock__now();
	kernel_on(t, b, 1, now + 1000, now + 101000); /* the same stream */

	now = gt_clock__now();
	gt_blame__sync(t, w3, now - 800000, now - 500000, 0, 0); /* the whole device */
	b = gt_monitor__correlate_device(t, site_b, 0);
	now = gt_clock__now();
	kernel_on(t, b, 2, now + 1000, now + 101000);

	monitor_test__flush();
	gt_monitor__drain(t);
	CHECK_EQ_U(gt_cct__get(w1, GT_M_GSYNC_SERIAL), 100000);
	CHECK_EQ_U(gt_cct__get(w1, GT_M_GSYNC_SERIAL_COUNT), 1);
	CHECK_EQ_U(gt_cct__get(w2, GT_M_GSYNC_SERIAL_COUNT), 0);
	CHECK_EQ_U(gt_cct__get(w3, GT_M_GSYNC_SERIAL_COUNT), 0);
	gt_monitor__stop();
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		{ "the stream table, case by case", table_cases },
		{ "through the monitor: a launch-bound chain, a graph, a late issue", monitor_cases },
		{ "through the monitor: a wait for one stream, then work on another", serial_cases },
	};

	return test__main(cases, (int)(sizeof(cases) / sizeof(cases[0])), argc, argv);
}
