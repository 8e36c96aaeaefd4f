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
	X(sync_region, sync_region)      \
	X(sync_region_wait, sync_region) \
	X(masked, masked)                \
	X(task_create, task_create)      \
	X(task_schedule, task_schedule)

#endif
