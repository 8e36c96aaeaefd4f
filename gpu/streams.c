/* SPDX-License-Identifier: MIT */
/*
 * The streams' last busy times (gpu/streams.h), in a map keyed by device
 * and stream: (device + 1) in the bits from 40 up, the stream below. CUPTI
 * numbers streams in 32 bits and the OpenCL layer numbers its queues from
 * 1: no two streams share a key. Monitor thread only.
 */
#include "gpu/streams.h"

#include "core/hmap.h"

#define STREAM_BITS 40

static struct gt_hmap ends;

/* An operation of a stream's own timeline (not a host-timed one). */
static int on_stream(const struct gt_device_op *op)
{
	return op->kind == GT_DEVOP_KERNEL || op->kind == GT_DEVOP_COPY || op->kind == GT_DEVOP_MEMSET;
}

static uint64_t key_of(uint32_t device, uint64_t stream)
{
	return ((uint64_t)device + 1) << STREAM_BITS | (stream & ((1ull << STREAM_BITS) - 1));
}

uint64_t gt_streams__idle_before(const struct gt_device_op *op, uint64_t issued_ns, int single)
{
	uint64_t key, *end, prev, idle = 0;

	if (!on_stream(op) || !op->start_ns || op->end_ns < op->start_ns)
		return 0;
	key = key_of(op->device, op->stream);
	end = gt_hmap__get(&ends, key);
	if (!end) {
		/* The stream's first operation: nothing before it. Without
		 * memory, no launch-bound figures; nothing else is lost. */
		gt_hmap__put(&ends, key, op->end_ns);
		return 0;
	}
	prev = *end;
	if (op->kind == GT_DEVOP_KERNEL && single && issued_ns && issued_ns < prev && op->start_ns > prev)
		idle = op->start_ns - prev;
	if (op->end_ns > prev)
		*end = op->end_ns;
	return idle;
}

uint64_t gt_streams__serialized(const struct gt_stream_wait *w, const struct gt_device_op *op)
{
	uint64_t ns;

	if (!w->node || !on_stream(op))
		return 0;
	if (op->device != w->device || op->stream == w->stream || op->end_ns <= op->start_ns)
		return 0;
	ns = op->end_ns - op->start_ns;
	return ns < w->ns ? ns : w->ns;
}

void gt_streams__fini(void)
{
	gt_hmap__fini(&ends);
}
