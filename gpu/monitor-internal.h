/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_MONITOR_INTERNAL_H
#define GT_GPU_MONITOR_INTERNAL_H

/* Shared by the monitor (gpu/monitor*.c), gpu/corrmap.c and gpu/blame*.c;
 * not for backends. */

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "channels/bichannel.h"
#include "core/cct.h"
#include "gpu/device-op.h"
#include "gpu/streams.h"

struct gt_thread;

enum mon_record_type {
	MON_CORRELATION = 1,
	MON_ACTIVITY = 2,
	MON_SYNC = 3, /* gt_blame__sync */
};

/* Payload of a thread's to_monitor channel. */
struct mon_record {
	uint32_t type; /* enum mon_record_type */
	/* MON_CORRELATION: the node op.correlation was issued at.
	 * MON_SYNC: the sync's node. */
	struct gt_cct_node *placeholder;
	/*
	 * MON_ACTIVITY: the whole op. MON_CORRELATION: op.correlation,
	 * op.device, the device the operation is counted in flight on
	 * (GT_BLAME_NO_DEVICE: not counted), and op.start_ns, when it was
	 * issued (gt_clock__now(); 0 when not counted on a device). MON_SYNC: start_ns, end_ns,
	 * device (GT_BLAME_NO_DEVICE: all) and stream of the wait.
	 */
	struct gt_device_op op;
};

enum mon_measurement_type {
	MEAS_OP = 0,	/* charge op's metrics at placeholder */
	MEAS_BLAME = 1, /* add value to metric where op's metrics go */
};

/* Payload of a thread's to_thread channel. */
struct mon_measurement {
	struct gt_cct_node *placeholder;
	struct gt_device_op op;
	uint32_t type;	 /* enum mon_measurement_type */
	uint32_t metric; /* MEAS_BLAME: enum gt_metric */
	/* MEAS_BLAME: the value. MEAS_OP: the time the op's stream stood
	 * idle before it after its issue (GKER_LAUNCH_GAP; gpu/streams.h). */
	uint64_t value;
};

/* Where a thread stands in the monitor's list of channels to poll. */
enum gt_gpu_thread_state {
	GPU_THREAD_NEW = 0,	/* not seen yet */
	GPU_THREAD_POLLED = 1,	/* drained every round */
	GPU_THREAD_RETIRED = 2, /* exited and drained: polled no more */
};

/*
 * A thread's side of the monitor, created by the thread itself on its first
 * correlate or activity and published through gt_thread.gpu; freed never
 * (the thread may still hold it when the process exits).
 *
 *   to_monitor   producer: the owner; consumer: the monitor thread.
 *   to_thread    producer: the monitor thread; consumer: the owner, and the
 *                finalizer once `closing` is set and `draining` reads 0.
 *
 * Fields written by the owner and fields written by the monitor sit on
 * different cache lines.
 */
struct gt_gpu_thread {
	/* Constant after publication. */
	struct gt_thread *thread;
	struct gt_bichannel *to_monitor;
	struct gt_bichannel *to_thread;

	/* Owner only (the owner of the moment: see struct gt_thread). */
	uint64_t seq;	   /* last correlation sequence number issued */
	uint64_t consumed; /* measurement records this owner has applied */
	/* Written by the owner (relaxed load + store), read by stats anywhere. */
	_Atomic uint64_t lost;
	/*
	 * 1 while the owner drains to_thread. The owner stores 1 then loads
	 * mon.closing; the finalizer stores closing then loads this; all four
	 * seq_cst, so at least one sees the other. The owner's release store of
	 * 0 pairs with the finalizer's acquire load: the owner's last accesses
	 * to its tree and to to_thread happen-before the finalizer's.
	 */
	atomic_int draining;

	/*
	 * Measurement records sent, written by the monitor only (relaxed load +
	 * store) and read by the owner (relaxed) to skip an empty drain. A hint:
	 * the channel itself orders the records.
	 */
	alignas(64) _Atomic uint64_t produced;
	/* Monitor only: enum gt_gpu_thread_state, and the thread's `lives`
	 * when the monitor retired it (a new owner makes it poll again). */
	int state;
	uint32_t retired_lives;
	/* Monitor only: the thread's last wait for one stream, until the
	 * thread issues its next operation (gpu/streams.h). */
	struct gt_stream_wait wait;
};

/*
 * The monitor's map from correlation id to the issuing thread and node, and
 * the activities waiting for a correlation. Private to the monitor thread:
 * no atomics, no locks.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), so a removal leaves the table as if the entry had never been
 * inserted; the capacity follows the peak number of ids in flight.
 *
 * An entry is either correlated (owner != NULL, no waiting activities) or
 * waiting (owner == NULL, a chain of parked activities in arrival order).
 * Parked activities live in a pool of at most pool_max slots, also linked
 * oldest to newest across ids; a park into a full pool drops the oldest.
 */
struct corr_entry {
	uint64_t id; /* 0: empty slot */
	struct gt_gpu_thread *owner;
	struct gt_cct_node *placeholder;
	uint32_t head, tail; /* parked activities, slot index + 1; 0: none */
	/* Set with owner (gt_blame__issued): the device the operation is
	 * counted in flight on, or GT_BLAME_NO_DEVICE, and its epoch there. */
	uint32_t device;
	uint64_t epoch;
	uint64_t issued_ns;  /* when the operation was issued; 0: unknown */
	uint32_t delivered;  /* activities delivered so far */
	/* The wait its thread made for one stream right before issuing it
	 * (wait.node NULL: none). */
	struct gt_stream_wait wait;
};

struct corr_parked {
	struct gt_device_op op;
	uint32_t next;	       /* same id, newer; or the free list */
	uint32_t older, newer; /* every parked activity; index + 1 */
};

struct corr_map {
	struct corr_entry *slots;
	uint32_t cap; /* a power of two, or 0 before the first insert */
	uint32_t size;
	uint32_t peak;

	struct corr_parked *pool;
	uint32_t pool_cap, pool_max;
	uint32_t free_list;	 /* index + 1 */
	uint32_t oldest, newest; /* index + 1 */
	uint32_t parked;
	uint32_t parked_peak;
	uint64_t evicted;
};

void gt_corrmap__init(struct corr_map *m, uint32_t pool_max);
void gt_corrmap__fini(struct corr_map *m);
struct corr_entry *gt_corrmap__find(struct corr_map *m, uint64_t id);
/* A new entry for @id (not in the map), owner NULL, or NULL when out of memory. */
struct corr_entry *gt_corrmap__insert(struct corr_map *m, uint64_t id);
/* Removes @e, which must have no parked activity. Other entries may move. */
void gt_corrmap__remove(struct corr_map *m, struct corr_entry *e);
/*
 * Parks a copy of @op under its id (op->correlation), creating a waiting
 * entry when there is none. Returns 0, or -ENOMEM (nothing parked). May drop
 * the oldest parked activity (counted in evicted) and move entries.
 */
int gt_corrmap__park(struct corr_map *m, const struct gt_device_op *op);
/* Moves the oldest activity parked under @e into @out and frees its slot;
 * returns 1, or 0 when none is parked. @e stays in the map. */
int gt_corrmap__unpark(struct corr_map *m, struct corr_entry *e, struct gt_device_op *out);

/* ---- the monitor (gpu/monitor*.c), for gpu/blame.c ---- */

/*
 * Monitor thread only: sends @owner a measurement record that adds @value
 * to @metric at the node @op's metrics go to under @placeholder
 * (gt_device_op__add).
 */
void gt_monitor__send_blame(struct gt_gpu_thread *owner, struct gt_cct_node *placeholder,
			    const struct gt_device_op *op, enum gt_metric metric, uint64_t value);

/*
 * Thread @t itself: sends a MON_SYNC record. Returns 0, or -EAGAIN when
 * the monitor is not running, -ENOMEM when the channel could not grow.
 */
int gt_monitor__send_sync(struct gt_thread *t, struct gt_cct_node *sync_node, uint64_t begin_ns,
			  uint64_t end_ns, uint32_t device, uint64_t stream);

/* ---- the backend table (gpu/backend.c), for the monitor ---- */

/*
 * At stop, with the monitor still running: flush every backend, then stop
 * every backend, each in reverse order of registration, and refuse later
 * registrations.
 */
void gt_backend__stop_all(void);
/* After the monitor's finalizer: every backend's settle. */
void gt_backend__settle_all(void);
/* In a fork child: the table's lock is usable, every backend is off. */
void gt_backend__atfork_child(void);

#endif
