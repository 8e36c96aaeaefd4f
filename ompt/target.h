/* SPDX-License-Identifier: MIT */
#ifndef GT_OMPT_TARGET_H
#define GT_OMPT_TARGET_H

/*
 * OpenMP target offload: the OMPT target callbacks (docs/OMP-TARGET.md).
 *
 * A target construct gets a placeholder under its user calling context
 * (<omp target>, <omp target enter data>, <omp target exit data>,
 * <omp target update>), a child naming its device ("device 0 (sm_90)"), and
 * under that one placeholder per kind of operation the runtime performed for
 * it: <omp alloc>, <omp copy h2d>, <omp copy d2h>, <omp copy d2d>,
 * <omp delete>, <omp kernel>, <omp associate>, <omp disassociate>.
 * Operations outside any construct (omp_target_alloc, omp_target_memcpy, ...)
 * hang their device child right under their call site.
 */

#include <omp-tools.h>
#include <stdint.h>

struct gt_thread;
struct gt_cct_node;

/*
 * The node, in t's own tree, of the OpenMP target operation in progress on
 * the calling thread t: the placeholder of the data operation or kernel
 * submission between its begin and end callbacks (<omp copy h2d>,
 * <omp kernel>, ...), else the device node of the innermost target
 * construct t is running, else NULL.
 *
 * For device backends that see the vendor calls the OpenMP runtime makes
 * (the CUDA backend through CUPTI): a kernel launch or copy issued while this
 * returns a node is correlated with that node instead of an unwound
 * context, so that its device time (<gpu kernel>, GKER, ...) nests under the
 * OpenMP operation that issued it. Call on t itself; wait-free, no
 * allocation, a few loads.
 */
struct gt_cct_node *gt_ompt__current_target_placeholder(struct gt_thread *t);

/* Sets up the device table; called from the tool's initialize, before any
 * target callback is registered. */
void ompt__target_init(void);

/* Handlers of GT_OMPT_TARGET_EVENTS and GT_OMPT_TARGET_FALLBACK_EVENTS. */
void ompt__on_device_initialize(int device_num, const char *type, ompt_device_t *device,
				ompt_function_lookup_t lookup, const char *documentation);
void ompt__on_device_finalize(int device_num);
void ompt__on_device_load(int device_num, const char *filename, int64_t offset_in_file,
			  void *vma_in_file, size_t bytes, void *host_addr, void *device_addr,
			  uint64_t module_id);
void ompt__on_device_unload(int device_num, uint64_t module_id);
void ompt__on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
			 ompt_data_t *task_data, ompt_data_t *target_task_data,
			 ompt_data_t *target_data, const void *codeptr_ra);
void ompt__on_target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data,
				 ompt_data_t *target_data, ompt_id_t *host_op_id,
				 ompt_target_data_op_t optype, void *src_addr, int src_device_num,
				 void *dest_addr, int dest_device_num, size_t bytes,
				 const void *codeptr_ra);
void ompt__on_target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data,
				ompt_id_t *host_op_id, unsigned int requested_num_teams);
void ompt__on_target_map_emi(ompt_data_t *target_data, unsigned int nitems, void **host_addr,
			     void **device_addr, size_t *bytes, unsigned int *mapping_flags,
			     const void *codeptr_ra);
void ompt__on_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
		     ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra);
void ompt__on_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id,
			     ompt_target_data_op_t optype, void *src_addr, int src_device_num,
			     void *dest_addr, int dest_device_num, size_t bytes,
			     const void *codeptr_ra);
void ompt__on_target_submit(ompt_id_t target_id, ompt_id_t host_op_id,
			    unsigned int requested_num_teams);
void ompt__on_target_map(ompt_id_t target_id, unsigned int nitems, void **host_addr,
			 void **device_addr, size_t *bytes, unsigned int *mapping_flags,
			 const void *codeptr_ra);

/* Which callbacks the runtime accepted; set by the tool's initialize. With
 * data operations reported, map callbacks add nothing (no double count). */
void ompt__target_set_data_ops_reported(int yes);

#endif
