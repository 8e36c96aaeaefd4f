// SPDX-License-Identifier: MIT
// Ground truth for attribution in optimized C++ (built with -O2 -g):
//  - a member function of a class template, named by its demangled name;
//  - two parallel regions in static functions inlined into one caller, at
//    two known lines: two contexts, each under its inlined function;
//  - a region two inlined calls deep;
//  - a region that is a function's last statement (a jump to the runtime);
//  - a region reached through a function whose last statement is a call,
//    compiled to a jump (a tail call): the caller's frame is rebuilt.
// Each construct runs ITERS times; the lines marked LINE_* are checked.
#include <cstdio>
#include <cstdlib>

#define ITERS 10

namespace physics {
template <typename T> struct Solver {
	T acc = 0;
	__attribute__((noinline)) void step(int n)
	{
#pragma omp parallel for reduction(+ : acc) // LINE_STEP
		for (int i = 0; i < n; i++)
			acc += (T)i * 0.5;
	}
};
} // namespace physics

static inline void scale(double *a, int n)
{
#pragma omp parallel for // LINE_SCALE
	for (int i = 0; i < n; i++)
		a[i] = a[i] * 0.5 + 1;
}

static inline void shift(double *a, int n)
{
#pragma omp parallel for // LINE_SHIFT
	for (int i = 0; i < n; i++)
		a[i] = a[i] + 2;
}

__attribute__((noinline)) void both(double *a, int n)
{
	scale(a, n); // LINE_CALL_SCALE
	shift(a, n); // LINE_CALL_SHIFT
}

// A region that is the function's last statement and captures no local: at
// -O2 the function jumps to the OpenMP runtime's fork, leaving no frame.
static double *g_a;
static int g_n;

__attribute__((noinline)) void jumper(void)
{
#pragma omp parallel for // LINE_JUMPER
	for (int i = 0; i < g_n; i++)
		g_a[i] += 3;
}

// Two levels of inlining: deep() > twice() > shift().
static inline void twice(double *a, int n)
{
	shift(a, n); // LINE_CALL_TWICE
	a[0] += 1;
}

__attribute__((noinline)) void deep(double *a, int n)
{
	twice(a, n); // LINE_CALL_DEEP
}

__attribute__((noinline)) void work(double *a, int n)
{
	scale(a, n); // LINE_CALL_WORK
}

// Its last statement is a call: at -O2 a jump, and no frame of its own.
__attribute__((noinline)) void relay(double *a, int n)
{
	work(a, n); // LINE_TAIL
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	double *a = (double *)calloc(n, sizeof(double));
	physics::Solver<double> s;

	g_a = a;
	g_n = n;

	for (int r = 0; r < ITERS; r++) {
		s.step(n);
		both(a, n);
		relay(a, n); // LINE_RELAY
		deep(a, n);
		jumper(); // LINE_CALL_JUMPER
	}
	std::printf("%.1f %.1f\n", s.acc, a[n / 2]);
	free(a);
	return 0;
}
