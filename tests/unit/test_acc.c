/* SPDX-License-Identifier: MIT */
/*
 * The OpenACC handlers driven by a fake runtime: every event is registered,
 * launches and transfers nest under the construct in progress, and the
 * source position a runtime reports (NVHPC does) names the construct.
 */
#include <acc_prof.h>
#include <string.h>

#include "core/thread.h"
#include "tests/unit/test.h"

static acc_prof_callback callbacks[acc_ev_last];
static int registered;

static void fake_reg(acc_event_t ev, acc_prof_callback cb, acc_register_t how)
{
	CHECK(how == acc_reg);
	CHECK(ev > acc_ev_none && ev < acc_ev_last);
	callbacks[ev] = cb;
	registered++;
}

static void fire(acc_event_t ev, acc_prof_info *pi, acc_event_info *ei)
{
	acc_api_info ai = { 0 };

	pi->event_type = ev;
	ei->event_type = ev;
	CHECK(callbacks[ev] != NULL);
	callbacks[ev](pi, ei, &ai);
}

static struct gt_cct_node *find(struct gt_cct_node *n, uint32_t kind, uint64_t key)
{
	for (struct gt_cct_node *c = n->children; c; c = c->sibling) {
		struct gt_cct_node *hit;

		if (c->kind == kind && c->key == key)
			return c;
		if ((hit = find(c, kind, key)))
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

static void nesting_and_positions(void)
{
	acc_prof_info pi = { .device_type = acc_device_nvidia, .device_number = 0,
			     .src_file = "app.f90", .func_name = "solve", .line_no = 42 };
	acc_event_info ei;
	struct gt_thread *t;
	struct gt_cct_node *compute, *site, *launch, *kernel, *up;

	setenv("GPUTOOL_SAMPLE_HZ", "0", 1);
	acc_register_library(fake_reg, fake_reg, NULL);
	CHECK_EQ_U(registered, 22);
	t = gt_thread__peek();
	CHECK(t != NULL);

	memset(&ei, 0, sizeof(ei));
	fire(acc_ev_compute_construct_start, &pi, &ei);
	ei.launch_event.kernel_name = "solve_kernel";
	ei.launch_event.num_gangs = 80;
	ei.launch_event.num_workers = 4;
	ei.launch_event.vector_length = 128;
	fire(acc_ev_enqueue_launch_start, &pi, &ei);
	fire(acc_ev_enqueue_launch_end, &pi, &ei);
	memset(&ei, 0, sizeof(ei));
	ei.data_event.bytes = 4096;
	fire(acc_ev_enqueue_upload_start, &pi, &ei);
	fire(acc_ev_enqueue_upload_end, &pi, &ei);
	fire(acc_ev_enqueue_upload_start, &pi, &ei);
	fire(acc_ev_enqueue_upload_end, &pi, &ei);
	fire(acc_ev_compute_construct_end, &pi, &ei);

	compute = find(t->cct.root, GT_NODE_PLACEHOLDER, GT_PH_ACC_COMPUTE);
	CHECK(compute != NULL);
	site = find_name(compute, "solve (app.f90:42)");
	CHECK(site && site->parent == compute);
	CHECK_EQ_U(gt_cct__get(site, GT_M_ACC_COUNT), 1);
	launch = find(site, GT_NODE_PLACEHOLDER, GT_PH_ACC_LAUNCH);
	CHECK(launch && launch->parent == site);
	kernel = find_name(launch, "solve_kernel");
	CHECK(kernel != NULL);
	CHECK_EQ_U(gt_cct__get(kernel, GT_M_ACC_LAUNCHES), 1);
	CHECK_EQ_U(gt_cct__get(kernel, GT_M_ACC_GANGS), 80);
	CHECK_EQ_U(gt_cct__get(kernel, GT_M_ACC_VECTOR_LENGTH), 128);
	up = find(site, GT_NODE_PLACEHOLDER, GT_PH_ACC_UPLOAD);
	CHECK(up && up->parent == site);
	CHECK_EQ_U(gt_cct__get(up, GT_M_ACC_UP_BYTES), 8192);
	CHECK_EQ_U(gt_cct__get(up, GT_M_ACC_UP_COUNT), 2);
}

static void registers_once(void)
{
	setenv("GPUTOOL_SAMPLE_HZ", "0", 1);
	acc_register_library(fake_reg, fake_reg, NULL);
	acc_register_library(fake_reg, fake_reg, NULL);
	CHECK_EQ_U(registered, 22);
}

TEST_MAIN({ "nesting and positions", nesting_and_positions }, { "registers once", registers_once })
