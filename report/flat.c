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
#include "report/next.h"
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

int gt_flat_profile__init(struct gt_flat_profile *fp, const struct gt_analysis *a)
{
	const struct gt_run *r = a->run;
	struct gt_prof_value *v;
	uint64_t n = 0, wall = 0;
	int err;

	memset(fp, 0, sizeof(*fp));
	fp->p = *a->t;
	fp->thread = (struct gt_prof_thread){ .id = 0, .kind = GT_NONE };
	fp->run = (struct gt_sections_run){ .threads_at = flat__threads_at, .ctx = r };
	/* One value per (node, metric): the run's sum, on one thread; the
	 * sections ask threads_at how many threads measured it. */
	for (uint32_t i = 0; i < r->t.n_nodes; i++)
		for (uint32_t c = r->head[i]; c != GT_NONE; c = r->cells[c].next)
			n += r->cells[c].excl.sum != 0;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
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
	fp->run.wall_ns = wall;
	fp->run.processes = r->n_merged;
	for (uint32_t p = 0; p < r->n_procs; p++) {
		const struct gt_proc *pr = &r->procs[p];
		const char *bw;

		if (pr->state != GT_PROC_MERGED)
			continue;
		if (!fp->run.dram_bytes_per_s && (bw = gt_proc__meta(pr, "gpu_dram_bytes_per_s"))) {
			unsigned long d;
			uint64_t bps;

			if (gt_device_list__next(&bw, &d, &bps))
				fp->run.dram_bytes_per_s = bps;
		}
		if (!fp->run.warps_per_sm && (bw = gt_proc__meta(pr, "gpu_warps_per_sm"))) {
			unsigned long d;
			uint64_t w;

			if (gt_device_list__next(&bw, &d, &w))
				fp->run.warps_per_sm = w;
		}
		/* Any process's samples lost make the merged kernels' partial. */
		if (gt_proc__meta_u64(pr, "pc_buffer_full"))
			fp->run.pc_buffer_full = 1;
		if (fp->run.pc_period || !gt_proc__meta(pr, "pc_period_cycles"))
			continue;
		fp->run.pc_period = gt_proc__meta_u64(pr, "pc_period_cycles");
		fp->run.pc_clock_khz = gt_proc__meta_u64(pr, "pc_sm_clock_khz");
		fp->run.pc_sms = gt_proc__meta_u64(pr, "pc_sm_count");
		fp->run.pc_schedulers = gt_proc__meta_u64(pr, "pc_schedulers");
	}
	err = gpu_busy(r, &fp->busy, &fp->run.busy_wall_ns);
	if (err) {
		free(v);
		free(fp->busy.s);
		return err;
	}
	fp->run.gpu_busy = fp->busy.s;
	fp->p.values = v;
	fp->p.n_values = fp->p.cap_values = n;
	fp->p.threads = &fp->thread;
	fp->p.n_threads = fp->p.cap_threads = 1;
	return 0;
}

void gt_flat_profile__fini(struct gt_flat_profile *fp)
{
	free(fp->busy.s);
	free(fp->p.values);
	fp->busy.s = NULL;
	fp->p.values = NULL;
}

int gt_flat__write_sections(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o)
{
	struct gt_flat_profile fp;
	struct gt_next_list next;
	unsigned top = o->top;
	int err = gt_flat_profile__init(&fp, a);

	if (err)
		return err;
	fp.run.width = o->width;
	fp.run.signatures = o->signatures;
	err = gt_next__build(&fp.p, &fp.run, &next);
	if (!err) {
		err = gt_next__write_text(&fp.p, &next, f, top ? top : GT_REPORT_TOP, &fp.run);
		gt_next__fini(&next);
	}
	if (!err)
		err = gt_report__write_sections(&fp.p, f, top, &fp.run);
	gt_flat_profile__fini(&fp);
	return err;
}
