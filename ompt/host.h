/* SPDX-License-Identifier: MIT */
#ifndef GT_OMPT_HOST_H
#define GT_OMPT_HOST_H

#include <omp-tools.h>

/* Handlers of GT_OMPT_HOST_EVENTS, one per event. */
void ompt__on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data);
void ompt__on_thread_end(ompt_data_t *thread_data);
void ompt__on_parallel_begin(ompt_data_t *encountering_task_data,
			     const ompt_frame_t *encountering_task_frame, ompt_data_t *parallel_data,
			     unsigned int requested_parallelism, int flags, const void *codeptr_ra);
void ompt__on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
			   int flags, const void *codeptr_ra);
void ompt__on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
			    ompt_data_t *task_data, unsigned int actual_parallelism,
			    unsigned int index, int flags);
void ompt__on_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint,
		   ompt_data_t *parallel_data, ompt_data_t *task_data, uint64_t count,
		   const void *codeptr_ra);
void ompt__on_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
			ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra);
void ompt__on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
			       ompt_data_t *parallel_data, ompt_data_t *task_data,
			       const void *codeptr_ra);
void ompt__on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
		     ompt_data_t *task_data, const void *codeptr_ra);
void ompt__on_task_create(ompt_data_t *encountering_task_data,
			  const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
			  int flags, int has_dependences, const void *codeptr_ra);
void ompt__on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
			    ompt_data_t *next_task_data);

/* Sets up the initial thread; called from the tool's initialize. */
void ompt__host_init(void);

#endif
