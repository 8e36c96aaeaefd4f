/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_REPORT_H
#define GT_REPORT_REPORT_H

/*
 * The report library: the profiles of one run (every process, every
 * thread) merged into one calling-context tree with statistics per context,
 * the metrics derived from it, and the writers of each output format. The
 * gputool command reports files and directories through it; the library
 * reports its own process at exit through it (gt_report__write_profile,
 * which report/exit.c hands to the tool).
 * docs/REPORT.md describes what a user sees.
 *
 * Everything here runs in one thread, except the reader thread of load.c,
 * which only parses profiles and hands them over (load.c says how).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/profile.h"
#include "core/text.h"
#include "report/sections.h"

/* Runs of up to this many processes keep each process's value per context
 * (the per-rank tables); larger runs keep only the statistics. */
#define GT_DETAIL_MAX 64u

/* ---- the merged run (merge.c) ---- */

/*
 * One (context, metric) over the processes of the run, exclusive or
 * inclusive. Only processes with a nonzero value update it: a process
 * without the context counts as 0 in min and mean (gt_pstat__min and
 * gt_pstat__mean take the number of processes). Ties for min and max go to
 * the lowest process index, so that any merge order gives the same result.
 */
struct gt_pstat {
	uint64_t sum; /* over processes and threads; saturates */
	uint64_t min; /* smallest nonzero per-process value */
	uint64_t max;
	unsigned __int128 sumsq; /* sum of squared per-process values; saturates */
	uint32_t n;              /* processes with a nonzero value */
	uint32_t min_at, max_at; /* the process (index into procs) holding min, max */
};

/* One (context, metric) over threads, exclusive values only: the threads of
 * every process that measured something at the context. */
struct gt_tstat {
	uint64_t min, max; /* over threads with a nonzero value */
	uint64_t n;        /* such threads */
};

struct gt_cell {
	uint32_t metric; /* index into the run's metrics */
	uint32_t next;   /* the node's next cell (by increasing metric), or GT_NONE */
	struct gt_pstat excl, incl;
	struct gt_tstat thr;
	uint64_t *per_proc; /* inclusive value per process, when the run keeps detail */
};

struct gt_metric_total {
	uint32_t metric;
	uint64_t value;
};

enum gt_proc_state { GT_PROC_PENDING = 0, GT_PROC_MERGED = 1, GT_PROC_FAILED = 2 };

/* One meta key of a profile and its value (docs/PROFILE.md). */
struct gt_meta {
	char *key, *value;
};

/* One profile: one process of the run. */
struct gt_proc {
	char *file;
	enum gt_proc_state state;
	struct gt_meta *meta; /* the profile's meta keys, in its order */
	uint32_t n_meta;
	/* From meta (gt_proc__describe): */
	int64_t rank; /* -1 when the profile names none */
	uint64_t ranks; /* the job's number of ranks as the process knew it; 0: unknown */
	uint64_t unmeasured; /* threads beyond the tool's limit, not in the profile */
	uint64_t reused; /* threads measured in the record of one that had ended */
	uint64_t ops_unmeasured; /* device operations the backends could not measure */
	uint64_t pid, ppid; /* ppid: 0 when the profile does not say */
	const char *host, *exe, *cmdline; /* values in meta, or NULL */
	const char *run_id; /* the run it belongs to (meta "run", set by gputool run), or NULL */
	uint64_t wall_ns, start_ns;
	uint32_t n_threads;
	struct gt_metric_total *totals; /* everything the process measured, per metric */
	uint32_t n_totals;
};

struct gt_run_scratch; /* per-profile work arrays, private to merge.c */

/*
 * The run: t holds the merged tree (strings, modules, metrics and nodes;
 * no threads, no values), node 0 its root. A context is identified by its
 * path: parent, kind, name, file, line and module (the offset too, for a
 * frame whose function is unknown). Nodes keep the invariants of
 * core/profile.h: a parent has a smaller index than its children.
 */
struct gt_run {
	struct gt_profile t;
	uint32_t *slots; /* node hash: node ids, GT_NONE when empty */
	uint32_t slot_cap, slot_used;
	uint32_t *head;   /* per node: first cell, GT_NONE if none */
	uint32_t *hashes; /* per node: the hash of its path */
	uint32_t cap_head; /* of head and hashes */
	struct gt_cell *cells;
	uint32_t n_cells, cap_cells;
	struct gt_proc *procs; /* one per profile of the run, in file order */
	uint32_t n_procs;
	uint32_t n_merged, n_failed;
	uint64_t n_threads;
	int detail; /* cells carry per_proc */
	struct gt_run_scratch *s;
};

int gt_run__init(struct gt_run *r, uint32_t n_procs);
void gt_run__fini(struct gt_run *r);
/* Merges profile p as process proc (< n_procs). 0 or -ENOMEM (the run is
 * then incomplete, but consistent). */
int gt_run__add(struct gt_run *r, uint32_t proc, const struct gt_profile *p);
/* Merges src, which holds other processes of the same run, into dst. */
int gt_run__absorb(struct gt_run *dst, const struct gt_run *src);
/* The run as bytes (to another process) and back; decode gives a run to
 * absorb only. Decoding checks what it reads: -EINVAL on a bad buffer. */
int gt_run__encode(const struct gt_run *r, char **buf, size_t *len);
int gt_run__decode(struct gt_run *r, const char *buf, size_t len);
/* Renumbers nodes, metrics and modules in an order that does not depend
 * on the order profiles were merged in (merge.c says which). */
int gt_run__canonicalize(struct gt_run *r);
/* The cell of (node, metric), or NULL. */
const struct gt_cell *gt_run__cell(const struct gt_run *r, uint32_t node, uint32_t metric);
/* The metrics with a value in the run (nonzero total), in metric order,
 * with their totals; with keep, per node whether it or a descendant has a
 * nonzero exclusive value of one of them. For the formats that carry every
 * metric. */
struct gt_used {
	uint32_t *metric;
	uint64_t *total;
	uint32_t n;
	uint8_t *keep; /* NULL unless asked for */
};

int gt_used__init(struct gt_used *u, const struct gt_run *r, int keep); /* 0 or -ENOMEM */
void gt_used__fini(struct gt_used *u);
/* The exclusive value of (node, metric) over the run, 0 if none. */
uint64_t gt_run__excl(const struct gt_run *r, uint32_t node, uint32_t m);
/* The proc's total of metric m, 0 if none. */
uint64_t gt_proc__total(const struct gt_proc *p, uint32_t m);
/* The value of a meta key (NULL: none); as a number, 0 when absent or not one. */
const char *gt_proc__meta(const struct gt_proc *p, const char *key);
uint64_t gt_proc__meta_u64(const struct gt_proc *p, const char *key);
/* Sets the fields read from p->meta. */
void gt_proc__describe(struct gt_proc *p);
/*
 * Whether the merged profiles of @r are one run: all of one run id (meta
 * "run", which gputool run gives every process it starts); or, where no
 * profile has one, no rank with profiles of two processes and one program
 * (or programs that exec'ed one another; helpers a process of the run
 * started aside). 0, or -EEXIST with what was found in @why; -ENOMEM.
 */
int gt_run__check_one(const struct gt_run *r, char *why, size_t len);

uint64_t gt_pstat__min(const struct gt_pstat *s, uint32_t n_procs);
double gt_pstat__mean(const struct gt_pstat *s, uint32_t n_procs);
double gt_pstat__stddev(const struct gt_pstat *s, uint32_t n_procs);
/* max / mean; 0 when nothing was measured. */
double gt_pstat__imbalance(const struct gt_pstat *s, uint32_t n_procs);
double gt_tstat__mean(const struct gt_tstat *t, uint64_t sum);

/* ---- reading a run (load.c) ---- */

/*
 * The processes that share a merge: one (the plain command), or the ranks
 * of an MPI job (gputool-mpi). Rank 0 ends up with the whole run.
 * Buffers received are malloc()ed; the receiver frees them.
 */
struct gt_team {
	int rank, size;
	int (*bcast)(struct gt_team *t, char **buf, size_t *len);
	int (*send)(struct gt_team *t, int to, const char *buf, size_t len);
	int (*recv)(struct gt_team *t, int from, char **buf, size_t *len);
	void *priv;
};

/* Lists the profiles PATH names, reads this member's share one at a time
 * into r, and reduces the team's runs into rank 0's. Returns 0, or 1 when
 * a profile could not be read (it is left out; the message is printed) or
 * the run cannot be built at all (r is then empty). */
int gt_load__run(struct gt_team *team, const char *path, struct gt_run *r);

/* ---- what the views need (derive.c) ---- */

#define GT_METRIC_GPUOP (GT_NONE - 1) /* pseudo metric: all GPU operation time */
#define GT_MAX_GPU_METRICS 32

enum gt_bound { GT_BOUND_NOTHING, GT_BOUND_CPU_ONLY, GT_BOUND_CPU, GT_BOUND_GPU };

struct gt_gpu_site {
	uint32_t node; /* the outermost GPU placeholder under the call site */
	uint32_t j;    /* index into gpu_metric[] */
	uint64_t value;
};

struct gt_analysis {
	const struct gt_run *run;
	const struct gt_profile *t;
	uint32_t n_nodes;
	uint32_t *first, *next; /* children lists, in index order */
	/* the metric the views show */
	uint32_t metric;
	const char *metric_name, *metric_unit;
	uint64_t *excl, *incl, total;
	/* importance, ICS'20 §5.1 */
	uint32_t cpu_metric; /* CPUTIME, or GT_NONE */
	uint32_t n_gpu, gpu_metric[GT_MAX_GPU_METRICS];
	uint64_t *C, *G, *Gj[GT_MAX_GPU_METRICS]; /* inclusive per node */
	/* CPU time not covered by GPU time: max(C_i - G_i, 0), and never more
	 * than the parent's, so that I_C never grows going down the tree. */
	uint64_t *U;
	uint64_t C_P, G_P;
	/* Operations of host devices (OpenMP offload to this CPU, "device N
	 * (generic-64bit)"): their time is the CPU's, already in C, so it is
	 * left out of G and of every Gj. H_P sums it; host_device names the
	 * first such device's type, NULL when none ran anything; on_host[i]
	 * is 1 at such a device's node and below. */
	uint64_t H_P;
	const char *host_device;
	uint8_t *on_host;
	double I_C_P;
	enum gt_bound bound;
	uint32_t *cpu_hot, n_cpu_hot; /* hot path by I_C, from the root's child down */
	uint32_t *gpu_hot, n_gpu_hot; /* hot path by I_G */
	struct gt_gpu_site *sites;    /* by I_G,i,j, largest first */
	uint32_t n_sites;
	/* load imbalance of the view's metric: contexts, most time lost first */
	uint32_t *imb, n_imb;   /* across processes, inclusive */
	uint32_t *timb, n_timb; /* across threads, exclusive */
	uint32_t *proc_order;   /* merged processes by rank, then pid */
	uint32_t n_proc_order;
};

/* metric: a metric name, "GPUOP", or NULL for the default (CPUTIME when
 * measured, else GPUOP, else the first time metric with a value). Returns
 * 0, -ENOMEM, or -ENOENT with a message in err. */
int gt_analysis__init(struct gt_analysis *a, const struct gt_run *r, const char *metric, char *err,
		      size_t errlen);
void gt_analysis__fini(struct gt_analysis *a);
double gt_analysis__I_C(const struct gt_analysis *a, uint32_t node);
double gt_analysis__I_G(const struct gt_analysis *a, uint32_t node);
/* The cell of the view's metric at node (NULL for GPUOP or none). */
const struct gt_cell *gt_analysis__cell(const struct gt_analysis *a, uint32_t node);
int gt_analysis__is_gpu_placeholder(const struct gt_analysis *a, uint32_t node);

/* ---- views (views.c) ---- */

/* Functions: nodes grouped by function (frames by name, file and module,
 * ignoring the line; placeholders and names by name). */
struct gt_func {
	uint32_t node; /* a representative node */
	uint64_t excl, incl; /* incl counts recursive calls once */
	uint32_t contexts;
};

struct gt_flat {
	struct gt_func *f; /* by exclusive value, largest first */
	uint32_t n;
	uint32_t *of; /* per node: its function's index into f */
};

int gt_flat__build(struct gt_flat *fl, const struct gt_analysis *a);
void gt_flat__fini(struct gt_flat *fl);

/* The bottom-up (callers) tree: a root per function holding its exclusive
 * value; below it the contexts that called it, innermost first. */
struct gt_bu_node {
	uint32_t node;   /* representative context (root level: the function) */
	uint32_t parent; /* GT_NONE for a function */
	uint32_t first, next;
	uint64_t value;
};

struct gt_bottom_up {
	struct gt_bu_node *n;
	uint32_t count, cap;
	uint32_t *roots; /* functions, largest first */
	uint32_t n_roots;
};

int gt_bottom_up__build(struct gt_bottom_up *bu, const struct gt_analysis *a);
void gt_bottom_up__fini(struct gt_bottom_up *bu);
/* The children of bu node i (or of node in the top-down tree), largest value first: *out is malloc()ed. */
int gt_bottom_up__children(const struct gt_bottom_up *bu, uint32_t i, uint32_t **out, uint32_t *n);
int gt_analysis__children(const struct gt_analysis *a, uint32_t node, uint32_t **out, uint32_t *n);

/* ---- text helpers: core/text.h; value scaling (util.c) ---- */

/* path opened for reading when it is a regular file; else NULL with errno
 * (EINVAL: not a regular file: a FIFO, a device, a directory). */
FILE *gt_open_regular(const char *path);

/* A value of unit for people: "1.234" with the unit's scale chosen for
 * the largest value shown (s, ms, us for ns; K, M for counts and bytes). */
struct gt_scale {
	double div;
	const char *suffix;
	int decimals;
};

struct gt_scale gt_scale__for(const char *unit, uint64_t largest);
void gt_scale__fmt(const struct gt_scale *s, char *buf, size_t len, double v);

/* ---- output formats ---- */

enum gt_view { GT_VIEW_TOP_DOWN, GT_VIEW_BOTTOM_UP, GT_VIEW_FLAT };

struct gt_out_opts {
	enum gt_view view;
	unsigned top; /* rows per list and lines of a tree */
	const char *path; /* what was reported */
	unsigned width;   /* text: columns of a line, at most (0: GT_PATHS_WIDTH) */
	int signatures;   /* text: C++ parameter lists in full; else "f(…)" */
	int metric_given; /* the metric was asked for (--metric): the page opens on it, not on the bound's */
};

int gt_text__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o);
/* The per-process report's sections (report/sections.h) over the merged
 * run, after what to do next (report/next.h). */
int gt_flat__write_sections(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o);
/* The merged run as one profile (borrowing a's tree, strings and metrics;
 * one value per node and metric, the run's sum) and what the sections need
 * to know of the run (flat.c). 0 or -ENOMEM. */
struct gt_flat_profile {
	struct gt_profile p;
	struct gt_prof_thread thread;
	struct gt_sections_run run;
	struct gt_sb busy;
};
int gt_flat_profile__init(struct gt_flat_profile *fp, const struct gt_analysis *a);
void gt_flat_profile__fini(struct gt_flat_profile *fp);
/* compact: the HTML report's form (no per-thread statistics). */
int gt_json__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o, int html_safe);
int gt_folded__write(FILE *f, const struct gt_analysis *a);
/* Formats other tools read (docs/REPORT.md): every metric with a value.
 * speedscope's file format (one sampled profile per metric), Hatchet's
 * literal form (GraphFrame.from_literal), and pprof's profile.proto,
 * gzipped (one sample type per metric). */
int gt_speedscope__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o);
int gt_hatchet__write(FILE *f, const struct gt_analysis *a);
int gt_pprof__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o);
int gt_html__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o);
/*
 * One process's profile as the report of a one-process run (process.c):
 * the text `gputool report FILE` prints for the file p was written to,
 * path (NULL: none named, as for the report at exit). 0, -ENOMEM, -EIO,
 * or -EINVAL when p breaks the invariants of core/profile.h.
 */
int gt_report__write_profile(const struct gt_profile *p, const char *path, FILE *f, unsigned top);
/* Chrome trace-event JSON from the traces of the run (trace.c): 0, 1
 * after printing why (no trace recorded, unreadable trace). */
int gt_chrome__write(FILE *f, const char *path, const struct gt_run *r);

#endif
