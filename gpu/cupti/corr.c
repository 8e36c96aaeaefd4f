/* SPDX-License-Identifier: MIT */
/*
 * What ties CUPTI's activities to the operations the callbacks issued: the
 * correlation table (CUPTI id -> the tool's id and the activities expected)
 * and the executable graphs' activity counts.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cupti/cupti-internal.h"

/* ---- the correlation table --------------------------------------------- */

/*
 * A seqlock per slot, with the CUPTI id as its sequence: ids are unique, so
 * a reader that sees the same id before and after reading the payload read
 * that id's payload.
 *   writer: cid = 0 (relaxed); release fence; payload (relaxed); cid = id (release)
 *   reader: cid (acquire) == id; payload (relaxed); acquire fence; cid == id
 */
struct corr_slot {
	_Atomic uint32_t cid;
	atomic_int parts;
	_Atomic uint64_t id;
};

static struct corr_slot *corr;
static pthread_once_t corr_once = PTHREAD_ONCE_INIT;

static void corr__init(void)
{
	corr = calloc(GT_CUPTI_CORR_SLOTS, sizeof(*corr));
}

void gt_cupti_corr__put(uint32_t cupti_id, uint64_t id, int32_t parts)
{
	struct corr_slot *s;

	pthread_once(&corr_once, corr__init);
	if (!corr || !cupti_id)
		return;
	s = &corr[cupti_id & (GT_CUPTI_CORR_SLOTS - 1)];
	atomic_store_explicit(&s->cid, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->id, id, memory_order_relaxed);
	atomic_store_explicit(&s->parts, parts > 0 ? parts : 1, memory_order_relaxed);
	atomic_store_explicit(&s->cid, cupti_id, memory_order_release);
}

int gt_cupti_corr__get(uint32_t cupti_id, uint64_t *id, int *more)
{
	struct corr_slot *s;
	uint32_t c;
	int left;

	*more = 0;
	if (!corr || !cupti_id)
		return 0;
	s = &corr[cupti_id & (GT_CUPTI_CORR_SLOTS - 1)];
	c = atomic_load_explicit(&s->cid, memory_order_acquire);
	if (c != cupti_id) {
		/* A later id took the slot, or the call was never seen. */
		if (c > cupti_id)
			atomic_fetch_add_explicit(&gt_cupti_stats.overwritten, 1,
						  memory_order_relaxed);
		return 0;
	}
	*id = atomic_load_explicit(&s->id, memory_order_relaxed);
	left = atomic_load_explicit(&s->parts, memory_order_relaxed);
	if (left > 1)
		left = atomic_fetch_sub_explicit(&s->parts, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->cid, memory_order_relaxed) != cupti_id)
		return 0;
	*more = left > 1;
	return 1;
}

/* ---- graphs -------------------------------------------------------------- */

/*
 * Executable graph → the activities one launch produces (kernel, copy and
 * memset nodes, child graphs included), counted at instantiation. Open
 * addressing, inserted with a CAS, never removed: a destroyed graph's handle
 * that comes back for a new graph is counted again at its instantiation. A
 * graph the table cannot hold, or one with conditional nodes, counts 1: its
 * first activity completes the operation and the rest are dropped.
 */
#define GRAPH_SLOTS 4096
#define GRAPH_PROBE 64

static struct {
	_Atomic uintptr_t exec;
	atomic_int parts;
} graphs[GRAPH_SLOTS];

static int graph__count(CUgraph g, int depth)
{
	CUgraphNode *nodes;
	size_t n = 0;
	int parts = 0;

	if (depth > 8 || !gt_cupti_lib.cuGraphGetNodes || !gt_cupti_lib.cuGraphNodeGetType ||
	    gt_cupti_lib.cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS || !n)
		return 0;
	nodes = malloc(n * sizeof(*nodes));
	if (!nodes || gt_cupti_lib.cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS) {
		free(nodes);
		return -1;
	}
	for (size_t i = 0; i < n && parts >= 0; i++) {
		CUgraphNodeType type;
		CUgraph child;
		int c;

		if (gt_cupti_lib.cuGraphNodeGetType(nodes[i], &type) != CUDA_SUCCESS) {
			parts = -1;
			break;
		}
		switch (type) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
		case CU_GRAPH_NODE_TYPE_MEMCPY:
		case CU_GRAPH_NODE_TYPE_MEMSET:
			parts++;
			break;
		case CU_GRAPH_NODE_TYPE_GRAPH:
			if (!gt_cupti_lib.cuGraphChildGraphNodeGetGraph ||
			    gt_cupti_lib.cuGraphChildGraphNodeGetGraph(nodes[i], &child) !=
				    CUDA_SUCCESS ||
			    (c = graph__count(child, depth + 1)) < 0)
				parts = -1;
			else
				parts += c;
			break;
		case CU_GRAPH_NODE_TYPE_CONDITIONAL:
			parts = -1;
			break;
		default:
			break;
		}
	}
	free(nodes);
	return parts;
}

/* Every instantiation function starts its parameters with (exec *, graph). */
struct graph_instantiate_params {
	void **exec;
	void *graph;
};
_Static_assert(offsetof(cudaGraphInstantiate_v12000_params, graph) ==
		       offsetof(struct graph_instantiate_params, graph),
	       "instantiation parameters");
_Static_assert(offsetof(cuGraphInstantiateWithParams_params, hGraph) ==
		       offsetof(struct graph_instantiate_params, graph),
	       "instantiation parameters");

void gt_cupti_graph__instantiated(const void *params)
{
	const struct graph_instantiate_params *p = params;
	uintptr_t exec = p && p->exec ? (uintptr_t)*p->exec : 0;
	int parts;
	uint64_t h;

	if (!exec)
		return;
	parts = graph__count((CUgraph)p->graph, 0);
	h = gt_hash__mix64(exec);
	for (unsigned i = 0; i < GRAPH_PROBE; i++) {
		unsigned k = (unsigned)(h + i) & (GRAPH_SLOTS - 1);
		uintptr_t cur = atomic_load_explicit(&graphs[k].exec, memory_order_acquire);

		if (cur != exec && (cur || !atomic_compare_exchange_strong_explicit(
						   &graphs[k].exec, &cur, exec,
						   memory_order_acq_rel, memory_order_acquire)) &&
		    cur != exec)
			continue;
		atomic_store_explicit(&graphs[k].parts, parts > 0 ? parts : 1, memory_order_release);
		return;
	}
}

int gt_cupti_graph__parts(uintptr_t exec)
{
	uint64_t h = gt_hash__mix64(exec);

	for (unsigned i = 0; exec && i < GRAPH_PROBE; i++) {
		unsigned k = (unsigned)(h + i) & (GRAPH_SLOTS - 1);
		uintptr_t cur = atomic_load_explicit(&graphs[k].exec, memory_order_acquire);

		if (cur == exec)
			return atomic_load_explicit(&graphs[k].parts, memory_order_acquire);
		if (!cur)
			break;
	}
	return 1;
}
