/* SPDX-License-Identifier: MIT */
/*
 * The GPU sections of the text report; see report/sections.h. Like
 * sections.c, everything here reads the profile only and finds metrics by
 * class or name, so that a profile without them simply has no such section.
 */
#include "report/sections.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "core/text.h"
#include "report/paths.h"
#include "report/ptree.h"


/* ---- per-node sums ---- */

/* Adds the exclusive totals of the named metric into sum[]. */
static int add_metric(const struct gt_profile *p, const char *name, uint64_t *sum)
{
	uint64_t *v = gt_ptree__excl(p, name);

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		sum[i] += v[i];
	free(v);
	return 0;
}

/* The same for each of names (NULL-terminated). */
static int add_metrics(const struct gt_profile *p, const char *const *names, uint64_t *sum)
{
	for (; *names; names++)
		if (add_metric(p, *names, sum))
			return -ENOMEM;
	return 0;
}

/* The same for every metric of class cls. */
static int add_class(const struct gt_profile *p, enum gt_metric_class cls, uint64_t *sum)
{
	for (uint32_t m = 0; m < p->n_metrics; m++)
		if (p->metrics[m].cls == cls && add_metric(p, gt_profile__str(p, p->metrics[m].name), sum))
			return -ENOMEM;
	return 0;
}

/* ---- ranking ---- */

struct row {
	uint64_t key, key2;
	uint32_t node;
};

static int by_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 > y->key2 ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* Nodes where key[], key2[] or alt[] is nonzero, by key, then key2, then
 * index; key2 and alt may be NULL. */
static struct row *ranked(const struct gt_profile *p, const uint64_t *key, const uint64_t *key2,
			  const uint64_t *alt, uint32_t *n)
{
	struct row *r = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*r));

	*n = 0;
	if (!r)
		return NULL;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (key[i] || (key2 && key2[i]) || (alt && alt[i]))
			r[(*n)++] = (struct row){ .key = key[i], .key2 = key2 ? key2[i] : 0, .node = i };
	qsort(r, *n, sizeof(*r), by_key);
	return r;
}

/* A section's rows: ranked() by @key, and how many to show, at most @top. */
static int section_rows(const struct gt_profile *p, const uint64_t *key, unsigned top, struct row **rows,
			uint32_t *nr, uint32_t *shown)
{
	if (!(*rows = ranked(p, key, NULL, NULL, nr)))
		return -ENOMEM;
	*shown = *nr < top ? *nr : top;
	return 0;
}

/* ---- GPU operations ---- */

/* Time on the device (class device); time of the host waiting for it,
 * compiling for it or allocating and releasing its memory (class gpu_host:
 * a cudaMalloc that creates the context is the host's time, however long). */
static const char *const count_metrics[] = {
	"GKER_COUNT",	      "GXCOPY_H2D_COUNT", "GXCOPY_D2H_COUNT", "GXCOPY_D2D_COUNT", "GXCOPY_OTHER_COUNT",
	"GMSET_COUNT",	      "GMEM_COUNT",	  "GSYNC_COUNT",      "GJIT_COUNT",	  NULL,
};
static const char *const byte_metrics[] = {
	"GXCOPY_H2D_BYTES", "GXCOPY_D2H_BYTES", "GXCOPY_D2D_BYTES", "GXCOPY_OTHER_BYTES", "GMSET_BYTES", NULL,
};

/* The columns of a GPU operation's row before its operation, and the
 * operation's column: at least OP_COLS, as wide as the longest shown up to
 * OP_COLS_MAX (a longer one pushes its own row's context right). */
#define GPU_ROW_COLS (2 + 10 + 1 + 6 + 1 + 10 + 1 + 9 + 1 + 10 + 2)
#define OP_COLS 24
#define OP_COLS_MAX 48

/* A row's operation ("kernel name", "<gpu sync>") into what[], and the node
 * whose context is its "where": a kernel's launch site, else the node above
 * the operation. */
static uint32_t gpu_op(const struct gt_profile *p, uint32_t i, char *what, size_t cap)
{
	uint32_t parent = p->nodes[i].parent;
	size_t len = 0;

	what[0] = 0;
	if (p->nodes[i].kind == GT_PNODE_NAME && parent != GT_NONE) {
		/* A kernel: "kernel name", at the site of its <gpu kernel>;
		 * another named operation (a peer copy's devices) after its
		 * placeholder. */
		const char *ph = gt_profile__str(p, p->nodes[parent].name);

		if (ph && !strcmp(ph, "<gpu kernel>")) {
			gt_ptree__put(what, cap, &len, "kernel ");
		} else {
			gt_ptree__label(p, parent, what, cap, &len);
			gt_ptree__put(what, cap, &len, " ");
		}
		gt_ptree__label(p, i, what, cap, &len);
		return p->nodes[parent].parent;
	}
	gt_ptree__label(p, i, what, cap, &len);
	return parent;
}

static int section_gpu(const struct gt_profile *p, FILE *f, unsigned top, unsigned width)
{
	size_t n = p->n_nodes ? p->n_nodes : 1;
	uint64_t *time = calloc(n, sizeof(*time)), *host = calloc(n, sizeof(*host));
	uint64_t *count = calloc(n, sizeof(*count)), *bytes = calloc(n, sizeof(*bytes)), total = 0;
	struct row *rows = NULL;
	uint32_t nr = 0, shown, *sites = NULL, on_host = 0;
	size_t op_cols = OP_COLS;
	char **where = NULL;
	int err = -ENOMEM;
	char what[256];

	if (!time || !host || !count || !bytes || add_class(p, GT_MC_DEVICE, time) ||
	    add_class(p, GT_MC_GPU_HOST, host) || add_metrics(p, count_metrics, count) ||
	    add_metrics(p, byte_metrics, bytes) || !(rows = ranked(p, time, host, count, &nr)))
		goto out_free;
	err = 0;
	if (!nr)
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		total += time[i];
	shown = nr < top ? nr : top;
	/* The contexts of all shown rows are built together at the width left
	 * after the columns, so that rows whose sites differ only in a frame
	 * a shortened context would drop still read apart (report/paths.h). */
	err = -ENOMEM;
	if (!(sites = malloc((shown ? shown : 1) * sizeof(*sites))) || !(where = calloc(shown ? shown : 1, sizeof(*where))))
		goto out_free;
	for (uint32_t k = 0; k < shown; k++) {
		size_t c;

		sites[k] = gpu_op(p, rows[k].node, what, sizeof(what));
		c = gt_cols(what);
		if (c > op_cols)
			op_cols = c < OP_COLS_MAX ? c : OP_COLS_MAX;
	}
	{
		const size_t used = GPU_ROW_COLS + op_cols + 1;
		const struct gt_paths_opts o = { .width = width > used + 20 ? width - used : 20, .leaf_first = 1 };

		if (gt_paths__build(p, sites, shown, &o, where))
			goto out_free;
	}
	err = 0;
	/* Operations offloaded to the host device ran on this CPU: their
	 * section says so, and names them without "gpu". */
	for (uint32_t k = 0; k < shown; k++)
		on_host += gt_ptree__on_host(p, rows[k].node);
	if (shown && on_host == shown)
		fprintf(f, "\nOffloaded operations (%" PRIu32 " of %" PRIu32 " contexts; by time; offloaded to the host"
			   " device, they ran on this CPU)\n",
			shown, nr);
	else
		fprintf(f, "\nGPU operations (%" PRIu32 " of %" PRIu32 " contexts; by device time, then host time waiting"
			   " or compiling)\n",
			shown, nr);
	fprintf(f, "  %10s %6s %10s %9s %10s  %-*s %s\n", on_host == shown ? "time s" : "device s", "%", "host s",
		"count", "MB", (int)op_cols, "operation", "where (innermost first)");
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = rows[k].node;
		char pct[16];

		gpu_op(p, i, what, sizeof(what));
		if (gt_ptree__on_host(p, i) && !strncmp(what, "<gpu ", 5))
			memmove(what + 1, what + 5, strlen(what + 5) + 1);
		if (total && time[i])
			snprintf(pct, sizeof(pct), "%.1f%%", 100.0 * (double)time[i] / (double)total);
		else
			snprintf(pct, sizeof(pct), "-");
		fprintf(f, "  %10.6f %6s %10.6f %9" PRIu64 " %10.3f  %s%*s %s\n", (double)time[i] / 1e9, pct,
			(double)host[i] / 1e9, count[i], (double)bytes[i] / 1e6, what,
			(int)(op_cols > gt_cols(what) ? op_cols - gt_cols(what) : 0), "", where[k]);
	}
	gt_paths__free(where, shown);
out_free:
	free(where);
	free(sites);
	free(rows);
	free(bytes);
	free(count);
	free(host);
	free(time);
	return err;
}

/* ---- GPU source lines: PC samples ---- */

static const char *const pc_metrics[] = {
	"GPC_MEMORY", "GPC_EXEC", "GPC_CONTROL", "GPC_SYNC", "GPC_ISSUED", "GPC_NOT_SELECTED", "GPC_OTHER",
};
static const char *const pc_labels[] = { "memory", "exec", "control", "sync", "issued", "not sel", "other" };
#define PC_CLASSES (sizeof(pc_metrics) / sizeof(pc_metrics[0]))

/* Under a ranked GPU line or loop: the GPU context it is in, then its
 * kernel and the kernel's launch site. */
static void put_gpu_where(const struct gt_profile *p, FILE *f, uint32_t i)
{
	char path[GT_PTREE_WHERE_COLS + 512], ctx[GT_PTREE_WHERE_COLS + 512], what[256];
	uint32_t kernel = gt_ptree__kernel_of(p, i, path, sizeof(path)), site;
	size_t len = 0;

	if (kernel == GT_NONE)
		return;
	if (path[0])
		fprintf(f, "      in %s\n", path);
	what[0] = 0;
	gt_ptree__label(p, kernel, what, sizeof(what), &len);
	site = p->nodes[kernel].parent;
	if (site != GT_NONE)
		site = p->nodes[site].parent;
	gt_ptree__where(p, site, ctx, sizeof(ctx));
	fprintf(f, "      kernel %s < %s\n", what, ctx);
}

/* One row: samples, their share of @total, what the warps waited for. */
static void put_pc_row(const struct gt_profile *p, FILE *f, uint32_t i, uint64_t n, uint64_t total,
		       uint64_t *const *cls)
{
	char what[256];
	size_t len = 0;

	/* A count of samples is Poisson: its relative error is 1/sqrt(n). */
	fprintf(f, "  %9" PRIu64 " %5.1f%% %5.1f%%", n, total ? 100.0 * (double)n / (double)total : 0.0,
		n ? 100.0 / sqrt((double)n) : 100.0);
	for (size_t c = 0; c < PC_CLASSES; c++)
		fprintf(f, " %6.1f%%", n ? 100.0 * (double)cls[c][i] / (double)n : 0.0);
	what[0] = 0;
	gt_ptree__label(p, i, what, sizeof(what), &len);
	fprintf(f, "  %s\n", what);
	put_gpu_where(p, f, i);
}

static void put_pc_header(FILE *f, const char *what)
{
	fprintf(f, "  %9s %6s %6s", "samples", "%", "noise");
	for (size_t c = 0; c < PC_CLASSES; c++)
		fprintf(f, " %7s", pc_labels[c]);
	fprintf(f, "  %s\n", what);
}

/* The hottest kernel source lines by PC samples (GPUTOOL_PC_SAMPLING), with
 * what their warps waited for; under each, its GPU calling context (loops,
 * call sites and GPU functions), its kernel and launch site. */
static int section_gpu_lines(const struct gt_profile *p, FILE *f, unsigned top)
{
	uint64_t *samples = gt_ptree__excl(p, "GPC_SAMPLES"), *cls[PC_CLASSES] = { 0 }, total = 0;
	struct row *rows = NULL;
	uint32_t nr = 0, shown;
	int err = -ENOMEM;

	for (size_t c = 0; c < PC_CLASSES; c++)
		if (!(cls[c] = gt_ptree__excl(p, pc_metrics[c])))
			goto out_free;
	if (!samples || (err = section_rows(p, samples, top, &rows, &nr, &shown)) || !nr)
		goto out_free;
	for (uint32_t k = 0; k < nr; k++)
		total += rows[k].key;
	fprintf(f, "\nGPU source lines (PC samples: %" PRIu32 " of %" PRIu32 " lines, by samples, with their noise,"
		   " 1/sqrt(samples); what the warps sampled there waited for, in %% of the line's samples; under each, its GPU calling context,"
		   " kernel and launch site)\n",
		shown, nr);
	put_pc_header(f, "line");
	for (uint32_t k = 0; k < shown; k++)
		put_pc_row(p, f, rows[k].node, samples[rows[k].node], total, cls);
out_free:
	free(rows);
	for (size_t c = 0; c < PC_CLASSES; c++)
		free(cls[c]);
	free(samples);
	return err;
}

/* The kernel source lines that executed the most warp instructions
 * (GPUTOOL_SASS_COUNTS), with their thread efficiency: the share of a
 * full warp's 32 threads active at their instructions; under each, its GPU
 * calling context, kernel and launch site. */
static int section_gpu_counts(const struct gt_profile *p, FILE *f, unsigned top)
{
	uint64_t *inst = gt_ptree__excl(p, "GSC_INST"), *threads = gt_ptree__excl(p, "GSC_THREAD_INST"), total = 0;
	struct row *rows = NULL;
	uint32_t nr = 0, shown;
	int err = -ENOMEM;

	if (!inst || !threads || (err = section_rows(p, inst, top, &rows, &nr, &shown)) || !nr)
		goto out_free;
	for (uint32_t k = 0; k < nr; k++)
		total += rows[k].key;
	fprintf(f, "\nGPU source lines (instruction counts: %" PRIu32 " of %" PRIu32 " lines, by warp instructions"
		   " executed; thread efficiency: the share of a warp's 32 threads active at them)\n",
		shown, nr);
	fprintf(f, "  %14s %6s %10s  %s\n", "warp instr", "%", "efficiency", "line");
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = rows[k].node;
		char what[256];
		size_t len = 0;

		what[0] = 0;
		gt_ptree__label(p, i, what, sizeof(what), &len);
		fprintf(f, "  %14" PRIu64 " %5.1f%% %9.1f%%  %s\n", inst[i],
			total ? 100.0 * (double)inst[i] / (double)total : 0.0,
			100.0 * (double)threads[i] / (32.0 * (double)inst[i]), what);
		put_gpu_where(p, f, i);
	}
out_free:
	free(rows);
	free(inst);
	free(threads);
	return err;
}

/* The hottest GPU loops (nodes "loop at file:line", recovered from the
 * kernels' control flow), by their inclusive samples. */
static int section_gpu_loops(const struct gt_profile *p, FILE *f, unsigned top)
{
	uint64_t *samples = gt_ptree__incl(p, "GPC_SAMPLES"), *all = gt_ptree__excl(p, "GPC_SAMPLES"), *cls[PC_CLASSES] = { 0 };
	uint64_t total = 0;
	struct row *rows = NULL;
	uint32_t nr = 0, shown;
	int err = -ENOMEM;

	for (size_t c = 0; c < PC_CLASSES; c++)
		if (!(cls[c] = gt_ptree__incl(p, pc_metrics[c])))
			goto out_free;
	if (!samples || !all)
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const char *name = gt_profile__str(p, p->nodes[i].name);

		total += all[i];
		if (p->nodes[i].kind != GT_PNODE_NAME || !name || strncmp(name, GT_GPU_NODE_LOOP, strlen(GT_GPU_NODE_LOOP)))
			samples[i] = 0;
	}
	if ((err = section_rows(p, samples, top, &rows, &nr, &shown)) || !nr)
		goto out_free;
	fprintf(f, "\nGPU loops (PC samples: %" PRIu32 " of %" PRIu32 " loops, by the samples of all they hold, in %%"
		   " of every PC sample, with their noise; what the warps waited for, in %% of the loop's samples)\n",
		shown, nr);
	put_pc_header(f, "loop");
	for (uint32_t k = 0; k < shown; k++)
		put_pc_row(p, f, rows[k].node, samples[rows[k].node], total, cls);
out_free:
	free(rows);
	for (size_t c = 0; c < PC_CLASSES; c++)
		free(cls[c]);
	free(samples);
	free(all);
	return err;
}

/* The instruction classes of the GPI_* metrics (core/metrics.h). */
static const char *const gpi_metrics[] = {
#define X(A, id, name, desc) "GPI_" #id,
	GT_GPU_INSN_CLASSES(X, _)
#undef X
};
static const char *const gpi_names[] = {
#define X(A, id, name, desc) name,
	GT_GPU_INSN_CLASSES(X, _)
#undef X
};
#define GPI_CLASSES (sizeof(gpi_metrics) / sizeof(gpi_metrics[0]))

/* Under a kernel context: its issued samples by instruction class, largest
 * first, each with its share and its estimated instructions (I_t). */
static void put_mix(FILE *f, uint64_t *const *mix, uint32_t i, double I)
{
	uint64_t total = 0;
	uint8_t done[GPI_CLASSES] = { 0 };
	int first = 1;

	for (size_t c = 0; c < GPI_CLASSES; c++)
		total += mix[c][i];
	if (!total)
		return;
	fputs("      issued:", f);
	for (;;) {
		size_t best = GPI_CLASSES;

		for (size_t c = 0; c < GPI_CLASSES; c++)
			if (!done[c] && mix[c][i] && (best == GPI_CLASSES || mix[c][i] > mix[best][i]))
				best = c;
		if (best == GPI_CLASSES)
			break;
		done[best] = 1;
		fprintf(f, "%s %s %.1f%%", first ? "" : ",", gpi_names[best], 100.0 * (double)mix[best][i] / (double)total);
		if (I > 0)
			fprintf(f, " (%.3g)", I * (double)mix[best][i] / (double)total);
		first = 0;
	}
	fputc('\n', f);
}

/*
 * How much of the kernels' time the samples cover, once PC sampling's
 * hardware buffer filled (CUPTI keeps a run's samples in it to the end, and
 * takes none once it is full): the samples s of the kernel nodes against
 * what a sample per SM every period of their GPU time t would give, and the
 * period that would have kept them all, with a quarter to spare. A whole
 * run reads 85-100 % (SMs idle in a kernel's tail take no samples), so the
 * line is printed only when the buffer filled.
 */
static void pc_coverage(FILE *f, const uint64_t *s, const uint64_t *t, uint32_t n, const struct gt_sections_run *run)
{
	double kept = 0, ns = 0, want, cover;
	uint32_t exponent, k = 0;

	if (!run || !run->pc_buffer_full || !run->pc_period || !run->pc_clock_khz || !run->pc_sms)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (!t[i])
			continue;
		kept += (double)s[i];
		ns += (double)t[i];
	}
	want = ns * 1e-9 * (double)run->pc_clock_khz * 1e3 * (double)run->pc_sms / (double)run->pc_period;
	if (want <= 0 || kept <= 0)
		return;
	cover = kept / want;
	exponent = 63 - (uint32_t)__builtin_clzll(run->pc_period); /* a power of two (2^5 to 2^31) */
	while (exponent + k < 31 && (double)(1ull << k) < 1.25 / cover)
		k++;
	fprintf(f, "  the hardware buffer filled: the samples cover about %.1f%% of the kernels' %.3f GPU s; the "
		   "kernels after it have none\n",
		100.0 * (cover < 1 ? cover : 1), ns * 1e-9);
	if (k)
		fprintf(f, "  GPUTOOL_PC_SAMPLING=%u (a sample every %llu cycles) keeps a run like this one whole\n",
			exponent + k, 1ull << (exponent + k));
}

/*
 * Per kernel context (the kernel's node under its launch site), what its PC
 * samples say of the whole kernel (HPCToolkit ICS'20, equations 4-9): S samples, S_L
 * of them latency samples (no warp of the scheduler issued), S_I issued,
 * S_N eligible but not selected; W warp schedulers per SM.
 *   warp issue rate  W_R = (S - S_L) / S   (a scheduler's cycles that issue)
 *   IPC              W_R x W               (warp instructions per SM cycle)
 *   eligible rate    E = (S_I + S_N) / S
 *   SM busy rate     B = 1 - (1 - E)^W
 *   GPU active rate  A = S / (clock x T / period x SMs)   (T: its GPU time)
 *   instructions     I = (S - S_L) x W x period   (equation 10 with the IPC:
 *                    each sample stands for period cycles of one SM, in
 *                    which its W schedulers issued W_R x W x period)
 *   per class t      I_t = I x S_It / S_I   (equation 11; S_It: the issued
 *                    samples of class t's instructions, the GPI_* metrics)
 */
static int section_gpu_derived(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run)
{
	uint64_t *s = gt_ptree__incl(p, "GPC_SAMPLES"), *lat = gt_ptree__incl(p, "GPC_LATENCY"), *iss = gt_ptree__incl(p, "GPC_ISSUED");
	uint64_t *ns = gt_ptree__incl(p, "GPC_NOT_SELECTED"), *t = gt_ptree__excl(p, "GKER"), *mix[GPI_CLASSES] = { 0 };
	double w = run && run->pc_schedulers ? (double)run->pc_schedulers : 4.0;
	struct row *rows = NULL;
	uint32_t nr = 0, shown;
	int err = -ENOMEM;
	char ctx[GT_PTREE_WHERE_COLS + 512], what[256];

	if (!s || !lat || !iss || !ns || !t)
		goto out_free;
	for (size_t c = 0; c < GPI_CLASSES; c++)
		if (!(mix[c] = gt_ptree__incl(p, gpi_metrics[c])))
			goto out_free;
	/* Kernel nodes only: their lines hold the samples, they hold the time. */
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (!t[i])
			s[i] = 0;
	if ((err = section_rows(p, s, top, &rows, &nr, &shown)) || !nr)
		goto out_free;
	fprintf(f, "\nGPU kernels by PC samples (%" PRIu32 " of %" PRIu32 " kernel contexts; rates derived from the samples"
		   " over the whole kernel, %.0f warp schedulers per SM)\n",
		shown, nr, w);
	pc_coverage(f, s, t, p->n_nodes, run);
	fprintf(f, "  %9s %10s %7s %6s %8s %7s %7s %9s  %s\n", "samples", "GPU s", "issue", "IPC", "eligible", "SM busy",
		"active", "instr", "kernel < launch site (under it: the issued instructions by class)");
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = rows[k].node, site = p->nodes[i].parent;
		double S = (double)s[i], wr = (S - (double)lat[i]) / S, e = (double)(iss[i] + ns[i]) / S;
		char active[16] = "-", instr[16] = "-";
		double I = 0;
		size_t len = 0;

		if (run && run->pc_period) {
			I = (S - (double)lat[i]) * w * (double)run->pc_period;
			snprintf(instr, sizeof(instr), "%.3g", I);
		}
		if (run && run->pc_period && run->pc_clock_khz && run->pc_sms)
			snprintf(active, sizeof(active), "%.1f%%",
				 100.0 * S * (double)run->pc_period * 1e6 /
					 ((double)run->pc_clock_khz * (double)t[i] * (double)run->pc_sms));
		what[0] = 0;
		gt_ptree__label(p, i, what, sizeof(what), &len);
		if (site != GT_NONE)
			site = p->nodes[site].parent;
		gt_ptree__where(p, site, ctx, sizeof(ctx));
		fprintf(f, "  %9" PRIu64 " %10.6f %6.1f%% %6.2f %7.1f%% %6.1f%% %7s %9s  %s < %s\n", s[i],
			(double)t[i] / 1e9, 100.0 * wr, wr * w, 100.0 * e, 100.0 * (1.0 - pow(1.0 - e, w)), active, instr,
			what, ctx);
		put_mix(f, mix, i, I);
	}
out_free:
	free(rows);
	free(t);
	free(ns);
	free(iss);
	free(lat);
	free(s);
	for (size_t c = 0; c < GPI_CLASSES; c++)
		free(mix[c]);
	return err;
}

/* ---- GPU stall trees ---- */

static const struct {
	const char *metric, *cls, *what;
} stall_reasons[] = {
#define X(A, id, cls, desc) { "GPS_" #id, "GPC_" #cls, desc },
	GT_GPU_STALL_REASONS(X, _)
#undef X
};
#define STALL_REASONS (sizeof(stall_reasons) / sizeof(stall_reasons[0]))

/* What to try, per stall reason (after NVIDIA's guidance, DRGPU and GPA). */
static const struct {
	const char *metric, *advice;
} stall_advice[] = {
	{ "GPS_LONG_SCOREBOARD", "coalesce the loads, reuse data through registers or shared memory, keep more warps "
				 "resident to hide the latency; on local memory, cut the registers spilled" },
	{ "GPS_SHORT_SCOREBOARD", "avoid shared-memory bank conflicts; fewer special-function (MUFU) operations" },
	{ "GPS_LG_THROTTLE", "fewer, wider global or local memory instructions (vector loads); no spills" },
	{ "GPS_TEX_THROTTLE", "fewer texture or surface fetches, spread among the other work" },
	{ "GPS_MIO_THROTTLE", "fewer, wider shared-memory accesses; fewer special-function operations" },
	{ "GPS_DRAIN", "fewer, wider stores at the kernel's end" },
	{ "GPS_WAIT", "more independent instructions between a result and its use: unroll, interleave "
		      "independent work, keep more warps resident" },
	{ "GPS_MATH_PIPE", "balance the instruction mix: single instead of double precision, fewer conversions" },
	{ "GPS_DISPATCH", "fewer divergent paths and register bank conflicts" },
	{ "GPS_BRANCH", "less divergence: uniform conditions per warp, selects instead of branches" },
	{ "GPS_NO_INSTRUCTIONS", "a smaller hot path: less unrolling and inlining, fewer jumps" },
	{ "GPS_IMC_MISS", "constants used alike by a warp; per-thread indexed tables in global memory" },
	{ "GPS_BARRIER", "balance the work of a block's warps; smaller blocks; __syncwarp where a warp suffices" },
	{ "GPS_MEMBAR", "fewer memory fences, of narrower scope (__threadfence_block)" },
	{ "GPS_WARPGROUP", "overlap warpgroup operations with other work" },
	{ "GPS_SLEEPING", "shorter sleeps, less spinning" },
};

static const char *stall_advice_of(const char *metric)
{
	for (size_t i = 0; i < sizeof(stall_advice) / sizeof(stall_advice[0]); i++)
		if (!strcmp(stall_advice[i].metric, metric))
			return stall_advice[i].advice;
	return NULL;
}

/*
 * Per kernel context, from the top (DRGPU's top-down tree, from the PC
 * samples alone): the share of its samples that issued, that could have,
 * and that stalled, by class, then by reason; under each reason its hottest
 * line, where that line is in the kernel, and what to try.
 */
static int section_gpu_stall_trees(const struct gt_profile *p, FILE *f, unsigned top)
{
	uint64_t *s = gt_ptree__incl(p, "GPC_SAMPLES"), *t = gt_ptree__excl(p, "GKER"), *iss = gt_ptree__incl(p, "GPC_ISSUED");
	uint64_t *ns = gt_ptree__incl(p, "GPC_NOT_SELECTED"), *cls[PC_CLASSES] = { 0 }, *r_incl[STALL_REASONS] = { 0 };
	uint64_t *r_excl[STALL_REASONS] = { 0 };
	uint32_t *kern = NULL, nr = 0, shown;
	struct row *rows = NULL;
	char ctx[GT_PTREE_WHERE_COLS + 512], what[256], path[GT_PTREE_WHERE_COLS + 512];
	int err = -ENOMEM;

	if (!s || !t || !iss || !ns || !(kern = gt_ptree__kernels(p)))
		goto out_free;
	for (size_t c = 0; c < PC_CLASSES; c++)
		if (!(cls[c] = gt_ptree__incl(p, pc_metrics[c])))
			goto out_free;
	for (size_t r = 0; r < STALL_REASONS; r++)
		if (!(r_incl[r] = gt_ptree__incl(p, stall_reasons[r].metric)) || !(r_excl[r] = gt_ptree__excl(p, stall_reasons[r].metric)))
			goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (!t[i] || kern[i] != i)
			s[i] = 0;
	if ((err = section_rows(p, s, top, &rows, &nr, &shown)) || !nr)
		goto out_free;
	if (shown > 5)
		shown = 5;
	fprintf(f, "\nGPU stall trees (%" PRIu32 " of %" PRIu32 " kernel contexts, from the top: what the sampled warps"
		   " did, in %% of the kernel's samples; under each stall reason over 1%%, its hottest line and what to"
		   " try)\n",
		shown, nr);
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = rows[k].node, site = p->nodes[i].parent;
		double S = (double)s[i];
		size_t len = 0;

		what[0] = 0;
		gt_ptree__label(p, i, what, sizeof(what), &len);
		if (site != GT_NONE)
			site = p->nodes[site].parent;
		gt_ptree__where(p, site, ctx, sizeof(ctx));
		fprintf(f, "  %s < %s: %" PRIu64 " samples\n", what, ctx, s[i]);
		fprintf(f, "    %5.1f%% issued, %5.1f%% could issue (not selected), %5.1f%% stalled\n",
			100.0 * (double)iss[i] / S, 100.0 * (double)ns[i] / S,
			100.0 * (S - (double)iss[i] - (double)ns[i]) / S);
		for (size_t c = 0; c < PC_CLASSES; c++) {
			if (!strcmp(pc_metrics[c], "GPC_ISSUED") || !strcmp(pc_metrics[c], "GPC_NOT_SELECTED") ||
			    (double)cls[c][i] < 0.01 * S)
				continue;
			fprintf(f, "    %5.1f%% %s\n", 100.0 * (double)cls[c][i] / S, pc_labels[c]);
			for (size_t r = 0; r < STALL_REASONS; r++) {
				uint32_t hot = GT_NONE;
				const char *advice = stall_advice_of(stall_reasons[r].metric);

				if (strcmp(stall_reasons[r].cls, pc_metrics[c]) || (double)r_incl[r][i] < 0.01 * S)
					continue;
				for (uint32_t j = 0; j < p->n_nodes; j++)
					if (kern[j] == i && r_excl[r][j] && (hot == GT_NONE || r_excl[r][j] > r_excl[r][hot]))
						hot = j;
				fprintf(f, "      %5.1f%% waiting for %s\n", 100.0 * (double)r_incl[r][i] / S,
					stall_reasons[r].what);
				if (hot != GT_NONE) {
					len = 0;
					what[0] = 0;
					gt_ptree__label(p, hot, what, sizeof(what), &len);
					gt_ptree__kernel_of(p, hot, path, sizeof(path));
					fprintf(f, "             hottest: %s (%.1f%% of it)%s%s\n", what,
						100.0 * (double)r_excl[r][hot] / (double)r_incl[r][i], path[0] ? " in " : "",
						path);
				}
				if (advice)
					fprintf(f, "             try: %s\n", advice);
			}
		}
	}
out_free:
	free(rows);
	free(kern);
	for (size_t c = 0; c < PC_CLASSES; c++)
		free(cls[c]);
	for (size_t r = 0; r < STALL_REASONS; r++) {
		free(r_incl[r]);
		free(r_excl[r]);
	}
	free(ns);
	free(iss);
	free(t);
	free(s);
	return err;
}

/* ---- GPU stalls by their cause (the instruction blamer) ---- */

static const char *const blame_metrics[] = {
#define X(A, id, desc) "GPB_" #id,
	GT_GPU_BLAME_KINDS(X, _)
#undef X
};
static const char *const blame_labels[] = { "global", "local", "shared", "sfu", "convert", "arith", "other", "self" };
#define BLAME_KINDS (sizeof(blame_metrics) / sizeof(blame_metrics[0]))

/* The lines whose instructions other instructions waited for, by the
 * dependency stalls moved to them (GPB_*, docs/CUDA.md); SELF, the waits
 * with no producer found, is shown but does not rank. */
static int section_gpu_blame(const struct gt_profile *p, FILE *f, unsigned top)
{
	uint64_t *v[BLAME_KINDS] = { 0 }, *key = NULL, total = 0;
	struct row *rows = NULL;
	uint32_t nr = 0, shown;
	int err = -ENOMEM;
	char what[256];

	_Static_assert(sizeof(blame_labels) / sizeof(blame_labels[0]) == BLAME_KINDS, "a label per kind");
	for (size_t b = 0; b < BLAME_KINDS; b++)
		if (!(v[b] = gt_ptree__excl(p, blame_metrics[b])))
			goto out_free;
	if (!(key = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*key))))
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		for (size_t b = 0; b < BLAME_KINDS; b++) {
			total += v[b][i];
			if (strcmp(blame_metrics[b], "GPB_SELF"))
				key[i] += v[b][i];
		}
	if ((err = section_rows(p, key, top, &rows, &nr, &shown)) || !nr || !total)
		goto out_free;
	fprintf(f, "\nGPU stalls by their cause (%" PRIu32 " of %" PRIu32 " lines: the samples of warps waiting for a"
		   " result, moved to the line that produces it, in %% of all such samples; by what it is)\n",
		shown, nr);
	fprintf(f, "  %9s %6s %6s", "samples", "%", "noise");
	for (size_t b = 0; b < BLAME_KINDS; b++)
		if (strcmp(blame_metrics[b], "GPB_SELF"))
			fprintf(f, " %7s", blame_labels[b]);
	fprintf(f, "  line\n");
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = rows[k].node;
		size_t len = 0;

		fprintf(f, "  %9" PRIu64 " %5.1f%%", key[i], 100.0 * (double)key[i] / (double)total);
		for (size_t b = 0; b < BLAME_KINDS; b++)
			if (strcmp(blame_metrics[b], "GPB_SELF"))
				fprintf(f, " %6.1f%%", 100.0 * (double)v[b][i] / (double)key[i]);
		what[0] = 0;
		gt_ptree__label(p, i, what, sizeof(what), &len);
		fprintf(f, "  %s\n", what);
		put_gpu_where(p, f, i);
	}
out_free:
	free(rows);
	free(key);
	for (size_t b = 0; b < BLAME_KINDS; b++)
		free(v[b]);
	return err;
}

int gt_report__gpu_sections(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run)
{
	int err;

	if (!top)
		top = GT_REPORT_TOP;
	err = section_gpu(p, f, top, run && run->width ? run->width : GT_PATHS_WIDTH);
	if (!err)
		err = section_gpu_lines(p, f, top);
	if (!err)
		err = section_gpu_counts(p, f, top);
	if (!err)
		err = section_gpu_loops(p, f, top);
	if (!err)
		err = section_gpu_derived(p, f, top, run);
	if (!err)
		err = section_gpu_stall_trees(p, f, top);
	return err ? err : section_gpu_blame(p, f, top);
}
