/* SPDX-License-Identifier: MIT */
#include "core/cct.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

const char *const gt_placeholder_names[GT_PH__COUNT] = {
#define X(id, name) [GT_PH_##id] = name,
	GT_PLACEHOLDERS(X)
#undef X
};

static void *cct__alloc(struct gt_cct *cct, size_t size, int signal_ctx)
{
	void *p = signal_ctx ? gt_arena__alloc_signal(cct->arena, size)
			     : gt_arena__alloc(cct->arena, size);

	if (!p)
		cct->alloc_failures++;
	return p;
}

/* Tree ids: only uniqueness matters, nothing is ordered by them. */
static atomic_uint next_tree_id = 1;

void gt_cct__init(struct gt_cct *cct, struct gt_arena *arena)
{
	memset(cct, 0, sizeof(*cct));
	cct->arena = arena;
	cct->id = atomic_fetch_add_explicit(&next_tree_id, 1, memory_order_relaxed);
	if (!cct->id) /* wrapped */
		cct->id = atomic_fetch_add_explicit(&next_tree_id, 1, memory_order_relaxed);
	cct->root = cct__alloc(cct, sizeof(*cct->root), 0);
	if (cct->root) {
		memset(cct->root, 0, sizeof(*cct->root));
		cct->root->kind = GT_NODE_ROOT;
		cct->root->tree = cct->id;
		cct->nodes = 1;
	}
}

struct gt_cct_node *gt_cct__child(struct gt_cct *cct, struct gt_cct_node *parent,
				  enum gt_node_kind kind, uint64_t key, int signal_ctx)
{
	struct gt_cct_node **link = &parent->children;
	struct gt_cct_node *n;

	/* Only the owner writes its tree: a child list written from two
	 * threads loses nodes and can turn into a cycle. */
	assert(gt_cct__owns(cct, parent));
	for (n = *link; n; link = &n->sibling, n = *link) {
		if (n->key != key || n->kind != (uint32_t)kind)
			continue;
		/* Move to front: call paths repeat, so the hit is usually first. */
		if (link != &parent->children) {
			*link = n->sibling;
			n->sibling = parent->children;
			parent->children = n;
		}
		return n;
	}
	n = cct__alloc(cct, sizeof(*n), signal_ctx);
	if (!n)
		return NULL;
	n->parent = parent;
	n->children = NULL;
	n->metrics = NULL;
	n->key = key;
	n->kind = kind;
	n->depth = parent->depth + 1;
	n->aux = 0;
	n->tree = cct->id;
	n->sibling = parent->children;
	parent->children = n;
	cct->nodes++;
	return n;
}

int gt_cct__add_new(struct gt_cct *cct, struct gt_cct_node *node, enum gt_metric m,
		     uint64_t value, int signal_ctx)
{
	uint32_t k = gt_cct__cell_slot(node, (uint32_t)m);
	struct gt_metric_cell *c;

	assert(gt_cct__owns(cct, node));
	c = cct__alloc(cct, sizeof(*c), signal_ctx);
	if (!c)
		return -ENOMEM;
	c->metric = m;
	c->value = value;
	c->next = node->metrics;
	node->metrics = c;
	/* Only the owner uses the cache, from normal context or from its own
	 * sampling handler, never both at once (gt_thread__enter). */
	cct->cells[k].node = node;
	cct->cells[k].cell = c;
	return 0;
}

uint64_t gt_cct__get(const struct gt_cct_node *node, enum gt_metric m)
{
	const struct gt_metric_cell *c = gt_cct__cell(node, m);

	return c ? c->value : 0;
}

void gt_cct__walk(struct gt_cct_node *root, void (*fn)(struct gt_cct_node *, void *), void *arg)
{
	struct gt_cct_node *n = root;

	/* Iterative preorder: parent links make a stack unnecessary. */
	while (n) {
		fn(n, arg);
		if (n->children) {
			n = n->children;
			continue;
		}
		while (n && n != root && !n->sibling)
			n = n->parent;
		if (!n || n == root)
			break;
		n = n->sibling;
	}
}
