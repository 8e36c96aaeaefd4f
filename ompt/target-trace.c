/* SPDX-License-Identifier: MIT */
/*
 * OMPT device tracing. A device whose device_initialize lookup offers
 * ompt_start_trace reports its data operations and kernels in trace
 * buffers, with device timestamps; each record carries the host_op_id the
 * tool stored at the operation's begin callback, which for a traced device
 * is a correlation id of the GPU monitor (ompt/target.c, op__begin). The
 * records become struct gt_device_op activities, and the monitor sends each
 * to the thread that issued the operation, which charges GKER, GXCOPY_* or
 * GMEM on a <gpu ...> child of the operation's node (gpu/device-op.c).
 *
 * Threads:
 *   device_initialize / device_finalize   a runtime thread: start and stop
 *                                          one device's trace;
 *   buffer_request / buffer_complete       any runtime thread: hand out
 *                                          buffers; convert records, hand
 *                                          them to the monitor, free;
 *   flush / stop (backend table)           the thread stopping the tool.
 * A device's functions and handle are written before its `on` is stored
 * (release) and never change after; `on` goes back to 0 once, by exchange.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/thread.h"
#include "gpu/backend.h"
#include "gpu/device-op.h"
#include "gpu/monitor.h"
#include "ompt/target-internal.h"

#define TRACE_BUFFER_BYTES (1u << 20)

struct trace_dev {
	atomic_int on;	  /* 1 while traced */
	atomic_int ever;  /* traced at some point: said in the report */
	ompt_device_t *handle;
	ompt_start_trace_t start;
	ompt_set_trace_ompt_t set;
	ompt_flush_trace_t flush;
	ompt_stop_trace_t stop;
	ompt_advance_buffer_cursor_t advance;
	ompt_get_record_ompt_t get;
	ompt_translate_time_t translate;
	ompt_get_device_time_t device_time;
	int64_t offset_ns; /* the tool's clock minus the device's, in ns */
};

static struct trace_dev devs[GT_OMPT_MAX_DEVICES];
static atomic_int n_on;

static struct trace_dev *trace_dev(int num)
{
	return num >= 0 && num < GT_OMPT_MAX_DEVICES ? &devs[num] : NULL;
}

int ompt__trace_on(int num)
{
	struct trace_dev *d = trace_dev(num);

	return d && atomic_load_explicit(&d->on, memory_order_acquire);
}

int ompt__trace_any(void)
{
	return atomic_load_explicit(&n_on, memory_order_relaxed) > 0;
}

void ompt__trace_describe(char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = 0;
	for (int i = 0; i < GT_OMPT_MAX_DEVICES && len + 1 < size; i++) {
		int n;

		if (!atomic_load_explicit(&devs[i].ever, memory_order_relaxed))
			continue;
		n = snprintf(buf + len, size - len, "%s%d", len ? ", " : "", i);
		if (n < 0)
			break;
		len = len + (size_t)n < size ? len + (size_t)n : size - 1;
	}
}

/* A device time on the tool's clock (gt_clock__now). */
static uint64_t to_ns(const struct trace_dev *d, ompt_device_time_t t)
{
	int64_t ns = d->translate ? (int64_t)(d->translate(d->handle, t) * 1e9) : (int64_t)t;

	ns += d->offset_ns;
	return ns > 0 ? (uint64_t)ns : 0;
}

/* ---- records ---- */

static int is_device(int num)
{
	return gt_ompt__device(num) != NULL;
}

/* One trace record as a device operation; 0 for records the tool does not charge. */
static int record__to_op(const struct trace_dev *d, int device, const ompt_record_ompt_t *rec,
			 struct gt_device_op *op)
{
	memset(op, 0, sizeof(*op));
	op->device = (uint32_t)device;
	op->start_ns = to_ns(d, rec->time);
	switch (rec->type) {
	case ompt_callback_target_data_op:
	case ompt_callback_target_data_op_emi: {
		const ompt_record_target_data_op_t *r = &rec->record.target_data_op;
		ompt_target_data_op_t k = r->optype > 16 ? r->optype - 16 : r->optype;

		switch (k) {
		case ompt_target_data_alloc:
			op->kind = GT_DEVOP_ALLOC;
			break;
		case ompt_target_data_delete:
			op->kind = GT_DEVOP_FREE;
			break;
		case ompt_target_data_transfer_to_device:
			op->kind = GT_DEVOP_COPY;
			op->copy = is_device(r->src_device_num) && r->src_device_num != r->dest_device_num
					   ? GT_COPY_D2D
					   : GT_COPY_H2D;
			break;
		case ompt_target_data_transfer_from_device:
			op->kind = GT_DEVOP_COPY;
			op->copy = is_device(r->dest_device_num) && r->src_device_num != r->dest_device_num
					   ? GT_COPY_D2D
					   : GT_COPY_D2H;
			break;
		default:
			return 0;
		}
		op->bytes = r->bytes;
		op->correlation = r->host_op_id;
		op->end_ns = to_ns(d, r->end_time);
		break;
	}
	case ompt_callback_target_submit:
	case ompt_callback_target_submit_emi: {
		const ompt_record_target_kernel_t *k = &rec->record.target_kernel;

		op->kind = GT_DEVOP_KERNEL;
		op->correlation = k->host_op_id;
		op->end_ns = to_ns(d, k->end_time);
		op->launch.grid[0] = k->granted_num_teams ? k->granted_num_teams : k->requested_num_teams;
		op->launch.grid[1] = op->launch.grid[2] = 1;
		break;
	}
	default:
		return 0;
	}
	return op->correlation != 0;
}

static void buffer_request(int device_num, ompt_buffer_t **buffer, size_t *bytes)
{
	(void)device_num;
	*buffer = malloc(TRACE_BUFFER_BYTES);
	*bytes = *buffer ? TRACE_BUFFER_BYTES : 0;
}

static void buffer_complete(int device_num, ompt_buffer_t *buffer, size_t bytes,
			    ompt_buffer_cursor_t begin, int buffer_owned)
{
	struct trace_dev *d = trace_dev(device_num);
	struct gt_thread *t;

	if (d && d->get && d->advance && buffer && bytes &&
	    (t = gt_thread__self(GT_THREAD_OTHER))) {
		ompt_buffer_cursor_t cur = begin;
		/* A bound on the walk, whatever the runtime's cursors do. */
		size_t left = bytes;
		struct gt_device_op op;

		do {
			const ompt_record_ompt_t *rec = d->get(buffer, cur);

			if (!rec)
				break;
			if (record__to_op(d, device_num, rec, &op))
				gt_monitor__activity(t, &op);
		} while (--left && d->advance(d->handle, buffer, bytes, cur, &cur));
		gt_monitor__notify();
	}
	if (buffer_owned)
		free(buffer);
}

/* ---- lifecycle ---- */

static int backend__start(void)
{
	return 0;
}

static void backend__flush(void)
{
	for (int i = 0; i < GT_OMPT_MAX_DEVICES; i++)
		if (ompt__trace_on(i) && devs[i].flush)
			devs[i].flush(devs[i].handle);
}

static void backend__stop(void)
{
	for (int i = 0; i < GT_OMPT_MAX_DEVICES; i++)
		ompt__trace_stop(i);
}

static const struct gt_backend trace_backend = {
	.name = "omp-target-trace",
	.start = backend__start,
	.flush = backend__flush,
	.stop = backend__stop,
};

int ompt__trace_start(int num, ompt_device_t *handle, ompt_function_lookup_t lookup)
{
	struct trace_dev *d = trace_dev(num);
	int accepted = 0;

	if (!d || !lookup)
		return 0;
	if (atomic_load_explicit(&d->on, memory_order_acquire))
		return 1;
	d->start = (ompt_start_trace_t)lookup("ompt_start_trace");
	d->set = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
	d->flush = (ompt_flush_trace_t)lookup("ompt_flush_trace");
	d->stop = (ompt_stop_trace_t)lookup("ompt_stop_trace");
	d->advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	d->get = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	d->translate = (ompt_translate_time_t)lookup("ompt_translate_time");
	d->device_time = (ompt_get_device_time_t)lookup("ompt_get_device_time");
	if (!d->start || !d->set || !d->stop || !d->advance || !d->get) {
		gt_info("ompt", "device %d: no OMPT device tracing; operations timed by host callbacks",
			num);
		return 0;
	}
	d->handle = handle;
	/* Only what the tool charges: data operations and kernels. */
	accepted += d->set(handle, 1, ompt_callback_target_data_op_emi) >= ompt_set_sometimes;
	accepted += d->set(handle, 1, ompt_callback_target_submit_emi) >= ompt_set_sometimes;
	accepted += d->set(handle, 1, ompt_callback_target_data_op) >= ompt_set_sometimes;
	accepted += d->set(handle, 1, ompt_callback_target_submit) >= ompt_set_sometimes;
	if (!accepted) {
		gt_info("ompt", "device %d: traces no data operations or kernels", num);
		return 0;
	}
	/* The monitor matches the records; it starts with the first backend. */
	if (gt_backend__register(&trace_backend))
		return 0;
	{
		uint64_t host = gt_clock__now();
		ompt_device_time_t dt = d->device_time ? d->device_time(handle) : 0;
		int64_t dev_ns = d->translate ? (int64_t)(d->translate(handle, dt) * 1e9) : (int64_t)dt;

		d->offset_ns = (int64_t)host - dev_ns;
	}
	if (!d->start(handle, buffer_request, buffer_complete)) {
		gt_warn("ompt", "device %d: OMPT device tracing did not start; operations timed by host callbacks",
			num);
		return 0;
	}
	atomic_store_explicit(&d->ever, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_on, 1, memory_order_relaxed);
	/* Pairs with the acquire load in ompt__trace_on. */
	atomic_store_explicit(&d->on, 1, memory_order_release);
	gt_info("ompt", "device %d: OMPT device tracing on", num);
	return 1;
}

void ompt__trace_stop(int num)
{
	struct trace_dev *d = trace_dev(num);

	if (!d || !atomic_exchange_explicit(&d->on, 0, memory_order_acq_rel))
		return;
	/* What the device still holds comes back through buffer_complete. */
	if (d->flush)
		d->flush(d->handle);
	d->stop(d->handle);
	atomic_fetch_sub_explicit(&n_on, 1, memory_order_relaxed);
}
