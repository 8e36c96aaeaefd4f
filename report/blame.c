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
#include "core/text.h"
#include "report/paths.h"
#include "report/ptree.h"

/* GPU_IDLE_CAUSE_D0 .. _D<n-1>, as the metrics table lists them. */
#define DEVICE_METRICS (GT_M_GPU_IDLE_CAUSE_D3 - GT_M_GPU_IDLE_CAUSE_D0 + 1)
#define ROW_COLS 21 /* "  %9.3f %6.1f%%  " before a row's context */

/* ---- sums ---- */

uint64_t *gt_report__excl_of(const struct gt_profile *p, const char *name, uint64_t *total)
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

int gt_report__top_contexts(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run,
			const char *title, const uint64_t *v, uint64_t total)
{
	unsigned width = run->width ? run->width : GT_PATHS_WIDTH;
	struct gt_paths_opts po = { .width = width > ROW_COLS + 20 ? width - ROW_COLS : 20, .leaf_first = 1,
				    .label_flags = run->signatures ? 0 : GT_LABEL_ELIDE_ARGS };
	struct gt_ranked *rows;
	uint32_t n = 0, shown, *nodes;
	char **where;
	int err;

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
	nodes = malloc((shown ? shown : 1) * sizeof(*nodes));
	where = calloc(shown ? shown : 1, sizeof(*where));
	err = nodes && where ? 0 : -ENOMEM;
	for (uint32_t k = 0; k < shown && !err; k++)
		nodes[k] = rows[k].node;
	if (!err)
		err = gt_paths__build(p, nodes, shown, &po, where);
	if (!err) {
		fprintf(f, "\n  %s (%" PRIu32 " of %" PRIu32 " contexts)\n", title, shown, n);
		fprintf(f, "  %9s %7s  %s\n", "s", "%", "context (innermost first)");
		for (uint32_t k = 0; k < shown; k++)
			fprintf(f, "  %9.3f %6.1f%%  %s\n", secs(rows[k].key), pct(rows[k].key, total), where[k]);
		gt_paths__free(where, shown);
	}
	free(where);
	free(nodes);
	free(rows);
	return err;
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
	if (!(idle = gt_report__excl_of(p, "CPU_IDLE", &t_idle)) ||
	    !(cause = gt_report__excl_of(p, "CPU_IDLE_CAUSE", &t_cause)) ||
	    !(over = gt_report__excl_of(p, "CPU_IDLE_OVERHEAD", &t_over)) ||
	    !(gidle = gt_report__excl_of(p, "GPU_IDLE_CAUSE", &t_gidle)))
		goto out_free;
	for (int d = 0; d < DEVICE_METRICS; d++) {
		uint64_t *v = gt_report__excl_of(p, gt_metric_descs[GT_M_GPU_IDLE_CAUSE_D0 + d].name, &idle_cpu[d]);

		if (!v)
			goto out_free;
		free(v);
	}
	err = 0;
	if (!t_idle && !t_gidle && !run->gpu_busy)
		goto out_free;
	/* Offloaded to the host device only: the kernels ran on the threads
	 * that would wait for them, and no device sat idle (I_G leaves them
	 * out too, report/derive.c). */
	if (!gt_ptree__device_time(p))
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
	if ((err = gt_report__top_contexts(p, f, top, run, "where threads waited: CPU_IDLE at the sync call sites",
				idle, t_idle)) ||
	    (err = gt_report__top_contexts(p, f, top, run,
				"what they waited for: CPU_IDLE_CAUSE at the launch sites", cause,
				t_cause)) ||
	    (err = gt_report__top_contexts(p, f, top, run,
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
