/* SPDX-License-Identifier: MIT */
/*
 * Three OpenMP patterns the CPU advice (docs/ADVICE.md, "OpenMP") names,
 * each with what it would save measured by the program itself:
 *
 *  - imbalanced(): a region whose thread 0 works 3 units and the others 1
 *    (sleeps, so that the split holds on a busy machine): a balanced
 *    schedule would end each instance at the threads' mean work instead of
 *    their longest, saving the sum of (max - mean) of the per-thread work;
 *  - tiny(): many regions of a few microseconds of work each, whose
 *    fork/join cost is the region's wall time (around the construct, on the
 *    thread that starts it) less its longest thread's work;
 *  - serial(): a serial stretch of known CPU time between regions, which
 *    T threads would run T times faster (Amdahl).
 *
 * With SAMPLE_TIMES=1 it prints those measurements on stderr, one line
 * "advice times: imbalance saved_ns N tiny instances N overhead_ns N serial
 * cpu_ns N threads N". Each phase's construct is marked for the tests by a
 * comment naming it.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define IMB_INSTANCES 30
#define IMB_UNIT_NS 5000000L
#define TINY_INSTANCES 20000
#define SERIAL_STRETCHES 4
#define SERIAL_NS 60000000L
#define MAX_THREADS 64

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* Per thread of the current instance: its work's wall time. */
static uint64_t work_ns[MAX_THREADS];

static uint64_t max_less_mean(int n)
{
	uint64_t max = 0, sum = 0;

	for (int i = 0; i < n; i++) {
		sum += work_ns[i];
		max = work_ns[i] > max ? work_ns[i] : max;
	}
	return n ? max - sum / (uint64_t)n : 0;
}

static uint64_t longest(int n)
{
	uint64_t max = 0;

	for (int i = 0; i < n; i++)
		max = work_ns[i] > max ? work_ns[i] : max;
	return max;
}

__attribute__((noinline)) static uint64_t imbalanced(void)
{
	uint64_t saved = 0;

	for (int k = 0; k < IMB_INSTANCES; k++) {
		int n = 1;

#pragma omp parallel // REGION_IMBALANCE
		{
			int me = omp_get_thread_num();
			uint64_t t0 = now_ns(CLOCK_MONOTONIC);

			sleep_ns(me == 0 ? 3 * IMB_UNIT_NS : IMB_UNIT_NS);
			if (me < MAX_THREADS)
				work_ns[me] = now_ns(CLOCK_MONOTONIC) - t0;
			if (me == 0)
				n = omp_get_num_threads();
		}
		saved += max_less_mean(n < MAX_THREADS ? n : MAX_THREADS);
	}
	return saved;
}

static volatile double sink;

__attribute__((noinline)) static uint64_t tiny(void)
{
	uint64_t overhead = 0;

	for (int k = 0; k < TINY_INSTANCES; k++) {
		int n = 1;
		uint64_t t0 = now_ns(CLOCK_MONOTONIC), t1;

#pragma omp parallel // REGION_TINY
		{
			int me = omp_get_thread_num();
			uint64_t w0 = now_ns(CLOCK_MONOTONIC);
			double s = 0;

			for (int i = 0; i < 20; i++)
				s += (double)(i % 7) * 0.5;
			sink = s;
			if (me < MAX_THREADS)
				work_ns[me] = now_ns(CLOCK_MONOTONIC) - w0;
			if (me == 0)
				n = omp_get_num_threads();
		}
		t1 = now_ns(CLOCK_MONOTONIC);
		overhead += t1 - t0 - longest(n < MAX_THREADS ? n : MAX_THREADS);
	}
	return overhead;
}

/* CPU-bound work on the calling thread for ns of its CPU time; returns the
 * CPU time it took. */
/*
 * About ns of this thread's CPU time, returned as measured. The clock is
 * read on a few growing rounds only, the rest is a count of iterations:
 * reading a CPU-time clock every few microseconds makes some kernels lose
 * a CPU-time timer's signal under load (tests/e2e/plain_cpu.c).
 */
__attribute__((noinline)) static uint64_t serial_stretch(long ns)
{
	uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), spent = 0, done = 0, n = 1u << 14, rest;
	double s = 0;

	while (spent < (uint64_t)ns / 8) {
		for (uint64_t i = 0; i < n; i++)
			s += (double)(i % 7) * 0.5;
		done += n;
		n *= 2;
		spent = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	}
	rest = spent < (uint64_t)ns ? (uint64_t)((double)done * (double)((uint64_t)ns - spent) / (double)spent) : 0;
	for (uint64_t i = 0; i < rest; i++)
		s += (double)(i % 7) * 0.5;
	sink = s;
	return now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
}

__attribute__((noinline)) static uint64_t serial(int *threads)
{
	uint64_t cpu = 0;

	for (int k = 0; k < SERIAL_STRETCHES; k++) {
		cpu += serial_stretch(SERIAL_NS); // SERIAL_CALL
#pragma omp parallel // REGION_SERIAL
		{
			if (omp_get_thread_num() == 0)
				*threads = omp_get_num_threads();
			sleep_ns(5000000L);
		}
	}
	return cpu;
}

int main(void)
{
	const char *st = getenv("SAMPLE_TIMES");
	uint64_t imb, ovh, ser;
	int threads = 1;

	imb = imbalanced();
	__asm__ volatile("");
	ovh = tiny();
	__asm__ volatile("");
	ser = serial(&threads);
	__asm__ volatile("");
	if (st && st[0] == '1')
		fprintf(stderr,
			"advice times: imbalance saved_ns %llu tiny instances %d overhead_ns %llu serial cpu_ns %llu "
			"threads %d\n",
			(unsigned long long)imb, TINY_INSTANCES, (unsigned long long)ovh, (unsigned long long)ser,
			threads);
	printf("done\n");
	return 0;
}
