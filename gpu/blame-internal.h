/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_BLAME_INTERNAL_H
#define GT_GPU_BLAME_INTERNAL_H

/*
 * Between gpu/blame.c and gpu/monitor.c; not for backends.
 *
 * The in-flight counters are the only blame state other threads touch:
 * incremented by the launching thread (gt_blame__launched), decremented by
 * the monitor (gt_blame__completed), read by sampling handlers. Everything
 * else in blame.c belongs to the monitor thread (and to the monitor's exit,
 * after the final rounds), like the correlation map.
 */

#include <stdint.h>

#include "core/cct.h"
#include "gpu/device-op.h"

struct gt_gpu_thread;
struct corr_entry;

/* mon_record.op.device of a correlation that is not counted in flight. */
#define GT_BLAME_NO_DEVICE UINT32_MAX

/* ---- any thread ---- */

/*
 * The launching thread, before it commits the correlation record for an
 * operation on @device (< GT_BLAME_MAX_DEVICES): counts it in flight. The
 * record's release commit orders this increment before the monitor's
 * decrement, so a counter never goes below zero.
 */
void gt_blame__launched(uint32_t device);

/* The monitor, for a launch it could not record: no longer in flight. */
void gt_blame__unlaunched(uint32_t device);

/* In a fork child: no device has been used, nothing is in flight. */
void gt_blame__atfork_child(void);

/* Bit d: some launch was counted on device d (relaxed: a recent value). */
uint64_t gt_blame__used_mask(void);

/*
 * The sampling hook: runs in the sampling signal handler of @t, after the
 * sample's CPU time went to @node; charges GPU_IDLE_CAUSE when no device
 * has anything in flight. Async-signal-safe.
 */
void gt_blame__sample(struct gt_thread *t, struct gt_cct_node *node, uint64_t weight);

/* ---- the monitor thread ---- */

/* At monitor start, before the thread runs: state, and the sampling hook. */
void gt_blame__init(void);

/* A correlation entered the map for an operation counted on @device
 * (GT_BLAME_NO_DEVICE: not counted): notes its epoch in @e. */
void gt_blame__issued(struct corr_entry *e, uint32_t device);

/* An activity was delivered to @owner for the operation launched at
 * @placeholder: keeps it for the syncs to come. @e is the operation's
 * correlation entry (device and epoch). */
void gt_blame__finished(const struct corr_entry *e, const struct gt_device_op *op);

/* The last activity of @e was delivered; @e leaves the map next. Settles
 * the syncs that were waiting for it. */
void gt_blame__completed(const struct corr_entry *e);

/* A sync record of @owner (see gt_blame__sync); the caller has first read
 * every channel once, so that what other threads launched before it is in
 * the map. */
void gt_blame__on_sync(struct gt_gpu_thread *owner, struct gt_cct_node *sync_node,
		       const struct gt_device_op *sync);

/* After each round: counters. */
void gt_blame__publish(void);

/* At exit, after the final rounds, on the monitor thread: settles every
 * waiting sync with what is known, sums the busy time, frees everything. */
void gt_blame__fini(void);

#endif
