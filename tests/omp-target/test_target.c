/* SPDX-License-Identifier: MIT */
/*
 * The OMPT target handlers (ompt/target.c, ompt/target-trace.c) driven
 * directly, as a runtime would call them, including calls no well-behaved
 * runtime makes: devices never initialized, ends without begins, a
 * construct ended on another thread, overlapping constructs and operations
 * on one thread. A fake device offers OMPT tracing and delivers records.
 */
#include <omp-tools.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/device-op.h"
#include "gpu/monitor.h"
#include "ompt/ompt-internal.h"
#include "ompt/target-internal.h"
#include "ompt/target.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

#define HOST 5 /* the host's device number: the devices are 0 .. 4 */

static struct gt_thread *start(void)
{
	setenv("GPUTOOL_SAMPLE_HZ", "0", 1);
	CHECK(gt_tool__start() == 0);
	ompt__target_init();
	return gt_thread__self(GT_THREAD_INITIAL);
}

static struct gt_cct_node *find_ph(struct gt_cct_node *n, enum gt_placeholder ph)
{
	for (struct gt_cct_node *c = n->children; c; c = c->sibling) {
		struct gt_cct_node *hit;

		if (c->kind == GT_NODE_PLACEHOLDER && c->key == (uint64_t)ph)
			return c;
		if ((hit = find_ph(c, ph)))
			return hit;
	}
	return NULL;
}

static struct gt_cct_node *find_name(struct gt_cct_node *n, const char *name)
{
	for (struct gt_cct_node *c = n->children; c; c = c->sibling) {
		struct gt_cct_node *hit;

		if (c->kind == GT_NODE_NAME && !strcmp((const char *)(uintptr_t)c->key, name))
			return c;
		if ((hit = find_name(c, name)))
			return hit;
	}
	return NULL;
}

static void target(ompt_target_t kind, ompt_scope_endpoint_t ep, int device, ompt_data_t *td)
{
	ompt__on_target_emi(kind, ep, device, NULL, NULL, td, NULL);
}

static ompt_id_t data_op(ompt_data_t *td, ompt_target_data_op_t optype, int src, int dst,
			 size_t bytes)
{
	/* As a runtime's: bytes of them at both ends (the tool reads the
	 * host's to tell a resent upload). */
	static char host_buf[4096], dev_buf[4096];
	ompt_id_t id = 0;

	CHECK(bytes <= sizeof(host_buf));
	ompt__on_target_data_op_emi(ompt_scope_begin, NULL, td, &id, optype, host_buf, src, dev_buf,
				    dst, bytes, NULL);
	return id;
}

static void data_op_end(ompt_data_t *td, ompt_id_t id)
{
	ompt__on_target_data_op_emi(ompt_scope_end, NULL, td, &id, ompt_target_data_alloc, NULL, 0,
				    NULL, 0, 0, NULL);
}

static void init_devices(int n)
{
	for (int i = 0; i < n; i++)
		ompt__on_device_initialize(i, "fake", NULL, NULL, NULL);
}

/* ---- devices the runtime never announced ---- */

static void unknown_devices(void)
{
	struct gt_thread *t = start();
	ompt_data_t td = { 0 }, none = { 0 };
	struct gt_cct_node *n;
	ompt_id_t id;

	/* No device_initialize at all. */
	target(ompt_target, ompt_scope_begin, 7, &td);
	id = data_op(&td, ompt_target_data_transfer_to_device, HOST, 7, 100);
	data_op_end(&td, id);
	target(ompt_target, ompt_scope_end, 7, &td);
	target(ompt_target, ompt_scope_end, 7, &td); /* twice */
	target(ompt_target_update, ompt_scope_begin, 1000, &td);
	target(ompt_target_update, ompt_scope_end, 1000, &td);
	target(ompt_target_enter_data, ompt_scope_begin, -3, &td);
	target(ompt_target_enter_data, ompt_scope_end, -3, &td);
	target(ompt_target, ompt_scope_end, 0, &none); /* end without begin */
	ompt__on_target_emi(ompt_target, ompt_scope_begin, 1, NULL, NULL, NULL, NULL);
	data_op_end(&none, 12345); /* an id never given */
	ompt__on_target_data_op_emi(ompt_scope_begin, NULL, NULL, NULL, ompt_target_data_alloc, NULL,
				    1, NULL, 1, 8, NULL);
	ompt__on_target_data_op_emi(ompt_scope_begin, NULL, NULL, &id, 99, NULL, 1, NULL, 1, 8, NULL);
	ompt__on_target_submit_emi(ompt_scope_begin, NULL, NULL, 1);
	ompt__on_target_submit_emi(ompt_scope_begin, NULL, &id, 4);
	ompt__on_target_submit_emi(ompt_scope_end, NULL, &id, 4);
	ompt__on_device_load(200, "x", 0, NULL, 10, NULL, NULL, 1);
	ompt__on_device_load(-4, NULL, 0, NULL, 10, NULL, NULL, 1);
	ompt__on_device_unload(-4, 1);
	ompt__on_device_finalize(9);
	ompt__on_device_finalize(-1);
	ompt__on_device_initialize(-2, NULL, NULL, NULL, NULL);
	ompt__on_device_initialize(GT_OMPT_MAX_DEVICES, "big", NULL, NULL, NULL);

	n = find_name(t->cct.root, "device 7");
	CHECK(n && n->parent->key == GT_PH_OMP_TARGET);
	CHECK_EQ_U(gt_cct__get(n, GT_M_OMP_TGT_COUNT), 1);
	CHECK(gt_cct__get(n, GT_M_OMP_TGT_TIME) > 0);
	CHECK_EQ_U(gt_cct__get(find_ph(n, GT_PH_OMP_COPY_H2D), GT_M_OMP_TGT_H2D_BYTES), 100);
	/* Numbers beyond the table, and submissions with no construct. */
	n = find_name(t->cct.root, "device ?");
	CHECK(n != NULL);
	CHECK_EQ_U(gt_cct__get(find_ph(t->cct.root, GT_PH_OMP_KERNEL), GT_M_OMP_TGT_KERNEL_COUNT), 1);
	CHECK(gt_ompt__current_target_placeholder(t) == NULL);
}

/* ---- state per construct and per operation ---- */

static void overlapping_constructs(void)
{
	struct gt_thread *t = start();
	ompt_data_t a = { 0 }, b = { 0 };
	struct gt_cct_node *ta, *tb;
	ompt_id_t id;

	init_devices(2);
	target(ompt_target, ompt_scope_begin, 0, &a);
	target(ompt_target_update, ompt_scope_begin, 1, &b);
	data_op_end(&a, data_op(&a, ompt_target_data_transfer_to_device, HOST, 0, 100));
	id = data_op(&b, ompt_target_data_transfer_from_device, 1, HOST, 200);
	target(ompt_target, ompt_scope_end, 0, &a);
	data_op_end(&b, id);
	data_op_end(&b, data_op(&b, ompt_target_data_transfer_to_device, HOST, 1, 300));
	target(ompt_target_update, ompt_scope_end, 1, &b);

	ta = find_ph(t->cct.root, GT_PH_OMP_TARGET);
	tb = find_ph(t->cct.root, GT_PH_OMP_TARGET_UPDATE);
	CHECK(ta && tb);
	CHECK(ta->children && !ta->children->sibling && tb->children && !tb->children->sibling);
	CHECK(!strcmp((const char *)(uintptr_t)ta->children->key, "device 0 (fake)"));
	CHECK(!strcmp((const char *)(uintptr_t)tb->children->key, "device 1 (fake)"));
	CHECK_EQ_U(gt_cct__get(find_ph(ta, GT_PH_OMP_COPY_H2D), GT_M_OMP_TGT_H2D_BYTES), 100);
	CHECK(find_ph(ta, GT_PH_OMP_COPY_D2H) == NULL);
	CHECK_EQ_U(gt_cct__get(find_ph(tb, GT_PH_OMP_COPY_D2H), GT_M_OMP_TGT_D2H_BYTES), 200);
	CHECK_EQ_U(gt_cct__get(find_ph(tb, GT_PH_OMP_COPY_H2D), GT_M_OMP_TGT_H2D_BYTES), 300);
	CHECK(gt_cct__get(find_ph(tb, GT_PH_OMP_COPY_D2H), GT_M_OMP_TGT_D2H_TIME) > 0);
	/* A device-to-device copy between two known devices. */
	target(ompt_target, ompt_scope_begin, 0, &a);
	data_op_end(&a, data_op(&a, ompt_target_data_transfer_to_device, 1, 0, 64));
	target(ompt_target, ompt_scope_end, 0, &a);
	CHECK_EQ_U(gt_cct__get(find_ph(ta, GT_PH_OMP_COPY_D2D), GT_M_OMP_TGT_D2D_BYTES), 64);
}

static void overlapping_operations(void)
{
	struct gt_thread *t = start();
	ompt_data_t a = { 0 };
	struct gt_cct_node *alloc, *h2d;
	ompt_id_t first, second;

	init_devices(1);
	target(ompt_target, ompt_scope_begin, 0, &a);
	first = data_op(&a, ompt_target_data_alloc, HOST, 0, 4096);
	usleep(3000);
	second = data_op(&a, ompt_target_data_transfer_to_device, HOST, 0, 4096);
	CHECK(first && second && first != second);
	data_op_end(&a, first); /* ends out of order */
	data_op_end(&a, second);
	target(ompt_target, ompt_scope_end, 0, &a);
	alloc = find_ph(t->cct.root, GT_PH_OMP_ALLOC);
	h2d = find_ph(t->cct.root, GT_PH_OMP_COPY_H2D);
	CHECK(gt_cct__get(alloc, GT_M_OMP_TGT_ALLOC_TIME) >= 3000000);
	CHECK(gt_cct__get(h2d, GT_M_OMP_TGT_H2D_TIME) < gt_cct__get(alloc, GT_M_OMP_TGT_ALLOC_TIME));
	CHECK_EQ_U(gt_cct__get(alloc, GT_M_OMP_TGT_ALLOC_BYTES), 4096);

	/* Ends that never come cannot grow the thread's list without bound;
	 * the newest operation is still found. */
	target(ompt_target, ompt_scope_begin, 0, &a);
	for (int i = 0; i < 1000; i++)
		data_op(&a, ompt_target_data_alloc, HOST, 0, 1);
	first = data_op(&a, ompt_target_data_delete, 0, -1, 0);
	CHECK(gt_ompt__current_target_placeholder(t) == find_ph(t->cct.root, GT_PH_OMP_DELETE));
	data_op_end(&a, first);
	CHECK(gt_cct__get(find_ph(t->cct.root, GT_PH_OMP_DELETE), GT_M_OMP_TGT_DELETE_TIME) > 0);
	target(ompt_target, ompt_scope_end, 0, &a);
	CHECK_EQ_U(gt_cct__get(alloc, GT_M_OMP_TGT_ALLOC_COUNT), 1001);
}

/* ---- what the CUDA backend will ask ---- */

static void current_placeholder(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *dev, *kernel;
	ompt_data_t a = { 0 };
	ompt_id_t id = 0, copy;

	init_devices(1);
	CHECK(gt_ompt__current_target_placeholder(t) == NULL);
	CHECK(gt_ompt__current_target_placeholder(NULL) == NULL);
	target(ompt_target, ompt_scope_begin, 0, &a);
	dev = find_name(t->cct.root, "device 0 (fake)");
	CHECK(dev && gt_ompt__current_target_placeholder(t) == dev);
	ompt__on_target_submit_emi(ompt_scope_begin, &a, &id, 8);
	kernel = find_ph(dev, GT_PH_OMP_KERNEL);
	CHECK(kernel && kernel->parent == dev);
	CHECK(gt_ompt__current_target_placeholder(t) == kernel);
	ompt__on_target_submit_emi(ompt_scope_end, &a, &id, 8);
	CHECK(gt_ompt__current_target_placeholder(t) == dev);
	copy = data_op(&a, ompt_target_data_transfer_from_device, 0, HOST, 8);
	CHECK(gt_ompt__current_target_placeholder(t) == find_ph(dev, GT_PH_OMP_COPY_D2H));
	data_op_end(&a, copy);
	target(ompt_target, ompt_scope_end, 0, &a);
	CHECK(gt_ompt__current_target_placeholder(t) == NULL);
	CHECK_EQ_U(gt_cct__get(kernel, GT_M_OMP_TGT_KERNEL_TEAMS), 8);
	/* Operations outside any construct: under their own device node. */
	copy = data_op(&a, ompt_target_data_alloc, HOST, 0, 8);
	CHECK(gt_ompt__current_target_placeholder(t) != NULL);
	data_op_end(&a, copy);
	CHECK(gt_ompt__current_target_placeholder(t) == NULL);
}

/* ---- a deferred target task ---- */

static ompt_data_t task_data;

static int fake_task_info(int ancestor_level, int *flags, ompt_data_t **data,
			  ompt_frame_t **frame, ompt_data_t **parallel_data, int *thread_num)
{
	(void)ancestor_level, (void)flags, (void)frame, (void)parallel_data, (void)thread_num;
	if (data)
		*data = &task_data;
	return 2;
}

static void deferred_target_task(void)
{
	struct gt_thread *t = start();
	struct omp_task task = { .is_explicit = 1, .is_target = 1 };
	struct gt_cct_node *site, *dev, *del;
	ompt_data_t a = { 0 };

	init_devices(1);
	/* The task runs; its construct hangs under its creation site. */
	site = gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 0x1234, 0);
	task.node = site;
	task_data.ptr = &task;
	gt_ompt_get_task_info = fake_task_info;
	ompt__on_target_emi(ompt_target_nowait, ompt_scope_begin, 0, &task_data, NULL, &a, NULL);
	data_op_end(&a, data_op(&a, ompt_target_data_alloc, HOST, 0, 64));
	ompt__on_target_emi(ompt_target_nowait, ompt_scope_end, 0, &task_data, NULL, &a, NULL);
	/* An asynchronous plugin releases the data later, in the same task. */
	CHECK(a.ptr == NULL);
	data_op_end(&a, data_op(&a, ompt_target_data_delete, 0, -1, 0));
	dev = find_name(site, "device 0 (fake)");
	CHECK(dev && dev->parent->key == GT_PH_OMP_TARGET && dev->parent->parent == site);
	del = find_ph(dev, GT_PH_OMP_DELETE);
	CHECK(del && del->parent == dev);
	CHECK_EQ_U(gt_cct__get(del, GT_M_OMP_TGT_DELETE_COUNT), 1);
	CHECK(site->children == dev->parent && !dev->parent->sibling);
	/* Outside the task, an operation hangs under its own call site. */
	task_data.ptr = NULL;
	data_op_end(&a, data_op(&a, ompt_target_data_delete, 0, -1, 0));
	CHECK_EQ_U(gt_cct__get(del, GT_M_OMP_TGT_DELETE_COUNT), 1);
}

/* ---- a construct ended on another thread ---- */

static ompt_data_t handed;
static struct gt_thread *other;

static void *end_elsewhere(void *arg)
{
	(void)arg;
	target(ompt_target, ompt_scope_end, 0, &handed);
	other = gt_thread__peek();
	return NULL;
}

static void cross_thread_end(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *dev, *mine;
	pthread_t th;

	init_devices(1);
	target(ompt_target, ompt_scope_begin, 0, &handed);
	dev = gt_ompt__current_target_placeholder(t);
	CHECK(dev != NULL);
	CHECK(pthread_create(&th, NULL, end_elsewhere, NULL) == 0);
	pthread_join(th, NULL);
	CHECK(other && other != t);
	/* The other thread charged its own tree, at the same context. */
	mine = find_name(other->cct.root, "device 0 (fake)");
	CHECK(mine && mine->parent->key == GT_PH_OMP_TARGET);
	CHECK(gt_cct__get(mine, GT_M_OMP_TGT_TIME) > 0);
	CHECK_EQ_U(gt_cct__get(dev, GT_M_OMP_TGT_COUNT), 1);
	CHECK_EQ_U(gt_cct__get(dev, GT_M_OMP_TGT_TIME), 0);
	/* The owner no longer sees it in progress, and recycles it. */
	CHECK(gt_ompt__current_target_placeholder(t) == NULL);
	for (int i = 0; i < 3; i++) {
		ompt_data_t a = { 0 };

		target(ompt_target, ompt_scope_begin, 0, &a);
		CHECK(a.ptr != NULL);
		target(ompt_target, ompt_scope_end, 0, &a);
	}
	CHECK_EQ_U(gt_cct__get(dev, GT_M_OMP_TGT_COUNT), 4);
	CHECK(gt_ompt__current_target_placeholder(t) == NULL);
}

/* ---- OpenMP 5.0 callbacks, and map callbacks ---- */

static void non_emi_callbacks(void)
{
	struct gt_thread *t = start();
	struct gt_cct_node *dev;
	static char buf[8];

	init_devices(1);
	ompt__on_target(ompt_target, ompt_scope_begin, 0, NULL, 42, NULL);
	ompt__on_target_data_op(42, 1, ompt_target_data_transfer_to_device, buf, HOST, buf, 0, 512,
				NULL);
	ompt__on_target_submit(42, 2, 3);
	ompt__on_target_data_op(99, 3, ompt_target_data_alloc, buf, HOST, buf, 0, 16, NULL);
	ompt__on_target(ompt_target, ompt_scope_end, 0, NULL, 42, NULL);
	ompt__on_target(ompt_target, ompt_scope_end, 0, NULL, 42, NULL);
	dev = find_name(find_ph(t->cct.root, GT_PH_OMP_TARGET), "device 0 (fake)");
	CHECK(dev != NULL);
	CHECK(gt_cct__get(dev, GT_M_OMP_TGT_TIME) > 0);
	CHECK_EQ_U(gt_cct__get(find_ph(dev, GT_PH_OMP_COPY_H2D), GT_M_OMP_TGT_H2D_BYTES), 512);
	CHECK_EQ_U(gt_cct__get(find_ph(dev, GT_PH_OMP_COPY_H2D), GT_M_OMP_TGT_H2D_TIME), 0);
	CHECK_EQ_U(gt_cct__get(find_ph(dev, GT_PH_OMP_KERNEL), GT_M_OMP_TGT_KERNEL_COUNT), 1);
	/* target_id 99 names no construct: the operation hangs outside. */
	CHECK(find_ph(dev, GT_PH_OMP_ALLOC) == NULL);
	CHECK_EQ_U(gt_cct__get(find_ph(t->cct.root, GT_PH_OMP_ALLOC), GT_M_OMP_TGT_ALLOC_BYTES), 16);
}

static void map_callbacks(void)
{
	struct gt_thread *t = start();
	size_t bytes[] = { 64, 32, 16 };
	unsigned flags[] = { ompt_target_map_flag_to,
			     ompt_target_map_flag_from | ompt_target_map_flag_alloc,
			     ompt_target_map_flag_to | ompt_target_map_flag_from };
	ompt_data_t a = { 0 };
	struct gt_cct_node *dev;

	init_devices(1);
	target(ompt_target, ompt_scope_begin, 0, &a);
	/* Data operations are reported: maps would count the bytes twice. */
	ompt__on_target_map_emi(&a, 3, NULL, NULL, bytes, flags, NULL);
	dev = find_name(t->cct.root, "device 0 (fake)");
	CHECK(dev && !dev->children);
	ompt__target_set_data_ops_reported(0);
	ompt__on_target_map_emi(&a, 3, NULL, NULL, bytes, flags, NULL);
	ompt__on_target_map_emi(&a, 3, NULL, NULL, NULL, flags, NULL);
	target(ompt_target, ompt_scope_end, 0, &a);
	CHECK_EQ_U(gt_cct__get(find_ph(dev, GT_PH_OMP_COPY_H2D), GT_M_OMP_TGT_H2D_BYTES), 80);
	CHECK_EQ_U(gt_cct__get(find_ph(dev, GT_PH_OMP_COPY_D2H), GT_M_OMP_TGT_D2H_BYTES), 48);
	CHECK_EQ_U(gt_cct__get(find_ph(dev, GT_PH_OMP_ALLOC), GT_M_OMP_TGT_ALLOC_BYTES), 32);
}

/* ---- OMPT device tracing, with a fake device ---- */

static ompt_callback_buffer_request_t fake_request;
static ompt_callback_buffer_complete_t fake_complete;
static int fake_stopped;
static size_t fake_records;

static int fake_start_trace(ompt_device_t *d, ompt_callback_buffer_request_t request,
			    ompt_callback_buffer_complete_t complete)
{
	(void)d;
	fake_request = request;
	fake_complete = complete;
	return 1;
}

static ompt_set_result_t fake_set_trace(ompt_device_t *d, unsigned int enable, unsigned int etype)
{
	(void)d, (void)enable;
	return etype == ompt_callback_target_data_op_emi || etype == ompt_callback_target_submit_emi
		       ? ompt_set_always
		       : ompt_set_never;
}

static int fake_flush(ompt_device_t *d)
{
	(void)d;
	return 1;
}

static int fake_stop(ompt_device_t *d)
{
	(void)d;
	fake_stopped++;
	return 1;
}

static int fake_advance(ompt_device_t *d, ompt_buffer_t *buffer, size_t size,
			ompt_buffer_cursor_t current, ompt_buffer_cursor_t *next)
{
	(void)d, (void)buffer, (void)size;
	if (current + 1 >= fake_records)
		return 0;
	*next = current + 1;
	return 1;
}

static ompt_record_ompt_t *fake_get(ompt_buffer_t *buffer, ompt_buffer_cursor_t current)
{
	return (ompt_record_ompt_t *)buffer + current;
}

static ompt_device_time_t fake_device_time(ompt_device_t *d)
{
	(void)d;
	return 1000;
}

static double fake_translate(ompt_device_t *d, ompt_device_time_t time)
{
	(void)d;
	return (double)time * 1e-9;
}

static ompt_interface_fn_t fake_lookup(const char *name)
{
	static const struct {
		const char *name;
		ompt_interface_fn_t fn;
	} fns[] = {
		{ "ompt_start_trace", (ompt_interface_fn_t)fake_start_trace },
		{ "ompt_set_trace_ompt", (ompt_interface_fn_t)fake_set_trace },
		{ "ompt_flush_trace", (ompt_interface_fn_t)fake_flush },
		{ "ompt_stop_trace", (ompt_interface_fn_t)fake_stop },
		{ "ompt_advance_buffer_cursor", (ompt_interface_fn_t)fake_advance },
		{ "ompt_get_record_ompt", (ompt_interface_fn_t)fake_get },
		{ "ompt_get_device_time", (ompt_interface_fn_t)fake_device_time },
		{ "ompt_translate_time", (ompt_interface_fn_t)fake_translate },
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!strcmp(name, fns[i].name))
			return fns[i].fn;
	return NULL;
}

static ompt_interface_fn_t empty_lookup(const char *name)
{
	(void)name;
	return NULL;
}

static void device_tracing(void)
{
	struct gt_thread *t = start();
	static int fake_device;
	ompt_record_ompt_t *recs;
	struct gt_cct_node *copy, *kernel, *g;
	ompt_data_t a = { 0 };
	ompt_id_t copy_id, kernel_id = 0;
	ompt_buffer_t *buf = NULL;
	size_t size = 0;
	char which[16];

	ompt__on_device_initialize(1, "fake-untraced", NULL, empty_lookup, NULL);
	CHECK(!ompt__trace_on(1) && !ompt__trace_any());
	ompt__on_device_initialize(0, "fake-traced", &fake_device, fake_lookup, NULL);
	CHECK(ompt__trace_on(0) && ompt__trace_any() && fake_complete);
	ompt__trace_describe(which, sizeof(which));
	CHECK(!strcmp(which, "0"));

	target(ompt_target, ompt_scope_begin, 0, &a);
	copy_id = data_op(&a, ompt_target_data_transfer_to_device, HOST, 0, 4096);
	data_op_end(&a, copy_id);
	ompt__on_target_submit_emi(ompt_scope_begin, &a, &kernel_id, 8);
	ompt__on_target_submit_emi(ompt_scope_end, &a, &kernel_id, 8);
	target(ompt_target, ompt_scope_end, 0, &a);
	/* The ids are the monitor's: they name this thread. */
	CHECK(copy_id && kernel_id && copy_id != kernel_id);
	CHECK_EQ_U(gt_correlation__thread(copy_id), t->index);

	fake_request(0, &buf, &size);
	CHECK(buf && size >= 4 * sizeof(*recs));
	recs = buf;
	memset(recs, 0, 4 * sizeof(*recs));
	recs[0].type = ompt_callback_target_data_op_emi;
	recs[0].time = 1000;
	recs[0].record.target_data_op = (ompt_record_target_data_op_t){
		.host_op_id = copy_id, .optype = ompt_target_data_transfer_to_device,
		.src_device_num = HOST, .dest_device_num = 0, .bytes = 4096, .end_time = 3000 };
	recs[1].type = ompt_callback_target_emi; /* not charged */
	recs[2].type = ompt_callback_target_submit_emi;
	recs[2].time = 4000;
	recs[2].record.target_kernel = (ompt_record_target_kernel_t){
		.host_op_id = kernel_id, .requested_num_teams = 8, .granted_num_teams = 4,
		.end_time = 9000 };
	recs[3].type = ompt_callback_target_data_op_emi; /* no id: not charged */
	fake_records = 4;
	fake_complete(0, buf, 4 * sizeof(*recs), 0, 1);
	monitor_test__flush();
	gt_monitor__drain(t);

	copy = find_ph(t->cct.root, GT_PH_OMP_COPY_H2D);
	kernel = find_ph(t->cct.root, GT_PH_OMP_KERNEL);
	CHECK(copy && kernel);
	CHECK_EQ_U(gt_cct__get(copy, GT_M_OMP_TGT_H2D_BYTES), 4096);
	g = find_ph(copy, GT_PH_GPU_COPY_H2D);
	CHECK(g && g->parent == copy);
	CHECK_EQ_U(gt_cct__get(g, GT_M_GXCOPY_H2D), 2000);
	CHECK_EQ_U(gt_cct__get(g, GT_M_GXCOPY_H2D_BYTES), 4096);
	CHECK_EQ_U(gt_cct__get(g, GT_M_GXCOPY_H2D_COUNT), 1);
	g = find_ph(kernel, GT_PH_GPU_KERNEL);
	CHECK(g && g->parent == kernel);
	CHECK_EQ_U(gt_cct__get(g, GT_M_GKER), 5000);
	CHECK_EQ_U(gt_cct__get(g, GT_M_GKER_COUNT), 1);
	CHECK_EQ_U(gt_cct__get(g, GT_M_GKER_BLKS), 4);

	ompt__on_device_finalize(0);
	CHECK(!ompt__trace_on(0) && !ompt__trace_any());
	CHECK_EQ_U(fake_stopped, 1);
	ompt__on_device_finalize(0);
	CHECK_EQ_U(fake_stopped, 1);
}

/* ---- the host's wait in a construct ---- */

/* A construct the encountering thread waits in, on a GPU (the runtime polls
 * it: no device backend sees the wait): CPU_IDLE at the construct, as long
 * as the wait; none for a nowait construct, none on the host device. */
static void host_waits(void)
{
	struct gt_thread *t = start();
	struct timespec nap = { 0, 30000000 };
	ompt_data_t a = { 0 }, b = { 0 }, c = { 0 };
	struct gt_cct_node *gpu, *host;
	struct gt_device_op op = { .kind = GT_DEVOP_KERNEL };
	uint64_t t0, t1;

	ompt__on_device_initialize(2, "sm_90", NULL, empty_lookup, NULL);
	ompt__on_device_initialize(HOST, "x86_64-pc-linux-gnu", NULL, empty_lookup, NULL);
	/* A device backend launched something: blame is on. */
	CHECK(gt_monitor__start() == 0);
	gt_thread__enter(t);
	op.correlation = gt_monitor__correlate_device(t, t->cct.root, 0);
	gt_thread__leave(t);
	CHECK(op.correlation);
	op.start_ns = gt_clock__now() - 2000;
	op.end_ns = op.start_ns + 1000;
	gt_monitor__activity(t, &op);

	t0 = gt_clock__now();
	target(ompt_target, ompt_scope_begin, 2, &a);
	nanosleep(&nap, NULL);
	target(ompt_target, ompt_scope_end, 2, &a);
	t1 = gt_clock__now();
	target(ompt_target_nowait, ompt_scope_begin, 2, &b);
	nanosleep(&nap, NULL);
	target(ompt_target_nowait, ompt_scope_end, 2, &b);
	target(ompt_target_update, ompt_scope_begin, HOST, &c);
	nanosleep(&nap, NULL);
	target(ompt_target_update, ompt_scope_end, HOST, &c);
	monitor_test__flush();
	gt_monitor__drain(t);

	gpu = find_name(find_ph(t->cct.root, GT_PH_OMP_TARGET), "device 2 (sm_90)");
	CHECK(gpu);
	/* Both constructs on the GPU share the node: the nowait one (as long)
	 * added nothing. */
	CHECK_EQ_U(gt_cct__get(gpu, GT_M_OMP_TGT_COUNT), 2);
	CHECK(gt_cct__get(gpu, GT_M_CPU_IDLE) >= 30000000);
	CHECK(gt_cct__get(gpu, GT_M_CPU_IDLE) <= t1 - t0);
	CHECK_EQ_U(t->idle_ns, gt_cct__get(gpu, GT_M_CPU_IDLE));
	host = find_ph(t->cct.root, GT_PH_OMP_TARGET_UPDATE);
	CHECK(host && host->children);
	CHECK_EQ_U(gt_cct__get(host->children, GT_M_CPU_IDLE), 0);
}

TEST_MAIN({ "devices never initialized", unknown_devices },
	  { "overlapping constructs keyed by target_data", overlapping_constructs },
	  { "overlapping operations keyed by host_op_id", overlapping_operations },
	  { "the operation in progress, for device backends", current_placeholder },
	  { "a deferred target task keeps its late operations", deferred_target_task },
	  { "a construct ended on another thread", cross_thread_end },
	  { "OpenMP 5.0 callbacks", non_emi_callbacks },
	  { "map callbacks only without data operations", map_callbacks },
	  { "OMPT device tracing through the monitor", device_tracing },
	  { "a construct the host waits in is CPU_IDLE", host_waits })
