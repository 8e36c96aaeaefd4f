/* SPDX-License-Identifier: MIT */
/* The text report of the sample profile (report/report.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "report/report.h"
#include "tests/profile/profile-test.h"

static int contains(const char *text, const char *s)
{
	if (strstr(text, s))
		return 1;
	fprintf(stderr, "report lacks \"%s\"\n", s);
	return 0;
}

/* In out: lead, the long name of the sample cut to "very_long_", head x's,
 * "…", tail x's, "_name_end", then trail. */
static void cut_name(char *out, const char *lead, size_t head, size_t tail, const char *trail)
{
	size_t n = 0;

	n += (size_t)sprintf(out + n, "%svery_long_", lead);
	memset(out + n, 'x', head);
	n += head;
	n += (size_t)sprintf(out + n, "…");
	memset(out + n, 'x', tail);
	n += tail;
	sprintf(out + n, "_name_end%s", trail);
}

void test_report(void)
{
	struct gt_profile p;
	char name[400];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *a, *b, *c;

	CHECK(f);
	CHECK(build_sample(&p) == 0);
	CHECK(gt_report__write_profile(&p, NULL, f, 20) == 0);
	fclose(f);
	fputs(text, stdout);
	/* Header. */
	CHECK(contains(text, "/usr/bin/app"));
	CHECK(contains(text, "processes    1 (rank 0, pid 4242) on host node1"));
	CHECK(contains(text, "2.000 s"));
	CHECK(contains(text, "threads      3"));
	CHECK(contains(text, "200 Hz per thread, 313 samples, 1.6% of them in gputool itself"));
	CHECK(contains(text, "dropped      3 samples"));
	/* Parallel regions: run_a's first (most time), then run_b's, then the
	 * nested one; waits of the nested region stay out of its parent's. */
	CHECK(contains(text, "OpenMP parallel regions (3 of 3"));
	CHECK(contains(text, "1          4   1.500   75.0%      3.0   3.300   1.200   26.7%  1.400\n"));
	CHECK(contains(text, "2          2   0.300   15.0%      3.0   0.650   0.000    0.0%  0.100\n"));
	CHECK(contains(text, "3          8   0.200   10.0%      2.0   0.150   0.050   25.0%  0.100\n"));
	a = strstr(text, "\n     main (app.c:50) > run_a (app.c:30)\n");
	b = strstr(text, "\n     main (app.c:50) > run_b (app.c:40)\n");
	/* (The load imbalance section above names that context too.) */
	c = b ? strstr(b, "main (app.c:50) > run_a (app.c:30) > <omp parallel> > compute (app.c:12)\n") : NULL;
	CHECK(a && b && c && a < b && b < c);
	/* CPU by context and by function. */
	CHECK(contains(text, "CPU time by calling context (5 of 5 contexts; total 1.540 s)"));
	CHECK(contains(text, "1.300  84.4%  compute (app.c:12) < <omp parallel> < run_a (app.c:30) < main (app.c:50)"));
	CHECK(contains(text, "libomp.so+0xabc < <omp parallel> < run_b (app.c:40) < main (app.c:50)"));
	CHECK(contains(text, "by function (5 of 5)"));
	CHECK(contains(text, "<unknown> [libomp.so]"));
	/* The 200-column name is cut in its middle to what a 160-column line
	 * leaves after the numbers; the context keeps that frame and its line
	 * and says the rest was left out. */
	cut_name(name, "  0.030   1.9%         1  ", 56, 58, "\n");
	CHECK(contains(text, name));
	cut_name(name, "  0.030   1.9%  ", 54, 55, " (long.c:7) < …\n");
	CHECK(contains(text, name));
	/* Waits. */
	CHECK(contains(text, "Waits (2 of 2 places; total 1.250 s over all threads)"));
	CHECK(contains(text, "1.200  96.0%     12  100000.0        3  0.000  <omp implicit barrier> < <omp parallel> < run_a"));
	CHECK(contains(text, "0.050   4.0%      8    6250.0        1  0.000  <omp barrier> < <omp parallel> < compute"));
	/* The tree: the anonymous frame is over 1 %, the weird name is not. */
	CHECK(contains(text, "Top-down view (CPUTIME, in s;"));
	CHECK(contains(text, "  100.0%      1.540      0.000  main (app.c:50)\n"));
	CHECK(contains(text, "   91.6%      1.410      0.010    run_a (app.c:30)\n"));
	CHECK(contains(text, "    6.5%      0.100      0.100        libomp.so+0xabc\n"));
	CHECK(!strstr(text, "weird"));
	for (const char *s = text; *s; s++)
		CHECK((unsigned char)*s >= 0x20 || *s == '\n');
	/* No line is wider than the default width (a column per character). */
	for (const char *s = text; *s;) {
		size_t cols = 0;

		for (; *s && *s != '\n'; s++)
			cols += ((unsigned char)*s & 0xc0) != 0x80;
		CHECK(cols <= 160);
		if (*s)
			s++;
	}
	free(text);
	gt_profile__fini(&p);
}

/* Sections without data are left out; the header alone is a report. */
void test_report_sparse(void)
{
	struct gt_profile p;
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				     .file = GT_NONE, .module = GT_NONE };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	gt_profile__init(&p);
	f = open_memstream(&text, &len);
	CHECK(gt_report__write_profile(&p, NULL, f, 0) == 0);
	fclose(f);
	CHECK(contains(text, "gputool report\n"));
	CHECK(contains(text, "Nothing was measured for CPUTIME."));
	CHECK(!strstr(text, "OpenMP") && !strstr(text, "CPU time by") && !strstr(text, "Waits"));
	free(text);

	CHECK(gt_profile__node(&p, &root) == 0);
	CHECK(frame(&p, 0, "solo", "s.c", 3, GT_NONE, 0) == 1);
	CHECK(gt_profile__thread(&p, 0, 1, "initial") == 0);
	CHECK(gt_profile__metric(&p, "CPUTIME", "ns", NULL) == 0);
	CHECK(gt_profile__value(&p, 1, 0, 0, 7 * MS) == 0);
	f = open_memstream(&text, &len);
	CHECK(gt_report__write_profile(&p, NULL, f, 0) == 0);
	fclose(f);
	CHECK(contains(text, "0.007  100.0%  solo (s.c:3)"));
	CHECK(!strstr(text, "OpenMP") && !strstr(text, "Waits") && !strstr(text, "wall time"));
	free(text);
	gt_profile__fini(&p);
}
