/* SPDX-License-Identifier: MIT */
#ifndef GT_OMPT_EVENTS_H
#define GT_OMPT_EVENTS_H

/*
 * The OMPT host callbacks the tool registers, written once:
 * X(event, type) registers handler ompt__on_<event> for ompt_callback_<event>,
 * checked at compile time against ompt_callback_<type>_t.
 */
#define GT_OMPT_HOST_EVENTS(X)           \
	X(thread_begin, thread_begin)    \
	X(thread_end, thread_end)        \
	X(parallel_begin, parallel_begin) \
	X(parallel_end, parallel_end)    \
	X(implicit_task, implicit_task)  \
	X(work, work)                    \
	X(reduction, sync_region)        \
	X(sync_region_wait, sync_region) \
	X(masked, masked)                \
	X(task_create, task_create)      \
	X(task_schedule, task_schedule)

/*
 * The OMPT target (device) callbacks, the same way. The EMI forms come
 * first; they carry the tool's per-operation data (target_data, host_op_id)
 * from begin to end.
 */
#define GT_OMPT_TARGET_EVENTS(X)                       \
	X(device_initialize, device_initialize)        \
	X(device_finalize, device_finalize)            \
	X(device_load, device_load)                    \
	X(device_unload, device_unload)                \
	X(target_emi, target_emi)                      \
	X(target_data_op_emi, target_data_op_emi)      \
	X(target_submit_emi, target_submit_emi)        \
	X(target_map_emi, target_map_emi)

/*
 * The OpenMP 5.0 forms, for runtimes without the EMI ones:
 * X(event, type, emi) registers ompt__on_<event> only when registering
 * ompt_callback_<emi> was refused (ompt_set_never or ompt_set_error).
 */
#define GT_OMPT_TARGET_FALLBACK_EVENTS(X)              \
	X(target, target, target_emi)                  \
	X(target_data_op, target_data_op, target_data_op_emi) \
	X(target_submit, target_submit, target_submit_emi) \
	X(target_map, target_map, target_map_emi)

#endif
