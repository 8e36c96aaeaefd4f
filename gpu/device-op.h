/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_DEVICE_OP_H
#define GT_GPU_DEVICE_OP_H

/*
 * One completed device operation, as every backend (CUPTI, OpenCL, OpenMP
 * target, OpenACC) reports it. Backends translate their vendor records into
 * this form; metrics, blame shifting and reports are written once, over it.
 *
 * Times are on the tool's clock (gt_clock__now(): CLOCK_MONOTONIC ns); a
 * backend converts device timestamps before filling start_ns and end_ns.
 * A field a backend does not know stays 0.
 */

#include <stdint.h>

#include "core/cct.h"

enum gt_device_op_kind {
	GT_DEVOP_OTHER = 0,
	GT_DEVOP_KERNEL = 1,
	GT_DEVOP_COPY = 2,
	GT_DEVOP_MEMSET = 3,
	GT_DEVOP_ALLOC = 4,
	GT_DEVOP_FREE = 5,
	GT_DEVOP_SYNC = 6,
};

/* Direction of a GT_DEVOP_COPY. OTHER: host to host, array copies, or not
 * known; a copy between two devices (peer) is D2D. */
enum gt_copy_dir {
	GT_COPY_OTHER = 0,
	GT_COPY_H2D = 1,
	GT_COPY_D2H = 2,
	GT_COPY_D2D = 3,
};

/* Flags. */
enum {
	/*
	 * More activities with the same correlation id follow (a graph launch,
	 * an OpenMP target region reported piecewise): the monitor keeps the
	 * correlation until an activity without this flag arrives.
	 */
	GT_DEVOP_F_MORE = 1u << 0,
	/* A copy to or from pageable (not page-locked) host memory: the
	 * driver stages it, slower, and it cannot overlap other work. */
	GT_DEVOP_F_PAGEABLE = 1u << 1,
};

/* The bounds on a kernel's resident blocks per SM, besides the grid. */
enum gt_occ_limit {
	GT_OCC_SLOTS, /* warp and block slots: the block size */
	GT_OCC_REGS,  /* registers per thread */
	GT_OCC_SMEM,  /* shared memory per block */
	GT_OCC_LIMITS
};

/* Launch facts of a GT_DEVOP_KERNEL. */
struct gt_kernel_launch {
	uint32_t grid[3];	/* blocks (work-groups) per dimension */
	uint32_t block[3];	/* threads (work-items) per block, per dimension */
	uint32_t registers;	/* per thread */
	uint32_t static_shared; /* bytes per block */
	uint32_t dynamic_shared; /* bytes per block */
	uint32_t occupancy;	/* theoretical, in 1/1000 of the device's thread slots */
	/* What each bound alone (with the slots) allows, in 1/1000; 0: unknown. */
	uint32_t occ_limit[GT_OCC_LIMITS];
};

struct gt_device_op {
	/* Names the operation; see gt_monitor__correlate(). 0: none. */
	uint64_t correlation;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;	 /* copy, memset, alloc, free */
	uint64_t stream; /* stream or queue, as the backend numbers them */
	/* Kernel name, or a peer copy's devices ("device 0 -> device 1"); must
	 * live until exit and be one pointer per name (the backend interns
	 * it): it is the key of a tree node. NULL: unnamed. */
	const char *name;
	uint32_t device;
	uint32_t context;
	uint8_t kind;	 /* enum gt_device_op_kind */
	uint8_t copy;	 /* enum gt_copy_dir */
	uint16_t flags; /* GT_DEVOP_F_* */
	struct gt_kernel_launch launch;
};

/* The placeholder that stands for @op in a calling context; GT_PH__COUNT
 * (none) for GT_DEVOP_OTHER. */
enum gt_placeholder gt_device_op__placeholder(const struct gt_device_op *op);

/*
 * Charges @op's metrics into @cct, which must be the calling thread's own
 * tree (or a tree no thread touches any more, at the finalizer), under
 * gt_thread__enter().
 *
 * @placeholder is where the operation was issued. When it is a GPU
 * placeholder (<gpu kernel>, <gpu copy h2d>, ...) the metrics go on it, as
 * the backend chose it; otherwise (a frame, <omp target>, <acc compute>, NULL
 * for the root) the op's own GPU placeholder is created beneath it first.
 *
 *   kernel  GKER, GKER_COUNT and the launch facts (GKER_BLKS, GKER_BLK_THR,
 *           GKER_THR_REG, GKER_STMEM, GKER_DYMEM, GKER_OCC_THR, summed over
 *           launches) on a child of kind GT_NODE_NAME keyed by the kernel
 *           name, or on the placeholder itself when the kernel has no name;
 *           never on both, so that inclusive sums count each launch once.
 *   copy    GXCOPY_<dir>, GXCOPY_<dir>_BYTES, GXCOPY_<dir>_COUNT.
 *   memset  GMSET, GMSET_BYTES, GMSET_COUNT.
 *   alloc   GMEM, GMEM_BYTES, GMEM_COUNT.
 *   free    GMEM, GMEM_COUNT.
 *   sync    GSYNC, GSYNC_COUNT.
 *   other   nothing.
 *
 * Returns 0, or -ENOMEM when the tree could not grow.
 */
int gt_device_op__attribute(struct gt_cct *cct, struct gt_cct_node *placeholder,
			    const struct gt_device_op *op);

/*
 * gt_device_op__attribute, and for a kernel whose stream stood idle
 * @launch_gap ns before it after its issue (gpu/streams.h; 0: not),
 * GKER_LAUNCH_GAP and one GKER_LAUNCH_GAP_COUNT in the same pass.
 */
int gt_device_op__attribute_gap(struct gt_cct *cct, struct gt_cct_node *placeholder,
				const struct gt_device_op *op, uint64_t launch_gap);

/*
 * Adds @value to metric @m at the node where gt_device_op__attribute charges
 * @op's own metrics under @placeholder (its kernel's name node, its GPU
 * placeholder), so that blame sits beside the time it explains; at
 * @placeholder itself (NULL: the root) for GT_DEVOP_OTHER. Same rules of use
 * as gt_device_op__attribute. Returns 0 or -ENOMEM.
 */
int gt_device_op__add(struct gt_cct *cct, struct gt_cct_node *placeholder,
		      const struct gt_device_op *op, enum gt_metric m, uint64_t value);

#endif
