/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_CCT_H
#define GT_CORE_CCT_H

#include <assert.h>
#include <errno.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/metrics.h"

/*
 * The calling-context tree of one thread.
 *
 * Ownership: only the owning thread creates nodes and writes metrics, from
 * normal context or from its own sampling signal handler (never both at once:
 * see gt_thread__enter()). Other threads may read a node's parent, kind and
 * key: those fields are written before the node is linked and never change,
 * and a node reaches another thread only through a runtime synchronization
 * (an OpenMP fork or a task dispatch) that orders the write before the read.
 * Children lists and metrics are private to the owner until the finalizer,
 * which runs after every other thread has stopped touching the tree.
 */

/* Placeholders stand for what has no frame of its own. */
#define GT_PLACEHOLDERS(X)                               \
	X(THREAD_ROOT, "<thread root>")                   \
	X(OMP_PARALLEL, "<omp parallel>")                 \
	X(OMP_TASK, "<omp task>")                         \
	X(OMP_IDLE, "<omp idle>")                         \
	X(OMP_FORK_JOIN, "<omp runtime: fork/join>")      \
	X(OMP_BARRIER, "<omp barrier>")                   \
	X(OMP_IMPLICIT_BARRIER, "<omp implicit barrier>") \
	X(OMP_TASKWAIT, "<omp taskwait>")                 \
	X(OMP_TASKGROUP, "<omp taskgroup>")               \
	X(OMP_REDUCTION, "<omp reduction>")               \
	X(OMP_LOOP, "<omp loop>")                         \
	X(OMP_SECTIONS, "<omp sections>")                 \
	X(OMP_SINGLE, "<omp single>")                     \
	X(OMP_WORKSHARE, "<omp workshare>")               \
	X(OMP_MASKED, "<omp masked>")                     \
	X(ACC_COMPUTE, "<acc compute>")                   \
	X(ACC_ENTER_DATA, "<acc enter data>")             \
	X(ACC_EXIT_DATA, "<acc exit data>")               \
	X(ACC_UPDATE, "<acc update>")                     \
	X(ACC_WAIT, "<acc wait>")                         \
	X(ACC_LAUNCH, "<acc launch>")                     \
	X(ACC_UPLOAD, "<acc upload>")                     \
	X(ACC_DOWNLOAD, "<acc download>")                 \
	X(ACC_CREATE, "<acc create>")                     \
	X(ACC_DELETE, "<acc delete>")                     \
	X(ACC_ALLOC, "<acc alloc>")                       \
	X(ACC_FREE, "<acc free>")                         \
	X(ACC_DEVICE_INIT, "<acc device init>")           \
	X(GPU_KERNEL, "<gpu kernel>")                     \
	X(GPU_COPY_H2D, "<gpu copy h2d>")                 \
	X(GPU_COPY_D2H, "<gpu copy d2h>")                 \
	X(GPU_COPY_D2D, "<gpu copy d2d>")                 \
	X(GPU_COPY, "<gpu copy>")                         \
	X(GPU_ALLOC, "<gpu alloc>")                       \
	X(GPU_FREE, "<gpu free>")                         \
	X(GPU_MEMSET, "<gpu memset>")                     \
	X(GPU_SYNC, "<gpu sync>")                         \
	X(OMP_TARGET, "<omp target>")                     \
	X(OMP_TARGET_ENTER_DATA, "<omp target enter data>") \
	X(OMP_TARGET_EXIT_DATA, "<omp target exit data>") \
	X(OMP_TARGET_UPDATE, "<omp target update>")       \
	X(OMP_ALLOC, "<omp alloc>")                       \
	X(OMP_COPY_H2D, "<omp copy h2d>")                 \
	X(OMP_COPY_D2H, "<omp copy d2h>")                 \
	X(OMP_COPY_D2D, "<omp copy d2d>")                 \
	X(OMP_DELETE, "<omp delete>")                     \
	X(OMP_KERNEL, "<omp kernel>")                     \
	X(OMP_ASSOCIATE, "<omp associate>")               \
	X(OMP_DISASSOCIATE, "<omp disassociate>")         \
	X(GPU_JIT, "<gpu jit>")

enum gt_placeholder {
#define X(id, name) GT_PH_##id,
	GT_PLACEHOLDERS(X)
#undef X
	GT_PH__COUNT
};

extern const char *const gt_placeholder_names[GT_PH__COUNT];

enum gt_node_kind {
	GT_NODE_ROOT = 0,
	GT_NODE_FRAME = 1,       /* key: an instruction address in this process */
	GT_NODE_PLACEHOLDER = 2, /* key: enum gt_placeholder */
	GT_NODE_NAME = 3,        /* key: a NUL-terminated string that lives until exit */
};

struct gt_metric_cell {
	struct gt_metric_cell *next;
	uint32_t metric;
	uint64_t value;
};

struct gt_cct_node {
	struct gt_cct_node *parent;
	struct gt_cct_node *children;
	struct gt_cct_node *sibling;
	struct gt_metric_cell *metrics;
	uint64_t key;
	uint32_t kind;
	uint32_t depth;
	uint32_t aux;  /* scratch for the finalizer (profile node index) */
	uint32_t tree; /* the id of the tree that holds it: immutable */
};

#define GT_CCT_CELL_CACHE 256 /* a power of two */

struct gt_cct {
	struct gt_cct_node *root;
	struct gt_arena *arena;
	uint64_t nodes;
	uint64_t alloc_failures;
	uint32_t id; /* unique in the process, never 0 */
	/* The cells charged last, by (node, metric): the hot paths charge the
	 * same few cells again and again. Cells never move or die, so an
	 * entry stays valid; a slot holds the last cell hashed to it. */
	struct {
		const struct gt_cct_node *node;
		struct gt_metric_cell *cell;
	} cells[GT_CCT_CELL_CACHE];
};

void gt_cct__init(struct gt_cct *cct, struct gt_arena *arena);

/* Whether node is one of cct's own: only those may get children or metrics
 * from cct's owner. A node of another tree is imported (gt_thread__import)
 * and never written. Reads only immutable fields: any thread may ask. */
static inline int gt_cct__owns(const struct gt_cct *cct, const struct gt_cct_node *node)
{
	return node && node->tree == cct->id;
}

/* The child of parent with (kind, key), created if missing. May return NULL
 * only when signal_ctx is set and the arena has no memory left. */
struct gt_cct_node *gt_cct__child(struct gt_cct *cct, struct gt_cct_node *parent,
				  enum gt_node_kind kind, uint64_t key, int signal_ctx);

static inline uint32_t gt_cct__cell_slot(const struct gt_cct_node *node, uint32_t m)
{
	uint64_t x = ((uintptr_t)node ^ ((uint64_t)m << 52)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(x >> 48) & (GT_CCT_CELL_CACHE - 1);
}

/* node's cell of metric m, or NULL: cells never move or die, so a caller
 * may keep one and add to it directly, as gt_cct__add would. */
static inline struct gt_metric_cell *gt_cct__cell(const struct gt_cct_node *node, enum gt_metric m)
{
	struct gt_metric_cell *c;

	for (c = node->metrics; c; c = c->next)
		if (c->metric == (uint32_t)m)
			break;
	return c;
}

/* gt_cct__add when the node has no cell for the metric yet: makes it. */
int gt_cct__add_new(struct gt_cct *cct, struct gt_cct_node *node, enum gt_metric m,
		     uint64_t value, int signal_ctx);

/* Adds value to metric m of node. Returns 0 or -ENOMEM (signal context only). */
static inline int gt_cct__add(struct gt_cct *cct, struct gt_cct_node *node, enum gt_metric m,
			      uint64_t value, int signal_ctx)
{
	uint32_t k = gt_cct__cell_slot(node, (uint32_t)m);
	struct gt_metric_cell *c = cct->cells[k].cell;

	assert(gt_cct__owns(cct, node));
	if (cct->cells[k].node == node && c->metric == (uint32_t)m) {
		c->value += value;
		return 0;
	}
	/* The walk inline: a call's own cost was half of a miss's. */
	c = gt_cct__cell(node, m);
	if (!c)
		return gt_cct__add_new(cct, node, m, value, signal_ctx);
	c->value += value;
	cct->cells[k].node = node;
	cct->cells[k].cell = c;
	return 0;
}

/* Adds v[i] to metric m[i] for i < n (zeros add nothing): the same as n
 * gt_cct__add calls, for the hot paths that charge several metrics at once
 * (a kernel's eight). Cells charged recently are found without a walk. */
static inline int gt_cct__add_n(struct gt_cct *cct, struct gt_cct_node *node,
				const enum gt_metric *m, const uint64_t *v, unsigned n,
				int signal_ctx)
{
	int err = 0;

	for (unsigned i = 0; i < n; i++)
		if (v[i] && gt_cct__add(cct, node, m[i], v[i], signal_ctx))
			err = -ENOMEM;
	return err;
}

uint64_t gt_cct__get(const struct gt_cct_node *node, enum gt_metric m);

/* Visits every node in depth-first preorder. */
void gt_cct__walk(struct gt_cct_node *root, void (*fn)(struct gt_cct_node *, void *), void *arg);

/* Inlined always: OpenMP's callbacks find most placeholders at the front. */
static inline __attribute__((always_inline)) struct gt_cct_node *
gt_cct__placeholder(struct gt_cct *cct, struct gt_cct_node *parent, enum gt_placeholder ph)
{
	const struct gt_cct_node *first = parent->children;

	/* A construct's call site has its placeholder first (gt_cct__child
	 * moves the last found to the front). */
	if (first && first->key == (uint64_t)ph && first->kind == GT_NODE_PLACEHOLDER)
		return (struct gt_cct_node *)first;
	return gt_cct__child(cct, parent, GT_NODE_PLACEHOLDER, (uint64_t)ph, 0);
}

#endif
