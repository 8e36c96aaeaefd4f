/* SPDX-License-Identifier: MIT */
/*
 * Drives the Kokkos Tools entry points as Kokkos 4 does: dlopen of
 * $KOKKOS_TOOLS_LIBS (RTLD_NOW | RTLD_GLOBAL), dlsym of each kokkosp_*,
 * init with the interface version, request_tool_settings, then kernels
 * whose ids come from the tool's begin callbacks. Without the variable it
 * runs the same work with no tool, as Kokkos does.
 *
 * The helpers that call the tool carry mangled names of namespace Kokkos
 * (_ZN6Kokkos...), as Kokkos' template code instantiated in a program does:
 * the tool elides them, so each label hangs under the user's call in main.
 *
 * Known counts: parallel_for "axpy" 30 times from one site inside region
 * "solve", parallel_reduce "dot" 10, parallel_scan "prefix" 2, fence "sync"
 * 5, deep_copy "y <- x" 4 of 1 MiB, allocations of "x" and "y" (HostSpace,
 * 1 MiB each) freed at the end, section "phase" 3 times, the third opened
 * inside region "outer" and outliving its pop, with kernel "after" in it.
 * "axpy" runs an OpenMP parallel region; its CPU time is 3x that of "dot"
 * (serial); with SAMPLE_TIMES=1 the program prints the CPU time it measured
 * in each (all threads), "kokkos-driver: axpy N dot N" (ns), on stderr.
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kokkos/kokkosp.h"

/* The entry points' types, as Kokkos declares them (its C interface
 * header; kokkos/kokkosp.h is the tool's copy). */
#define KP(fn) __typeof__(&kokkosp_##fn) fn

typedef struct kokkosp_space_handle space;

static struct {
	KP(init_library);
	KP(finalize_library);
	KP(request_tool_settings);
	KP(begin_parallel_for);
	KP(end_parallel_for);
	KP(begin_parallel_reduce);
	KP(end_parallel_reduce);
	KP(begin_parallel_scan);
	KP(end_parallel_scan);
	KP(begin_fence);
	KP(end_fence);
	KP(push_profile_region);
	KP(pop_profile_region);
	KP(begin_deep_copy);
	KP(end_deep_copy);
	KP(allocate_data);
	KP(deallocate_data);
	KP(create_profile_section);
	KP(start_profile_section);
	KP(stop_profile_section);
	KP(destroy_profile_section);
} kp;

#define N (1 << 17) /* doubles: 1 MiB */
#define TEAMS 40 /* kernels whose OpenMP region Kokkos' side starts */

static double *x, *y;
static atomic_ullong axpy_ns, dot_ns;
static volatile double sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU work of @units units on the calling thread. */
static double spin(int units)
{
	double v = 1.0;

	for (long i = 0; i < units * 8000000L; i++)
		v = v * 1.0000001 + 1e-9;
	return v;
}

/* The functors, the user's code: frames of their own. */
__attribute__((noinline)) static void axpy_body(void)
{
	/* 1 unit on each of 2 threads, 30 calls: 60 units; dot's 2 units in
	 * 10 calls are 20: a 3:1 split. */
#pragma omp parallel num_threads(2)
	{
		uint64_t t0 = cpu_ns();
		double v = spin(1);

		for (int i = omp_get_thread_num(); i < N; i += 2)
			y[i] += 2.0 * x[i];
		sink = v;
		atomic_fetch_add_explicit(&axpy_ns, cpu_ns() - t0, memory_order_relaxed);
	}
}

__attribute__((noinline)) static void dot_body(void)
{
	uint64_t t0 = cpu_ns();
	double s = spin(2);

	for (int i = 0; i < N; i++)
		s += x[i] * y[i];
	sink = s;
	atomic_fetch_add_explicit(&dot_ns, cpu_ns() - t0, memory_order_relaxed);
}

__attribute__((noinline)) static void light_body(void)
{
	sink = spin(0) + x[0];
}

/* Kokkos' side, instantiated in the program: named in namespace Kokkos. */
__attribute__((noinline)) static void kk_for(const char *name, void (*f)(void))
	__asm__("_ZN6Kokkos12parallel_forEPKcPFvvE");
__attribute__((noinline)) static void kk_for(const char *name, void (*f)(void))
{
	uint64_t id = 0;

	if (kp.begin_parallel_for)
		kp.begin_parallel_for(name, 0, &id);
	f();
	if (kp.end_parallel_for)
		kp.end_parallel_for(id);
}

/* A kernel whose OpenMP region Kokkos' side starts, as the OpenMP
 * backend's ParallelFor<...>::execute does: no frame of the program's
 * between the label's opener and the fork. */
__attribute__((noinline)) static void kk_for_team(const char *name, void (*f)(void))
	__asm__("_ZN6Kokkos9team_forEPKcPFvvE");
__attribute__((noinline)) static void kk_for_team(const char *name, void (*f)(void))
{
	uint64_t id = 0;

	if (kp.begin_parallel_for)
		kp.begin_parallel_for(name, 0, &id);
#pragma omp parallel num_threads(2)
	f();
	if (kp.end_parallel_for)
		kp.end_parallel_for(id);
}

__attribute__((noinline)) static void kk_reduce(const char *name, void (*f)(void))
	__asm__("_ZN6Kokkos15parallel_reduceEPKcPFvvE");
__attribute__((noinline)) static void kk_reduce(const char *name, void (*f)(void))
{
	uint64_t id = 0;

	if (kp.begin_parallel_reduce)
		kp.begin_parallel_reduce(name, 0, &id);
	f();
	if (kp.end_parallel_reduce)
		kp.end_parallel_reduce(id);
}

__attribute__((noinline)) static void kk_scan(const char *name, void (*f)(void))
	__asm__("_ZN6Kokkos13parallel_scanEPKcPFvvE");
__attribute__((noinline)) static void kk_scan(const char *name, void (*f)(void))
{
	uint64_t id = 0;

	if (kp.begin_parallel_scan)
		kp.begin_parallel_scan(name, 0, &id);
	f();
	if (kp.end_parallel_scan)
		kp.end_parallel_scan(id);
}

__attribute__((noinline)) static void kk_fence(const char *name) __asm__("_ZN6Kokkos5fenceEPKc");
__attribute__((noinline)) static void kk_fence(const char *name)
{
	uint64_t id = 0;

	if (kp.begin_fence)
		kp.begin_fence(name, 0, &id);
	if (kp.end_fence)
		kp.end_fence(id);
}

__attribute__((noinline)) static void kk_deep_copy(double *dst, const double *src)
	__asm__("_ZN6Kokkos9deep_copyEPdPKd");
__attribute__((noinline)) static void kk_deep_copy(double *dst, const double *src)
{
	space host = { "HostSpace" };

	if (kp.begin_deep_copy)
		kp.begin_deep_copy(host, "y", dst, host, "x", src, N * sizeof(double));
	memcpy(dst, src, N * sizeof(double));
	if (kp.end_deep_copy)
		kp.end_deep_copy();
}

__attribute__((noinline)) static double *kk_alloc(const char *label) __asm__("_ZN6Kokkos4ViewEPKc");
__attribute__((noinline)) static double *kk_alloc(const char *label)
{
	space host = { "HostSpace" };
	double *p = calloc(N, sizeof(double));

	if (p && kp.allocate_data)
		kp.allocate_data(host, label, p, N * sizeof(double));
	return p;
}

__attribute__((noinline)) static void kk_free(const char *label, double *p) __asm__("_ZN6Kokkos4freeEPKcPd");
__attribute__((noinline)) static void kk_free(const char *label, double *p)
{
	space host = { "HostSpace" };

	if (kp.deallocate_data)
		kp.deallocate_data(host, label, p, N * sizeof(double));
	free(p);
}

static void *sym(void *h, const char *name)
{
	return h ? dlsym(h, name) : NULL;
}

static void load_tool(void)
{
	const char *libs = getenv("KOKKOS_TOOLS_LIBS");
	void *h;
	struct kokkosp_tool_settings s = { .requires_global_fencing = true };

	if (!libs || !*libs)
		return;
	h = dlopen(libs, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "kokkos-driver: cannot load %s: %s\n", libs, dlerror());
		return;
	}
#define LOOKUP(fn) *(void **)&kp.fn = sym(h, "kokkosp_" #fn)
	LOOKUP(init_library);
	LOOKUP(finalize_library);
	LOOKUP(request_tool_settings);
	LOOKUP(begin_parallel_for);
	LOOKUP(end_parallel_for);
	LOOKUP(begin_parallel_reduce);
	LOOKUP(end_parallel_reduce);
	LOOKUP(begin_parallel_scan);
	LOOKUP(end_parallel_scan);
	LOOKUP(begin_fence);
	LOOKUP(end_fence);
	LOOKUP(push_profile_region);
	LOOKUP(pop_profile_region);
	LOOKUP(begin_deep_copy);
	LOOKUP(end_deep_copy);
	LOOKUP(allocate_data);
	LOOKUP(deallocate_data);
	LOOKUP(create_profile_section);
	LOOKUP(start_profile_section);
	LOOKUP(stop_profile_section);
	LOOKUP(destroy_profile_section);
#undef LOOKUP
	if (kp.init_library)
		kp.init_library(0, 20240906u, 0, NULL);
	if (kp.request_tool_settings)
		kp.request_tool_settings(1, &s);
	/* The tool measures device work itself: no fence around kernels. */
	if (s.requires_global_fencing)
		fprintf(stderr, "kokkos-driver: the tool asks for global fences\n");
}

/* What a broken program or an older Kokkos may do: ends with ids never
 * handed out, pops and stops with nothing open, NULL names, a section
 * never created, a region left open at exit. */
static void misuse(void)
{
	space host = { "HostSpace" };
	uint32_t sec = 0;
	uint64_t id = 0;

	if (!kp.init_library)
		return;
	kp.end_parallel_for(12345);
	kp.end_parallel_reduce(0);
	kp.end_fence(UINT64_MAX);
	kp.pop_profile_region();
	kp.end_deep_copy();
	kp.stop_profile_section(7);
	kp.start_profile_section(99);
	kp.create_profile_section(NULL, &sec);
	kp.create_profile_section("s", NULL);
	kp.begin_parallel_for(NULL, 0, &id);
	kp.begin_parallel_reduce("no id", 0, NULL);
	kp.push_profile_region(NULL);
	kp.begin_deep_copy(host, NULL, NULL, host, NULL, NULL, 0);
	kp.allocate_data(host, NULL, NULL, 0);
	kp.deallocate_data(host, "never allocated", NULL, 8);
	kp.end_parallel_for(id);
	kp.begin_parallel_for("left open", 0, &id);
	kp.push_profile_region("left open");
}

int main(int argc, char **argv)
{
	uint32_t phase = 0;
	double check = 0;

	load_tool();
	if (argc > 1 && !strcmp(argv[1], "misuse")) {
		misuse();
		printf("kokkos-driver: misused\n");
		return 3;
	}
	x = kk_alloc("x");
	y = kk_alloc("y");
	if (!x || !y)
		return 1;
	for (int i = 0; i < N; i++)
		x[i] = i * 0.5;
	if (kp.create_profile_section)
		kp.create_profile_section("phase", &phase);

	if (kp.push_profile_region)
		kp.push_profile_region("solve");
	for (int r = 0; r < 30; r++)
		kk_for("axpy", axpy_body);
	if (kp.pop_profile_region)
		kp.pop_profile_region();

	for (int r = 0; r < 10; r++)
		kk_reduce("dot", dot_body);
	for (int r = 0; r < 2; r++)
		kk_scan("prefix", light_body);
	for (int r = 0; r < TEAMS; r++)
		kk_for_team("team", light_body);
	for (int r = 0; r < 5; r++)
		kk_fence("sync");
	for (int r = 0; r < 4; r++)
		kk_deep_copy(y, x);

	for (int r = 0; r < 2; r++) {
		if (kp.start_profile_section)
			kp.start_profile_section(phase);
		kk_for("in_phase", light_body);
		if (kp.stop_profile_section)
			kp.stop_profile_section(phase);
	}
	/* A section started inside a region and stopped after its pop. */
	if (kp.push_profile_region)
		kp.push_profile_region("outer");
	if (kp.start_profile_section)
		kp.start_profile_section(phase);
	if (kp.pop_profile_region)
		kp.pop_profile_region();
	kk_for("after", light_body);
	if (kp.stop_profile_section)
		kp.stop_profile_section(phase);
	if (kp.destroy_profile_section)
		kp.destroy_profile_section(phase);

	for (int i = 0; i < N; i++)
		check += y[i];
	printf("kokkos-driver: checksum %.1f\n", check);
	kk_free("x", x);
	kk_free("y", y);
	if (kp.finalize_library)
		kp.finalize_library();
	if (getenv("SAMPLE_TIMES"))
		fprintf(stderr, "kokkos-driver: axpy %llu dot %llu\n",
			(unsigned long long)atomic_load(&axpy_ns), (unsigned long long)atomic_load(&dot_ns));
	return 0;
}
