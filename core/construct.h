/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_CONSTRUCT_H
#define GT_CORE_CONSTRUCT_H

/*
 * What a programming-model layer is doing on a thread, for the device
 * backends: the node of the construct or operation in progress (an OpenMP
 * target construct, its data operation or kernel; an OpenACC construct or
 * operation), under which a backend hangs the device work it measures.
 *
 * Each layer keeps its constructs in its own per-thread state and registers
 * one provider at its start; a backend asks core, naming no layer, and a
 * layer names no backend. Providers are asked in the order they registered;
 * the first that answers wins.
 */
struct gt_cct_node;
struct gt_thread;

/* The node of @t's construct in progress, or NULL. Called on @t only, as
 * often as once per device API call: it must be cheap and take no lock. */
typedef struct gt_cct_node *(*gt_construct_fn)(struct gt_thread *t);

#define GT_CONSTRUCT_PROVIDERS 4

/* Registers @fn once (again: nothing); 0, or -ENOSPC. Any thread. */
int gt_construct__provide(gt_construct_fn fn);
/* The node of the construct in progress on @t (the calling thread), or NULL. */
struct gt_cct_node *gt_construct__current(struct gt_thread *t);

#endif
