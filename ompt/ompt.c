/* SPDX-License-Identifier: MIT */
#include <link.h>
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"
#include "ompt/host.h"
#include "ompt/ompt-internal.h"
#include "ompt/target.h"

ompt_get_task_info_t gt_ompt_get_task_info;
ompt_get_state_t gt_ompt_get_state;

static const char *const set_result_names[] = {
	[ompt_set_error] = "error",
	[ompt_set_never] = "never",
	[ompt_set_impossible] = "impossible",
	[ompt_set_sometimes] = "sometimes",
	[ompt_set_sometimes_paired] = "sometimes paired",
	[ompt_set_always] = "always",
};

static int refused(ompt_set_result_t r)
{
	return r == ompt_set_never || r == ompt_set_error;
}

/* Registers one callback; says (at info level) when it will not always fire. */
static ompt_set_result_t ompt__register(ompt_set_callback_t set_callback, ompt_callbacks_t event,
					ompt_callback_t cb, const char *name)
{
	ompt_set_result_t r = set_callback(event, cb);

	if (r != ompt_set_always && r != ompt_set_sometimes_paired)
		gt_info("ompt", "callback %s: %s", name,
			r <= ompt_set_always ? set_result_names[r] : "?");
	return r;
}

/* The target callbacks: EMI first, the OpenMP 5.0 form where EMI is refused. */
static void ompt__register_target(ompt_set_callback_t set_callback)
{
	ompt_set_result_t got[64] = { 0 };

	_Static_assert(ompt_callback_target_map_emi < 64, "got[] too small");
	ompt__target_init();
#define X(event, type)                                                                    \
	{                                                                                 \
		ompt_callback_##type##_t typed = ompt__on_##event;                        \
		got[ompt_callback_##event] = ompt__register(                              \
			set_callback, ompt_callback_##event, (ompt_callback_t)typed, #event); \
	}
	GT_OMPT_TARGET_EVENTS(X)
#undef X
#define X(event, type, emi)                                                               \
	if (refused(got[ompt_callback_##emi])) {                                          \
		ompt_callback_##type##_t typed = ompt__on_##event;                        \
		got[ompt_callback_##event] = ompt__register(                              \
			set_callback, ompt_callback_##event, (ompt_callback_t)typed, #event); \
	}
	GT_OMPT_TARGET_FALLBACK_EVENTS(X)
#undef X
	ompt__target_set_data_ops_reported(!refused(got[ompt_callback_target_data_op_emi]) ||
					   !refused(got[ompt_callback_target_data_op]));
}

static int ompt__initialize(ompt_function_lookup_t lookup, int initial_device_num,
			    ompt_data_t *tool_data)
{
	ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	int missing = 0;

	(void)initial_device_num;
	(void)tool_data;
	gt_ompt_get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
	gt_ompt_get_state = (ompt_get_state_t)lookup("ompt_get_state");
	if (!set_callback || !gt_ompt_get_task_info) {
		gt_warn("ompt", "the OpenMP runtime lacks ompt_set_callback/ompt_get_task_info; OpenMP measurement is off");
		return 0;
	}
#define X(event, type)                                                                    \
	{                                                                                 \
		ompt_callback_##type##_t typed = ompt__on_##event;                        \
		missing += refused(ompt__register(set_callback, ompt_callback_##event,    \
						  (ompt_callback_t)typed, #event));       \
	}
	GT_OMPT_HOST_EVENTS(X)
#undef X
	if (missing)
		gt_info("ompt", "%d host callbacks unavailable; their metrics will be missing", missing);
	ompt__register_target(set_callback);
	gt_sample__set_stitch(ompt__stitch_sample);
	ompt__host_init();
	return 1;
}

static void ompt__finalize(ompt_data_t *tool_data)
{
	uint64_t read = 0, asked = 0;

	(void)tool_data;
	/* The runtime's threads are done with their records by now. */
	for (uint32_t i = 0, n = gt_thread__count(); i < n; i++) {
		const struct gt_thread *t = gt_thread__at(i);
		const struct omp_thread *ot = t ? t->ompt : NULL;

		if (ot) {
			read += ot->frames_read;
			asked += ot->frames_asked;
		}
	}
	gt_info("ompt", "task exit frames: %llu asked of the runtime, %llu read beside the task's data",
		(unsigned long long)asked, (unsigned long long)read);
	gt_tool__stop();
}

static ompt_start_tool_result_t start_result = {
	.initialize = ompt__initialize,
	.finalize = ompt__finalize,
	.tool_data = { .value = 0 },
};

/* 1 once an OpenMP runtime asked for the tool (relaxed: read at stop, on
 * the stopping thread, after the runtime's own threads are done with it). */
static atomic_int omp_started;

/*
 * At stop: a program whose OpenMP runtime is GCC's libgomp (no OMPT) ran
 * with the tool loaded another way (OpenACC's ACC_PROFLIB, a preload): its
 * OpenMP regions and their threads went unmeasured. Said once, in the log
 * and in the report's header.
 */
static int has_gomp(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size, (void)arg;
	return slash && !strncmp(slash + 1, "libgomp.so", 10);
}

static void ompt__unmeasured(void)
{
	char fact[224];
	unsigned sampled = 0;

	if (atomic_load_explicit(&omp_started, memory_order_relaxed))
		return;
	/* Looked up in the loader's list, never with dlopen: at exit, a
	 * dlopen of libgomp can run its constructors again. */
	if (!dl_iterate_phdr(has_gomp, NULL))
		return;
	/* libgomp is GCC's OpenACC runtime too: an OpenACC program is measured
	 * through its profiling interface, and told only in the header. */
	if (gt_tool__fact("acc_device")) {
		gt_tool__set_fact("omp_unmeasured", "GCC's libgomp (no OMPT): OpenACC measured, OpenMP regions (if any) not; "
						    "build with clang -fopenmp to measure them");
		return;
	}
	gt_warn("omp", "OpenMP not measured: GCC's libgomp has no OMPT interface (build with clang -fopenmp, "
		"LLVM's libomp, to measure OpenMP regions)");
	/* Preloaded, every thread the program created was sampled
	 * (core/thread-create.c): its CPU time is there, its regions not. */
	for (uint32_t i = 0, n = gt_thread__count(); i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);

		sampled += t && t->samples > 0;
	}
	snprintf(fact, sizeof(fact),
		 "GCC's libgomp (no OMPT): no OpenMP regions measured, CPU time sampled on %u thread%s; "
		 "build with clang -fopenmp to measure regions",
		 sampled, sampled == 1 ? "" : "s");
	gt_tool__set_fact("omp_unmeasured", fact);
}

__attribute__((constructor)) static void ompt__register_check(void)
{
	gt_tool__on_stop(ompt__unmeasured);
}

__attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	char fact[224];

	if (gt_tool__start())
		return NULL;
	atomic_store_explicit(&omp_started, 1, memory_order_relaxed);
	snprintf(fact, sizeof(fact), "%s (OpenMP %u)", runtime_version ? runtime_version : "?",
		 omp_version);
	gt_tool__set_fact("omp_runtime", fact);
	return &start_result;
}
