/* SPDX-License-Identifier: MIT */
/*
 * A time loop that maps the same input at every step: the uploads after
 * the first send the same bytes again. `resend` maps x (N doubles, unchanged)
 * and y (changed at every step) in each of STEPS target regions; `resend
 * fixed` keeps x on the device with a target data region around the loop,
 * the fix the report advises. Each prints (on stderr) the seconds its loop
 * took, so that the estimated gain can be checked against the fix's.
 *
 * Per run of the loop: STEPS uploads of x (N * 8 bytes each) unfixed, one
 * fixed; STEPS uploads and downloads of y (M * 8 bytes).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N (1 << 20)
#define M 1024
#define STEPS 20

static double x[N], y[M];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noinline)) static void step(int s)
{
#pragma omp target map(to : x[0:N]) map(tofrom : y[0:M])
	for (int j = 0; j < M; j++)
		y[j] += x[(long)j * (N / M) + s];
}

__attribute__((noinline)) static void loop(void)
{
	for (int s = 0; s < STEPS; s++)
		step(s);
}

__attribute__((noinline)) static void loop_fixed(void)
{
#pragma omp target data map(to : x[0:N])
	for (int s = 0; s < STEPS; s++)
		step(s);
}

int main(int argc, char **argv)
{
	int fixed = argc > 1 && !strcmp(argv[1], "fixed");
	double t0, sum = 0;

	for (long i = 0; i < N; i++)
		x[i] = (double)(i % 1000);
	t0 = now();
	if (fixed)
		loop_fixed();
	else
		loop();
	fprintf(stderr, "resend: %s loop %.3f s\n", fixed ? "fixed" : "unfixed", now() - t0);
	for (int j = 0; j < M; j++)
		sum += y[j];
	printf("resend: checksum %.1f\n", sum);
	return 0;
}
