/*
 * taskloop: cost of a taskloop with grainsize 1 (EPCC schedbench TASKLOOP
 * method, smallest chunk).  One thread of a parallel region generates
 * `reps` taskloops one after the other; each has `iters` x threads
 * iterations and therefore as many tasks, each running one delay() of about
 * `delay_us`.  The reference is the same delay() work one thread does when
 * the iterations are shared out perfectly, without any construct.
 *
 * Output (stdout):
 *   # taskloop threads T iters_per_thread I tasks_per_taskloop N reps R outer O delay_us D
 *   # ompt-tool none|attached
 *   result TASKLOOP <time> us ovh_us <ovh> ref_us <ref> tasks N checksum C
 * <time> is the median over `outer` repetitions of the time of one taskloop,
 * <ovh> the median of (time - reference), C the number of iterations that
 * ran (it must equal (outer + 1) x reps x N).
 *
 * With 1024 iterations per thread (EPCC's count) libomp splits each taskloop
 * recursively (more tasks than 10 x threads), so tasks are created from
 * several depths of the runtime's own recursion.
 *
 * Usage: taskloop [-n ITERS_PER_THREAD] [-r REPS] [-o OUTER] [-d DELAY_US]
 * Threads: OMP_NUM_THREADS.
 */
#include "bench-util.h"

#include <string.h>

static int nthreads;
static int iters_per_thread = 1024; /* EPCC schedbench: 1024 */
static int delaylength;

static void ref_taskloop(int reps)
{
	for (int j = 0; j < reps; j++)
		for (int i = 0; i < iters_per_thread; i++)
			bench__delay(delaylength);
}

static void test_taskloop(int reps)
{
	const unsigned long iters = (unsigned long)iters_per_thread * (unsigned long)nthreads;
#pragma omp parallel
#pragma omp masked
	for (int j = 0; j < reps; j++) {
#pragma omp taskloop grainsize(1)
		for (unsigned long i = 0; i < iters; i++) {
			bench__delay(delaylength);
			bench__count();
		}
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-n ITERS_PER_THREAD] [-r REPS] [-o OUTER] [-d DELAY_US]\n"
		"  -n ITERS_PER_THREAD  taskloop iterations (= tasks) per thread (default 1024)\n"
		"  -r REPS              taskloops per timed repetition (default 4)\n"
		"  -o OUTER             timed repetitions (default 10)\n"
		"  -d DELAY_US          work in one iteration, us (default 0.1)\n"
		"Threads: OMP_NUM_THREADS.\n",
		argv0);
}

int main(int argc, char **argv)
{
	int reps = 4, outer = 10;
	double delay_us = 0.1, v;

	for (int i = 1, opt; (opt = bench__option(argc, argv, &i, &v)) != 0;) {
		switch (opt) {
		case 'n':
			iters_per_thread = (int)v;
			break;
		case 'r':
			reps = (int)v;
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
	if (iters_per_thread < 1 || reps < 1 || outer < 1) {
		usage(argv[0]);
		return 2;
	}

	nthreads = omp_get_max_threads();
	bench__warm_up(200.0);
	delaylength = bench__calibrate_delay(delay_us);
	printf("# taskloop threads %d iters_per_thread %d tasks_per_taskloop %d reps %d outer %d"
	       " delay_us %.3f\n",
	       nthreads, iters_per_thread, iters_per_thread * nthreads, reps, outer, delay_us);
	bench__print_tool();
	fflush(stdout);

	struct bench__result r = bench__measure(test_taskloop, ref_taskloop, reps, outer);
	printf("result TASKLOOP %.4f us ovh_us %.4f ref_us %.4f tasks %d checksum %ld\n", r.time_us,
	       r.ovh_us, r.ref_us, iters_per_thread * nthreads, bench__counted());
	return 0;
}
