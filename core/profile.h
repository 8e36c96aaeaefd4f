/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_PROFILE_H
#define GT_CORE_PROFILE_H

#include <stdint.h>
#include <stdio.h>

/*
 * The profile model: what one process measured, merged over its threads,
 * symbolized, ready to be written or read back. The library builds it at exit
 * from the per-thread calling-context trees; `gputool report` reads it from
 * files. Both write through the same code. docs/PROFILE.md documents the file
 * format, and the JSON form.
 *
 * Nodes form one tree (node 0 is the root). Every node but the root has a
 * parent with a smaller index. Metric values are exclusive (what was measured
 * at exactly that context) and kept per thread: (node, thread, metric, value).
 * Strings are interned: every string field is an index into strings[].
 */

#define GT_PROFILE_MAGIC "GTPROF\0\0"
#define GT_PROFILE_VERSION 1u
/* The largest profile file a reader accepts. A process's profile is a few
 * MiB (docs/PROFILE.md); a file over this is not one, and is refused from
 * its size alone, before any of it is read. */
#define GT_PROFILE_MAX_BYTES (1ull << 30)
#define GT_NONE UINT32_MAX

enum gt_prof_node_kind {
	GT_PNODE_ROOT = 0,
	GT_PNODE_FRAME = 1,       /* a source location in a function of a module */
	GT_PNODE_PLACEHOLDER = 2, /* name: e.g. "<omp parallel>" */
	GT_PNODE_NAME = 3,        /* name: e.g. a kernel name, under its placeholder */
	GT_PNODE_INLINE = 4,      /* a function inlined into its parent frame: a frame with no stack frame */
	GT_PNODE_TAIL = 5,        /* a function that left its frame by a tail call to its child, rebuilt from DWARF */
};

/*
 * The names of the nodes PC samples make under a GPU kernel's node
 * (gpu/cupti/pcsamp-place.c; docs/PROFILE.md): "loop at FILE:LINE",
 * "inlined at FILE:LINE", a line "FILE:LINE" or "pc 0x...", a called
 * function's name under its call's line ("NAME [split undetermined]" where
 * too few samples told its call sites apart, and its samples were split
 * evenly among them), and "NAME [recursive call]" under the line of a call
 * within a recursion.
 */
#define GT_GPU_NODE_LOOP "loop at "
#define GT_GPU_NODE_INLINED "inlined at "
#define GT_GPU_NODE_PC "pc 0x"
#define GT_GPU_NODE_RECURSIVE " [recursive call]"
#define GT_GPU_NODE_SPLIT " [split undetermined]"

/* The node "<tool: LIBRARY>" holds time spent in a measurement library
 * (core/modmap.c lists them) that reached a calling context: the tool's
 * cost, under the program's frame that was below it (core/output.c). */
#define GT_PNODE_TOOL_PREFIX "<tool: "

/* Kinds that are a function at a source location: frame, inline, tail. */
static inline int gt_pnode__is_frame(uint32_t kind)
{
	return kind == GT_PNODE_FRAME || kind == GT_PNODE_INLINE || kind == GT_PNODE_TAIL;
}

/* What a label adds after a frame's function to say how it was called. */
static inline const char *gt_pnode__marker(uint32_t kind)
{
	return kind == GT_PNODE_INLINE ? " [inlined]" : kind == GT_PNODE_TAIL ? " [tail call]" : "";
}

struct gt_prof_node {
	uint32_t parent;   /* GT_NONE for the root */
	uint32_t kind;     /* enum gt_prof_node_kind */
	uint32_t name;     /* string: function (frames), placeholder or name; GT_NONE if unknown */
	uint32_t file;     /* string: source file, or GT_NONE */
	uint32_t line;     /* source line, 0 if unknown */
	uint32_t module;   /* index into modules[], or GT_NONE */
	uint64_t offset;   /* instruction offset in the module (a representative one) */
};

struct gt_prof_value {
	uint32_t node;
	uint32_t thread; /* index into threads[] */
	uint32_t metric; /* index into metrics[] */
	uint64_t value;
};

struct gt_prof_metric {
	uint32_t name;
	uint32_t unit;
	uint32_t desc;
	uint32_t cls; /* enum gt_metric_class: what it measures (core/metrics.h) */
};

struct gt_prof_thread {
	uint32_t id;   /* the tool's thread index in the process */
	uint32_t tid;  /* the OS thread id */
	uint32_t kind; /* string: "initial", "worker", "other" */
};

struct gt_prof_meta {
	uint32_t key;
	uint32_t value;
};

struct gt_profile {
	char **strings;
	uint32_t n_strings, cap_strings;
	void *string_index; /* intern table, private to profile.c */

	uint32_t *modules; /* string: path */
	uint32_t n_modules, cap_modules;

	struct gt_prof_metric *metrics;
	uint32_t n_metrics, cap_metrics;

	struct gt_prof_thread *threads;
	uint32_t n_threads, cap_threads;

	struct gt_prof_meta *meta;
	uint32_t n_meta, cap_meta;

	struct gt_prof_node *nodes;
	uint32_t n_nodes, cap_nodes;

	struct gt_prof_value *values;
	uint64_t n_values, cap_values;

	/* string -> string: a readable function name's symbol (mangled) name,
	 * GT_NONE where there is none; indexed by string, cap_linkage long */
	uint32_t *linkage;
	uint32_t cap_linkage;
};

/*
 * Building. All adders return the new index, or GT_NONE when out of memory or
 * when an argument breaks the model's invariants: node 0 must be the root
 * (kind GT_PNODE_ROOT, parent GT_NONE), every other node has a parent with a
 * smaller index and is not a root, and every string, module, thread and
 * metric index must already exist. Metrics are interned by name, modules by
 * path; set_meta replaces the value of a key already set.
 */
void gt_profile__init(struct gt_profile *p);
void gt_profile__fini(struct gt_profile *p);
uint32_t gt_profile__string(struct gt_profile *p, const char *s); /* interned; NULL -> GT_NONE */
uint32_t gt_profile__module(struct gt_profile *p, const char *path); /* interned by path */
/* A metric's class is the one this version gives its name, until set. */
uint32_t gt_profile__metric(struct gt_profile *p, const char *name, const char *unit, const char *desc);
void gt_profile__set_metric_class(struct gt_profile *p, uint32_t metric, uint32_t cls);
uint32_t gt_profile__thread(struct gt_profile *p, uint32_t id, uint32_t tid, const char *kind);
void gt_profile__set_meta(struct gt_profile *p, const char *key, const char *value);
uint32_t gt_profile__node(struct gt_profile *p, const struct gt_prof_node *n);
/* Records that the function named name has the symbol linkage (both
 * strings); the first one recorded stays. 0, -EINVAL or -ENOMEM. */
int gt_profile__set_linkage(struct gt_profile *p, uint32_t name, uint32_t linkage);
static inline uint32_t gt_profile__linkage(const struct gt_profile *p, uint32_t name)
{
	return name < p->cap_linkage ? p->linkage[name] : GT_NONE;
}
/* Adds one exclusive value; 0 (zero values are not stored), -EINVAL on an index
 * out of range, -ENOMEM. Values of the same (node, thread, metric) add up. */
int gt_profile__value(struct gt_profile *p, uint32_t node, uint32_t thread, uint32_t metric, uint64_t value);
uint32_t gt_profile__find_metric(const struct gt_profile *p, const char *name); /* GT_NONE if absent */
/* 0 when p keeps every invariant above (what a file must keep to be read
 * back), else -EINVAL. */
int gt_profile__check(const struct gt_profile *p);
/*
 * Per-node sums of one metric over threads: excl[n] what was measured at node
 * n, incl[n] that plus everything below n. Either array may be NULL; each has
 * n_nodes entries. Sums saturate at UINT64_MAX. Returns 0 or -EINVAL (metric
 * out of range, or a node whose parent is not an earlier node).
 */
int gt_profile__metric_totals(const struct gt_profile *p, uint32_t metric, uint64_t *excl, uint64_t *incl);

static inline const char *gt_profile__str(const struct gt_profile *p, uint32_t s)
{
	return s == GT_NONE || s >= p->n_strings ? NULL : p->strings[s];
}

/*
 * The binary file (docs/PROFILE.md). Return 0 or a negative errno; on a
 * malformed file gt_profile__read fails with -EINVAL and writes a one-line
 * reason to err (if not NULL). gt_profile__read initializes p itself (do not
 * pass a profile that holds data) and leaves it empty on failure; on success
 * the values are sorted by node. gt_profile__write fails with -EINVAL, writing
 * nothing, when p breaks the invariants above.
 */
int gt_profile__write(const struct gt_profile *p, FILE *f);
int gt_profile__read(struct gt_profile *p, FILE *f, char *err, size_t errlen);

#endif
