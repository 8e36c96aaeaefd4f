/*
 * taskinstr: the shapes of EPCC taskbench's task tests that cost a tool the
 * most per task, in loops of a set number of repetitions, for counting the
 * instructions each repetition executes (callgrind-tasks.sh): the runtime's
 * and a tool's, with no timing of its own.
 *
 *   taskwait     a task of 100 iterations of work, then a taskwait (TASK WAIT)
 *   conditional  a task with if(0), run at once by its creator (CONDITIONAL TASK)
 *   tree         a binary tree of depth 6 whose every task waits for its two
 *                children (BRANCH TASK TREE); a repetition is one of its 64
 *                leaves
 *
 * Output: "result MODE reps N checksum C"; C does not depend on a tool.
 * Usage: taskinstr MODE REPS; threads: OMP_NUM_THREADS (1 for counting).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;
static long leaves;

static __attribute__((noinline)) void work(int n)
{
	double a = 0;

	for (int i = 0; i < n; i++)
		a += i;
	sink = a;
}

static __attribute__((noinline)) void rep_taskwait(int reps)
{
	for (int j = 0; j < reps; j++) {
#pragma omp task
		work(100);
#pragma omp taskwait
	}
}

static __attribute__((noinline)) void rep_conditional(int reps)
{
	for (int j = 0; j < reps; j++) {
#pragma omp task if (j < 0)
		work(100);
	}
}

static __attribute__((noinline)) void tree(int d)
{
	if (d == 0) {
		work(10);
#pragma omp atomic
		leaves++;
		return;
	}
#pragma omp task
	tree(d - 1);
#pragma omp task
	tree(d - 1);
#pragma omp taskwait
}

static __attribute__((noinline)) void rep_tree(int reps)
{
	for (int j = 0; j < reps / 64; j++)
		tree(6);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	int reps = argc > 2 ? atoi(argv[2]) : 0;
	void (*rep)(int) = !strcmp(mode, "taskwait")	  ? rep_taskwait
			   : !strcmp(mode, "conditional") ? rep_conditional
			   : !strcmp(mode, "tree")	  ? rep_tree
							  : NULL;

	if (!rep || reps <= 0) {
		fprintf(stderr, "usage: %s taskwait|conditional|tree REPS\n", argv[0]);
		return 2;
	}
#pragma omp parallel
	rep(reps);
	printf("result %s reps %d checksum %ld\n", mode, reps, leaves);
	return 0;
}
