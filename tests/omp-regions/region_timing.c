/* SPDX-License-Identifier: MIT */
/*
 * Two parallel constructs, run one after the other:
 *   short_regions  SHORT_N regions, each a worksharing loop with a
 *                  reduction whose iterations spin SHORT_US: too short to
 *                  time each team;
 *   long_regions   LONG_N regions in which each thread spins LONG_US: long
 *                  enough to time each one.
 * A spin is on CLOCK_MONOTONIC, so it lasts that long of wall time however
 * loaded the machine is.
 *
 * Prints its results on stdout. With SAMPLE_TIMES=1 in the environment it
 * also prints on stderr, per construct, the wall time its threads spent in
 * the regions' bodies (work_ns, summed over threads and regions) and the
 * longest one thread spent in one region (max_ns), measured by itself; and
 * the wall time of each of the first FIRST_N short regions, around the
 * construct ("region_timing first:"), what a tool judges the construct by;
 * and for the short construct est_ns, its work as a tool that samples it
 * estimates it (ompt/ompt-internal.h): the first FIRST_N regions in full,
 * then region k when k % SAMPLE_EVERY is SAMPLE_EVERY / 2, times
 * SAMPLE_EVERY. A region the machine held up counts there as it does in
 * the tool's estimate.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SHORT_N 3000
#define SHORT_US 4
#define LONG_N 20
#define LONG_US 10000
#define FIRST_N 16
#define SAMPLE_EVERY 16

enum { SHORT, LONG, N_KINDS };
static const char *const kind_names[N_KINDS] = { "short", "long" };
static _Atomic uint64_t work_ns[N_KINDS], max_ns[N_KINDS], est_ns;
static uint64_t first_ns[FIRST_N];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t spin(uint64_t ns)
{
	uint64_t t0 = now_ns(), t1;

	while ((t1 = now_ns()) - t0 < ns)
		;
	return t1 - t0;
}

/* One thread's body of one region took t1 - t0. Relaxed: the totals are
 * read by the initial thread after the regions' joins, which order them. */
static void account(int kind, uint64_t t0, uint64_t t1)
{
	uint64_t d = t1 - t0, m;

	atomic_fetch_add_explicit(&work_ns[kind], d, memory_order_relaxed);
	m = atomic_load_explicit(&max_ns[kind], memory_order_relaxed);
	while (d > m && !atomic_compare_exchange_weak_explicit(&max_ns[kind], &m, d, memory_order_relaxed,
							      memory_order_relaxed))
		;
}

__attribute__((noinline)) static uint64_t short_regions(void)
{
	uint64_t total = 0;

	for (int k = 0; k < SHORT_N; k++) {
		uint64_t sum = 0, r0 = now_ns();

#pragma omp parallel
		{
			uint64_t t0 = now_ns(), t1;
			int n = omp_get_num_threads();

			/* nowait: the region's own barrier is the one wait. */
#pragma omp for schedule(static) reduction(+ : sum) nowait
			for (int i = 0; i < n; i++)
				sum += spin(SHORT_US * 1000u) > 0;
			t1 = now_ns();
			account(SHORT, t0, t1);
			if (k < FIRST_N)
				atomic_fetch_add_explicit(&est_ns, t1 - t0, memory_order_relaxed);
			else if (k % SAMPLE_EVERY == SAMPLE_EVERY / 2)
				atomic_fetch_add_explicit(&est_ns, SAMPLE_EVERY * (t1 - t0), memory_order_relaxed);
		}
		if (k < FIRST_N)
			first_ns[k] = now_ns() - r0;
		total += sum;
	}
	return total;
}

__attribute__((noinline)) static uint64_t long_regions(void)
{
	_Atomic uint64_t total = 0;

	for (int k = 0; k < LONG_N; k++) {
#pragma omp parallel
		{
			uint64_t t0 = now_ns();

			spin(LONG_US * 1000u);
			account(LONG, t0, now_ns());
			atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
		}
	}
	return atomic_load(&total);
}

int main(void)
{
	uint64_t s = short_regions(), l = long_regions();

	printf("short_regions %llu\nlong_regions %llu\n", (unsigned long long)s, (unsigned long long)l);
	if (getenv("SAMPLE_TIMES")) {
		fprintf(stderr, "region_timing times:");
		for (int k = 0; k < N_KINDS; k++) {
			fprintf(stderr, " %s work_ns %llu max_ns %llu", kind_names[k],
				(unsigned long long)atomic_load(&work_ns[k]), (unsigned long long)atomic_load(&max_ns[k]));
			if (k == SHORT)
				fprintf(stderr, " est_ns %llu", (unsigned long long)atomic_load(&est_ns));
		}
		fprintf(stderr, "\nregion_timing first:");
		for (int k = 0; k < FIRST_N; k++)
			fprintf(stderr, " %llu", (unsigned long long)first_ns[k]);
		fprintf(stderr, "\n");
	}
	return 0;
}
