/* SPDX-License-Identifier: MIT */
/*
 * The text report's OpenMP sections beyond the regions (sections.c): the
 * waits at barriers, taskwaits and taskgroups by context, and the explicit
 * task and parallel constructs whose instances were timed by sampling.
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
	uint64_t *wait = NULL, *count = NULL, *samples = NULL, total = 0;
	const struct column cols[] = { { "OMP_WAIT", &wait, NULL },
				       { "OMP_WAIT_COUNT", &count, NULL },
				       { "OMP_WAIT_TIME_SAMPLES", &samples, NULL } };
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
		s->wait[k] = (struct gt_wait_row){ .node = idx[k],
						   .wait_ns = wait[idx[k]],
						   .count = count[idx[k]],
						   .time_samples = samples[idx[k]],
						   .threads = thr[idx[k]] };
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
		/* Estimated from waits timed as samples. */
		const char *tilde = w->time_samples ? "~" : "";

		gt_table__set(&t, k, 0, "%s%.3f", tilde, gt_rep__secs(w->wait_ns));
		gt_table__pct(t.cell[k][1], w->wait_ns, s.wait_total_ns);
		gt_table__set(&t, k, 2, "%" PRIu64, w->count);
		if (w->count)
			gt_table__set(&t, k, 3, "%s%.1f", tilde, (double)w->wait_ns / (double)w->count / 1e3);
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

/* A construct timed by sampling: one row of a sampled_write section. */
struct sampled_row {
	uint32_t node;	  /* the context shown */
	uint32_t ctxs;	  /* contexts summed into the row */
	uint64_t count;	  /* instances (tasks, regions) */
	uint64_t time_ns; /* their time */
	uint64_t samples; /* instances timed, each standing for a sampling period */
};

/* What sets one section of sampled constructs apart from another. */
struct sampled_section {
	const char *name;  /* the title */
	const char *what;  /* after "N of M" in the title: the constructs, what is exact, what estimated */
	const char *count; /* the count column's head */
	const char *where; /* the context column's head */
	int estimated;	   /* the time column is an estimate: "~" before it */
	int ctxs;	   /* a column of the contexts summed into each row */
};

/*
 * The rows of rows[0..n) that had instances timed by sampling, by time,
 * the first r->top of them, under the title "name (N of n_all what)";
 * nothing when no row had samples.
 */
static int sampled_write(struct rep *r, const struct sampled_section *sec, struct sampled_row *rows, uint32_t n,
			 uint32_t n_all)
{
	struct gt_ranked *k = malloc((n ? n : 1) * sizeof(*k));
	uint32_t *ord = NULL, *nodes = NULL, m = 0, shown;
	const char *tilde = sec->estimated ? "~" : "";
	struct gt_table t = { 0 };
	int err;

	if (!k)
		return -ENOMEM;
	for (uint32_t j = 0; j < n; j++)
		if (rows[j].samples)
			k[m++] = (struct gt_ranked){ .key = rows[j].time_ns, .node = j };
	if (!m) {
		free(k);
		return 0;
	}
	if ((err = gt_ranked__nodes(k, m, &ord)))
		return err;
	shown = m < r->top ? m : r->top;
	if (!(nodes = malloc(shown * sizeof(*nodes)))) {
		err = -ENOMEM;
		goto out_free;
	}
	err = sec->ctxs ? gt_table__init(&t, shown, sec->where, 5, sec->count, "time s", "mean us", "timed", "contexts")
			: gt_table__init(&t, shown, sec->where, 4, sec->count, "time s", "mean us", "timed");
	if (err)
		goto out_free;
	for (uint32_t j = 0; j < shown; j++) {
		const struct sampled_row *w = &rows[ord[j]];

		gt_table__set(&t, j, 0, "%" PRIu64, w->count);
		gt_table__set(&t, j, 1, "%s%.6f", tilde, gt_rep__secs(w->time_ns));
		if (w->count)
			gt_table__set(&t, j, 2, "%s%.3f", tilde, (double)w->time_ns / (double)w->count / 1e3);
		else
			gt_table__set(&t, j, 2, "-");
		gt_table__set(&t, j, 3, "%" PRIu64, w->samples);
		if (sec->ctxs)
			gt_table__set(&t, j, 4, "%" PRIu32, w->ctxs);
		nodes[j] = w->node;
	}
	if ((err = gt_rep__paths(r, nodes, shown, 1, gt_table__tail_cols(&t, gt_rep__line_cols(r)), t.tail)))
		goto out_free;
	fprintf(r->f, "\n%s (%" PRIu32 " of %" PRIu32 " %s)\n", sec->name, shown, n_all, sec->what);
	gt_table__print(&t, r->f);
out_free:
	free(nodes);
	free(ord);
	gt_table__fini(&t);
	return err;
}

/*
 * Constructs whose instances' time is an estimate, one row a construct: the
 * frame of its call site (the placeholder's parent), over all the contexts
 * that reached it, as a recursive tree reaches one construct in a context
 * per level; shown at the context with the most instances.
 */
struct construct_section {
	struct sampled_section sec;
	const char *ph[2]; /* its placeholders' names; NULL: no second */
	const char *samples, *count, *time; /* the metrics: instances timed, instances, their time */
};

static const struct construct_section by_construct[] = {
	/* The measuring side times one task in OMP_TASK_SAMPLE_EVERY of a
	 * construct whose tasks are very short (GPUTOOL_EXACT_TIMING): a
	 * context with fewer tasks than that may have had none timed. */
	{ { "Explicit tasks timed by sampling",
	    "task constructs, too short to time each: counts exact, time estimated from the tasks timed;"
	    " GPUTOOL_EXACT_TIMING=1 times every task",
	    "tasks", "where (innermost first; one context of the construct)", 1, 1 },
	  { "<omp task>", NULL },
	  "OMP_TASK_TIME_SAMPLES",
	  "OMP_EXPLICIT_TASKS",
	  "OMP_EXPLICIT_TASK_TIME" },
	/* One wait in OMP_TASK_SAMPLE_EVERY, at random, of a construct whose
	 * waits are very short. */
	{ { "Task waits timed by sampling",
	    "taskwait and taskgroup constructs, too short to time each: counts exact, time estimated"
	    " from the waits timed; GPUTOOL_EXACT_TIMING=1 times every wait",
	    "waits", "where (innermost first; one context of the construct)", 1, 1 },
	  { "<omp taskwait>", "<omp taskgroup>" },
	  "OMP_WAIT_TIME_SAMPLES",
	  "OMP_WAIT_COUNT",
	  "OMP_WAIT" },
};

static int sampled_by_construct(struct rep *r, const struct construct_section *cs)
{
	const struct gt_profile *p = r->p;
	uint64_t *samples = NULL, *count = NULL, *time = NULL;
	const struct column cols[] = { { cs->samples, &samples, NULL }, { cs->count, &count, NULL },
				       { cs->time, &time, NULL } };
	/* Per construct k: site[k] a frame of its call site; row[k] its sums
	 * over its contexts. */
	uint32_t *site = NULL, n_site = 0;
	struct sampled_row *row = NULL;
	size_t cap = p->n_nodes ? p->n_nodes : 1;
	int err;

	if ((err = gt_rep__columns_load(p, cols, N_COLUMNS(cols))))
		goto out_free;
	site = malloc(cap * sizeof(*site));
	row = calloc(cap, sizeof(*row));
	if (!site || !row) {
		err = -ENOMEM;
		goto out_free;
	}
	for (uint32_t i = 1; i < p->n_nodes; i++) {
		uint32_t up = p->nodes[i].parent, k;

		if (up == GT_NONE || !(gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, cs->ph[0]) ||
				       (cs->ph[1] && gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, cs->ph[1]))))
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
			row[k].node = i;
		}
		row[k].ctxs++;
		row[k].count += count[i];
		row[k].time_ns += time[i];
		row[k].samples += samples[i];
		if (count[i] > count[row[k].node])
			row[k].node = i;
	}
	err = sampled_write(r, &cs->sec, row, n_site, n_site);
out_free:
	free(site);
	free(row);
	gt_rep__columns_free(cols, N_COLUMNS(cols));
	return err;
}

/* Explicit tasks, then task waits, whose time is an estimate. */
int gt_rep__section_sampled_constructs(struct rep *r)
{
	int err = 0;

	for (size_t i = 0; i < sizeof(by_construct) / sizeof(by_construct[0]) && !err; i++)
		err = sampled_by_construct(r, &by_construct[i]);
	return err;
}

/*
 * Parallel constructs whose teams' times are estimates: the measuring side
 * times the teams of one region in OMP_REGION_SAMPLE_EVERY of a construct
 * whose regions are short (GPUTOOL_REGION_TIME_NS, GPUTOOL_EXACT_TIMING),
 * counting those in OMP_PAR_TIME_SAMPLES at its <omp parallel>. The
 * region's own time and count are the encountering thread's and stay
 * exact, so the row shows them as measured. One row a context: the
 * encountering thread decides for each context of a construct on its own.
 */
int gt_rep__section_sampled_regions(struct rep *r)
{
	static const struct sampled_section sec = {
		.name = "Parallel regions timed by sampling",
		.what = "contexts of parallel constructs, too short to time each team: region times and counts exact, the"
			" teams' work, waits and constructs estimated from the regions timed;"
			" GPUTOOL_EXACT_TIMING=1 times every region",
		.count = "regions",
		.where = "where (innermost first)",
	};
	const struct gt_profile *p = r->p;
	uint64_t *samples = NULL, *count = NULL, *time = NULL;
	const struct column cols[] = { { "OMP_PAR_TIME_SAMPLES", &samples, NULL },
				       { "OMP_PAR_COUNT", &count, NULL },
				       { "OMP_PAR_TIME", &time, NULL } };
	struct sampled_row *row = NULL;
	uint32_t n = 0;
	int err;

	if ((err = gt_rep__columns_load(p, cols, N_COLUMNS(cols))))
		goto out_free;
	if (!(row = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*row)))) {
		err = -ENOMEM;
		goto out_free;
	}
	for (uint32_t i = 1; i < p->n_nodes; i++)
		if (gt_rep__is_node_named(p, i, GT_PNODE_PLACEHOLDER, PH_PARALLEL) && (count[i] || samples[i]))
			row[n++] = (struct sampled_row){
				.node = i, .ctxs = 1, .count = count[i], .time_ns = time[i], .samples = samples[i]
			};
	err = sampled_write(r, &sec, row, n, n);
out_free:
	free(row);
	gt_rep__columns_free(cols, N_COLUMNS(cols));
	return err;
}
