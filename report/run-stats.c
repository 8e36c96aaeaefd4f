/* SPDX-License-Identifier: MIT */
/*
 * What the views read of a merged run: the statistics of a context over
 * processes and threads, and each process's totals and meta keys.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

uint64_t gt_pstat__min(const struct gt_pstat *s, uint32_t n_procs)
{
	return s->n < n_procs ? 0 : s->min;
}

double gt_pstat__mean(const struct gt_pstat *s, uint32_t n_procs)
{
	return n_procs ? (double)s->sum / n_procs : 0.0;
}

double gt_pstat__stddev(const struct gt_pstat *s, uint32_t n_procs)
{
	double mean = gt_pstat__mean(s, n_procs), var;

	if (!n_procs)
		return 0.0;
	var = (double)s->sumsq / n_procs - mean * mean;
	return var > 0 ? sqrt(var) : 0.0;
}

double gt_pstat__imbalance(const struct gt_pstat *s, uint32_t n_procs)
{
	double mean = gt_pstat__mean(s, n_procs);

	return mean > 0 ? (double)s->max / mean : 0.0;
}

double gt_tstat__mean(const struct gt_tstat *t, uint64_t sum)
{
	return t->n ? (double)sum / (double)t->n : 0.0;
}

uint64_t gt_proc__total(const struct gt_proc *p, uint32_t m)
{
	for (uint32_t i = 0; i < p->n_totals; i++)
		if (p->totals[i].metric == m)
			return p->totals[i].value;
	return 0;
}

const char *gt_proc__meta(const struct gt_proc *p, const char *key)
{
	for (uint32_t i = 0; i < p->n_meta; i++)
		if (!strcmp(p->meta[i].key, key))
			return p->meta[i].value;
	return NULL;
}

uint64_t gt_proc__meta_u64(const struct gt_proc *p, const char *key)
{
	const char *s = gt_proc__meta(p, key);
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end ? 0 : v;
}

void gt_proc__describe(struct gt_proc *pr)
{
	const char *rank = gt_proc__meta(pr, "rank");
	uint64_t v, end;

	v = gt_proc__meta_u64(pr, "rank");
	pr->rank = rank && (v || !strcmp(rank, "0")) && v < INT64_MAX ? (int64_t)v : -1;
	pr->pid = gt_proc__meta_u64(pr, "pid");
	v = gt_proc__meta_u64(pr, "ranks");
	pr->ranks = v < (1u << 30) ? v : 0;
	pr->unmeasured = gt_proc__meta_u64(pr, "threads_unmeasured");
	pr->reused = gt_proc__meta_u64(pr, "threads_reused");
	pr->ops_unmeasured = gt_proc__meta_u64(pr, "ops_unmeasured");
	pr->ppid = gt_proc__meta_u64(pr, "ppid");
	pr->host = gt_proc__meta(pr, "host");
	pr->exe = gt_proc__meta(pr, "exe");
	pr->cmdline = gt_proc__meta(pr, "cmdline");
	pr->run_id = gt_proc__meta(pr, "run");
	if (pr->run_id && !*pr->run_id)
		pr->run_id = NULL;
	pr->start_ns = gt_proc__meta_u64(pr, "start_ns");
	pr->wall_ns = gt_proc__meta_u64(pr, "wall_ns");
	end = gt_proc__meta_u64(pr, "end_ns");
	if (!pr->wall_ns && end > pr->start_ns)
		pr->wall_ns = end - pr->start_ns;
}

static int same_host(const struct gt_proc *a, const struct gt_proc *b)
{
	return !strcmp(a->host ? a->host : "", b->host ? b->host : "");
}

/* The same process: one pid on one host (an exec keeps both). */
static int same_process(const struct gt_proc *a, const struct gt_proc *b)
{
	return a->pid == b->pid && same_host(a, b);
}

/* Whether another process of the run started p (its parent, as p's profile
 * names it). */
static int started_by_run(const struct gt_run *r, const struct gt_proc *p)
{
	for (uint32_t j = 0; p->ppid && j < r->n_procs; j++) {
		const struct gt_proc *q = &r->procs[j];

		if (q != p && q->state == GT_PROC_MERGED && q->pid == p->ppid && same_host(q, p))
			return 1;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

static int by_rank(const void *x, const void *y)
{
	const struct gt_proc *a = *(const struct gt_proc *const *)x, *b = *(const struct gt_proc *const *)y;

	return (a->rank > b->rank) - (a->rank < b->rank);
}

/*
 * The run ids: 0 when every profile names the same run (one run, whatever
 * its ranks and programs: `gputool run` gave every process it started, and
 * every rank of its job, that id), -EEXIST (after saying why) when they name
 * two, or some name one and some none; 1 when none names one (the library
 * used alone, an MPI job whose launcher names no job, an earlier version):
 * the ranks and programs tell then.
 */
static int check_ids(const struct gt_run *r, char *why, size_t len)
{
	const struct gt_proc *with = NULL, *without = NULL;

	for (uint32_t i = 0; i < r->n_procs; i++) {
		const struct gt_proc *p = &r->procs[i];

		if (p->state != GT_PROC_MERGED)
			continue;
		if (!p->run_id) {
			without = without ? without : p;
			continue;
		}
		if (!with) {
			with = p;
			continue;
		}
		if (strcmp(p->run_id, with->run_id)) {
			snprintf(why, len,
				 "pid %llu (%s) is of run %s, pid %llu (%s) of run %s: more than one run wrote here",
				 (unsigned long long)with->pid, base_name(with->file), with->run_id,
				 (unsigned long long)p->pid, base_name(p->file), p->run_id);
			return -EEXIST;
		}
	}
	if (with && without) {
		snprintf(why, len,
			 "pid %llu (%s) is of run %s, pid %llu (%s) of no run that gputool run started: "
			 "more than one run wrote here",
			 (unsigned long long)with->pid, base_name(with->file), with->run_id,
			 (unsigned long long)without->pid, base_name(without->file));
		return -EEXIST;
	}
	return with ? 0 : 1;
}

int gt_run__check_one(const struct gt_run *r, char *why, size_t len)
{
	const struct gt_proc **ps = calloc(r->n_procs ? r->n_procs : 1, sizeof(*ps));
	const struct gt_proc *first = NULL, *other = NULL;
	uint32_t n = 0, programs = 1;
	int exec_chain = 0, err = 0;

	if (!ps)
		return -ENOMEM;
	err = check_ids(r, why, len);
	if (err <= 0)
		goto out;
	err = 0;
	/* Without ids, the ranks and programs tell. A process that another of the run started (a helper: a compiler the
	 * JIT runs, a shell) belongs to the run: it is left out of the checks. */
	for (uint32_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].state == GT_PROC_MERGED && !started_by_run(r, &r->procs[i]))
			ps[n++] = &r->procs[i];
	/* Two profiles of one rank from different processes: two runs. */
	qsort(ps, n, sizeof(*ps), by_rank);
	for (uint32_t i = 1; i < n; i++) {
		if (ps[i]->rank < 0 || ps[i]->rank != ps[i - 1]->rank || same_process(ps[i], ps[i - 1]))
			continue;
		snprintf(why, len,
			 "rank %lld has profiles of two processes (pid %llu, %s, and pid %llu, %s): "
			 "more than one run wrote here",
			 (long long)ps[i]->rank, (unsigned long long)ps[i - 1]->pid, base_name(ps[i - 1]->file),
			 (unsigned long long)ps[i]->pid, base_name(ps[i]->file));
		err = -EEXIST;
		goto out;
	}
	/* Different programs, unless one process exec'ed the other. */
	for (uint32_t i = 0; i < n; i++) {
		if (!first) {
			first = ps[i];
			continue;
		}
		if (!strcmp(base_name(ps[i]->exe), base_name(first->exe)))
			continue;
		if (same_process(ps[i], first))
			exec_chain = 1;
		if (!other || strcmp(base_name(ps[i]->exe), base_name(other->exe)))
			programs++;
		other = ps[i];
	}
	if (other && !exec_chain) {
		snprintf(why, len, "the profiles are of %s%u programs (%s, %s%s): runs of different programs",
			 programs > 2 ? "at least " : "", programs > 2 ? 3 : 2, base_name(first->exe),
			 base_name(other->exe), programs > 2 ? ", ..." : "");
		err = -EEXIST;
	}
out:
	free(ps);
	return err;
}
