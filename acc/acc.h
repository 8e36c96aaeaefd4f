/* SPDX-License-Identifier: MIT */
#ifndef GT_ACC_ACC_H
#define GT_ACC_ACC_H

struct gt_thread;
struct gt_cct_node;

/*
 * The node, in t's own tree, of the OpenACC work in progress on the calling
 * thread t: the launch or transfer being enqueued (<acc launch>,
 * <acc upload>, ...), else the innermost construct (<acc compute>, ...),
 * else NULL. Device backends that see the CUDA calls the OpenACC runtime
 * makes (gpu/cupti) correlate them with this node, so that the kernels'
 * device time nests under the construct. Call on t itself; a few loads.
 */
struct gt_cct_node *gt_acc__current(struct gt_thread *t);

#endif
