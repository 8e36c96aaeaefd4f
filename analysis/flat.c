/* SPDX-License-Identifier: MIT */
/*
 * A merged run as one profile, for the sections of the per-process report
 * (core/report.h) in `gputool report`: the run's tree, strings, modules and
 * metrics as they are (borrowed, not copied), and each node's exclusive sum
 * of each metric spread over as many threads as measured it there, so that
 * the sections' sums are the run's and their thread counts too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "core/report.h"

int gt_flat__write_sections(FILE *f, const struct gt_analysis *a, unsigned top)
{
	const struct gt_run *r = a->run;
	struct gt_profile flat = *a->t;
	struct gt_prof_thread *threads = NULL;
	struct gt_prof_value *v = NULL;
	uint64_t n = 0, wall = 0, n_threads = 1;
	int err = -ENOMEM;

	for (uint32_t i = 0; i < r->t.n_nodes; i++)
		for (uint32_t c = r->head[i]; c != GT_NONE; c = r->cells[c].next) {
			uint64_t k = r->cells[c].thr.n ? r->cells[c].thr.n : 1;

			n += k;
			if (k > n_threads)
				n_threads = k;
		}
	if (n_threads > GT_NONE - 1)
		return -EINVAL;
	v = malloc((n ? n : 1) * sizeof(*v));
	threads = calloc(n_threads, sizeof(*threads));
	if (!v || !threads)
		goto out_free;
	n = 0;
	for (uint32_t i = 0; i < r->t.n_nodes; i++) {
		for (uint32_t c = r->head[i]; c != GT_NONE; c = r->cells[c].next) {
			const struct gt_cell *cl = &r->cells[c];
			uint64_t k = cl->thr.n ? cl->thr.n : 1, sum = cl->excl.sum;

			if (!sum)
				continue;
			for (uint64_t t = 0; t < k; t++)
				v[n++] = (struct gt_prof_value){
					.node = i,
					.thread = (uint32_t)t,
					.metric = cl->metric,
					.value = sum / k + (t == k - 1 ? sum % k : 0),
				};
		}
	}
	for (uint64_t t = 0; t < n_threads; t++)
		threads[t] = (struct gt_prof_thread){ .id = (uint32_t)t, .kind = GT_NONE };
	for (uint32_t p = 0; p < r->n_procs; p++)
		if (r->procs[p].wall_ns > wall)
			wall = r->procs[p].wall_ns;
	flat.values = v;
	flat.n_values = flat.cap_values = n;
	flat.threads = threads;
	flat.n_threads = flat.cap_threads = (uint32_t)n_threads;
	err = gt_report__write_sections(&flat, f, top, wall);
out_free:
	free(threads);
	free(v);
	return err;
}
