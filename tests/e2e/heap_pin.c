/* SPDX-License-Identifier: MIT */
/*
 * A program whose page faults depend on glibc's heap being its own. Each
 * iteration takes BLOCKS temporaries of 1 MiB from the main heap, runs a few
 * parallel regions (new calling contexts the first time, where a tool that
 * used malloc would take small blocks), and frees the temporaries: the top
 * of the heap is then free and larger than the trim threshold, so glibc
 * gives it back and the next iteration faults its pages in again. A block
 * another library takes at the top meanwhile pins the heap: no trim, almost
 * no faults, a faster program.
 *
 * Prints "heap_pin: minflt N iters I" with the faults of the loop alone
 * (getrusage), and the sums it computed, on stdout.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define BLOCKS 12
#define BLOCK (1u << 20)

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Three parallel regions at three call sites, each from its own function. */
__attribute__((noinline)) static double scale(double *a, size_t n, double f)
{
	double s = 0;

#pragma omp parallel for reduction(+ : s)
	for (size_t i = 0; i < n; i++) {
		a[i] *= f;
		s += a[i];
	}
	return s;
}

__attribute__((noinline)) static double shift(double *a, size_t n, double d)
{
	double s = 0;

#pragma omp parallel for reduction(+ : s)
	for (size_t i = 0; i < n; i++) {
		a[i] += d;
		s += a[i];
	}
	return s;
}

__attribute__((noinline)) static double square(double *a, size_t n)
{
	double s = 0;

#pragma omp parallel for reduction(+ : s)
	for (size_t i = 0; i < n; i++)
		s += a[i] * a[i];
	return s;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 40;
	size_t n = BLOCK / sizeof(double);
	double *tmp[BLOCKS], sum = 0;
	long before;
	void *big;

	/* Freeing one mmapped block raises glibc's mmap threshold above it (and
	 * the trim threshold to twice that): the temporaries below then come
	 * from the heap, as a long-running program's do. */
	big = malloc(4u << 20);
	memset(big, 1, 4u << 20);
	/* Seen by something the compiler cannot remove: a malloc-free pair it
	 * can prove unused goes away whole. */
	__asm__ volatile("" : : "r"(big) : "memory");
	free(big);
	/* The runtime starts its threads and takes its own blocks now, not
	 * above the first temporaries. */
#pragma omp parallel
	(void)omp_get_thread_num();
	before = minflt();
	for (int it = 0; it < iters; it++) {
		for (int b = 0; b < BLOCKS; b++) {
			tmp[b] = malloc(BLOCK);
			for (size_t i = 0; i < n; i++)
				tmp[b][i] = (double)(i % 7);
		}
		for (int b = 0; b < BLOCKS; b++) {
			sum += scale(tmp[b], n, 0.5);
			sum += shift(tmp[b], n, 1.0);
			sum += square(tmp[b], n);
		}
		for (int b = BLOCKS - 1; b >= 0; b--)
			free(tmp[b]);
	}
	fprintf(stderr, "heap_pin: minflt %ld iters %d\n", minflt() - before, iters);
	printf("sum %.1f\n", sum);
	return 0;
}
