/* SPDX-License-Identifier: MIT */
#ifndef GT_OMPT_TARGET_INTERNAL_H
#define GT_OMPT_TARGET_INTERNAL_H

/*
 * What ompt/target.c (the target callbacks) and ompt/target-trace.c (OMPT
 * device tracing) share: the table of devices.
 */

#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>

/* Devices numbered 0 .. GT_OMPT_MAX_DEVICES-1 are tracked one by one; any
 * other number reads as one "device ?". */
#define GT_OMPT_MAX_DEVICES 64

enum {
	GT_DEV_UNSEEN = 0, /* no device_initialize yet */
	GT_DEV_UP = 1,	   /* initialized */
	GT_DEV_DOWN = 2,   /* finalized */
};

/*
 * One device as the OpenMP runtime announced it. device_initialize writes
 * type and handle, then publishes them with a release store of state; every
 * reader loads state with acquire first. The image counters are updated by
 * whatever thread loads an image (relaxed: they are only summed at exit).
 */
struct gt_ompt_device {
	atomic_int state;
	ompt_device_t *handle;
	char type[48];
	/* The key of the device's NAME node: "device N (type)" once
	 * initialized, "device N" before. Each string lives until exit. */
	const char *_Atomic name;
	char plain_name[16];
	char full_name[80];
	atomic_uint_fast64_t images, image_bytes, unloads;
	/* A construct or an operation ran on it: set (relaxed) by the
	 * thread that hangs its device node, read at stop for the report's
	 * list of devices used. */
	atomic_int used;
	/* The first image's file; 0 none, 1 being written, 2 written (release). */
	atomic_int file_state;
	char file[96];
};

extern struct gt_ompt_device gt_ompt_devices[GT_OMPT_MAX_DEVICES];

/* A device or a target event was seen: the report's facts are due. Set
 * (relaxed) by any thread, read at stop. */
extern atomic_int gt_ompt_target_seen;

/* At stop: the devices, images and timing source as facts of the profile,
 * or why no target region was measured (target-devices.c). */
void gt_ompt__target_facts(void);

/* The device @num when it was initialized, else NULL. */
static inline struct gt_ompt_device *gt_ompt__device(int num)
{
	struct gt_ompt_device *d;

	if (num < 0 || num >= GT_OMPT_MAX_DEVICES)
		return NULL;
	d = &gt_ompt_devices[num];
	return atomic_load_explicit(&d->state, memory_order_acquire) == GT_DEV_UNSEEN ? NULL : d;
}

/*
 * OMPT device tracing (ompt/target-trace.c). When a device offers
 * ompt_start_trace, its data operations and kernels come back as trace
 * records with device timestamps; the monitor thread matches them, by the
 * host_op_id the tool gave each operation, to the operation's node.
 */

/* At device_initialize: starts tracing @num if @lookup offers it. Returns 1
 * when tracing runs on the device. */
int ompt__trace_start(int num, ompt_device_t *handle, ompt_function_lookup_t lookup);
/* At device_finalize: hands over what the device has buffered, stops. */
void ompt__trace_stop(int num);
/* 1 when device @num is traced. Wait-free. */
int ompt__trace_on(int num);
/* 1 when any device is traced. Wait-free. */
int ompt__trace_any(void);
/* The traced devices as text ("0, 1"); "" when none. */
void ompt__trace_describe(char *buf, size_t size);

#endif
