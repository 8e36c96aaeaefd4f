/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_NEXT_H
#define GT_REPORT_NEXT_H

/*
 * What to do next: advice on one profile's tree (a run merged into one, as
 * the sections read it), each piece with the context and line it is about,
 * the measurements it rests on, the estimated speedup of what it acts on
 * (a kernel, a copy, the waits) and the whole program's estimated gain,
 * ranked by that gain. docs/ADVICE.md gives the models; report/advice/
 * holds the kinds (kinds.h), the checks (checks/, registry.c) and the
 * models (model.h).
 */
#include <stdint.h>
#include <stdio.h>

#include "core/profile.h"
#include "report/advice/kinds.h"
#include "report/sections.h"

/* The kinds, in report/advice/kinds.h's order: GT_NEXT_GPU_GLOBAL, ... */
enum gt_next_kind {
#define X(id, json, scope, subject, title, todo) GT_NEXT_##id,
	GT_ADVICE_KINDS(X)
#undef X
	GT_NEXT_KINDS
};

struct gt_next {
	enum gt_next_kind kind;
	uint32_t node; /* the context: a kernel's or a copy's node, a wait's call site */
	uint32_t line; /* the line to look at (GT_NONE: none) */
	uint64_t samples, kernel_samples; /* PC samples it explains, of its kernel's (0: none) */
	uint64_t time_ns; /* the time the change acts on, summed over processes */
	double speedup;   /* of that time; 0: not estimated */
	uint64_t saved_ns; /* estimated wall time saved per process */
	double program;   /* the program's estimated speedup; 0: not estimated */
	int upper_bound;  /* saved_ns assumes the time saved is all on the critical path */
	char why[320];    /* what the measurements say */
	char todo[400];   /* what to change */
};

struct gt_next_list {
	struct gt_next *v; /* by saved_ns, largest first; unestimated ones last */
	uint32_t n;
};

/* The advice for profile p of the run described by run (its wall time,
 * processes, PC sampling's set-up, the devices' DRAM bandwidth). 0 or
 * -ENOMEM; out is empty when nothing applies. */
int gt_next__build(const struct gt_profile *p, const struct gt_sections_run *run, struct gt_next_list *out);
void gt_next__fini(struct gt_next_list *l);
/* Whether p has a metric any check reads (else the list is empty). */
int gt_next__applies(const struct gt_profile *p);
/* Whether advice of kind k is about a kernel (named by it, at its launch
 * site) rather than a copy or a wait. */
int gt_next__of_kernel(enum gt_next_kind k);
/* A short name of a kind ("gpu-local-memory"), its title, its "try" text,
 * and what its speedup is of ("kernel"; NULL: no speedup line). */
const char *gt_next__id(enum gt_next_kind k);
const char *gt_next__title(enum gt_next_kind k);
const char *gt_next__todo(enum gt_next_kind k);
const char *gt_next__subject(enum gt_next_kind k);
/* Why the list of p is empty: one line, for the text and the JSON. */
const char *gt_next__none_why(const struct gt_profile *p);
/*
 * The contexts of the first shown pieces of l, innermost first: where piece
 * k is (ctx[2k]: a kernel's launch site, else its node) and, outside a
 * kernel, the CPU work that overlaps (ctx[2k + 1], NULL if none). They are
 * built as one table's rows (report/paths.h), so that two pieces whose
 * contexts differ read differently, each to what a line of width columns
 * leaves after the text section's indent and lead; the JSON's are those of
 * the text at GT_PATHS_WIDTH. ctx holds 2 * shown; free with
 * gt_paths__free. 0 or -ENOMEM (ctx all NULL).
 */
int gt_next__wheres(const struct gt_profile *p, const struct gt_next_list *l, uint32_t shown, size_t width,
		    int signatures, char **ctx);
/* Writes text as lines of at most width columns, broken at spaces: the
 * first after first (already first_cols wide), the others after indent
 * spaces; a word wider than a line is cut where the line ends. Ends the
 * last line. */
void gt_next__put_wrapped(FILE *f, size_t first_cols, const char *first, const char *text, size_t indent,
			  size_t width);
/* The "What to do next" section of the text report ("No advice applies:
 * ..." when l is empty), each line at most run->width columns (0 or no
 * run: GT_PATHS_WIDTH), long ones broken between words; C++ parameter
 * lists in full with run->signatures. 0 or -ENOMEM. */
int gt_next__write_text(const struct gt_profile *p, const struct gt_next_list *l, FILE *f, unsigned top,
			const struct gt_sections_run *run);

#endif
