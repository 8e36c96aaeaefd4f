/*
 * tasktree: cost of recursive task trees (EPCC taskbench BRANCH TASK TREE
 * and LEAF TASK TREE method).  Every thread of a parallel region builds
 * `trees` binary trees of nested tasks of depth `depth`:
 *   BRANCH: every node is a task that does one delay() and creates its two
 *           children (2^(depth+1) - 1 tasks, as many delay() calls);
 *   LEAF:   inner nodes are tasks that only create their two children; the
 *           2^depth leaves do one delay() each (2^(depth+1) - 2 tasks).
 * The end of the parallel region waits for all of them.  The reference is
 * the same delay() work done by one thread without tasks.
 *
 * Output (stdout), after two '#' lines (settings, "# ompt-tool ..."):
 *   result BRANCH_TASK_TREE <time> us ovh_us <ovh> ref_us <ref> tasks N checksum C
 *   result LEAF_TASK_TREE   <time> us ovh_us <ovh> ref_us <ref> tasks N checksum C
 * <time> is the median over `outer` repetitions of the time per tree (per
 * thread: all threads build trees at once), <ovh> the median of (time -
 * reference), N the tasks per tree, C the delay() calls done by tasks.
 *
 * Usage: tasktree [-D DEPTH] [-t TREES] [-o OUTER] [-d DELAY_US] [BRANCH|LEAF]
 * Threads: OMP_NUM_THREADS.
 */
#include "bench-util.h"

#include <string.h>

static int depth = 6;
static int delaylength;

static void branch(int level)
{
	bench__delay(delaylength);
	bench__count();
	if (level > 0) {
#pragma omp task
		branch(level - 1);
#pragma omp task
		branch(level - 1);
	}
}

static void leaf(int level)
{
	if (level == 0) {
		bench__delay(delaylength);
		bench__count();
		return;
	}
#pragma omp task
	leaf(level - 1);
#pragma omp task
	leaf(level - 1);
}

static void test_branch(int trees)
{
#pragma omp parallel
	for (int j = 0; j < trees; j++) {
#pragma omp task
		branch(depth);
	}
}

static void test_leaf(int trees)
{
#pragma omp parallel
	for (int j = 0; j < trees; j++)
		leaf(depth);
}

static void ref_branch(int trees)
{
	for (long j = 0; j < (long)trees * ((2L << depth) - 1); j++)
		bench__delay(delaylength);
}

static void ref_leaf(int trees)
{
	for (long j = 0; j < (long)trees * (1L << depth); j++)
		bench__delay(delaylength);
}

struct tree {
	const char *name, *arg;
	void (*test)(int);
	void (*ref)(int);
	long tasks; /* per tree, for a given depth; set in main */
	long work;  /* delay() calls per tree */
};

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-D DEPTH] [-t TREES] [-o OUTER] [-d DELAY_US] [BRANCH|LEAF]...\n"
		"  -D DEPTH     tree depth (default 6)\n"
		"  -t TREES     trees per thread per timed repetition (default 16)\n"
		"  -o OUTER     timed repetitions (default 20)\n"
		"  -d DELAY_US  work per node (BRANCH) or leaf (LEAF), us (default 0.1)\n"
		"Threads: OMP_NUM_THREADS.\n",
		argv0);
}

int main(int argc, char **argv)
{
	int trees = 16, outer = 20, selected = 0;
	double delay_us = 0.1, v;
	struct tree kinds[] = {
		{ "BRANCH_TASK_TREE", "BRANCH", test_branch, ref_branch, 0, 0 },
		{ "LEAF_TASK_TREE", "LEAF", test_leaf, ref_leaf, 0, 0 },
	};
	int want[2] = { 0, 0 };

	for (int i = 1, opt = -1; opt != 0;) {
		if (i < argc && (!strcmp(argv[i], "BRANCH") || !strcmp(argv[i], "LEAF"))) {
			want[argv[i++][0] == 'L'] = selected = 1;
			continue;
		}
		switch ((opt = bench__option(argc, argv, &i, &v))) {
		case 0:
			break;
		case 'D':
			depth = (int)v;
			break;
		case 't':
			trees = (int)v;
			break;
		case 'o':
			outer = (int)v;
			break;
		case 'd':
			delay_us = v;
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (depth < 1 || depth > 20 || trees < 1 || outer < 1) {
		usage(argv[0]);
		return 2;
	}
	kinds[0].tasks = kinds[0].work = (2L << depth) - 1;
	kinds[1].tasks = (2L << depth) - 2;
	kinds[1].work = 1L << depth;

	int nthreads = omp_get_max_threads();
	bench__warm_up(200.0);
	delaylength = bench__calibrate_delay(delay_us);
	printf("# tasktree threads %d depth %d trees_per_thread %d outer %d delay_us %.3f\n", nthreads,
	       depth, trees, outer, delay_us);
	bench__print_tool();
	fflush(stdout);

	for (int k = 0; k < 2; k++) {
		if (selected && !want[k])
			continue;
		long before = bench__counted();
		struct bench__result r = bench__measure(kinds[k].test, kinds[k].ref, trees, outer);
		long done = bench__counted() - before;
		printf("result %s %.4f us ovh_us %.4f ref_us %.4f tasks %ld checksum %ld\n",
		       kinds[k].name, r.time_us, r.ovh_us, r.ref_us, kinds[k].tasks, done);
		fflush(stdout);
	}
	return 0;
}
