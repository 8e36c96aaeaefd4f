/* SPDX-License-Identifier: MIT */
#include "gpu/device-op.h"

#include <errno.h>

enum gt_placeholder gt_device_op__placeholder(const struct gt_device_op *op)
{
	switch (op->kind) {
	case GT_DEVOP_KERNEL:
		return GT_PH_GPU_KERNEL;
	case GT_DEVOP_COPY:
		switch (op->copy) {
		case GT_COPY_H2D:
			return GT_PH_GPU_COPY_H2D;
		case GT_COPY_D2H:
			return GT_PH_GPU_COPY_D2H;
		case GT_COPY_D2D:
			return GT_PH_GPU_COPY_D2D;
		default:
			return GT_PH_GPU_COPY;
		}
	case GT_DEVOP_MEMSET:
		return GT_PH_GPU_MEMSET;
	case GT_DEVOP_ALLOC:
		return GT_PH_GPU_ALLOC;
	case GT_DEVOP_FREE:
		return GT_PH_GPU_FREE;
	case GT_DEVOP_SYNC:
		return GT_PH_GPU_SYNC;
	default:
		return GT_PH__COUNT;
	}
}

static int is_gpu_placeholder(const struct gt_cct_node *n)
{
	if (n->kind != GT_NODE_PLACEHOLDER)
		return 0;
	switch (n->key) {
	case GT_PH_GPU_KERNEL:
	case GT_PH_GPU_COPY_H2D:
	case GT_PH_GPU_COPY_D2H:
	case GT_PH_GPU_COPY_D2D:
	case GT_PH_GPU_COPY:
	case GT_PH_GPU_ALLOC:
	case GT_PH_GPU_FREE:
	case GT_PH_GPU_MEMSET:
	case GT_PH_GPU_SYNC:
		return 1;
	default:
		return 0;
	}
}

/* Metrics of one copy direction: time, bytes, count, in that order. */
static const enum gt_metric copy_metrics[4][3] = {
	[GT_COPY_OTHER] = { GT_M_GXCOPY_OTHER, GT_M_GXCOPY_OTHER_BYTES, GT_M_GXCOPY_OTHER_COUNT },
	[GT_COPY_H2D] = { GT_M_GXCOPY_H2D, GT_M_GXCOPY_H2D_BYTES, GT_M_GXCOPY_H2D_COUNT },
	[GT_COPY_D2H] = { GT_M_GXCOPY_D2H, GT_M_GXCOPY_D2H_BYTES, GT_M_GXCOPY_D2H_COUNT },
	[GT_COPY_D2D] = { GT_M_GXCOPY_D2D, GT_M_GXCOPY_D2D_BYTES, GT_M_GXCOPY_D2D_COUNT },
};

/* Adds the nonzero values of @n metrics; a zero adds nothing and allocates no cell. */
static int add_all(struct gt_cct *cct, struct gt_cct_node *node, const enum gt_metric *m,
		   const uint64_t *v, unsigned n)
{
	return gt_cct__add_n(cct, node, m, v, n, 0);
}

static int attribute_kernel(struct gt_cct *cct, struct gt_cct_node *node,
			    const struct gt_device_op *op, uint64_t ns, uint64_t gap)
{
	const struct gt_kernel_launch *l = &op->launch;
	const enum gt_metric m[] = {
		GT_M_GKER,	 GT_M_GKER_COUNT, GT_M_GKER_BLKS,  GT_M_GKER_BLK_THR,
		GT_M_GKER_THR_REG, GT_M_GKER_STMEM, GT_M_GKER_DYMEM, GT_M_GKER_OCC_THR,
		GT_M_GKER_OCC_SLOTS, GT_M_GKER_OCC_REGS, GT_M_GKER_OCC_SMEM, GT_M_GKER_LAUNCH_GAP,
		GT_M_GKER_LAUNCH_GAP_COUNT,
	};
	const uint64_t v[] = {
		ns,
		1,
		(uint64_t)l->grid[0] * l->grid[1] * l->grid[2],
		(uint64_t)l->block[0] * l->block[1] * l->block[2],
		l->registers,
		l->static_shared,
		l->dynamic_shared,
		l->occupancy,
		l->occ_limit[GT_OCC_SLOTS],
		l->occ_limit[GT_OCC_REGS],
		l->occ_limit[GT_OCC_SMEM],
		gap,
		gap != 0,
	};

	return add_all(cct, node, m, v, sizeof(m) / sizeof(m[0]));
}

/* The node of op under its placeholder: the name, for a named kernel or
 * copy (a peer copy's devices), else the placeholder itself. */
static struct gt_cct_node *named(struct gt_cct *cct, struct gt_cct_node *node, const struct gt_device_op *op)
{
	if (node && op->name && (op->kind == GT_DEVOP_KERNEL || op->kind == GT_DEVOP_COPY))
		node = gt_cct__child(cct, node, GT_NODE_NAME, (uint64_t)(uintptr_t)op->name, 0);
	return node;
}

int gt_device_op__attribute(struct gt_cct *cct, struct gt_cct_node *placeholder,
			    const struct gt_device_op *op)
{
	return gt_device_op__attribute_gap(cct, placeholder, op, 0);
}

int gt_device_op__attribute_gap(struct gt_cct *cct, struct gt_cct_node *placeholder,
				const struct gt_device_op *op, uint64_t launch_gap)
{
	uint64_t ns = op->end_ns > op->start_ns ? op->end_ns - op->start_ns : 0;
	struct gt_cct_node *node = placeholder ? placeholder : cct->root;

	if (op->kind == GT_DEVOP_OTHER || op->kind > GT_DEVOP_SYNC)
		return 0;
	if (!is_gpu_placeholder(node))
		node = gt_cct__placeholder(cct, node, gt_device_op__placeholder(op));
	node = named(cct, node, op);
	if (!node)
		return -ENOMEM;

	switch (op->kind) {
	case GT_DEVOP_KERNEL:
		return attribute_kernel(cct, node, op, ns, launch_gap);
	case GT_DEVOP_COPY: {
		const uint64_t v[] = { ns, op->bytes, 1 };
		unsigned dir = op->copy <= GT_COPY_D2D ? op->copy : GT_COPY_OTHER;
		int err = add_all(cct, node, copy_metrics[dir], v, 3);

		if (!err && (op->flags & GT_DEVOP_F_PAGEABLE) && op->bytes)
			err = gt_cct__add(cct, node, GT_M_GXCOPY_PAGEABLE_BYTES, op->bytes, 0);
		return err;
	}
	case GT_DEVOP_MEMSET: {
		const enum gt_metric m[] = { GT_M_GMSET, GT_M_GMSET_BYTES, GT_M_GMSET_COUNT };
		const uint64_t v[] = { ns, op->bytes, 1 };

		return add_all(cct, node, m, v, 3);
	}
	case GT_DEVOP_ALLOC: {
		const enum gt_metric m[] = { GT_M_GMEM, GT_M_GMEM_BYTES, GT_M_GMEM_COUNT };
		const uint64_t v[] = { ns, op->bytes, 1 };

		return add_all(cct, node, m, v, 3);
	}
	case GT_DEVOP_FREE: {
		const enum gt_metric m[] = { GT_M_GMEM, GT_M_GMEM_COUNT };
		const uint64_t v[] = { ns, 1 };

		return add_all(cct, node, m, v, 2);
	}
	default: { /* GT_DEVOP_SYNC */
		const enum gt_metric m[] = { GT_M_GSYNC, GT_M_GSYNC_COUNT };
		const uint64_t v[] = { ns, 1 };

		return add_all(cct, node, m, v, 2);
	}
	}
}

int gt_device_op__add(struct gt_cct *cct, struct gt_cct_node *placeholder,
		      const struct gt_device_op *op, enum gt_metric m, uint64_t value)
{
	struct gt_cct_node *node = placeholder ? placeholder : cct->root;

	if (op->kind != GT_DEVOP_OTHER && op->kind <= GT_DEVOP_SYNC) {
		if (!is_gpu_placeholder(node))
			node = gt_cct__placeholder(cct, node, gt_device_op__placeholder(op));
		node = named(cct, node, op);
		if (!node)
			return -ENOMEM;
	}
	return gt_cct__add(cct, node, m, value, 0);
}
