/* SPDX-License-Identifier: MIT */
/*
 * The blame-shifting section of the text report; see report/sections.h
 * and docs/BLAME.md. Reads the profile only, finding metrics by name.
 */
#include "report/rank.h"
#include "report/sections.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/profile.h"

#define WHERE_COLS 110 /* a calling context is shortened to about this width */
/* GPU_IDLE_CAUSE_D0 .. _D<n-1>, as the metrics table lists them. */
#define DEVICE_METRICS (GT_M_GPU_IDLE_CAUSE_D3 - GT_M_GPU_IDLE_CAUSE_D0 + 1)

/* ---- labels ---- */

struct buf {
	char s[WHERE_COLS + 256];
	size_t len;
};

static void buf__put(struct buf *b, const char *s)
{
	/* Control characters from the file are printed as '?'. */
	for (; *s && b->len + 1 < sizeof(b->s); s++)
		b->s[b->len++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	b->s[b->len] = 0;
}

__attribute__((format(printf, 2, 3))) static void buf__fmt(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= sizeof(b->s))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, sizeof(b->s) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n < sizeof(b->s) - b->len ? (size_t)n : sizeof(b->s) - b->len - 1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "function (file.c:12)", "module+0x1f", or a placeholder's or name's text. */
static void label(const struct gt_profile *p, uint32_t i, struct buf *b)
{
	const struct gt_prof_node *n = &p->nodes[i];
	const char *name = gt_profile__str(p, n->name), *file = gt_profile__str(p, n->file);
	const char *mod = n->module == GT_NONE ? NULL : gt_profile__str(p, p->modules[n->module]);

	if (!gt_pnode__is_frame(n->kind)) {
		buf__put(b, name ? name : "<unnamed>");
		return;
	}
	if (name)
		buf__put(b, name);
	else if (mod)
		buf__fmt(b, "%s+0x%" PRIx64, base_name(mod), n->offset);
	else
		buf__fmt(b, "0x%" PRIx64, n->offset);
	buf__put(b, gt_pnode__marker(n->kind));
	if (file) {
		buf__put(b, " (");
		buf__put(b, base_name(file));
		if (n->line)
			buf__fmt(b, ":%" PRIu32, n->line);
		buf__put(b, ")");
	}
}

/* The context of node @from, innermost first, cut at about WHERE_COLS. */
static void where(const struct gt_profile *p, uint32_t from, struct buf *b)
{
	b->len = 0;
	b->s[0] = 0;
	for (uint32_t v = from; v != GT_NONE && v != 0; v = p->nodes[v].parent) {
		if (b->len)
			buf__put(b, " < ");
		if (b->len > WHERE_COLS) {
			buf__put(b, "…");
			return;
		}
		label(p, v, b);
	}
	if (!b->len)
		buf__put(b, "<root>");
}

/* ---- sums ---- */

/* Exclusive per-node totals of the named metric (zeros when absent), and
 * their sum in *total. NULL when out of memory or the profile is bad. */
static uint64_t *excl_of(const struct gt_profile *p, const char *name, uint64_t *total)
{
	uint64_t *v = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*v));
	uint32_t m = gt_profile__find_metric(p, name);

	*total = 0;
	if (!v)
		return NULL;
	if (m != GT_NONE && gt_profile__metric_totals(p, m, v, NULL)) {
		free(v);
		return NULL;
	}
	for (uint32_t i = 0; i < p->n_nodes; i++)
		*total += v[i];
	return v;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- the section ---- */

/* The top contexts of one metric, by exclusive value. */
static int top_contexts(const struct gt_profile *p, FILE *f, unsigned top, const char *title,
			const uint64_t *v, uint64_t total)
{
	struct gt_ranked *rows;
	uint32_t n = 0, shown;
	struct buf b;

	if (!total)
		return 0;
	rows = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (v[i])
			rows[n++] = (struct gt_ranked){ v[i], i };
	qsort(rows, n, sizeof(*rows), gt_ranked__cmp);
	shown = n < top ? n : top;
	fprintf(f, "\n  %s (%" PRIu32 " of %" PRIu32 " contexts)\n", title, shown, n);
	fprintf(f, "  %9s %7s  %s\n", "s", "%", "context (innermost first)");
	for (uint32_t k = 0; k < shown; k++) {
		where(p, rows[k].node, &b);
		fprintf(f, "  %9.3f %6.1f%%  %s\n", secs(rows[k].key), pct(rows[k].key, total), b.s);
	}
	free(rows);
	return 0;
}

/* Each device's busy time, from run->gpu_busy = "D:NS D:NS ...". */
static void devices(const struct gt_sections_run *run, FILE *f, const uint64_t *idle_cpu)
{
	const char *s = run->gpu_busy;
	uint64_t wall = run->busy_wall_ns, busy;
	int header = 0, per_device = 0;
	unsigned long d;

	for (int k = 0; k < DEVICE_METRICS; k++)
		per_device |= idle_cpu[k] != 0;
	while (gt_device_list__next(&s, &d, &busy)) {
		if (!header) {
			fprintf(f, "\n  devices (idle: nothing executing, over the wall time of %.3f s)\n",
				secs(wall));
			fprintf(f, "  %6s %9s %9s %7s  %s\n", "device", "busy s", "idle s", "idle %",
				per_device ? "CPU while idle s (GPU_IDLE_CAUSE_D<k>)" : "");
			header = 1;
		}
		fprintf(f, "  %6lu %9.3f %9.3f", d, secs(busy), secs(wall > busy ? wall - busy : 0));
		if (wall)
			fprintf(f, " %6.1f%%", pct(wall > busy ? wall - busy : 0, wall));
		else
			fprintf(f, " %7s", "-");
		if (d < DEVICE_METRICS && idle_cpu[d])
			fprintf(f, "  %.3f", secs(idle_cpu[d]));
		fputs("\n", f);
	}
}

int gt_report__blame(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run)
{
	uint64_t *idle = NULL, *cause = NULL, *over = NULL, *gidle = NULL;
	uint64_t t_idle, t_cause, t_over, t_gidle, idle_cpu[DEVICE_METRICS] = { 0 };
	int err = -ENOMEM;

	if (!top)
		top = GT_REPORT_TOP;
	if (!(idle = excl_of(p, "CPU_IDLE", &t_idle)) ||
	    !(cause = excl_of(p, "CPU_IDLE_CAUSE", &t_cause)) ||
	    !(over = excl_of(p, "CPU_IDLE_OVERHEAD", &t_over)) ||
	    !(gidle = excl_of(p, "GPU_IDLE_CAUSE", &t_gidle)))
		goto out_free;
	for (int d = 0; d < DEVICE_METRICS; d++) {
		uint64_t *v = excl_of(p, gt_metric_descs[GT_M_GPU_IDLE_CAUSE_D0 + d].name, &idle_cpu[d]);

		if (!v)
			goto out_free;
		free(v);
	}
	err = 0;
	if (!t_idle && !t_gidle && !run->gpu_busy)
		goto out_free;

	fputs("\nBlame shifting (CPU waiting for devices, devices waiting for the CPU)\n", f);
	fprintf(f, "  %-18s %9.3f s  threads waited in syncs for devices\n", "CPU_IDLE",
		secs(t_idle));
	fprintf(f, "  %-18s %9.3f s  %5.1f%% of it while the operations they waited for ran\n",
		"CPU_IDLE_CAUSE", secs(t_cause), pct(t_cause, t_idle));
	fprintf(f, "  %-18s %9.3f s  %5.1f%% of it while none of them ran\n", "CPU_IDLE_OVERHEAD",
		secs(t_over), pct(t_over, t_idle));
	fprintf(f, "  %-18s %9.3f s  CPU time while no device had anything in flight\n",
		"GPU_IDLE_CAUSE", secs(t_gidle));
	devices(run, f, idle_cpu);
	if ((err = top_contexts(p, f, top, "where threads waited: CPU_IDLE at the sync call sites",
				idle, t_idle)) ||
	    (err = top_contexts(p, f, top,
				"what they waited for: CPU_IDLE_CAUSE at the launch sites", cause,
				t_cause)) ||
	    (err = top_contexts(p, f, top,
				"what ran on the CPU while the devices were idle: GPU_IDLE_CAUSE",
				gidle, t_gidle)))
		goto out_free;
out_free:
	free(gidle);
	free(over);
	free(cause);
	free(idle);
	return err;
}
