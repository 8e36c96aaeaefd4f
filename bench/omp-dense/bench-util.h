/*
 * Helpers shared by the dense OpenMP benchmarks: a clock, the EPCC delay()
 * work unit and its calibration, a median, and the check whether an OMPT
 * tool is attached.  Everything is static so each program stays one file.
 */
#ifndef GT_BENCH_OMP_DENSE_UTIL_H
#define GT_BENCH_OMP_DENSE_UTIL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The next "-X VALUE" option of argv from *i: returns X and sets *value
 * (a number in (0, 1e8]), or returns 0 at the end and -1 for anything
 * else. Words that are not options are the caller's: *i is left on them
 * and -1 returned, so a caller that takes words checks argv[*i] first.
 */
static inline int bench__option(int argc, char **argv, int *i, double *value)
{
	char *end = NULL;
	double v;

	if (*i >= argc)
		return 0;
	if (strlen(argv[*i]) != 2 || argv[*i][0] != '-' || *i + 1 >= argc)
		return -1;
	v = strtod(argv[*i + 1], &end);
	if (!end || *end != '\0' || !(v > 0) || v > 1e8)
		return -1;
	*value = v;
	*i += 2;
	return argv[*i - 2][1];
}

static inline double bench__now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* A dependent floating-point chain the compiler must keep (EPCC delay). */
static inline void bench__delay(int len)
{
	double a = 0.0;
	for (int i = 0; i < len; i++)
		a += (double)i;
	if (a < 0)
		printf("%f\n", a);
}

/* Loop length that makes one bench__delay() call last about delay_us. */
static inline int bench__calibrate_delay(double delay_us)
{
	const int calls = 1000;
	int len = 1;
	for (;;) {
		double best = 1e30;
		for (int k = 0; k < 3; k++) {
			double t0 = bench__now_us();
			for (int j = 0; j < calls; j++)
				bench__delay(len);
			double t = (bench__now_us() - t0) / calls;
			if (t < best)
				best = t;
		}
		if (best >= delay_us || len > (1 << 28)) {
			if (best > 0)
				len = (int)(len * (delay_us / best));
			return len < 1 ? 1 : len;
		}
		len *= 2;
	}
}

static inline int bench__cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n-1]; reorders v. */
static inline double bench__median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench__cmp_double);
	return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/*
 * omp_control_tool answers omp_control_tool_notool only when no OMPT tool is
 * attached.  Printed as "# ompt-tool none|attached" so a runner can check
 * that the configuration it asked for is the one that ran.
 */
static inline void bench__print_tool(void)
{
	int tool = omp_control_tool(omp_control_tool_flush, 0, NULL);
	printf("# ompt-tool %s\n", tool == omp_control_tool_notool ? "none" : "attached");
}

/* Keep every thread busy for ms milliseconds so that idle vCPUs are awake
 * before anything is timed. */
static inline void bench__warm_up(double ms)
{
	double t_end = bench__now_us() + ms * 1e3;
	while (bench__now_us() < t_end) {
#pragma omp parallel
		bench__delay(100);
	}
}

/* Per-thread counters on separate cache lines: tasks count the work they
 * did without contending on one shared counter. */
#define BENCH_MAX_THREADS 1024
struct bench__counter {
	long n;
	char pad[64 - sizeof(long)];
};
static struct bench__counter bench__done[BENCH_MAX_THREADS];

static inline void bench__count(void)
{
	bench__done[omp_get_thread_num() % BENCH_MAX_THREADS].n++;
}

static inline long bench__counted(void)
{
	long sum = 0;
	for (int i = 0; i < BENCH_MAX_THREADS; i++)
		sum += bench__done[i].n;
	return sum;
}

/*
 * EPCC measurement: `outer` repetitions, each timing the reference (the
 * same delay() work a thread would do alone, without the construct) and
 * then the test.  Both run `reps` units of work per repetition; the results
 * are medians over the repetitions of the time per unit, of the reference
 * time per unit, and of the per-repetition difference (the overhead).
 */
struct bench__result {
	double time_us, ref_us, ovh_us;
};

static inline struct bench__result bench__measure(void (*test)(int), void (*ref)(int), int reps,
						  int outer)
{
	double *tt = malloc(sizeof(double) * (size_t)outer * 3);
	double *tr = tt + outer, *ov = tt + 2 * outer;
	struct bench__result r = { 0, 0, 0 };
	if (!tt)
		return r;
	test(reps); /* one untimed repetition: first-touch, a tool's first encounters */
	for (int k = 0; k < outer; k++) {
		double t0 = bench__now_us();
		ref(reps);
		double t1 = bench__now_us();
		test(reps);
		double t2 = bench__now_us();
		tr[k] = (t1 - t0) / reps;
		tt[k] = (t2 - t1) / reps;
		ov[k] = tt[k] - tr[k];
	}
	r.time_us = bench__median(tt, outer);
	r.ref_us = bench__median(tr, outer);
	r.ovh_us = bench__median(ov, outer);
	free(tt);
	return r;
}

#endif
