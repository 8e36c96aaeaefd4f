/* SPDX-License-Identifier: MIT */
/*
 * The Blame section of the text report, from a profile built by hand: the
 * totals, each device's idle fraction of the wall time, and the top
 * contexts of CPU_IDLE, CPU_IDLE_CAUSE and GPU_IDLE_CAUSE; and no section
 * at all for a profile without blame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "report/report.h"
#include "tests/unit/test.h"

#define MS 1000000ull

static uint32_t node(struct gt_profile *p, uint32_t parent, uint32_t kind, const char *name,
		     const char *file, uint32_t line)
{
	struct gt_prof_node n = {
		.parent = parent, .kind = kind, .name = gt_profile__string(p, name),
		.file = file ? gt_profile__string(p, file) : GT_NONE, .line = line,
		.module = GT_NONE,
	};
	uint32_t i = gt_profile__node(p, &n);

	CHECK(i != GT_NONE);
	return i;
}

static void value(struct gt_profile *p, uint32_t n, enum gt_metric m, uint64_t v)
{
	CHECK(gt_profile__value(p, n, 0, (uint32_t)m, v) == 0);
}

static char *render(const struct gt_profile *p)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CHECK(f);
	CHECK(gt_report__write_profile(p, NULL, f, 0) == 0);
	fclose(f);
	return out;
}

static void build(struct gt_profile *p, int blame)
{
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				     .file = GT_NONE, .module = GT_NONE };
	uint32_t main_, wait, sync, launch, kph, kname, work;

	gt_profile__init(p);
	for (int m = 0; m < GT_M__COUNT; m++)
		CHECK(gt_profile__metric(p, gt_metric_descs[m].name, gt_metric_descs[m].unit,
					 gt_metric_descs[m].desc) == (uint32_t)m);
	CHECK(gt_profile__thread(p, 0, 100, "initial") == 0);
	gt_profile__set_meta(p, "wall_ns", "1000000000");
	CHECK(gt_profile__node(p, &root) == 0);
	main_ = node(p, 0, GT_PNODE_FRAME, "main", "app.c", 30);
	wait = node(p, main_, GT_PNODE_FRAME, "wait_here", "app.c", 12);
	sync = node(p, wait, GT_PNODE_PLACEHOLDER, "<gpu sync>", NULL, 0);
	launch = node(p, main_, GT_PNODE_FRAME, "launch_here", "app.c", 20);
	kph = node(p, launch, GT_PNODE_PLACEHOLDER, "<gpu kernel>", NULL, 0);
	kname = node(p, kph, GT_PNODE_NAME, "stencil", NULL, 0);
	work = node(p, main_, GT_PNODE_FRAME, "cpu_work", "app.c", 40);
	value(p, kname, GT_M_GKER, 300 * MS);
	value(p, work, GT_M_CPUTIME, 400 * MS);
	if (!blame)
		return;
	gt_profile__set_meta(p, "gpu_busy_ns", "0:300000000 1:250000000");
	value(p, sync, GT_M_CPU_IDLE, 300 * MS);
	value(p, sync, GT_M_CPU_IDLE_OVERHEAD, 60 * MS);
	value(p, kname, GT_M_CPU_IDLE_CAUSE, 240 * MS);
	value(p, work, GT_M_GPU_IDLE_CAUSE, 400 * MS);
	value(p, work, GT_M_GPU_IDLE_CAUSE_D1, 100 * MS);
}

static void has(const char *out, const char *line)
{
	if (!strstr(out, line)) {
		fprintf(stderr, "missing: \"%s\" in\n%s", line, out);
		exit(1);
	}
}

static void section(void)
{
	struct gt_profile p;
	char *out;

	build(&p, 1);
	out = render(&p);
	printf("%s", strstr(out, "\nBlame") ? strstr(out, "\nBlame") : out);
	has(out, "\nBlame shifting");
	has(out, "  CPU_IDLE               0.300 s  threads waited in syncs for devices\n");
	has(out, "  CPU_IDLE_CAUSE         0.240 s   80.0% of it while the operations they waited for ran\n");
	has(out, "  CPU_IDLE_OVERHEAD      0.060 s   20.0% of it while none of them ran\n");
	has(out, "  GPU_IDLE_CAUSE         0.400 s  CPU time while no device had anything in flight\n");
	has(out, "       0     0.300     0.700   70.0%\n");
	has(out, "       1     0.250     0.750   75.0%  0.100\n");
	has(out, "      0.300  100.0%  <gpu sync> < wait_here (app.c:12) < main (app.c:30)\n");
	has(out, "      0.240  100.0%  stencil < <gpu kernel> < launch_here (app.c:20) < main (app.c:30)\n");
	has(out, "      0.400  100.0%  cpu_work (app.c:40) < main (app.c:30)\n");
	free(out);
	gt_profile__fini(&p);
}

static void absent(void)
{
	struct gt_profile p;
	char *out;

	build(&p, 0);
	out = render(&p);
	CHECK(!strstr(out, "Blame"));
	free(out);
	gt_profile__fini(&p);
}

TEST_MAIN({ "section", section }, { "absent", absent })
