/* SPDX-License-Identifier: MIT */
/*
 * Four threads of GCC's libgomp (no OMPT) do the same work. Each measures
 * its own CPU time around the work (CLOCK_THREAD_CPUTIME_ID) and prints it
 * on stderr with its thread id: "gomp times: t0 tid N cpu_ns N t1 ...".
 * Usage: gomp_threads [ITERATIONS]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4

static __attribute__((noinline)) double spin(long n)
{
	volatile double x = 0;

	for (long i = 0; i < n; i++)
		x += (double)i * 0.5;
	return x;
}

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 150000000;
	long long cpu[THREADS] = { 0 };
	long tid[THREADS] = { 0 };
	double sum = 0;

#pragma omp parallel num_threads(THREADS) reduction(+ : sum)
	{
		int me = omp_get_thread_num();
		long long t0 = thread_cpu_ns();

		sum += spin(n);
		cpu[me] = thread_cpu_ns() - t0;
		tid[me] = (long)syscall(SYS_gettid);
	}
	fprintf(stderr, "gomp times:");
	for (int i = 0; i < THREADS; i++)
		fprintf(stderr, " t%d tid %ld cpu_ns %lld", i, tid[i], cpu[i]);
	fprintf(stderr, "\n");
	printf("threads %d sum %s\n", omp_get_max_threads() >= 1 ? THREADS : 0, sum > 0 ? "positive" : "zero");
	return 0;
}
