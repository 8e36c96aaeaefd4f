/* SPDX-License-Identifier: MIT */
/*
 * The sections of the text report that read one tree (report/sections.h):
 * OpenMP regions, OpenACC constructs, CPU time by context and by function
 * (the OpenMP waits and sampled tasks: sections-omp.c); GPU operations and blame are in advice.c and blame.c. Everything
 * here reads the profile only: metrics are found by name, so the report
 * shows whatever the measuring side recorded and a metric nobody recorded
 * makes its section disappear instead of printing zeros.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"
#include "core/text.h"
#include "report/paths.h"
#include "report/rank.h"
#include "report/sections.h"
#include "report/sections-internal.h"
#include "report/table.h"

#define NAME_COLS 60     /* widest function name in the by-function list */

#define PH_OMP_KERNEL "<omp kernel>"
#define PH_GPU_KERNEL "<gpu kernel>"

/* ---- the profile, summed (report/sections-internal.h) ---- */

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

int gt_rep__columns_load(const struct gt_profile *p, const struct column *c, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = totals(p, c[i].metric, c[i].excl, c[i].incl);
	return err;
}

void gt_rep__columns_free(const struct column *c, size_t n)
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




/* The label flags of the run: parameter lists elided unless asked. */
static int label_flags(const struct rep *r)
{
	return r->run->signatures ? 0 : GT_LABEL_ELIDE_ARGS;
}


/* The contexts of nodes[0..n) as one table's rows (report/paths.h), each at
 * most width columns. */
int gt_rep__paths(const struct rep *r, const uint32_t *nodes, uint32_t n, int leaf_first, size_t width, char **out)
{
	const struct gt_paths_opts o = { .width = width > 20 ? width : 20, .leaf_first = leaf_first,
					 .label_flags = label_flags(r) };

	return gt_paths__build(r->p, nodes, n, &o, out);
}

int gt_rep__is_node_named(const struct gt_profile *p, uint32_t i, uint32_t kind, const char *name)
{
	const char *s = gt_profile__str(p, p->nodes[i].name);

	return p->nodes[i].kind == kind && s && !strcmp(s, name);
}


/* ---- tables ---- */

/* The nodes with a nonzero key, largest first: *out (caller frees), count. */
int gt_rep__nodes_by(const struct rep *r, const uint64_t *key, uint32_t **out, uint32_t *count)
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
		    gt_rep__is_node_named(p, up, GT_PNODE_PLACEHOLDER, PH_GPU_KERNEL))
			return gt_profile__str(p, p->nodes[i].name);
	}
	return NULL;
}

/* The frames right under a region (its outlined bodies), at most
 * GT_REGION_BODIES, one per function (the line of a function with the most
 * CPU time), the ones with the most CPU time when there are more. */
static uint32_t region_bodies(const struct rep *r, uint32_t region, uint32_t *body)
{
	const struct gt_profile *p = r->p;
	uint32_t n = 0;

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
		if (n < GT_REGION_BODIES) {
			body[n++] = i;
			continue;
		}
		for (k = 0; k < n; k++)
			if (r->cpu_incl[i] > r->cpu_incl[body[k]]) {
				body[k] = i;
				break;
			}
	}
	return n;
}

/* A host kernel's region (kernel not GT_NONE) reads as the kernel: where the
 * <omp kernel> is, and its name before the bodies. */
static char *region_label(const struct rep *r, const struct gt_region_row *row, char *where)
{
	const struct gt_profile *p = r->p;
	uint32_t n = row->n_body;
	const char *kname = row->kernel_name;
	struct gt_sb b = { 0 };
	size_t cols = gt_rep__line_cols(r) > 60 ? gt_rep__line_cols(r) - 30 : 30; /* after the indent, "kernel " and "bodies: " */

	if (!where)
		return NULL;
	if (!n && !kname)
		return where;
	gt_sb__add(&b, where);
	free(where);
	gt_sb__add(&b, "\n");
	gt_sb__addf(&b, "%*s", 10, "");
	if (kname) {
		gt_sb__add(&b, "kernel ");
		gt_sb__add_fit(&b, kname, cols / 2);
		gt_sb__add(&b, n ? "; " : "");
	}
	if (n)
		gt_sb__add(&b, n > 1 ? "bodies: " : "body: ");
	for (uint32_t k = 0; k < n; k++) {
		struct gt_sb l = { 0 };

		gt_label(&l, p, row->body[k], GT_LABEL_SHORT_FILE | label_flags(r));
		if (k)
			gt_sb__add(&b, "; ");
		gt_sb__add_fit(&b, l.s ? l.s : "?", (kname ? cols / 2 : cols) / n - (k ? 2 : 0));
		free(l.s);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* The regions by time, the first r->top of them into s (s->region, n_region,
 * all_regions); none when the profile measured no OpenMP region. */
static int regions__build(const struct rep *r, struct gt_section_rows *s)
{
	const struct gt_profile *p = r->p;
	uint64_t *count = NULL, *time = NULL, *thr = NULL, *work = NULL, *wait = NULL, *key = NULL, *samples = NULL;
	const struct column cols[] = {
		{ "OMP_PAR_COUNT", &count, NULL }, { "OMP_PAR_TIME", &time, NULL },
		{ "OMP_PAR_THREADS", &thr, NULL }, { "OMP_WORK", &work, NULL },
		{ "OMP_WAIT", &wait, NULL },	   { "OMP_PAR_TIME_SAMPLES", &samples, NULL },
	};
	uint32_t *idx = NULL, n = 0, shown, *kernel = NULL, *pick = NULL;
	int err;

	if ((err = gt_rep__columns_load(p, cols, N_COLUMNS(cols))))
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
		kernel[i] = !i ? GT_NONE : gt_rep__is_node_named(p, up, GT_PNODE_PLACEHOLDER, PH_OMP_KERNEL) ? up : kernel[up];
		if (kernel[i] != GT_NONE && gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL)) {
			uint32_t *k = &pick[kernel[i]];

			if (*k == GT_NONE || (double)thr[i] * (double)count[*k] >= (double)thr[*k] * (double)count[i])
				*k = i;
		}
	}
	/* A region's waits are those below it but not inside a region nested
	 * in it, which reports its own: fold wait[] upward, stopping at
	 * parallel nodes (children come after parents). */
	for (uint32_t i = p->n_nodes; i-- > 1;)
		if (!gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL))
			wait[p->nodes[i].parent] += wait[i];
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL) &&
		    (kernel[i] == GT_NONE || pick[kernel[i]] == i))
			/* Never 0 for a region with anything measured, so that
			 * nodes_by keeps it; the order still follows time. */
			key[i] = time[i] || count[i] || work[i] || wait[i] || r->cpu_incl[i]
					 ? time[i] + (time[i] < UINT64_MAX)
					 : 0;
	err = gt_rep__nodes_by(r, key, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	s->region = calloc(shown, sizeof(*s->region));
	if (!s->region) {
		err = -ENOMEM;
		goto out_free;
	}
	s->n_region = shown;
	s->all_regions = n;
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = idx[k];
		struct gt_region_row *row = &s->region[k];

		*row = (struct gt_region_row){
			.node = i, .kernel = kernel[i], .instances = count[i], .time_ns = time[i],
			.thread_instances = thr[i], .work_ns = work[i], .wait_ns = wait[i], .cpu_ns = r->cpu_incl[i],
			.time_samples = samples[i],
		};
		row->kernel_name = kernel[i] != GT_NONE ? kernel_name(r, kernel[i]) : NULL;
		row->n_body = region_bodies(r, i, row->body);
	}
out_free:
	free(idx);
	free(key);
	free(kernel);
	free(pick);
	gt_rep__columns_free(cols, N_COLUMNS(cols));
	return err;
}

static int section_parallel(struct rep *r)
{
	struct gt_section_rows s = { 0 };
	struct gt_table t = { 0 };
	uint32_t *ctx = NULL, estimated = 0;
	char **where = NULL;
	int err = regions__build(r, &s);

	if (err || !s.n_region)
		goto out_free;
	err = gt_table__init(&t, s.n_region, NULL, 9, "#", "instances", "time s", "% wall", "threads", "work s",
			  "wait s", "wait %", "CPU s");
	if (err)
		goto out_free;
	where = calloc(s.n_region, sizeof(*where));
	ctx = malloc(s.n_region * sizeof(*ctx));
	if (!where || !ctx) {
		err = -ENOMEM;
		goto out_free;
	}
	for (uint32_t k = 0; k < s.n_region; k++)
		ctx[k] = s.region[k].kernel != GT_NONE ? s.region[k].kernel : r->p->nodes[s.region[k].node].parent;
	if ((err = gt_rep__paths(r, ctx, s.n_region, 0, gt_rep__line_cols(r) - BELOW_INDENT, where)))
		goto out_free;
	for (uint32_t k = 0; k < s.n_region; k++) {
		const struct gt_region_row *row = &s.region[k];

		gt_table__set(&t, k, 0, "%" PRIu32, k + 1);
		gt_table__set(&t, k, 1, "%" PRIu64, row->instances);
		gt_table__set(&t, k, 2, "%.3f", gt_rep__secs(row->time_ns));
		gt_table__pct(t.cell[k][3], row->time_ns, r->wall_ns);
		if (row->instances)
			gt_table__set(&t, k, 4, "%.1f", (double)row->thread_instances / (double)row->instances);
		else
			gt_table__set(&t, k, 4, "-");
		gt_table__set(&t, k, 5, "%.3f", gt_rep__secs(row->work_ns));
		gt_table__set(&t, k, 6, "%.3f", gt_rep__secs(row->wait_ns));
		gt_table__pct(t.cell[k][7], row->wait_ns, row->work_ns + row->wait_ns);
		/* "~": the team timed one region in 16, an estimate. */
		if (row->time_samples) {
			estimated++;
			for (int c = 5; c <= 7; c++) {
				char v[GT_TABLE_CELL];

				memcpy(v, t.cell[k][c], sizeof(v));
				if (strcmp(v, "-"))
					gt_table__set(&t, k, (unsigned)c, "~%s", v);
			}
		}
		gt_table__set(&t, k, 8, "%.3f", gt_rep__secs(row->cpu_ns));
		t.below[k] = region_label(r, row, where[k]);
		where[k] = NULL;
		if (!t.below[k]) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	fprintf(r->f, "\nOpenMP parallel regions (%" PRIu32 " of %" PRIu32 ", by time; under each, where it was reached and"
		      " what it ran)\n",
		s.n_region, s.all_regions);
	gt_table__print(&t, r->f);
	if (estimated)
		fputs("  (~: work and wait estimated from the regions whose team was timed: see \"Parallel regions\n"
		      "  timed by sampling\")\n",
		      r->f);
	for (uint32_t k = 0; k < s.n_region; k++) {
		if (r->wall_ns && s.region[k].time_ns > r->wall_ns) {
			fputs("  (time adds up the instances of all threads that started them: regions nested in\n"
			      "  a parallel region can exceed the wall time)\n",
			      r->f);
			break;
		}
	}
out_free:
	if (where)
		gt_paths__free(where, s.n_region);
	free(where);
	free(ctx);
	gt_table__fini(&t);
	gt_section_rows__fini(&s);
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
	struct gt_table t = { 0 };
	int err;

	if ((err = gt_rep__columns_load(p, cols, N_COLUMNS(cols))))
		goto out_free;
	err = -ENOMEM;
	key = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*key));
	if (!key)
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (count[i])
			key[i] = time[i] + 1;
	err = gt_rep__nodes_by(r, key, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	err = gt_table__init(&t, shown, "construct", 6, "#", "count", "time s", "launches", "up MB",
			  "down MB");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = idx[k];

		gt_table__set(&t, k, 0, "%" PRIu32, k + 1);
		gt_table__set(&t, k, 1, "%" PRIu64, count[i]);
		gt_table__set(&t, k, 2, "%.6f", gt_rep__secs(time[i]));
		gt_table__set(&t, k, 3, "%" PRIu64, launch[i]);
		gt_table__set(&t, k, 4, "%.3f", (double)up[i] / 1e6);
		gt_table__set(&t, k, 5, "%.3f", (double)down[i] / 1e6);
		t.tail[k] = strdup(gt_profile__str(p, p->nodes[i].name) ? gt_profile__str(p, p->nodes[i].name) : "?");
		idx[k] = p->nodes[i].parent;
		if (!t.tail[k]) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	if ((err = gt_rep__paths(r, idx, shown, 0, gt_rep__line_cols(r) - BELOW_INDENT, t.below)))
		goto out_free;
	fprintf(r->f, "\nOpenACC constructs (%" PRIu32 " of %" PRIu32 ", by time; under each, where it was reached)\n",
		shown, n);
	gt_table__print(&t, r->f);
out_free:
	gt_table__fini(&t);
	free(idx);
	free(key);
	gt_rep__columns_free(cols, N_COLUMNS(cols));
	return err;
}

struct fn_row {
	char *name;
	uint64_t cpu;
	uint32_t contexts;
};

/* A function's name with its parameter list "(…)" under flags. */
static char *elide(const char *name, int flags)
{
	size_t open, close;
	struct gt_sb b = { 0 };

	if (!(flags & GT_LABEL_ELIDE_ARGS) || !gt_text__args(name, &open, &close) || close == open + 1)
		return strdup(name);
	gt_sb__addn(&b, name, open + 1);
	gt_sb__add(&b, "…");
	gt_sb__add(&b, name + close);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

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
	char **shown_name = NULL;
	uint32_t m = 0, shown = 0;
	struct gt_table t = { 0 };
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
	err = gt_table__init(&t, shown, "function", 3, "CPU s", "%", "contexts");
	if (err)
		goto out_free;
	err = -ENOMEM;
	/* The cells first: the names get what the line leaves. */
	for (uint32_t k = 0; k < shown; k++) {
		gt_table__set(&t, k, 0, "%.3f", gt_rep__secs(rows[k].cpu));
		gt_table__pct(t.cell[k][1], rows[k].cpu, r->cpu_total);
		gt_table__set(&t, k, 2, "%" PRIu32, rows[k].contexts);
	}
	/* Names read "f(…)" unless two shown read alike (overloads): those in full. */
	shown_name = calloc(shown ? shown : 1, sizeof(*shown_name));
	if (!shown_name)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		shown_name[k] = elide(rows[k].name, label_flags(r));
		if (!shown_name[k])
			goto out_free;
	}
	for (uint32_t k = 0; k < shown; k++)
		for (uint32_t j = 0; j < shown; j++)
			if (j != k && strcmp(rows[k].name, rows[j].name) && !strcmp(shown_name[k], shown_name[j]) &&
			    strcmp(shown_name[k], rows[k].name)) {
				free(shown_name[k]);
				if (!(shown_name[k] = strdup(rows[k].name)))
					goto out_free;
				break;
			}
	for (uint32_t k = 0; k < shown; k++) {
		size_t w = gt_cols(shown_name[k]);

		name_w = w > name_w ? w : name_w;
	}
	if (name_w > gt_table__tail_cols(&t, gt_rep__line_cols(r)))
		name_w = gt_table__tail_cols(&t, gt_rep__line_cols(r));
	for (uint32_t k = 0; k < shown; k++) {
		struct gt_sb b = { 0 };

		gt_table__set(&t, k, 0, "%.3f", gt_rep__secs(rows[k].cpu));
		gt_table__pct(t.cell[k][1], rows[k].cpu, r->cpu_total);
		gt_table__set(&t, k, 2, "%" PRIu32, rows[k].contexts);
		gt_sb__add_fit(&b, shown_name[k], name_w);
		if (b.oom) {
			free(b.s);
			err = -ENOMEM;
			goto out_free;
		}
		t.tail[k] = b.s;
	}
	err = 0;
	fprintf(r->f, "\n  by function (%" PRIu32 " of %" PRIu32 ")\n", shown, m);
	gt_table__print(&t, r->f);
out_free:
	for (uint32_t k = 0; shown_name && k < shown; k++)
		free(shown_name[k]);
	free(shown_name);
	gt_table__fini(&t);
	for (uint32_t k = 0; k < n; k++)
		free(rows[k].name);
	free(rows);
	return err;
}

/*
 * One line when most CPU time is in the program's own code without line
 * information (a module built without -g: its frames have no file), since
 * then every context stops at one outlined function and reads alike.
 */
static void no_lines_hint(const struct rep *r)
{
	const struct gt_profile *p = r->p;
	uint64_t blind = 0, most = 0;
	uint32_t mod = GT_NONE;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const struct gt_prof_node *n = &p->nodes[i];
		const char *m = n->module != GT_NONE && n->module < p->n_modules ? gt_profile__str(p, p->modules[n->module]) : NULL;

		if (!r->cpu_excl[i] || !gt_pnode__is_frame(n->kind) || gt_profile__str(p, n->file) || !m || gt_text__is_library(m))
			continue;
		blind += r->cpu_excl[i];
		if (r->cpu_excl[i] > most) {
			most = r->cpu_excl[i];
			mod = n->module;
		}
	}
	if (mod != GT_NONE && 2 * blind > r->cpu_total) {
		struct gt_sb b = { 0 };

		gt_sb__add_clean(&b, gt_base_name(gt_profile__str(p, p->modules[mod])));
		fprintf(r->f, "  %.1f%% of the CPU time is in code without line information (%s): rebuild with -g to see lines\n",
			100.0 * (double)blind / (double)r->cpu_total, b.s ? b.s : "?");
		free(b.s);
	}
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
			if (gt_rep__is_node_named(r->p, idx[k], GT_PNODE_PLACEHOLDER, runtime[j])) {
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
	struct gt_table t = { 0 };
	int err;

	if (!r->cpu_total)
		return 0;
	err = gt_rep__nodes_by(r, r->cpu_excl, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	err = gt_table__init(&t, shown, "calling context (innermost first)", 2, "CPU s", "%");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		gt_table__set(&t, k, 0, "%.3f", gt_rep__secs(r->cpu_excl[idx[k]]));
		gt_table__pct(t.cell[k][1], r->cpu_excl[idx[k]], r->cpu_total);
	}
	if ((err = gt_rep__paths(r, idx, shown, 1, gt_table__tail_cols(&t, gt_rep__line_cols(r)), t.tail)))
		goto out_free;
	fprintf(r->f, "\nCPU time by calling context (%" PRIu32 " of %" PRIu32 " contexts; total %.3f s)\n", shown,
		n, gt_rep__secs(r->cpu_total));
	gt_table__print(&t, r->f);
	no_lines_hint(r);
	omp_runtime_legend(r, idx, shown);
	err = section_functions(r, idx, n);
out_free:
	gt_table__fini(&t);
	free(idx);
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
	    (err = gt_report__mpi(p, f, r.top, run)) ||
	    (err = section_cpu(&r)) || (err = gt_rep__section_waits(&r)) || (err = gt_rep__section_sampled_constructs(&r)) ||
	    (err = gt_rep__section_sampled_regions(&r)))
		goto out_free;
	if (ferror(f) || fflush(f))
		err = -EIO;
out_free:
	free(r.cpu_incl);
	free(r.cpu_excl);
	return err;
}

int gt_report__section_rows(const struct gt_profile *p, unsigned top, const struct gt_sections_run *run,
			    struct gt_section_rows *out)
{
	struct rep r = { .p = p, .top = top ? top : GT_REPORT_TOP, .wall_ns = run->wall_ns, .run = run };
	int err = gt_profile__check(p);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	err = totals(p, "CPUTIME", &r.cpu_excl, &r.cpu_incl);
	if (!err)
		err = regions__build(&r, out);
	if (!err)
		err = gt_rep__waits_build(&r, out);
	if (!err) {
		/* Each row's context as the text shows it, for readers without the nodes. */
		uint32_t n = out->n_region > out->n_wait ? out->n_region : out->n_wait;
		uint32_t *nodes = malloc((n ? n : 1) * sizeof(*nodes));
		char **where = calloc(n ? n : 1, sizeof(*where));

		err = nodes && where ? 0 : -ENOMEM;
		for (uint32_t k = 0; !err && k < out->n_region; k++)
			nodes[k] = out->region[k].kernel != GT_NONE ? out->region[k].kernel
								   : p->nodes[out->region[k].node].parent;
		if (!err && !(err = gt_rep__paths(&r, nodes, out->n_region, 0, gt_rep__line_cols(&r) - BELOW_INDENT, where)))
			for (uint32_t k = 0; k < out->n_region; k++)
				out->region[k].where = where[k];
		for (uint32_t k = 0; !err && k < out->n_wait; k++)
			nodes[k] = out->wait[k].node;
		if (!err && !(err = gt_rep__paths(&r, nodes, out->n_wait, 1, gt_rep__line_cols(&r) - 50, where)))
			for (uint32_t k = 0; k < out->n_wait; k++)
				out->wait[k].where = where[k];
		free(nodes);
		free(where);
	}
	free(r.cpu_incl);
	free(r.cpu_excl);
	if (err)
		gt_section_rows__fini(out);
	return err;
}

void gt_section_rows__fini(struct gt_section_rows *s)
{
	for (uint32_t k = 0; s->region && k < s->n_region; k++)
		free(s->region[k].where);
	for (uint32_t k = 0; s->wait && k < s->n_wait; k++)
		free(s->wait[k].where);
	free(s->region);
	free(s->wait);
	memset(s, 0, sizeof(*s));
}
