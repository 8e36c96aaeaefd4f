/* SPDX-License-Identifier: MIT */
/*
 * OpenMP target offload moving a known number of bytes.
 *
 * site() maps three arrays of n doubles (to, from, tofrom) and runs one
 * kernel; path_small() calls it SMALL_CALLS times with n = SMALL_N,
 * path_large() LARGE_CALLS times with n = LARGE_N, so that the same
 * construct appears under two callers with different bytes. resident()
 * keeps arrays on the device with target enter/exit data, moves parts of
 * them with target update, and runs a kernel on them in between.
 *
 * Per call of site(n): 3 allocations and 3 deletes, 2 copies host to device
 * (a, c) and 2 device to host (b, c) of n * 8 bytes each, 1 kernel.
 * resident(): enter data allocates 2 * N * 8 bytes and copies N * 8 to the
 * device; update copies UPD_TO * 8 to and UPD_FROM * 8 from the device;
 * exit data copies N * 8 back and releases both arrays.
 *
 * a does not change between calls of site(): its uploads after the first
 * send the same bytes again (c's change at every call).
 *
 * Build: clang -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu (host offload)
 *        clang -fopenmp --offload-arch=sm_90 -fopenmp-target-jit (NVIDIA)
 */
#include <stdio.h>

#define N 4096
#define SMALL_N 256
#define SMALL_CALLS 3
#define LARGE_N 1024
#define LARGE_CALLS 5
#define UPD_TO 100
#define UPD_FROM 200

static double a[N], b[N], c[N];

/* Results are returned and used by the callers, so that no call is a tail
 * call: each caller keeps its frame, and its context shows. */
__attribute__((noinline)) static double site(int n)
{
#pragma omp target map(to : a[0:n]) map(from : b[0:n]) map(tofrom : c[0:n])
	for (int i = 0; i < n; i++) {
		b[i] = 2.0 * a[i];
		c[i] += 1.0;
	}
	return b[n - 1];
}

__attribute__((noinline)) static double path_small(void)
{
	double s = 0;

	for (int k = 0; k < SMALL_CALLS; k++)
		s += site(SMALL_N);
	return s;
}

__attribute__((noinline)) static double path_large(void)
{
	double s = 0;

	for (int k = 0; k < LARGE_CALLS; k++)
		s += site(LARGE_N);
	return s;
}

__attribute__((noinline)) static double resident(void)
{
#pragma omp target enter data map(to : a[0:N]) map(alloc : b[0:N])
#pragma omp target
	for (int i = 0; i < N; i++)
		b[i] = a[i] + 1.0;
	for (int i = 0; i < UPD_TO; i++)
		a[i] = -1.0;
#pragma omp target update to(a[0:UPD_TO])
#pragma omp target update from(b[0:UPD_FROM])
#pragma omp target exit data map(from : b[0:N]) map(delete : a[0:N])
	return b[0];
}

int main(void)
{
	double sum = 0;

	for (int i = 0; i < N; i++)
		a[i] = i;
	sum += path_small();
	sum += path_large();
	sum += resident();
	for (int i = 0; i < N; i++)
		sum += b[i] + c[i];
	printf("transfer: checksum %.1f\n", sum);
	return 0;
}
