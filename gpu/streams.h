/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_STREAMS_H
#define GT_GPU_STREAMS_H

/*
 * Where each stream of each device last stood busy, for the launch-bound
 * test: the monitor thread's own table (no other thread touches it).
 *
 * A kernel's stream may stand idle right before it although the kernel
 * had already been issued, the previous operation of the stream still
 * running when its launch began: that wait is the launch's own cost (the
 * API call, the submission), which a CUDA graph or fusing the kernels
 * takes away. gt_streams__idle_before() measures it:
 *
 *            issued           prev end      start
 *   host  ─────┼───────────────────┼───────────┼────
 *   GPU   ═══ prev op ═════════════╡  (idle)   ╞═ kernel ═
 *                                   └─ counted ┘
 *
 * A kernel issued after its stream went idle is not counted (the host was
 * elsewhere: what kept it is CPU time, blamed as GPU_IDLE_CAUSE); neither
 * are the kernels of a graph launch (one issue for them all), nor a
 * kernel that began before the previous operation of its stream ended
 * (activities delivered out of order).
 */
#include <stdint.h>

#include "gpu/device-op.h"

/*
 * A thread's wait for one stream (a stream synchronization, clFinish on a
 * queue): where it waited, for which stream of which device, and how long.
 * When the thread's next operation runs on another stream of that device,
 * the wait kept it from running beside the work waited for: had it been
 * issued before the wait, it could have overlapped up to the wait's
 * length, if it does not need that work's results. The monitor charges
 * min(wait, the operation's time) as GSYNC_SERIAL at the wait's node.
 */
struct gt_stream_wait {
	struct gt_cct_node *node; /* the wait's <gpu sync>; NULL: none */
	uint64_t stream;
	uint64_t end_ns, ns;
	uint32_t device;
};

/* The time @op, issued right after @w, could have overlapped it: 0 unless
 * @op is a kernel, copy or memset of @w's device on another stream. */
uint64_t gt_streams__serialized(const struct gt_stream_wait *w, const struct gt_device_op *op);

/*
 * Notes @op (a device operation with its device-side times: a kernel,
 * copy or memset) as the latest of its stream, and returns the time its
 * stream stood idle right before it, after it was issued at @issued_ns;
 * 0 unless @op is a kernel, the only operation of its issue (@single),
 * issued before the previous operation of its stream ended. Monitor
 * thread only.
 */
uint64_t gt_streams__idle_before(const struct gt_device_op *op, uint64_t issued_ns, int single);

/* Frees the table (the monitor's finalizer). */
void gt_streams__fini(void);

#endif
