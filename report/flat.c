/* SPDX-License-Identifier: MIT */
/*
 * A merged run as one profile, for the sections that read one tree
 * (report/sections.h) in every text report: the run's tree, strings,
 * modules and metrics as they are (borrowed, not copied), each node's
 * exclusive sum of each metric as one value, and how many threads measured
 * it there from the run's cells, so that the sections' sums and thread
 * counts are the run's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/sections.h"

#define MAX_DEVICES 64

/*
 * The processes' "gpu_busy_ns" ("D:NS D:NS ...") summed per device into
 * out, and the wall times of the processes that have it summed into *wall.
 * Returns 0, or -ENOMEM.
 */
static int gpu_busy(const struct gt_run *r, struct gt_sb *out, uint64_t *wall)
{
	uint64_t busy[MAX_DEVICES] = { 0 };
	int seen[MAX_DEVICES] = { 0 }, any = 0;

	*wall = 0;
	for (uint32_t p = 0; p < r->n_procs; p++) {
		const char *s = r->procs[p].state == GT_PROC_MERGED ? gt_proc__meta(&r->procs[p], "gpu_busy_ns") : NULL;
		unsigned long d;
		uint64_t ns;

		if (!s)
			continue;
		any = 1;
		*wall += r->procs[p].wall_ns;
		while (gt_device_list__next(&s, &d, &ns)) {
			if (d < MAX_DEVICES) {
				busy[d] += ns;
				seen[d] = 1;
			}
		}
	}
	if (!any)
		return 0;
	gt_sb__add(out, "");
	for (unsigned d = 0; d < MAX_DEVICES; d++) {
		if (!seen[d])
			continue;
		gt_sb__addf(out, "%s%u:%llu", out->len ? " " : "", d, (unsigned long long)busy[d]);
	}
	return out->oom ? -ENOMEM : 0;
}

/* The threads of every process that measured metric at node. */
static uint64_t flat__threads_at(const void *ctx, uint32_t node, uint32_t metric)
{
	const struct gt_cell *c = gt_run__cell(ctx, node, metric);

	return c ? c->thr.n : 0;
}

int gt_flat__write_sections(FILE *f, const struct gt_analysis *a, unsigned top)
{
	const struct gt_run *r = a->run;
	struct gt_profile flat = *a->t;
	struct gt_prof_thread thread = { .id = 0, .kind = GT_NONE };
	struct gt_prof_value *v = NULL;
	struct gt_sections_run run = { .threads_at = flat__threads_at, .ctx = r };
	struct gt_sb busy = { 0 };
	uint64_t n = 0, wall = 0;
	int err = -ENOMEM;

	/* One value per (node, metric): the run's sum, on one thread; the
	 * sections ask threads_at how many threads measured it. */
	for (uint32_t i = 0; i < r->t.n_nodes; i++)
		for (uint32_t c = r->head[i]; c != GT_NONE; c = r->cells[c].next)
			n += r->cells[c].excl.sum != 0;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		goto out_free;
	n = 0;
	for (uint32_t i = 0; i < r->t.n_nodes; i++)
		for (uint32_t c = r->head[i]; c != GT_NONE; c = r->cells[c].next)
			if (r->cells[c].excl.sum)
				v[n++] = (struct gt_prof_value){
					.node = i, .thread = 0, .metric = r->cells[c].metric, .value = r->cells[c].excl.sum
				};
	for (uint32_t p = 0; p < r->n_procs; p++)
		if (r->procs[p].wall_ns > wall)
			wall = r->procs[p].wall_ns;
	run.wall_ns = wall;
	for (uint32_t p = 0; p < r->n_procs; p++) {
		const struct gt_proc *pr = &r->procs[p];

		if (pr->state != GT_PROC_MERGED || !gt_proc__meta(pr, "pc_period_cycles"))
			continue;
		run.pc_period = gt_proc__meta_u64(pr, "pc_period_cycles");
		run.pc_clock_khz = gt_proc__meta_u64(pr, "pc_sm_clock_khz");
		run.pc_sms = gt_proc__meta_u64(pr, "pc_sm_count");
		run.pc_schedulers = gt_proc__meta_u64(pr, "pc_schedulers");
		break;
	}
	err = gpu_busy(r, &busy, &run.busy_wall_ns);
	if (err)
		goto out_free;
	run.gpu_busy = busy.s;
	flat.values = v;
	flat.n_values = flat.cap_values = n;
	flat.threads = &thread;
	flat.n_threads = flat.cap_threads = 1;
	err = gt_report__write_sections(&flat, f, top, &run);
out_free:
	free(busy.s);
	free(v);
	return err;
}
