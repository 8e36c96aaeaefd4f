/* SPDX-License-Identifier: MIT */
/*
 * The text report's OpenMP sections beyond the regions (sections.c): the
 * waits at barriers, taskwaits and taskgroups by context, and the explicit
 * task constructs whose tasks were timed by sampling.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "report/rank.h"
#include "report/sections-internal.h"
#include "report/table.h"

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

/* The places that waited, most first, the first r->top of them into s
 * (s->wait, n_wait, all_waits, wait_total_ns). */
int gt_rep__waits_build(const struct rep *r, struct gt_section_rows *s)
{
	const struct gt_profile *p = r->p;
	uint64_t *wait = NULL, *count = NULL, total = 0;
	const struct column cols[] = { { "OMP_WAIT", &wait, NULL }, { "OMP_WAIT_COUNT", &count, NULL } };
	uint32_t *idx = NULL, *thr = NULL, n = 0, shown;
	int err;

	if ((err = gt_rep__columns_load(p, cols, N_COLUMNS(cols))) ||
	    (err = threads_per_node(r, gt_profile__find_metric(p, "OMP_WAIT"), &thr)))
		goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		total += wait[i];
	err = gt_rep__nodes_by(r, wait, &idx, &n);
	if (err || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	s->wait = calloc(shown, sizeof(*s->wait));
	if (!s->wait) {
		err = -ENOMEM;
		goto out_free;
	}
	s->n_wait = shown;
	s->all_waits = n;
	s->wait_total_ns = total;
	for (uint32_t k = 0; k < shown; k++)
		s->wait[k] = (struct gt_wait_row){
			.node = idx[k], .wait_ns = wait[idx[k]], .count = count[idx[k]], .threads = thr[idx[k]]
		};
out_free:
	free(idx);
	free(thr);
	gt_rep__columns_free(cols, N_COLUMNS(cols));
	return err;
}

int gt_rep__section_waits(struct rep *r)
{
	struct gt_section_rows s = { 0 };
	struct gt_table t = { 0 };
	uint32_t *nodes = NULL;
	int err = gt_rep__waits_build(r, &s);

	if (err || !s.n_wait)
		goto out_free;
	if (!(nodes = malloc(s.n_wait * sizeof(*nodes)))) {
		err = -ENOMEM;
		goto out_free;
	}
	/* CPU s: what the waiting threads spent spinning there (the sampler
	 * puts CPU time in the runtime on the wait's node). */
	err = gt_table__init(&t, s.n_wait, "where (innermost first)", 6, "wait s", "%", "count", "mean us", "threads",
			  "CPU s");
	if (err)
		goto out_free;
	for (uint32_t k = 0; k < s.n_wait; k++) {
		const struct gt_wait_row *w = &s.wait[k];

		gt_table__set(&t, k, 0, "%.3f", gt_rep__secs(w->wait_ns));
		gt_table__pct(t.cell[k][1], w->wait_ns, s.wait_total_ns);
		gt_table__set(&t, k, 2, "%" PRIu64, w->count);
		if (w->count)
			gt_table__set(&t, k, 3, "%.1f", (double)w->wait_ns / (double)w->count / 1e3);
		else
			gt_table__set(&t, k, 3, "-");
		gt_table__set(&t, k, 4, "%" PRIu32, w->threads);
		gt_table__set(&t, k, 5, "%.3f", gt_rep__secs(r->cpu_incl[w->node]));
		nodes[k] = w->node;
	}
	if ((err = gt_rep__paths(r, nodes, s.n_wait, 1, gt_table__tail_cols(&t, gt_rep__line_cols(r)), t.tail)))
		goto out_free;
	fprintf(r->f, "\nWaits (%" PRIu32 " of %" PRIu32 " places; total %.3f s over all threads)\n", s.n_wait,
		s.all_waits, gt_rep__secs(s.wait_total_ns));
	gt_table__print(&t, r->f);
out_free:
	free(nodes);
	gt_table__fini(&t);
	gt_section_rows__fini(&s);
	return err;
}

/*
 * Explicit tasks whose time is an estimate: the measuring side times one
 * task in OMP_TASK_SAMPLE_EVERY of a construct whose tasks are very short
 * (GPUTOOL_EXACT_TIMING), counting those in OMP_TASK_TIME_SAMPLES at the
 * context of each. One row a construct (the frame of its call site, the
 * <omp task>'s parent, over all the contexts that reached it, as a
 * recursive tree reaches one construct in a context per level): a context
 * with fewer tasks than that may have had none timed.
 */
int gt_rep__section_sampled_tasks(struct rep *r)
{
	const struct gt_profile *p = r->p;
	uint64_t *samples = NULL, *tasks = NULL, *time = NULL, *key = NULL;
	const struct column cols[] = { { "OMP_TASK_TIME_SAMPLES", &samples, NULL },
				       { "OMP_EXPLICIT_TASKS", &tasks, NULL },
				       { "OMP_EXPLICIT_TASK_TIME", &time, NULL } };
	/* Per construct k: site[k] a frame of its call site; sum_*[k] over its
	 * contexts; rep[k] the context shown (the one with the most tasks). */
	uint32_t *site = NULL, *rep = NULL, *ctxs = NULL, n_site = 0, *idx = NULL, n = 0, shown;
	uint64_t *sum_tasks = NULL, *sum_time = NULL, *sum_samples = NULL;
	size_t cap = p->n_nodes ? p->n_nodes : 1;
	struct gt_table t = { 0 };
	int err;

	if ((err = gt_rep__columns_load(p, cols, N_COLUMNS(cols))))
		goto out_free;
	err = -ENOMEM;
	site = malloc(cap * sizeof(*site));
	rep = malloc(cap * sizeof(*rep));
	ctxs = calloc(cap, sizeof(*ctxs));
	key = calloc(cap, sizeof(*key));
	sum_tasks = calloc(cap, sizeof(*sum_tasks));
	sum_time = calloc(cap, sizeof(*sum_time));
	sum_samples = calloc(cap, sizeof(*sum_samples));
	if (!site || !rep || !ctxs || !key || !sum_tasks || !sum_time || !sum_samples)
		goto out_free;
	err = 0;
	for (uint32_t i = 1; i < p->n_nodes; i++) {
		uint32_t up = p->nodes[i].parent, k;

		if (up == GT_NONE || !gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, "<omp task>"))
			continue;
		for (k = 0; k < n_site; k++) {
			const struct gt_prof_node *a = &p->nodes[site[k]], *b = &p->nodes[up];

			/* Frames are merged by their line where it is known,
			 * else by their address. */
			if (site[k] == up || (a->kind == b->kind && a->name == b->name && a->file == b->file &&
					      a->line == b->line && a->module == b->module && a->offset == b->offset &&
					      a->module != GT_NONE))
				break;
		}
		if (k == n_site) {
			site[n_site++] = up;
			rep[k] = i;
		}
		ctxs[k]++;
		sum_tasks[k] += tasks[i];
		sum_time[k] += time[i];
		sum_samples[k] += samples[i];
		if (tasks[i] > tasks[rep[k]])
			rep[k] = i;
	}
	/* Constructs that had tasks timed by sampling; rows by time, keyed by
	 * their shown context's node (never 0, so that nodes_by keeps it). */
	for (uint32_t k = 0; k < n_site; k++)
		if (sum_samples[k])
			key[rep[k]] = sum_time[k] + (sum_time[k] < UINT64_MAX);
	if ((err = gt_rep__nodes_by(r, key, &idx, &n)) || !n)
		goto out_free;
	shown = n < r->top ? n : r->top;
	err = gt_table__init(&t, shown, "where (innermost first; one context of the construct)", 5, "tasks", "time s",
			  "mean us", "timed", "contexts");
	if (err)
		goto out_free;
	for (uint32_t j = 0; j < shown; j++) {
		uint32_t k = 0;

		while (rep[k] != idx[j])
			k++;
		gt_table__set(&t, j, 0, "%" PRIu64, sum_tasks[k]);
		gt_table__set(&t, j, 1, "~%.6f", gt_rep__secs(sum_time[k]));
		if (sum_tasks[k])
			gt_table__set(&t, j, 2, "~%.3f", (double)sum_time[k] / (double)sum_tasks[k] / 1e3);
		else
			gt_table__set(&t, j, 2, "-");
		gt_table__set(&t, j, 3, "%" PRIu64, sum_samples[k]);
		gt_table__set(&t, j, 4, "%" PRIu32, ctxs[k]);
	}
	if ((err = gt_rep__paths(r, idx, shown, 1, gt_table__tail_cols(&t, gt_rep__line_cols(r)), t.tail)))
		goto out_free;
	fprintf(r->f,
		"\nExplicit tasks timed by sampling (%" PRIu32 " of %" PRIu32 " task constructs, too short to time each:"
		" counts exact, time estimated from the tasks timed; GPUTOOL_EXACT_TIMING=1 times every task)\n",
		shown, n_site);
	gt_table__print(&t, r->f);
out_free:
	free(idx);
	free(key);
	free(site);
	free(rep);
	free(ctxs);
	free(sum_tasks);
	free(sum_time);
	free(sum_samples);
	gt_table__fini(&t);
	gt_rep__columns_free(cols, N_COLUMNS(cols));
	return err;
}
