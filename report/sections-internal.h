/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_SECTIONS_INTERNAL_H
#define GT_REPORT_SECTIONS_INTERNAL_H

/*
 * What the text report's sections share (sections.c, sections-omp.c): the
 * run being written and the per-node metric columns a section reads.
 */
#include <stdint.h>
#include <stdio.h>

#include "core/profile.h"
#include "report/paths.h"
#include "report/sections.h"

struct rep {
	const struct gt_profile *p;
	FILE *f;
	unsigned top;
	uint64_t *cpu_excl, *cpu_incl; /* CPUTIME per node; zeros when absent */
	uint64_t cpu_total;
	uint64_t wall_ns; /* 0 when unknown */
	const struct gt_sections_run *run;
};

/* One metric a section reads: its per-node totals, exclusive into *excl,
 * inclusive into *incl (either may be NULL). */
struct column {
	const char *metric;
	uint64_t **excl, **incl;
};

#define N_COLUMNS(c) (sizeof(c) / sizeof((c)[0]))

/* The placeholder node of a parallel construct's regions. */
#define PH_PARALLEL "<omp parallel>"

/* A line under a row starts after the first column (up to 4 digits) and 4 spaces. */
#define BELOW_INDENT 8

static inline double gt_rep__secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static inline size_t gt_rep__line_cols(const struct rep *r)
{
	return r->run->width ? r->run->width : GT_PATHS_WIDTH;
}

/* Every column of @c, all zero for a metric the profile lacks. On error
 * some are loaded: gt_rep__columns_free frees what is there. */
int gt_rep__columns_load(const struct gt_profile *p, const struct column *c, size_t n);
void gt_rep__columns_free(const struct column *c, size_t n);
/* The contexts of nodes[0..n) as one table's rows (report/paths.h), each at
 * most width columns. */
int gt_rep__paths(const struct rep *r, const uint32_t *nodes, uint32_t n, int leaf_first, size_t width, char **out);
int gt_rep__is_node_named(const struct gt_profile *p, uint32_t i, uint32_t kind, const char *name);
/* The nodes with a nonzero key, largest first: *out (caller frees), count. */
int gt_rep__nodes_by(const struct rep *r, const uint64_t *key, uint32_t **out, uint32_t *count);

/* sections-omp.c: the OpenMP waits, and the explicit tasks, task waits and
 * parallel regions timed by sampling. */
int gt_rep__waits_build(const struct rep *r, struct gt_section_rows *s);
int gt_rep__section_waits(struct rep *r);
int gt_rep__section_sampled_constructs(struct rep *r);
int gt_rep__section_sampled_regions(struct rep *r);

#endif
