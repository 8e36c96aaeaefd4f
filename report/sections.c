/* SPDX-License-Identifier: MIT */
/*
 * The sections of the text report that read one tree (report/sections.h):
 * OpenMP regions, OpenACC constructs, CPU time by context and by function,
 * waits; GPU operations and blame are in advice.c and blame.c. Everything
 * here reads the profile only: metrics are found by name, so the report
 * shows whatever the measuring side recorded and a metric nobody recorded
 * makes its section disappear instead of printing zeros.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"
#include "core/text.h"
#include "report/rank.h"
#include "report/sections.h"

#define LINE_COLS 150    /* paths are shortened to keep lines about this wide */
#define NAME_COLS 60     /* widest function name in the by-function list */

#define PH_PARALLEL "<omp parallel>"
#define PH_OMP_KERNEL "<omp kernel>"
#define PH_GPU_KERNEL "<gpu kernel>"

/* ---- the profile, summed ---- */

struct rep {
	const struct gt_profile *p;
	FILE *f;
	unsigned top;
	uint64_t *cpu_excl, *cpu_incl; /* CPUTIME per node; zeros when absent */
	uint64_t cpu_total;
	uint64_t wall_ns; /* 0 when unknown */
	const struct gt_sections_run *run;
};

/* Per-node totals of the named metric (zeros when the profile lacks it);
 * either output may be NULL. */
static int totals(const struct gt_profile *p, const char *name, uint64_t **excl, uint64_t **incl)
{
	uint32_t m = gt_profile__find_metric(p, name);
	size_t n = p->n_nodes ? p->n_nodes : 1;

	if (excl && !(*excl = calloc(n, sizeof(**excl))))
		return -ENOMEM;
	if (incl && !(*incl = calloc(n, sizeof(**incl)))) {
		if (excl) {
			free(*excl);
			*excl = NULL;
		}
		return -ENOMEM;
	}
	if (m == GT_NONE)
		return 0;
	return gt_profile__metric_totals(p, m, excl ? *excl : NULL, incl ? *incl : NULL);
}

/* One metric a section reads: its per-node totals, exclusive into *excl,
 * inclusive into *incl (either may be NULL). */
struct column {
	const char *metric;
	uint64_t **excl, **incl;
};

/* Every column of @c, all zero for a metric the profile lacks. On error
 * some are loaded: columns__free frees what is there. */
static int columns__load(const struct gt_profile *p, const struct column *c, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = totals(p, c[i].metric, c[i].excl, c[i].incl);
	return err;
}

static void columns__free(const struct column *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (c[i].excl) {
			free(*c[i].excl);
			*c[i].excl = NULL;
		}
		if (c[i].incl) {
			free(*c[i].incl);
			*c[i].incl = NULL;
		}
	}
}

#define N_COLUMNS(c) (sizeof(c) / sizeof((c)[0]))

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* How node i reads in a path: "func (file.c:12)", or a placeholder's name. */
static void gt_label_short(struct gt_sb *b, const struct gt_profile *p, uint32_t i)
{
	gt_label(b, p, i, GT_LABEL_SHORT_FILE);
}

static int is_node_named(const struct gt_profile *p, uint32_t i, uint32_t kind, const char *name)
{
	const char *s = gt_profile__str(p, p->nodes[i].name);

	return p->nodes[i].kind == kind && s && !strcmp(s, name);
}


/*
 * The calling context of node `from` up to the root (the root itself left
 * out), leaf first joined by " < " or root first joined by " > ", at most
 * width columns. When too long, whole elements from the middle give way to
 * "…": both ends stay, the outermost caller and as many of the innermost
 * callers as fit, since those say most about where the time went. The
 * innermost function always stays (with the placeholders under it): it is
 * what tells two contexts of one construct apart.
 */
static char *path(const struct rep *r, uint32_t from, int leaf_first, size_t width)
{
	const struct gt_profile *p = r->p;
	const char *sep = leaf_first ? " < " : " > ";
	struct gt_sb *lab = NULL, out = { 0 };
	size_t n = 0, total = 0, i, keep_front, keep_back, w_front, w_back, inner = 0;
	uint32_t v;

	for (v = from; v != GT_NONE && v != 0; v = p->nodes[v].parent)
		n++;
	if (!n)
		return strdup("<root>");
	lab = calloc(n, sizeof(*lab));
	if (!lab)
		return NULL;
	/* lab[] in the order printed. */
	for (i = 0, v = from; i < n; i++, v = p->nodes[v].parent) {
		struct gt_sb *l = &lab[leaf_first ? i : n - 1 - i];

		gt_label_short(l, p, v);
		if (l->oom)
			goto out_free_labels;
		total += gt_cols(l->s) + (i ? 3 : 0);
		if (!inner && gt_pnode__is_frame(p->nodes[v].kind))
			inner = i + 1;
	}
	if (!inner || inner > n - 1)
		inner = n - 1 ? n - 1 : 1;
	if (total <= width) {
		keep_front = n;
		keep_back = 0;
	} else {
		/* Grow the innermost side first, then the other, while both
		 * still fit around " … " (7 columns with the separators). */
		keep_front = leaf_first ? inner : 1;
		keep_back = leaf_first ? 1 : inner;
		w_front = w_back = 0;
		for (i = 0; i < keep_front; i++)
			w_front += gt_cols(lab[i].s) + (i ? 3 : 0);
		for (i = 0; i < keep_back; i++)
			w_back += gt_cols(lab[n - 1 - i].s) + (i ? 3 : 0);
		while (keep_front + keep_back < n) {
			const struct gt_sb *f = &lab[keep_front], *b = &lab[n - 1 - keep_back];
			size_t wf = gt_cols(f->s) + 3, wb = gt_cols(b->s) + 3;
			int fits_f = w_front + w_back + wf + 7 <= width;
			int fits_b = w_front + w_back + wb + 7 <= width;

			if (fits_f && (leaf_first || !fits_b)) {
				w_front += wf;
				keep_front++;
			} else if (fits_b) {
				w_back += wb;
				keep_back++;
			} else {
				break;
			}
		}
		/* Nothing left out (one or two long names): cut characters. */
		if (keep_front + keep_back >= n) {
			keep_front = n;
			keep_back = 0;
		}
	}
	{
		struct gt_sb joined = { 0 };

		for (i = 0; i < keep_front; i++) {
			if (i)
				gt_sb__add(&joined, sep);
			gt_sb__add(&joined, lab[i].s);
		}
		if (keep_back) {
			gt_sb__add(&joined, sep);
			gt_sb__add(&joined, "…");
			for (i = n - keep_back; i < n; i++) {
				gt_sb__add(&joined, sep);
				gt_sb__add(&joined, lab[i].s);
			}
		}
		/* Names longer than the line are cut in their middle too. */
		if (!joined.oom)
			gt_sb__add_fit(&out, joined.s, width);
		free(joined.s);
	}
out_free_labels:
	for (i = 0; i < n; i++)
		free(lab[i].s);
	free(lab);
	if (out.oom) {
		free(out.s);
		return NULL;
	}
	return out.s ? out.s : strdup("");
}

/* ---- tables ---- */

#define MAX_COLS 10
#define CELL_BYTES 32

/* Right-aligned numeric columns, then an optional left-aligned text column
 * (tail), and optionally a line printed under each row (below). */
struct table {
	unsigned ncols, nrows;
	const char *head[MAX_COLS];
	const char *tail_head;
	char (*cell)[MAX_COLS][CELL_BYTES];
	char **tail;
	char **below;
};

static int table__init(struct table *t, unsigned nrows, const char *tail_head, unsigned ncols, ...)
{
	va_list ap;

	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->nrows = nrows;
	t->tail_head = tail_head;
	va_start(ap, ncols);
	for (unsigned c = 0; c < ncols; c++)
		t->head[c] = va_arg(ap, const char *);
	va_end(ap);
	t->cell = calloc(nrows ? nrows : 1, sizeof(*t->cell));
	t->tail = calloc(nrows ? nrows : 1, sizeof(*t->tail));
	t->below = calloc(nrows ? nrows : 1, sizeof(*t->below));
	return t->cell && t->tail && t->below ? 0 : -ENOMEM;
}

static void table__fini(struct table *t)
{
	for (unsigned i = 0; t->tail && i < t->nrows; i++)
		free(t->tail[i]);
	for (unsigned i = 0; t->below && i < t->nrows; i++)
		free(t->below[i]);
	free(t->tail);
	free(t->below);
	free(t->cell);
}

__attribute__((format(printf, 4, 5))) static void table__set(struct table *t, unsigned row, unsigned col,
							  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->cell[row][col], CELL_BYTES, fmt, ap);
	va_end(ap);
}

static void table__print(const struct table *t, FILE *f)
{
	size_t w[MAX_COLS];

	for (unsigned c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->head[c]);
		for (unsigned i = 0; i < t->nrows; i++)
			if (strlen(t->cell[i][c]) > w[c])
				w[c] = strlen(t->cell[i][c]);
	}
	for (unsigned c = 0; c < t->ncols; c++)
		fprintf(f, "  %*s", (int)w[c], t->head[c]);
	if (t->tail_head)
		fprintf(f, "  %s", t->tail_head);
	fputs("\n", f);
	for (unsigned i = 0; i < t->nrows; i++) {
		for (unsigned c = 0; c < t->ncols; c++)
			fprintf(f, "  %*s", (int)w[c], t->cell[i][c]);
		if (t->tail[i])
			fprintf(f, "  %s", t->tail[i]);
		fputs("\n", f);
		if (t->below[i])
			fprintf(f, "%*s%s\n", (int)(w[0] + 4), "", t->below[i]);
	}
}

static void fmt_pct(char *buf, uint64_t part, uint64_t whole)
{
	if (!whole)
		snprintf(buf, CELL_BYTES, "-");
	else
		snprintf(buf, CELL_BYTES, "%.1f%%", 100.0 * (double)part / (double)whole);
}

/* The nodes with a nonzero key, largest first: *out (caller frees), count. */
static int nodes_by(const struct rep *r, const uint64_t *key, uint32_t **out, uint32_t *count)
{
	size_t cap = r->p->n_nodes ? r->p->n_nodes : 1;
	struct gt_ranked *rk = malloc(cap * sizeof(*rk));
	uint32_t n = 0, *idx = malloc(cap * sizeof(*idx));

	if (!rk || !idx) {
		free(rk);
		free(idx);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < r->p->n_nodes; i++)
		if (key[i])
			rk[n++] = (struct gt_ranked){ .key = key[i], .node = i };
	qsort(rk, n, sizeof(*rk), gt_ranked__cmp);
	for (uint32_t k = 0; k < n; k++)
		idx[k] = rk[k].node;
	free(rk);
	*out = idx;
	*count = n;
	return 0;
}

/* ---- sections ---- */

/* The wall time the profile's meta gives, 0 when unknown. */
#define BODY_MAX 3

/*
 * Where a region's context and where its body are one line: "path > <omp
 * parallel>", then the functions its threads ran in it (the outlined
 * bodies: the frames right under the region, by CPU time), so that two
 * regions reached by one call (a virtual call of a dispatch loop) can be
 * told apart.
 */
/* The kernel's name under a host kernel's <omp kernel> (its <gpu kernel>'s
 * name child, "work:31"), else NULL. */
static const char *kernel_name(const struct rep *r, uint32_t kernel)
{
	const struct gt_profile *p = r->p;

	for (uint32_t i = kernel + 1; i < p->n_nodes; i++) {
		uint32_t up = p->nodes[i].parent;

		if (p->nodes[i].kind == GT_PNODE_NAME && up > kernel && p->nodes[up].parent == kernel &&
		    is_node_named(p, up, GT_PNODE_PLACEHOLDER, PH_GPU_KERNEL))
			return gt_profile__str(p, p->nodes[i].name);
	}
	return NULL;
}

/* A host kernel's region (kernel not GT_NONE) reads as the kernel: where the
 * <omp kernel> is, and its name before the bodies. */
static char *region_label(const struct rep *r, uint32_t region, uint32_t kernel)
{
	const struct gt_profile *p = r->p;
	uint32_t body[BODY_MAX], n = 0;
	const char *kname = kernel != GT_NONE ? kernel_name(r, kernel) : NULL;
	char *where = path(r, kernel != GT_NONE ? kernel : p->nodes[region].parent, 0, LINE_COLS - 6);
	struct gt_sb b = { 0 };

	if (!where)
		return NULL;
	for (uint32_t i = region + 1; i < p->n_nodes; i++) {
		uint32_t k;

		if (p->nodes[i].parent != region || !gt_pnode__is_frame(p->nodes[i].kind))
			continue;
		/* One entry per function: the lines of one body merge. */
		for (k = 0; k < n && p->nodes[body[k]].name != p->nodes[i].name; k++)
			;
		if (k < n) {
			if (r->cpu_incl[i] > r->cpu_incl[body[k]])
				body[k] = i;
			continue;
		}
		if (n < BODY_MAX) {
			body[n++] = i;
			continue;
		}
		for (k = 0; k < n; k++)
			if (r->cpu_incl[i] > r->cpu_incl[body[k]]) {
				body[k] = i;
				break;
			}
	}
	if (!n && !kname)
		return where;
	gt_sb__add(&b, where);
	free(where);
	gt_sb__add(&b, "\n");
	gt_sb__addf(&b, "%*s", 10, "");
	if (kname) {
		gt_sb__add(&b, "kernel ");
		gt_sb__add_fit(&b, kname, (LINE_COLS - 16) / 2);
		gt_sb__add(&b, n ? "; " : "");
	}
	if (n)
		gt_sb__add(&b, n > 1 ? "bodies: " : "body: ");
	for (uint32_t k = 0; k < n; k++) {
		struct gt_sb l = { 0 };

		gt_label_short(&l, p, body[k]);
		if (k)
			gt_sb__add(&b, "; ");
		gt_sb__add_fit(&b, l.s ? l.s : "?", (LINE_COLS - 16) / n);
		free(l.s);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static int section_parallel(struct rep *r)
{
	const struct gt_profile *p = r->p;
	uint64_t *count = NULL, *time = NULL, *thr = NULL, *work = NULL, *wait = NULL, *key = NULL;
	const struct column cols[] = {
		{ "OMP_PAR_COUNT", &count, NULL }, { "OMP_PAR_TIME", &time, NULL },
		{ "OMP_PAR_THREADS", &thr, NULL }, { "OMP_WORK", &work, NULL },
		{ "OMP_WAIT", &wait, NULL },
	};
	uint32_t *idx = NULL, n = 0, shown, *kernel = NULL, *pick = NULL;
	struct table t = { 0 };
	int err;

	if ((err = columns__load(p, cols, N_COLUMNS(cols))))
		goto out_free;
	err = -ENOMEM;
	key = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*key));
	kernel = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*kernel));
	pick = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*pick));
	if (!key || !kernel || !pick)
		goto out_free;
	/*
	 * A host kernel (OpenMP offload to this CPU) runs in regions its
	 * plugin opens under the <omp kernel>: its own, the teams', the
	 * loop's, nested, each with the kernel's full time. They are the
	 * kernel's implementation, so the kernel is one row: the region of
	 * its with the most threads per instance (the later on a tie, the
	 * inner one, where the loop runs), labelled as the kernel. kernel[i]
	 * is the <omp kernel> above node i, pick[k] the region shown for k.
	 */
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint32_t up = p->nodes[i].parent;

		pick[i] = GT_NONE;
		kernel[i] = !i ? GT_NONE : is_node_named(p, up, GT_PNODE_PLACEHOLDER, PH_OMP_KERNEL) ? up : kernel[up];
		if (kernel[i] != GT_NONE && is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL)) {
			uint32_t *k = &pick[kernel[i]];

			if (*k == GT_NONE || (double)thr[i] * (double)count[*k] >= (double)thr[*k] * (double)count[i])
				*k = i;
		}
	}
	/* A region's waits are those below it but not inside a region nested
	 * in it, which reports its own: fold wait[] upward, stopping at
	 * parallel nodes (children come after parents). */
	for (uint32_t i = p->n_nodes; i-- > 1;)
		if (!is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL))
			wait[p->nodes[i].parent] += wait[i];
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL) &&
		    (kernel[i] == GT_NONE || pick[kernel[i]] == i))
			/* Never 0 for a region with anything measured, so that
			 * nodes_by keeps it; the order still follows time. */
			key[i] = time[i] || count[i] || work[i] || wait[i] || r->cpu_incl[i]
					 ? time[i] + (time[i] < UINT64_MAX)
					 : 0;
	err = nodes_by(r, key, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	err = table__init(&t, shown, NULL, 9, "#", "instances", "time s", "% wall", "threads", "work s",
			  "wait s", "wait %", "CPU s");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = idx[k];

		table__set(&t, k, 0, "%" PRIu32, k + 1);
		table__set(&t, k, 1, "%" PRIu64, count[i]);
		table__set(&t, k, 2, "%.3f", secs(time[i]));
		fmt_pct(t.cell[k][3], time[i], r->wall_ns);
		if (count[i])
			table__set(&t, k, 4, "%.1f", (double)thr[i] / (double)count[i]);
		else
			table__set(&t, k, 4, "-");
		table__set(&t, k, 5, "%.3f", secs(work[i]));
		table__set(&t, k, 6, "%.3f", secs(wait[i]));
		fmt_pct(t.cell[k][7], wait[i], work[i] + wait[i]);
		table__set(&t, k, 8, "%.3f", secs(r->cpu_incl[i]));
		t.below[k] = region_label(r, i, kernel[i]);
		if (!t.below[k]) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	fprintf(r->f, "\nOpenMP parallel regions (%" PRIu32 " of %" PRIu32 ", by time; under each, where it was reached and"
		      " what it ran)\n",
		shown, n);
	table__print(&t, r->f);
	for (uint32_t k = 0; k < shown; k++) {
		if (r->wall_ns && time[idx[k]] > r->wall_ns) {
			fputs("  (time adds up the instances of all threads that started them: regions nested in\n"
			      "  a parallel region can exceed the wall time)\n",
			      r->f);
			break;
		}
	}
out_free:
	table__fini(&t);
	free(idx);
	free(key);
	free(kernel);
	free(pick);
	columns__free(cols, N_COLUMNS(cols));
	return err;
}

/* OpenACC constructs: time and count at the construct, launches and bytes
 * moved below it. */
static int section_acc(struct rep *r)
{
	const struct gt_profile *p = r->p;
	uint64_t *count = NULL, *time = NULL, *launch = NULL, *up = NULL, *down = NULL, *key = NULL;
	const struct column cols[] = {
		{ "ACC_COUNT", &count, NULL },	    { "ACC_TIME", &time, NULL },
		{ "ACC_LAUNCHES", NULL, &launch }, { "ACC_UP_BYTES", NULL, &up },
		{ "ACC_DOWN_BYTES", NULL, &down },
	};
	uint32_t *idx = NULL, n = 0, shown;
	struct table t = { 0 };
	int err;

	if ((err = columns__load(p, cols, N_COLUMNS(cols))))
		goto out_free;
	err = -ENOMEM;
	key = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*key));
	if (!key)
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (count[i])
			key[i] = time[i] + 1;
	err = nodes_by(r, key, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	err = table__init(&t, shown, "construct", 6, "#", "count", "time s", "launches", "up MB",
			  "down MB");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = idx[k];

		table__set(&t, k, 0, "%" PRIu32, k + 1);
		table__set(&t, k, 1, "%" PRIu64, count[i]);
		table__set(&t, k, 2, "%.6f", secs(time[i]));
		table__set(&t, k, 3, "%" PRIu64, launch[i]);
		table__set(&t, k, 4, "%.3f", (double)up[i] / 1e6);
		table__set(&t, k, 5, "%.3f", (double)down[i] / 1e6);
		t.tail[k] = strdup(gt_profile__str(p, p->nodes[i].name) ? gt_profile__str(p, p->nodes[i].name) : "?");
		t.below[k] = path(r, p->nodes[i].parent, 0, LINE_COLS - 6);
		if (!t.tail[k] || !t.below[k]) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	fprintf(r->f, "\nOpenACC constructs (%" PRIu32 " of %" PRIu32 ", by time; under each, where it was reached)\n",
		shown, n);
	table__print(&t, r->f);
out_free:
	table__fini(&t);
	free(idx);
	free(key);
	columns__free(cols, N_COLUMNS(cols));
	return err;
}

struct fn_row {
	char *name;
	uint64_t cpu;
	uint32_t contexts;
};

static int fn_by_name(const void *a, const void *b)
{
	return strcmp(((const struct fn_row *)a)->name, ((const struct fn_row *)b)->name);
}

static int fn_by_cpu(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* What a node's CPU time is grouped under in the by-function list: the
 * function name, or the module for frames without one. */
static char *function_key(const struct gt_profile *p, uint32_t i)
{
	const struct gt_prof_node *n = &p->nodes[i];
	const char *name = gt_profile__str(p, n->name);
	const char *mod = gt_profile__str(p, n->module == GT_NONE ? GT_NONE : p->modules[n->module]);
	struct gt_sb b = { 0 };

	if (n->kind == GT_PNODE_ROOT)
		gt_sb__add(&b, "<root>");
	else if (name)
		gt_sb__add_clean(&b, name);
	else if (gt_pnode__is_frame(n->kind) && mod) {
		gt_sb__add(&b, "<unknown> [");
		gt_sb__add_clean(&b, gt_base_name(mod));
		gt_sb__add(&b, "]");
	} else
		gt_sb__add(&b, "<unknown>");
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static int section_functions(struct rep *r, const uint32_t *idx, uint32_t n)
{
	struct fn_row *rows = calloc(n ? n : 1, sizeof(*rows));
	uint32_t m = 0, shown;
	struct table t = { 0 };
	size_t name_w = 0;
	int err = -ENOMEM;

	if (!rows)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		rows[k].name = function_key(r->p, idx[k]);
		rows[k].cpu = r->cpu_excl[idx[k]];
		rows[k].contexts = 1;
		if (!rows[k].name)
			goto out_free;
	}
	qsort(rows, n, sizeof(*rows), fn_by_name);
	for (uint32_t k = 0; k < n; k++) {
		if (m && !strcmp(rows[m - 1].name, rows[k].name)) {
			rows[m - 1].cpu += rows[k].cpu;
			rows[m - 1].contexts++;
			free(rows[k].name);
		} else {
			rows[m++] = rows[k];
		}
	}
	/* What lies past m was merged (and freed) or moved below m. */
	for (uint32_t k = m; k < n; k++)
		rows[k].name = NULL;
	qsort(rows, m, sizeof(*rows), fn_by_cpu);
	shown = m < r->top ? m : r->top;
	err = table__init(&t, shown, "function", 3, "CPU s", "%", "contexts");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		size_t w = gt_cols(rows[k].name);

		name_w = w > name_w ? w : name_w;
	}
	for (uint32_t k = 0; k < shown; k++) {
		struct gt_sb b = { 0 };

		table__set(&t, k, 0, "%.3f", secs(rows[k].cpu));
		fmt_pct(t.cell[k][1], rows[k].cpu, r->cpu_total);
		table__set(&t, k, 2, "%" PRIu32, rows[k].contexts);
		gt_sb__add_fit(&b, rows[k].name, name_w < NAME_COLS ? name_w : NAME_COLS);
		if (b.oom) {
			free(b.s);
			err = -ENOMEM;
			goto out_free;
		}
		t.tail[k] = b.s;
	}
	fprintf(r->f, "\n  by function (%" PRIu32 " of %" PRIu32 ")\n", shown, m);
	table__print(&t, r->f);
out_free:
	table__fini(&t);
	for (uint32_t k = 0; k < n; k++)
		free(rows[k].name);
	free(rows);
	return err;
}

/*
 * What the OpenMP runtime's own nodes mean, under the CPU table when one of
 * its @shown rows ends in one: the sampler puts a thread's CPU time in the
 * runtime on the wait it spins at, on idle, or on the fork and join
 * (docs/PROFILE.md), and those names alone do not say it is spinning.
 */
static void omp_runtime_legend(const struct rep *r, const uint32_t *idx, uint32_t shown)
{
	static const char *const runtime[] = { "<omp barrier>", "<omp implicit barrier>", "<omp taskwait>",
					       "<omp taskgroup>", "<omp idle>", "<omp runtime: fork/join>" };

	for (uint32_t k = 0; k < shown; k++)
		for (size_t j = 0; j < sizeof(runtime) / sizeof(runtime[0]); j++)
			if (is_node_named(r->p, idx[k], GT_PNODE_PLACEHOLDER, runtime[j])) {
				fprintf(r->f, "  <omp barrier>, <omp implicit barrier>, <omp taskwait>, <omp taskgroup>: "
					      "threads spinning in the OpenMP runtime\n"
					      "  at that wait (its time is in Waits); <omp idle>: threads waiting for "
					      "the next region;\n"
					      "  <omp runtime: fork/join>: the runtime starting and ending regions and "
					      "handing out work\n");
				return;
			}
}

static int section_cpu(struct rep *r)
{
	uint32_t *idx = NULL, n = 0, shown;
	struct table t = { 0 };
	int err;

	if (!r->cpu_total)
		return 0;
	err = nodes_by(r, r->cpu_excl, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	err = table__init(&t, shown, "calling context (innermost first)", 2, "CPU s", "%");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		table__set(&t, k, 0, "%.3f", secs(r->cpu_excl[idx[k]]));
		fmt_pct(t.cell[k][1], r->cpu_excl[idx[k]], r->cpu_total);
		t.tail[k] = path(r, idx[k], 1, LINE_COLS - 20);
		if (!t.tail[k]) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	fprintf(r->f, "\nCPU time by calling context (%" PRIu32 " of %" PRIu32 " contexts; total %.3f s)\n", shown,
		n, secs(r->cpu_total));
	table__print(&t, r->f);
	omp_runtime_legend(r, idx, shown);
	err = section_functions(r, idx, n);
out_free:
	table__fini(&t);
	free(idx);
	return err;
}

/* How many threads measured metric m at each node (the run's count). */
static int threads_per_node(const struct rep *r, uint32_t m, uint32_t **out)
{
	const struct gt_profile *p = r->p;
	uint32_t *cnt = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*cnt));

	if (!cnt)
		return -ENOMEM;
	*out = cnt;
	for (uint32_t i = 0; m != GT_NONE && i < p->n_nodes; i++) {
		uint64_t n = r->run->threads_at(r->run->ctx, i, m);

		cnt[i] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	return 0;
}

static int section_waits(struct rep *r)
{
	const struct gt_profile *p = r->p;
	uint64_t *wait = NULL, *count = NULL, total = 0;
	const struct column cols[] = { { "OMP_WAIT", &wait, NULL }, { "OMP_WAIT_COUNT", &count, NULL } };
	uint32_t *idx = NULL, *thr = NULL, n = 0, shown;
	struct table t = { 0 };
	int err;

	if ((err = columns__load(p, cols, N_COLUMNS(cols))) ||
	    (err = threads_per_node(r, gt_profile__find_metric(p, "OMP_WAIT"), &thr)))
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		total += wait[i];
	err = nodes_by(r, wait, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	/* CPU s: what the waiting threads spent spinning there (the sampler
	 * puts CPU time in the runtime on the wait's node). */
	err = table__init(&t, shown, "where (innermost first)", 6, "wait s", "%", "count", "mean us", "threads",
			  "CPU s");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = idx[k];

		table__set(&t, k, 0, "%.3f", secs(wait[i]));
		fmt_pct(t.cell[k][1], wait[i], total);
		table__set(&t, k, 2, "%" PRIu64, count[i]);
		if (count[i])
			table__set(&t, k, 3, "%.1f", (double)wait[i] / (double)count[i] / 1e3);
		else
			table__set(&t, k, 3, "-");
		table__set(&t, k, 4, "%" PRIu32, thr[i]);
		table__set(&t, k, 5, "%.3f", secs(r->cpu_incl[i]));
		t.tail[k] = path(r, i, 1, LINE_COLS - 58);
		if (!t.tail[k]) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	fprintf(r->f, "\nWaits (%" PRIu32 " of %" PRIu32 " places; total %.3f s over all threads)\n", shown, n,
		secs(total));
	table__print(&t, r->f);
out_free:
	table__fini(&t);
	free(idx);
	free(thr);
	columns__free(cols, N_COLUMNS(cols));
	return err;
}

int gt_report__write_sections(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run)
{
	struct rep r = { .p = p, .f = f, .top = top ? top : GT_REPORT_TOP, .wall_ns = run->wall_ns, .run = run };
	int err = gt_profile__check(p);

	if (err)
		return err;
	err = totals(p, "CPUTIME", &r.cpu_excl, &r.cpu_incl);
	if (err)
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		r.cpu_total += r.cpu_excl[i];
	if ((err = section_parallel(&r)) || (err = section_acc(&r)) ||
	    (err = gt_report__gpu_sections(p, f, r.top, run)) || (err = gt_report__blame(p, f, r.top, run)) ||
	    (err = section_cpu(&r)) || (err = section_waits(&r)))
		goto out_free;
	if (ferror(f) || fflush(f))
		err = -EIO;
out_free:
	free(r.cpu_incl);
	free(r.cpu_excl);
	return err;
}
