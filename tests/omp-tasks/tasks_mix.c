/* SPDX-License-Identifier: MIT */
/*
 * Tasks created inside tasks, taskloops large enough for LLVM's recursive
 * splitting (helper tasks that create the chunks on other threads) and
 * nested parallel regions, all at once on many threads: the shapes that
 * make threads create contexts for tasks they do not run.
 *
 *   tasks_mix [rounds]
 *
 * Prints the counts it made, one "name value" a line. Every shared update
 * is an atomic, so a ThreadSanitizer build sees only the tool's accesses
 * and the runtime's (uninstrumented) synchronization does not matter.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define TREE_DEPTH 6     /* a binary tree: 2^7 - 2 tasks below the root */
#define LOOP_TASKS 200   /* above libomp's minimum for recursive splitting */
#define NESTED_INNER 2

static long tree_tasks, tree_waits, loop_iters, inner_regions, nested_calls;

__attribute__((noinline)) static void tree(int depth)
{
	if (depth == 0)
		return;
	/* One construct site: the loop is not unrolled. */
#pragma clang loop unroll(disable)
	for (int k = 0; k < 2; k++) {
#pragma omp task
		{
			__atomic_fetch_add(&tree_tasks, 1, __ATOMIC_SEQ_CST);
			tree(depth - 1);
		}
	}
#pragma omp taskwait
	/* Work after the taskwait: it is not a tail call, so this frame is
	 * its call site. */
	__atomic_fetch_add(&tree_waits, 1, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) static void loop(void)
{
#pragma omp taskloop grainsize(1)
	for (int i = 0; i < LOOP_TASKS; i++)
		__atomic_fetch_add(&loop_iters, 1, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) static void nested(void)
{
#pragma omp parallel num_threads(NESTED_INNER)
	{
#pragma omp single
		{
			__atomic_fetch_add(&inner_regions, 1, __ATOMIC_SEQ_CST);
#pragma omp task
			tree(2);
		}
	}
	/* Work after the region: the fork is not a tail call, so this frame
	 * is on the stack when the region begins. */
	__atomic_fetch_add(&nested_calls, 1, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	long outer_threads = 0;

	omp_set_max_active_levels(2);
	for (int r = 0; r < rounds; r++) {
#pragma omp parallel
		{
#pragma omp single
			{
				__atomic_store_n(&outer_threads, omp_get_num_threads(), __ATOMIC_SEQ_CST);
				tree(TREE_DEPTH);
				loop();
			}
			if (omp_get_thread_num() < 2)
				nested();
			/* Every thread's taskloop at once: helpers of several
			 * encountering tasks on every thread. */
			loop();
		}
	}
	printf("rounds %d\n", rounds);
	printf("threads %ld\n", __atomic_load_n(&outer_threads, __ATOMIC_SEQ_CST));
	printf("tree_tasks %ld\n", __atomic_load_n(&tree_tasks, __ATOMIC_SEQ_CST));
	printf("tree_waits %ld\n", __atomic_load_n(&tree_waits, __ATOMIC_SEQ_CST));
	printf("loop_iters %ld\n", __atomic_load_n(&loop_iters, __ATOMIC_SEQ_CST));
	printf("inner_regions %ld\n", __atomic_load_n(&inner_regions, __ATOMIC_SEQ_CST));
	printf("nested_calls %ld\n", __atomic_load_n(&nested_calls, __ATOMIC_SEQ_CST));
	return 0;
}
