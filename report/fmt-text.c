/* SPDX-License-Identifier: MIT */
/*
 * The text report of a merged run, for a terminal: what was measured,
 * where the time goes (importance metrics and the top-down guidance they
 * give), the processes and their imbalance, and one view (top-down,
 * bottom-up or flat) of the chosen metric. docs/REPORT.md shows an
 * example.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "report/next.h"
#include "report/paths.h"
#include "report/report.h"
#include "report/sections.h"

#define TREE_MIN_SHARE 0.01 /* tree nodes under this share of the total are left out */
#define TREE_DEPTH 40
#define BU_DEPTH 6
#define IMB_ROWS 5
#define PROC_COLS 3 /* contexts with per-process values in the process table */

struct out {
	FILE *f;
	const struct gt_analysis *a;
	const struct gt_out_opts *o;
	struct gt_scale sc; /* for the view's metric */
	int stats;          /* min/mean/max columns: several processes, a real metric */
	int imp;            /* importance columns: GPU time was measured */
	unsigned lines;
	int err;
};

static const char *unit_label(const struct gt_scale *sc)
{
	return sc->suffix[0] ? sc->suffix : "#";
}

static void val(const struct out *o, char *buf, size_t len, double v)
{
	gt_scale__fmt(&o->sc, buf, len, v);
}

static void pct(char *buf, size_t len, double part, double whole)
{
	if (whole <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * part / whole);
}

static size_t line_cols(const struct out *o)
{
	return o->o->width ? o->o->width : GT_PATHS_WIDTH;
}

static int label_flags(const struct out *o)
{
	return o->o->signatures ? 0 : GT_LABEL_ELIDE_ARGS;
}

/* What is left of a line after used columns, for a label or a context. */
static size_t room(const struct out *o, size_t used)
{
	return line_cols(o) > used + 20 ? line_cols(o) - used : 20;
}

/* The label of node i, fitted to width columns. */
static char *label(const struct out *o, uint32_t i, int flags, size_t width)
{
	struct gt_sb b = { 0 }, fit = { 0 };

	gt_label(&b, o->a->t, i, flags | GT_LABEL_SHORT_FILE | label_flags(o));
	if (!b.oom)
		gt_sb__add_fit(&fit, b.s, width);
	free(b.s);
	if (b.oom || fit.oom) {
		free(fit.s);
		return NULL;
	}
	return fit.s ? fit.s : strdup("");
}

/* The contexts of nodes[0..n), outermost first, as one table's rows
 * (report/paths.h); out[k] NULL for all when out of memory. */
static void paths(const struct out *o, const uint32_t *nodes, uint32_t n, size_t width, char **out)
{
	const struct gt_paths_opts po = { .width = width, .label_flags = label_flags(o) };

	if (gt_paths__build(o->a->t, nodes, n, &po, out))
		memset(out, 0, n * sizeof(*out));
}

static const char *exe_base(const struct gt_proc *p)
{
	const char *slash = p->exe ? strrchr(p->exe, '/') : NULL;

	return slash ? slash + 1 : p->exe;
}

/*
 * Whether the run's processes are told apart by rank: each has one, and no
 * two the same. Otherwise (a shell's or a job script's programs, a rank's
 * helpers) they are told apart by pid, with the program's name.
 */
static int ranks_distinct(const struct gt_analysis *a)
{
	const struct gt_run *r = a->run;

	for (uint32_t k = 0; k < a->n_proc_order; k++) {
		const struct gt_proc *p = &r->procs[a->proc_order[k]];

		if (p->rank < 0)
			return 0;
		for (uint32_t j = 0; j < k; j++)
			if (r->procs[a->proc_order[j]].rank == p->rank)
				return 0;
	}
	return 1;
}

static const char *proc_name(const struct out *o, const struct gt_proc *p, char *buf, size_t len)
{
	const char *exe = p->exe ? exe_base(p) : "?";

	if (p->rank >= 0 && ranks_distinct(o->a))
		snprintf(buf, len, "rank %" PRId64, p->rank);
	else
		snprintf(buf, len, "pid %" PRIu64 " %s", p->pid, exe);
	return buf;
}

/* The base names of the run's programs, in the order of the processes:
 * "a", or "a, b", or "a, b, c, ..." (three at most); the number of them. */
static uint32_t programs(const struct gt_analysis *a, struct gt_sb *b)
{
	const struct gt_run *r = a->run;
	uint32_t n = 0;

	for (uint32_t k = 0; k < a->n_proc_order; k++) {
		const char *e = exe_base(&r->procs[a->proc_order[k]]);
		uint32_t j;

		if (!e)
			continue;
		for (j = 0; j < k; j++)
			if (exe_base(&r->procs[a->proc_order[j]]) && !strcmp(exe_base(&r->procs[a->proc_order[j]]), e))
				break;
		if (j < k)
			continue;
		if (n < 3) {
			if (n)
				gt_sb__add(b, ", ");
			gt_sb__add_clean(b, e);
		} else if (n == 3) {
			gt_sb__add(b, ", ...");
		}
		n++;
	}
	return n;
}

/* ---- header ---- */

static int host_cmp(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;

	if (!a || !b)
		return !a && !b ? 0 : !a ? -1 : 1;
	return strcmp(a, b);
}

/* Distinct host names among the merged processes. */
static uint32_t count_hosts(const struct gt_analysis *a)
{
	const char **h = malloc((a->n_proc_order ? a->n_proc_order : 1) * sizeof(*h));
	uint32_t n = 0;

	if (!h)
		return 0;
	for (uint32_t k = 0; k < a->n_proc_order; k++)
		h[k] = a->run->procs[a->proc_order[k]].host;
	qsort(h, a->n_proc_order, sizeof(*h), host_cmp);
	for (uint32_t k = 0; k < a->n_proc_order; k++)
		n += !k || host_cmp(&h[k - 1], &h[k]);
	free(h);
	return n;
}

#define MISSING_SHOWN 16

/* The ranks of the job (as its processes knew its size) that left no
 * profile here: a rank killed before it could write one, or one whose file
 * is elsewhere. */
static void missing_ranks(struct out *o)
{
	const struct gt_run *r = o->a->run;
	uint64_t size = 0, n_missing = 0;
	uint8_t *seen;

	for (uint32_t k = 0; k < r->n_procs; k++)
		if (r->procs[k].state == GT_PROC_MERGED && r->procs[k].ranks > size)
			size = r->procs[k].ranks;
	if (!size || !(seen = calloc(size, 1)))
		return;
	for (uint32_t k = 0; k < r->n_procs; k++)
		if (r->procs[k].state == GT_PROC_MERGED && r->procs[k].rank >= 0 &&
		    (uint64_t)r->procs[k].rank < size)
			seen[r->procs[k].rank] = 1;
	for (uint64_t i = 0; i < size; i++)
		n_missing += !seen[i];
	if (n_missing) {
		uint64_t shown = 0;

		fprintf(o->f, "  %-12s %" PRIu64 " of %" PRIu64 " ranks wrote no profile here:", "missing", n_missing,
			size);
		for (uint64_t i = 0; i < size && shown < MISSING_SHOWN; i++)
			if (!seen[i])
				fprintf(o->f, "%s %" PRIu64, shown++ ? "," : "", i);
		fprintf(o->f, "%s\n", n_missing > shown ? ", …" : "");
	}
	free(seen);
}

/* The CPU-time samples of the run, and how many the tool took itself. */
static void sampling(struct out *o)
{
	const struct gt_run *r = o->a->run;
	uint32_t m = gt_profile__find_metric(&r->t, "SAMPLES");
	uint64_t samples = 0, tool = 0, dropped = 0, wall = 0, wall_tool = 0;
	const char *hz = NULL, *what = NULL;

	for (uint32_t k = 0; k < o->a->n_proc_order; k++) {
		const struct gt_proc *p = &r->procs[o->a->proc_order[k]];

		if (!hz)
			hz = gt_proc__meta(p, "sample_hz");
		if (!what)
			what = gt_proc__meta(p, "sample");
		wall += gt_proc__meta_u64(p, "wall_samples");
		wall_tool += gt_proc__meta_u64(p, "wall_tool_samples");
		if (m != GT_NONE)
			samples += gt_proc__total(p, m);
		tool += gt_proc__meta_u64(p, "tool_samples");
		dropped += gt_proc__meta_u64(p, "dropped_samples");
	}
	if (hz && !strcmp(hz, "0")) {
		fprintf(o->f, "  %-12s off\n", "sampling");
	} else if (hz && !samples && !tool) {
		fprintf(o->f, "  %-12s %s Hz per thread, no samples\n", "sampling", hz);
	} else if (hz) {
		char share[16];

		pct(share, sizeof(share), (double)tool, (double)(samples + tool));
		fprintf(o->f, "  %-12s %s Hz per thread, %" PRIu64 " samples, %s of them in gputool itself\n",
			"sampling", hz, samples + tool, share);
	}
	if (hz && what && strstr(what, "wall")) {
		char share[16];

		pct(share, sizeof(share), (double)wall_tool, (double)(wall + wall_tool));
		fprintf(o->f, "  %-12s %s Hz per thread, %" PRIu64 " samples (%s in gputool), and waits measured "
			      "whole: WALLTIME\n",
			"wall clock", hz, wall + wall_tool, share);
	}
	if (dropped)
		fprintf(o->f, "  %-12s %" PRIu64 " samples (not in the profile%s)\n", "dropped", dropped,
			r->n_merged > 1 ? "s" : "");
}

/* Facts the backends set (docs/OMP-TARGET.md), as the first process that has each says. */
static void facts(struct out *o)
{
	static const char *const facts[][2] = {
		{ "omp_devices", "OMP devices" },
		{ "omp_images", "OMP images" },
		{ "omp_target_timing", "OMP timing" },
		{ "omp_target_hint", "OMP target" },
		{ "omp_unmeasured", "OpenMP" },
		{ "pc_sampling", "PC samples" },
	};
	const struct gt_run *r = o->a->run;
	char head[32];

	for (unsigned f = 0; f < sizeof(facts) / sizeof(facts[0]); f++) {
		for (uint32_t k = 0; k < o->a->n_proc_order; k++) {
			const char *v = gt_proc__meta(&r->procs[o->a->proc_order[k]], facts[f][0]);
			struct gt_sb b = { 0 };

			if (!v)
				continue;
			gt_sb__add_clean(&b, v);
			/* A fact is a sentence of any length (a hint, a list of
			 * devices): wrapped under its value's column. */
			snprintf(head, sizeof(head), "  %-12s ", facts[f][1]);
			gt_next__put_wrapped(o->f, strlen(head), head, b.s ? b.s : "", strlen(head), line_cols(o));
			free(b.s);
			break;
		}
	}
}

static void header(struct out *o)
{
	const struct gt_analysis *a = o->a;
	const struct gt_run *r = a->run;
	const struct gt_proc *first = a->n_proc_order ? &r->procs[a->proc_order[0]] : NULL;
	int64_t rmin = INT64_MAX, rmax = -1;
	uint64_t wall = 0;
	uint32_t hosts = count_hosts(a), n_programs = 0;
	char tot[32];

	for (uint32_t k = 0; k < a->n_proc_order; k++) {
		const struct gt_proc *p = &r->procs[a->proc_order[k]];

		if (p->rank >= 0 && p->rank < rmin)
			rmin = p->rank;
		if (p->rank > rmax)
			rmax = p->rank;
		if (p->wall_ns > wall)
			wall = p->wall_ns;
	}
	if (o->o->path)
		fprintf(o->f, "gputool report: %s\n", o->o->path);
	else
		fputs("gputool report\n", o->f);
	if (first && first->exe) {
		struct gt_sb b = { 0 };

		/* One program: its name as the profile gives it. */
		n_programs = programs(a, &b);
		if (n_programs <= 1) {
			free(b.s);
			b = (struct gt_sb){ 0 };
			gt_sb__add_clean(&b, first->exe);
		}
		fprintf(o->f, "  %-12s %s\n", n_programs > 1 ? "programs" : "program", b.s ? b.s : "");
		free(b.s);
	}
	/* Several programs (a shell's, a job script's): no one command is
	 * the run's; each process's is in the JSON report. */
	if (first && first->cmdline && n_programs <= 1) {
		struct gt_sb b = { 0 }, fit = { 0 };

		gt_sb__add_clean(&b, first->cmdline);
		if (b.s)
			gt_sb__add_fit(&fit, b.s, room(o, 15));
		fprintf(o->f, "  %-12s %s\n", "command", fit.s ? fit.s : "");
		free(b.s);
		free(fit.s);
	}
	fprintf(o->f, "  %-12s %" PRIu32, "processes", r->n_merged);
	if (rmax >= 0 && r->n_merged > 1 && ranks_distinct(a))
		fprintf(o->f, " (ranks %" PRId64 "-%" PRId64 ")", rmin, rmax);
	else if (rmax >= 0 && r->n_merged > 1 && rmin == rmax)
		fprintf(o->f, " (all rank %" PRId64 ")", rmax);
	else if (rmax >= 0 && r->n_merged > 1)
		fprintf(o->f, " (ranks %" PRId64 "-%" PRId64 ", some with several processes)", rmin, rmax);
	else if (rmax >= 0)
		fprintf(o->f, " (rank %" PRId64 ", pid %" PRIu64 ")", rmax, first ? first->pid : 0);
	if (hosts == 1 && first && first->host) {
		struct gt_sb b = { 0 };

		gt_sb__add_clean(&b, first->host);
		fprintf(o->f, " on host %s\n", b.s ? b.s : "");
		free(b.s);
	} else {
		fprintf(o->f, " on %" PRIu32 " host%s\n", hosts, hosts == 1 ? "" : "s");
	}
	{
		uint64_t unmeasured = 0, ops = 0, reused = 0;

		for (uint32_t k = 0; k < a->n_proc_order; k++) {
			unmeasured += r->procs[a->proc_order[k]].unmeasured;
			ops += r->procs[a->proc_order[k]].ops_unmeasured;
			reused += r->procs[a->proc_order[k]].reused;
		}
		fprintf(o->f, "  %-12s %" PRIu64, "threads", r->n_threads);
		if (reused)
			fprintf(o->f, " (%" PRIu64 " started: each thread that ended handed its record on)",
				r->n_threads + reused);
		fputc('\n', o->f);
		if (unmeasured)
			fprintf(o->f, "  %-12s %" PRIu64 " thread%s beyond GPUTOOL_MAX_THREADS (not in the profiles)\n",
				"unmeasured", unmeasured, unmeasured == 1 ? "" : "s");
		if (ops)
			fprintf(o->f, "  %-12s %" PRIu64 " device operation%s (not in the profiles)\n", "unmeasured", ops,
				ops == 1 ? "" : "s");
	}
	sampling(o);
	if (wall)
		fprintf(o->f, "  %-12s %.3f s%s\n", "wall time", (double)wall / 1e9,
			r->n_merged > 1 ? " (the longest process)" : "");
	val(o, tot, sizeof(tot), (double)a->total);
	fprintf(o->f, "  %-12s %s, total %s %s\n", "metric", a->metric_name, tot, unit_label(&o->sc));
	facts(o);
	if (r->n_failed)
		fprintf(o->f, "  %-12s %" PRIu32 " profile%s could not be read and %s left out (see the messages above)\n",
			"left out", r->n_failed, r->n_failed == 1 ? "" : "s", r->n_failed == 1 ? "is" : "are");
	missing_ranks(o);
}

/* ---- importance ---- */

static void hot(struct out *o, const char *what, const uint32_t *p, uint32_t n, int gpu)
{
	const struct gt_analysis *a = o->a;

	if (!n) {
		fprintf(o->f, "  no single hot path (%s): no context holds half of its caller's; see the views below\n",
			what);
		return;
	}
	fprintf(o->f, "  hot path (%s), from the top; %%: %s\n", what, gpu ? "I_G" : "I_C");
	for (uint32_t k = 0; k < n; k++) {
		char *l = label(o, p[k], 0, room(o, 11 + 2 * (k < 20 ? k : 20)));
		char c[16];

		pct(c, sizeof(c), gpu ? gt_analysis__I_G(a, p[k]) : gt_analysis__I_C(a, p[k]), 1.0);
		fprintf(o->f, "  %7s  %*s%s\n", c, (int)(2 * (k < 20 ? k : 20)), "", l ? l : "?");
		free(l);
	}
	if (gpu && a->n_sites) {
		uint32_t last = p[n - 1];

		if (gt_analysis__is_gpu_placeholder(a, last)) {
			fprintf(o->f, "           there, by operation type:");
			for (uint32_t j = 0; j < a->n_gpu; j++) {
				char c[16];

				if (!a->Gj[j][last])
					continue;
				pct(c, sizeof(c), (double)a->Gj[j][last], (double)a->G_P);
				fprintf(o->f, " %s %s", gt_profile__str(a->t, a->t->metrics[a->gpu_metric[j]].name), c);
			}
			fputc('\n', o->f);
		}
	}
}

/* A "<gpu kernel>" placeholder with one kernel's name under it reads as
 * that name: the row then says which kernel ran. */
static uint32_t kernel_named(const struct gt_analysis *a, uint32_t node)
{
	const struct gt_profile *t = a->t;
	const char *ph = gt_profile__str(t, t->nodes[node].name);
	uint32_t named = GT_NONE, kids = 0;

	if (t->nodes[node].kind != GT_PNODE_PLACEHOLDER || !ph || strcmp(ph, "<gpu kernel>"))
		return node;
	for (uint32_t i = node + 1; i < t->n_nodes; i++)
		if (t->nodes[i].parent == node) {
			kids++;
			if (t->nodes[i].kind == GT_PNODE_NAME)
				named = i;
		}
	return kids == 1 && named != GT_NONE ? named : node;
}

static void importance(struct out *o)
{
	const struct gt_analysis *a = o->a;
	char c[32], g[32], s[16];

	fprintf(o->f, "\nWhere the time goes (importance metrics: I_C, I_G, I_G,j)\n");
	if (a->bound == GT_BOUND_NOTHING) {
		fprintf(o->f, "  no CPU time (CPUTIME) and no GPU operations were measured\n");
		return;
	}
	snprintf(c, sizeof(c), "%.3f", (double)a->C_P / 1e9);
	snprintf(g, sizeof(g), "%.3f", (double)a->G_P / 1e9);
	pct(s, sizeof(s), a->I_C_P, 1.0);
	fprintf(o->f, "  CPU time %s s, GPU operations %s s; I_C of the program %s\n", c, g, s);
	if (a->G_P) {
		fprintf(o->f, "  GPU operations by type (I_G,j of the program):");
		for (uint32_t j = 0; j < a->n_gpu; j++) {
			if (!a->Gj[j][0])
				continue;
			pct(s, sizeof(s), (double)a->Gj[j][0], (double)a->G_P);
			fprintf(o->f, " %s %s", gt_profile__str(a->t, a->t->metrics[a->gpu_metric[j]].name), s);
		}
		fputc('\n', o->f);
	}
	/* A host device's kernels are CPU time (derive.c): say what the
	 * device is rather than weigh it as a GPU. */
	if (a->host_device)
		fprintf(o->f,
			"  Offloaded to the host (%.*s): kernels run on this CPU, their %.3f s of operations\n"
			"  counted as CPU time, not GPU time.\n",
			(int)strcspn(a->host_device, ")"), a->host_device, (double)a->H_P / 1e9);
	switch (a->bound) {
	case GT_BOUND_CPU_ONLY:
		if (a->host_device)
			fprintf(o->f, "  Start with the CPU contexts on the hot path below, the kernels' among them.\n");
		else
			fprintf(o->f, "  No GPU operations were measured: the CPU does all the work (I_G = 0).\n"
				      "  Start with the CPU contexts on the hot path below.\n");
		hot(o, "CPU time", a->cpu_hot, a->n_cpu_hot, 0);
		break;
	case GT_BOUND_CPU:
		fprintf(o->f, "  CPU-bound: most CPU time is not overlapped by GPU work (I_C >= 50%%).\n"
			      "  Start with the CPU contexts on the hot path below (a context's I_C counts its CPU time\n"
			      "  beyond the GPU time it covers); offloading them may pay more than tuning GPU code.\n");
		hot(o, "CPU time not covered by GPU time", a->cpu_hot, a->n_cpu_hot, 0);
		hot(o, "GPU time", a->gpu_hot, a->n_gpu_hot, 1);
		break;
	case GT_BOUND_GPU:
		fprintf(o->f, "  GPU-bound: GPU operations cover most CPU time (I_C < 50%%). Follow the GPU hot path to\n"
			      "  the operation that dominates, then its type: copies and syncs first, then kernels.\n");
		hot(o, "GPU time", a->gpu_hot, a->n_gpu_hot, 1);
		break;
	default:
		break;
	}
	if (a->n_sites) {
		uint32_t shown = a->n_sites < o->o->top ? a->n_sites : o->o->top;
		struct gt_scale sc = gt_scale__for("ns", a->sites[0].value);

		fprintf(o->f, "\n  GPU operations by importance (%" PRIu32 " of %" PRIu32 ")\n", shown, a->n_sites);
		uint32_t *nodes = calloc(shown ? shown : 1, sizeof(*nodes));
		char **where = calloc(shown ? shown : 1, sizeof(*where));

		fprintf(o->f, "  %8s %10s  %-12s  %s\n", "I_G,i,j", sc.suffix, "type", "call site > operation");
		for (uint32_t k = 0; nodes && where && k < shown; k++)
			nodes[k] = kernel_named(a, a->sites[k].node);
		if (nodes && where)
			paths(o, nodes, shown, room(o, 37), where);
		for (uint32_t k = 0; k < shown; k++) {
			const struct gt_gpu_site *st = &a->sites[k];
			char v[32], *p = where ? where[k] : NULL;

			pct(s, sizeof(s), (double)st->value, (double)a->G_P);
			gt_scale__fmt(&sc, v, sizeof(v), (double)st->value);
			fprintf(o->f, "  %8s %10s  %-12s  %s\n", s, v,
				gt_profile__str(a->t, a->t->metrics[a->gpu_metric[st->j]].name), p ? p : "?");
			free(p);
		}
		free(where);
		free(nodes);
	}
}

/* ---- processes ---- */

/* The devices a process kept busy, from its "gpu_busy_ns" fact ("D:NS ..."),
 * as "D:seconds,..." into buf; "-" when none. */
static void proc_devices(const struct gt_proc *p, char *buf, size_t len)
{
	const char *v = gt_proc__meta(p, "gpu_busy_ns");
	size_t at = 0;
	unsigned long d;
	uint64_t ns;

	buf[0] = 0;
	while (at + 1 < len && gt_device_list__next(&v, &d, &ns)) {
		int w = snprintf(buf + at, len - at, "%s%lu:%.3f", at ? "," : "", d, (double)ns / 1e9);

		if (w < 0 || (size_t)w >= len - at)
			break;
		at += (size_t)w;
	}
	if (!at)
		snprintf(buf, len, "-");
}

static void processes(struct out *o)
{
	const struct gt_analysis *a = o->a;
	const struct gt_run *r = a->run;
	uint32_t ncols = 0, cols[PROC_COLS], shown;
	uint64_t wall_max = 0;
	int gpus = 0;

	if (r->n_merged < 2)
		return;
	if (r->detail && a->metric != GT_METRIC_GPUOP)
		for (uint32_t k = 0; k < a->n_imb && ncols < PROC_COLS; k++)
			cols[ncols++] = a->imb[k];
	for (uint32_t k = 0; k < a->n_proc_order; k++) {
		if (r->procs[a->proc_order[k]].wall_ns > wall_max)
			wall_max = r->procs[a->proc_order[k]].wall_ns;
		gpus |= gt_proc__meta(&r->procs[a->proc_order[k]], "gpu_busy_ns") != NULL;
	}
	fprintf(o->f, "\nProcesses (%" PRIu32 "; %s in %s", r->n_merged, a->metric_name, unit_label(&o->sc));
	if (ncols)
		fprintf(o->f, "; [n]: the value at the n-th context of the imbalance list below");
	else if (!r->detail)
		fprintf(o->f, "; values per context are kept for runs of up to %u processes", GT_DETAIL_MAX);
	if (gpus)
		fprintf(o->f, "; GPUs: busy s per device");
	fprintf(o->f, ")\n  %8s %10s %-16s %-16s %7s %9s %10s %7s", "rank", "pid", "program", "host", "threads",
		"wall s", "total", "%");
	if (gpus)
		fprintf(o->f, " %-16s", "GPUs");
	for (uint32_t c = 0; c < ncols; c++)
		fprintf(o->f, " %9s[%u]", "", c + 1);
	fputc('\n', o->f);
	shown = a->n_proc_order < o->o->top ? a->n_proc_order : o->o->top;
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = a->proc_order[k];
		const struct gt_proc *p = &r->procs[i];
		uint64_t total = 0;
		char rk[24], v[32], pc[16];
		struct gt_sb host = { 0 }, exe = { 0 };

		if (a->metric == GT_METRIC_GPUOP) {
			for (uint32_t j = 0; j < a->n_gpu; j++)
				total += gt_proc__total(p, a->gpu_metric[j]);
		} else if (a->metric != GT_NONE) {
			total = gt_proc__total(p, a->metric);
		}
		if (p->rank >= 0)
			snprintf(rk, sizeof(rk), "%" PRId64, p->rank);
		else
			snprintf(rk, sizeof(rk), "-");
		gt_sb__add_clean(&host, p->host ? p->host : "-");
		gt_sb__add_clean(&exe, p->exe ? exe_base(p) : "-");
		val(o, v, sizeof(v), (double)total);
		pct(pc, sizeof(pc), (double)total, (double)a->total);
		fprintf(o->f, "  %8s %10" PRIu64 " %-16.16s %-16.16s %7" PRIu32 " %9.3f %10s %7s", rk, p->pid,
			exe.s ? exe.s : "-", host.s ? host.s : "-", p->n_threads, (double)p->wall_ns / 1e9, v, pc);
		free(host.s);
		free(exe.s);
		if (gpus) {
			char dev[64];

			proc_devices(p, dev, sizeof(dev));
			fprintf(o->f, " %-16s", dev);
		}
		for (uint32_t c = 0; c < ncols; c++) {
			const struct gt_cell *cell = gt_analysis__cell(a, cols[c]);

			val(o, v, sizeof(v), cell && cell->per_proc ? (double)cell->per_proc[i] : 0.0);
			fprintf(o->f, " %12s", v);
		}
		fputc('\n', o->f);
	}
	if (shown < a->n_proc_order)
		fprintf(o->f, "  … %" PRIu32 " more (--top %" PRIu32 " shows them all)\n", a->n_proc_order - shown,
			a->n_proc_order);
}

/* The sampling period of a sampled metric's view (CPU time), in ns; 0 for
 * a measured one, or when the processes sampled at different rates. */
static uint64_t sample_period_ns(const struct gt_analysis *a)
{
	const struct gt_run *r = a->run;
	uint64_t hz = 0;

	if (a->metric >= r->t.n_metrics ||
	    (r->t.metrics[a->metric].cls != GT_MC_CPU && r->t.metrics[a->metric].cls != GT_MC_WALL))
		return 0;
	for (uint32_t k = 0; k < a->n_proc_order; k++) {
		uint64_t h = gt_proc__meta_u64(&r->procs[a->proc_order[k]], "sample_hz");

		if (!h || (hz && h != hz))
			return 0;
		hz = h;
	}
	return hz ? 1000000000ull / hz : 0;
}

static void imbalance(struct out *o)
{
	const struct gt_analysis *a = o->a;
	const struct gt_run *r = a->run;
	uint32_t n = r->n_merged, shown;
	char buf[5][32], *where[IMB_ROWS];

	if (n >= 2 && a->n_imb) {
		uint64_t period = sample_period_ns(a);

		shown = a->n_imb < IMB_ROWS ? a->n_imb : IMB_ROWS;
		fprintf(o->f, "\nLoad imbalance across processes (%s, inclusive, in %s; imb = max/mean; contexts over %.0f%% of the total%s)\n",
			a->metric_name, unit_label(&o->sc), 100 * 0.05,
			period ? "; noise: of the max, 1/sqrt(samples)" : "");
		fprintf(o->f, "  %3s %6s %10s %10s %10s %10s %-12s", "", "imb", "max-mean", "min", "mean", "max", "max at");
		if (period)
			fprintf(o->f, " %7s %5s", "samples", "noise");
		fprintf(o->f, " %s\n", "context");
		paths(o, a->imb, shown, room(o, period ? 83 : 69), where);
		for (uint32_t k = 0; k < shown; k++) {
			const struct gt_cell *c = gt_analysis__cell(a, a->imb[k]);
			double mean = gt_pstat__mean(&c->incl, n);
			char at[32], *p = where[k];

			val(o, buf[0], sizeof(buf[0]), (double)c->incl.max - mean);
			val(o, buf[1], sizeof(buf[1]), (double)gt_pstat__min(&c->incl, n));
			val(o, buf[2], sizeof(buf[2]), mean);
			val(o, buf[3], sizeof(buf[3]), (double)c->incl.max);
			proc_name(o, &r->procs[c->incl.max_at], at, sizeof(at));
			fprintf(o->f, "  [%u] %5.2f %10s %10s %10s %10s %-12s", k + 1, gt_pstat__imbalance(&c->incl, n),
				buf[0], buf[1], buf[2], buf[3], at);
			if (period) {
				/* A count of samples is Poisson: its relative error is
				 * 1/sqrt(count); the imbalance rests on the max's. */
				uint64_t samples = c->incl.max / period;

				fprintf(o->f, " %7" PRIu64 " %4.0f%%", samples, samples ? 100.0 / sqrt((double)samples) : 100.0);
			}
			fprintf(o->f, " %s\n", p ? p : "?");
			free(p);
		}
	}
	if (a->n_timb) {
		shown = a->n_timb < IMB_ROWS ? a->n_timb : IMB_ROWS;
		fprintf(o->f, "\nLoad imbalance across threads (%s, exclusive, in %s; over the threads that measured it)\n",
			a->metric_name, unit_label(&o->sc));
		fprintf(o->f, "  %6s %7s %10s %10s %10s  %s\n", "imb", "threads", "min", "mean", "max", "context");
		paths(o, a->timb, shown, room(o, 51), where);
		for (uint32_t k = 0; k < shown; k++) {
			const struct gt_cell *c = gt_analysis__cell(a, a->timb[k]);
			double mean = gt_tstat__mean(&c->thr, c->excl.sum);
			char *p = where[k];

			val(o, buf[1], sizeof(buf[1]), (double)c->thr.min);
			val(o, buf[2], sizeof(buf[2]), mean);
			val(o, buf[3], sizeof(buf[3]), (double)c->thr.max);
			fprintf(o->f, "  %6.2f %7" PRIu64 " %10s %10s %10s  %s\n", mean > 0 ? (double)c->thr.max / mean : 0.0,
				c->thr.n, buf[1], buf[2], buf[3], p ? p : "?");
			free(p);
		}
	}
}

/* ---- views ---- */

static void row_stats(struct out *o, uint32_t i)
{
	const struct gt_cell *c = gt_analysis__cell(o->a, i);
	uint32_t n = o->a->run->n_merged;
	char b[3][32];

	if (!o->stats)
		return;
	if (!c) {
		fprintf(o->f, " %9s %9s %9s %5s", "", "", "", "");
		return;
	}
	val(o, b[0], sizeof(b[0]), (double)gt_pstat__min(&c->incl, n));
	val(o, b[1], sizeof(b[1]), gt_pstat__mean(&c->incl, n));
	val(o, b[2], sizeof(b[2]), (double)c->incl.max);
	fprintf(o->f, " %9s %9s %9s %5.2f", b[0], b[1], b[2], gt_pstat__imbalance(&c->incl, n));
}

static void row_importance(struct out *o, uint32_t i)
{
	char c[16], g[16];

	if (!o->imp)
		return;
	pct(c, sizeof(c), gt_analysis__I_C(o->a, i), 1.0);
	pct(g, sizeof(g), gt_analysis__I_G(o->a, i), 1.0);
	fprintf(o->f, " %6s %6s", c, g);
}

static int tree(struct out *o, uint32_t node, unsigned depth)
{
	const struct gt_analysis *a = o->a;
	uint32_t *kids, n;
	int err = gt_analysis__children(a, node, &kids, &n);

	if (err)
		return err;
	for (uint32_t k = 0; k < n && !err; k++) {
		uint32_t c = kids[k];
		char p[16], v1[32], v2[32], *l;
		unsigned ind = depth < 30 ? depth : 30;

		if ((double)a->incl[c] < TREE_MIN_SHARE * (double)a->total)
			break;
		if (o->lines >= o->o->top) {
			o->lines++; /* counts what is left out */
			continue;
		}
		pct(p, sizeof(p), (double)a->incl[c], (double)a->total);
		val(o, v1, sizeof(v1), (double)a->incl[c]);
		val(o, v2, sizeof(v2), (double)a->excl[c]);
		fprintf(o->f, "  %6s %10s %10s", p, v1, v2);
		row_stats(o, c);
		row_importance(o, c);
		l = label(o, c, 0, room(o, 32 + (o->stats ? 36 : 0) + (o->imp ? 14 : 0) + 2 * ind));
		fprintf(o->f, "  %*s%s\n", (int)(2 * ind), "", l ? l : "?");
		free(l);
		o->lines++;
		if (depth + 1 < TREE_DEPTH)
			err = tree(o, c, depth + 1);
	}
	free(kids);
	return err;
}

static int view_top_down(struct out *o)
{
	const struct gt_analysis *a = o->a;
	int err;

	fprintf(o->f, "\nTop-down view (%s, in %s; inclusive and exclusive, sum of %" PRIu32 " process%s and %" PRIu64
		      " thread%s; over %.0f%% of the total)\n",
		a->metric_name, unit_label(&o->sc), a->run->n_merged, a->run->n_merged == 1 ? "" : "es",
		a->run->n_threads, a->run->n_threads == 1 ? "" : "s", 100 * TREE_MIN_SHARE);
	fprintf(o->f, "  %6s %10s %10s", "%", "incl", "excl");
	if (o->stats)
		fprintf(o->f, " %9s %9s %9s %5s", "min", "mean", "max", "imb");
	if (o->imp)
		fprintf(o->f, " %6s %6s", "I_C", "I_G");
	fprintf(o->f, "  context%s\n", o->stats ? " (min, mean, max: inclusive, over processes)" : "");
	err = tree(o, 0, 0);
	if (!err && o->lines > o->o->top)
		fprintf(o->f, "  … %u more lines (--top N shows N lines)\n", o->lines - o->o->top);
	return err;
}

static int callers(struct out *o, const struct gt_bottom_up *bu, uint32_t id, unsigned depth)
{
	const struct gt_analysis *a = o->a;
	uint32_t *kids, n;
	int err;

	if (depth > BU_DEPTH)
		return 0;
	err = gt_bottom_up__children(bu, id, &kids, &n);
	for (uint32_t k = 0; k < n && !err; k++) {
		const struct gt_bu_node *b = &bu->n[kids[k]];
		char p[16], v[32], *l;

		if ((double)b->value < TREE_MIN_SHARE * (double)a->total || o->lines >= 4 * o->o->top)
			break;
		pct(p, sizeof(p), (double)b->value, (double)a->total);
		val(o, v, sizeof(v), (double)b->value);
		l = label(o, b->node, 0, room(o, 23 + 2 * depth));
		fprintf(o->f, "  %6s %10s  %*s< %s\n", p, v, (int)(2 * depth), "", l ? l : "?");
		free(l);
		o->lines++;
		err = callers(o, bu, kids[k], depth + 1);
	}
	free(kids);
	return err;
}

static int view_bottom_up(struct out *o)
{
	const struct gt_analysis *a = o->a;
	struct gt_bottom_up bu;
	uint32_t shown;
	int err = gt_bottom_up__build(&bu, a);

	if (err)
		return err;
	shown = bu.n_roots < o->o->top ? bu.n_roots : o->o->top;
	fprintf(o->f, "\nBottom-up view (%s, in %s; exclusive, by function; under each, the call sites that led there)\n",
		a->metric_name, unit_label(&o->sc));
	fprintf(o->f, "  %6s %10s  %s\n", "%", "excl", "function  < called from");
	for (uint32_t k = 0; k < shown && !err; k++) {
		const struct gt_bu_node *b = &bu.n[bu.roots[k]];
		char p[16], v[32], *l = label(o, b->node, GT_LABEL_NO_LINE, room(o, 21));

		pct(p, sizeof(p), (double)b->value, (double)a->total);
		val(o, v, sizeof(v), (double)b->value);
		fprintf(o->f, "  %6s %10s  %s\n", p, v, l ? l : "?");
		free(l);
		o->lines++;
		err = callers(o, &bu, bu.roots[k], 1);
	}
	if (!err && shown < bu.n_roots)
		fprintf(o->f, "  … %" PRIu32 " more functions (--top N shows N)\n", bu.n_roots - shown);
	gt_bottom_up__fini(&bu);
	return err;
}

static int view_flat(struct out *o)
{
	const struct gt_analysis *a = o->a;
	struct gt_flat fl;
	uint32_t shown, n = 0;
	int err = gt_flat__build(&fl, a);

	if (err)
		return err;
	for (uint32_t k = 0; k < fl.n; k++)
		n += fl.f[k].incl != 0;
	shown = n < o->o->top ? n : o->o->top;
	fprintf(o->f, "\nFlat view (%s, in %s; by function, largest exclusive first)\n", a->metric_name,
		unit_label(&o->sc));
	fprintf(o->f, "  %6s %10s %6s %10s %8s  %s\n", "excl %", "excl", "incl %", "incl", "contexts", "function");
	for (uint32_t k = 0, s = 0; k < fl.n && s < shown; k++) {
		const struct gt_func *f = &fl.f[k];
		char p1[16], p2[16], v1[32], v2[32], *l;

		if (!f->incl)
			continue;
		pct(p1, sizeof(p1), (double)f->excl, (double)a->total);
		pct(p2, sizeof(p2), (double)f->incl, (double)a->total);
		val(o, v1, sizeof(v1), (double)f->excl);
		val(o, v2, sizeof(v2), (double)f->incl);
		l = label(o, f->node, GT_LABEL_NO_LINE, room(o, 48));
		fprintf(o->f, "  %6s %10s %6s %10s %8" PRIu32 "  %s\n", p1, v1, p2, v2, f->contexts, l ? l : "?");
		free(l);
		s++;
	}
	if (shown < n)
		fprintf(o->f, "  … %" PRIu32 " more functions (--top N shows N)\n", n - shown);
	gt_flat__fini(&fl);
	return 0;
}

int gt_text__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *opts)
{
	struct out o = { .f = f, .a = a, .o = opts };
	int err;

	o.sc = gt_scale__for(a->metric_unit, a->total);
	o.stats = a->run->n_merged >= 2 && a->metric != GT_METRIC_GPUOP && a->metric != GT_NONE;
	o.imp = a->G_P != 0;
	header(&o);
	importance(&o);
	processes(&o);
	imbalance(&o);
	/* What the report of each process shows, for the run as a whole. */
	err = gt_flat__write_sections(f, a, opts);
	if (err)
		return err;
	if (!a->total) {
		fprintf(f, "\nNothing was measured for %s.\n", a->metric_name);
		err = 0;
	} else if (opts->view == GT_VIEW_BOTTOM_UP) {
		err = view_bottom_up(&o);
	} else if (opts->view == GT_VIEW_FLAT) {
		err = view_flat(&o);
	} else {
		err = view_top_down(&o);
	}
	if (!err && (ferror(f) || fflush(f)))
		err = -EIO;
	return err;
}
