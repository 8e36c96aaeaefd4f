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
	pr->host = gt_proc__meta(pr, "host");
	pr->exe = gt_proc__meta(pr, "exe");
	pr->cmdline = gt_proc__meta(pr, "cmdline");
	pr->start_ns = gt_proc__meta_u64(pr, "start_ns");
	pr->wall_ns = gt_proc__meta_u64(pr, "wall_ns");
	end = gt_proc__meta_u64(pr, "end_ns");
	if (!pr->wall_ns && end > pr->start_ns)
		pr->wall_ns = end - pr->start_ns;
}
