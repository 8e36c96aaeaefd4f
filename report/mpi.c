/* SPDX-License-Identifier: MIT */
/*
 * The MPI section of the text report; see report/sections.h and
 * docs/MPI.md. Its rows are the regions of mpi/ ("<mpi MPI_Allreduce>"
 * nodes under their call sites) and the wait states charged to them.
 */
#include "report/rank.h"
#include "report/sections.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"
#include "core/text.h"
#include "report/paths.h"

#define MPI_PREFIX "<mpi "
/* "  calls  time s  idle s idle % sent MB recv MB ranks  " before a row's context */
#define ROW_COLS 62

enum { M_COUNT, M_TIME, M_IDLE, M_CAUSE, M_SENT, M_RECV, M_RANKS, M__N };
static const char *const names[M__N] = {
	[M_COUNT] = "REGION_COUNT",	[M_TIME] = "REGION_TIME",	 [M_IDLE] = "MPI_IDLE",
	[M_CAUSE] = "MPI_IDLE_CAUSE",	[M_SENT] = "MPI_BYTES_SENT",	 [M_RECV] = "MPI_BYTES_RECV",
	[M_RANKS] = "MPI_COMM_RANKS",
};

static int is_call(const struct gt_profile *p, uint32_t i)
{
	const char *s = p->nodes[i].kind == GT_PNODE_NAME ? gt_profile__str(p, p->nodes[i].name) : NULL;

	return s && !strncmp(s, MPI_PREFIX, strlen(MPI_PREFIX));
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The call sites by time: count, time, wait, bytes, mean communicator size. */
static int call_rows(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run,
		     uint64_t *const v[M__N])
{
	unsigned width = run->width ? run->width : GT_PATHS_WIDTH;
	struct gt_paths_opts po = { .width = width > ROW_COLS + 20 ? width - ROW_COLS : 20, .leaf_first = 1,
				    .label_flags = run->signatures ? 0 : GT_LABEL_ELIDE_ARGS };
	struct gt_ranked *rows = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*rows));
	uint32_t n = 0, shown, *nodes = NULL;
	char **where = NULL;
	int err = -ENOMEM;

	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (is_call(p, i) && v[M_COUNT][i])
			rows[n++] = (struct gt_ranked){ v[M_TIME][i], i };
	qsort(rows, n, sizeof(*rows), gt_ranked__cmp);
	shown = n < top ? n : top;
	nodes = malloc((shown ? shown : 1) * sizeof(*nodes));
	where = calloc(shown ? shown : 1, sizeof(*where));
	if (!nodes || !where)
		goto out_free;
	for (uint32_t k = 0; k < shown; k++)
		nodes[k] = rows[k].node;
	if ((err = gt_paths__build(p, nodes, shown, &po, where)))
		goto out_free;
	fprintf(f, "\n  calls by time (%" PRIu32 " of %" PRIu32 " call sites; time and waits summed over ranks)\n",
		shown, n);
	fprintf(f, "  %7s %8s %8s %6s %8s %8s %5s  %s\n", "calls", "time s", "idle s", "idle%", "sent MB", "recv MB",
		"ranks", "call (innermost first)");
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t i = nodes[k];

		fprintf(f, "  %7" PRIu64 " %8.3f %8.3f %5.1f%% %8.3f %8.3f %5.1f  %s\n", v[M_COUNT][i],
			secs(v[M_TIME][i]), secs(v[M_IDLE][i]), pct(v[M_IDLE][i], v[M_TIME][i]),
			(double)v[M_SENT][i] / 1e6, (double)v[M_RECV][i] / 1e6,
			v[M_RANKS][i] ? (double)v[M_RANKS][i] / (double)v[M_COUNT][i] : 0.0, where[k]);
	}
	gt_paths__free(where, shown);
out_free:
	free(where);
	free(nodes);
	free(rows);
	return err;
}

int gt_report__mpi(const struct gt_profile *p, FILE *f, unsigned top, const struct gt_sections_run *run)
{
	uint64_t *v[M__N] = { NULL }, total[M__N] = { 0 }, time = 0, calls = 0;
	int err = -ENOMEM, m;

	if (!top)
		top = GT_REPORT_TOP;
	for (m = 0; m < M__N; m++)
		if (!(v[m] = gt_report__excl_of(p, names[m], &total[m])))
			goto out_free;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		if (is_call(p, i)) {
			time += v[M_TIME][i];
			calls += v[M_COUNT][i];
		}
	}
	err = 0;
	if (!calls)
		goto out_free;
	fputs("\nMPI (calls in their contexts; waits for other ranks and their causes: docs/MPI.md)\n", f);
	fprintf(f, "  %-15s %9.3f s  in %" PRIu64 " calls, summed over ranks\n", "MPI time", secs(time), calls);
	fprintf(f, "  %-15s %9.3f s  %5.1f%% of it waiting for other ranks (late arrivals at collectives, late senders)\n",
		"MPI_IDLE", secs(total[M_IDLE]), pct(total[M_IDLE], time));
	fprintf(f, "  %-15s %9.3f s  the waits, charged to the work (or the late send) of the rank waited for\n",
		"MPI_IDLE_CAUSE", secs(total[M_CAUSE]));
	fprintf(f, "  %-15s %9.3f MB sent, %.3f MB received\n", "bytes", (double)total[M_SENT] / 1e6,
		(double)total[M_RECV] / 1e6);
	if ((err = call_rows(p, f, top, run, v)) ||
	    (err = gt_report__top_contexts(p, f, top, run, "where ranks waited: MPI_IDLE at the calls", v[M_IDLE],
					   total[M_IDLE])) ||
	    (err = gt_report__top_contexts(p, f, top, run,
					   "what they waited for: MPI_IDLE_CAUSE at the late ranks' work before the call",
					   v[M_CAUSE], total[M_CAUSE])))
		goto out_free;
out_free:
	for (m = 0; m < M__N; m++)
		free(v[m]);
	return err;
}
