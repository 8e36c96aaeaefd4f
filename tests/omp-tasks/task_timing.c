/* SPDX-License-Identifier: MIT */
/*
 * Explicit tasks of four constructs, created by one thread and run by the
 * team:
 *   long_tasks  LONG_N tasks of LONG_US each: long enough to time each one;
 *   tiny_tasks  TINY_N tasks of TINY_US each: very short and very many;
 *   make_one    one construct and its taskwait reached along two call
 *               paths, path_a and path_b, interleaved (A A A B ...):
 *               PATH_A_N and PATH_B_N tasks and waits, which must stay two
 *               contexts each.
 * A task body spins on CLOCK_MONOTONIC until its time has passed, so that
 * it lasts that long of wall time however loaded the machine is. With
 * HELD_UP=N in the environment, the first N tiny tasks last HELD_US each,
 * as if the machine had held them up. With SPLIT_TASKS=N, a parallel
 * region follows in which each thread creates and waits for N tiny tasks
 * of one more construct, split_tasks, one at a time, and measures the wall
 * time of its taskwaits (split_wait). With MANY_TASKS=N,
 * one thread then creates N tiny tasks at each of MANY_N more constructs,
 * many_0 ... many_71, one construct after another. With WAITED_MS=N,
 * thread 0 of two creates a task of N ms, and after a 30 ms spin waits
 * for it in a taskwait (the other thread takes it at its barrier
 * meanwhile); SAMPLE_TIMES=1 then also prints the waiting thread's CPU
 * time in the taskwait (wait cpu_ns).
 *
 * Prints its counts on stdout. With SAMPLE_TIMES=1 in the environment it
 * also prints on stderr, per construct, the wall time of its task bodies
 * (body_ns) and of the longest one (max_ns), measured by itself.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LONG_N 200
#define LONG_US 300
#define TINY_N 20000
#define TINY_US 1
#define HELD_US 50
#define PATH_A_N 300
#define PATH_B_N 100

enum { LONG, TINY, PATHS, SPLIT, MANY, WAITED, SPLIT_WAIT, N_KINDS };
static const char *const kind_names[N_KINDS] = { "long", "tiny", "paths", "split", "many", "waited", "split_wait" };
static uint64_t wait_cpu_ns;
static _Atomic uint64_t body_ns[N_KINDS], max_ns[N_KINDS];
static _Atomic long done[N_KINDS], by_path[2];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A time d of kind: its sum and the longest. */
static void account(int kind, uint64_t d)
{
	uint64_t m;

	atomic_fetch_add_explicit(&body_ns[kind], d, memory_order_relaxed);
	m = atomic_load_explicit(&max_ns[kind], memory_order_relaxed);
	while (d > m && !atomic_compare_exchange_weak_explicit(&max_ns[kind], &m, d, memory_order_relaxed,
							      memory_order_relaxed))
		;
}

__attribute__((noinline)) static void body(int kind, uint64_t ns)
{
	uint64_t t0 = now_ns(), t1;

	while ((t1 = now_ns()) - t0 < ns)
		;
	account(kind, t1 - t0);
	atomic_fetch_add_explicit(&done[kind], 1, memory_order_relaxed);
}

__attribute__((noinline)) static void long_tasks(void)
{
	for (int k = 0; k < LONG_N; k++) {
#pragma omp task
		body(LONG, LONG_US * 1000u);
	}
}

__attribute__((noinline)) static void tiny_tasks(int held)
{
	for (int k = 0; k < TINY_N; k++) {
#pragma omp task
		body(TINY, (k < held ? HELD_US : TINY_US) * 1000u);
	}
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void waiter(uint64_t ns)
{
	uint64_t t0 = now_ns(), c0;

#pragma omp task
	body(WAITED, ns);
	while (now_ns() - t0 < 30000000u)
		;
	c0 = cpu_ns();
#pragma omp taskwait
	wait_cpu_ns = cpu_ns() - c0;
}

__attribute__((noinline)) static void split_tasks(int n)
{
	for (int k = 0; k < n; k++) {
		uint64_t t0;

#pragma omp task
		body(SPLIT, TINY_US * 1000u);
		t0 = now_ns();
#pragma omp taskwait
		account(SPLIT_WAIT, now_ns() - t0);
	}
}

/* MANY_N constructs of tiny tasks, more than a thread keeps judgements of. */
#define MANY_N 72
#define MANY_LIST \
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) \
	X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) \
	X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) \
	X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) \
	X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) \
	X(60) X(61) X(62) X(63) X(64) X(65) X(66) X(67) X(68) X(69) X(70) X(71)
#define X(k)                                                       \
	__attribute__((noinline)) static void many_##k(int n)      \
	{                                                          \
		for (int i = 0; i < n; i++) {                      \
			_Pragma("omp task") body(MANY, TINY_US * 1000u); \
		}                                                  \
	}
MANY_LIST
#undef X

static void (*const many[MANY_N])(int) = {
#define X(k) many_##k,
	MANY_LIST
#undef X
};

__attribute__((noinline)) static void make_one(int path)
{
#pragma omp task firstprivate(path)
	{
		body(PATHS, 1000);
		atomic_fetch_add_explicit(&by_path[path], 1, memory_order_relaxed);
	}
	/* The constructs' return addresses are in make_one, the same along
	 * both paths, which only the frames below tell apart. */
#pragma omp taskwait
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) static void path_a(void)
{
	make_one(0);
	__asm__ volatile("" ::: "memory"); /* no tail call: path_a stays a frame */
}

__attribute__((noinline)) static void path_b(void)
{
	make_one(1);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
#pragma omp parallel
#pragma omp single
	{
		long_tasks();
		tiny_tasks(getenv("HELD_UP") ? atoi(getenv("HELD_UP")) : 0);
		for (int k = 0; k < PATH_A_N + PATH_B_N; k++) {
			if (k % 4 == 3)
				path_b();
			else
				path_a();
		}
#pragma omp taskwait
	}
	if (getenv("SPLIT_TASKS")) {
		int n = atoi(getenv("SPLIT_TASKS"));

#pragma omp parallel
		split_tasks(n);
		printf("split_tasks %ld\n", atomic_load(&done[SPLIT]));
	}
	if (getenv("MANY_TASKS")) {
		int n = atoi(getenv("MANY_TASKS"));

#pragma omp parallel
#pragma omp single
		for (int k = 0; k < MANY_N; k++)
			many[k](n);
		printf("many_tasks %ld\n", atomic_load(&done[MANY]));
	}
	if (getenv("WAITED_MS")) {
		uint64_t ns = (uint64_t)atoi(getenv("WAITED_MS")) * 1000000u;

#pragma omp parallel num_threads(2)
		if (omp_get_thread_num() == 0)
			waiter(ns);
		printf("waited %ld\n", atomic_load(&done[WAITED]));
	}
	printf("long_tasks %ld\ntiny_tasks %ld\npath_a %ld\npath_b %ld\n", atomic_load(&done[LONG]),
	       atomic_load(&done[TINY]), atomic_load(&by_path[0]), atomic_load(&by_path[1]));
	if (getenv("SAMPLE_TIMES")) {
		fprintf(stderr, "task_timing times:");
		for (int k = 0; k < N_KINDS; k++)
			fprintf(stderr, " %s body_ns %llu max_ns %llu", kind_names[k],
				(unsigned long long)atomic_load(&body_ns[k]), (unsigned long long)atomic_load(&max_ns[k]));
		fprintf(stderr, " wait cpu_ns %llu\n", (unsigned long long)wait_cpu_ns);
	}
	return 0;
}
