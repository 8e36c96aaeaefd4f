/* SPDX-License-Identifier: MIT */
/*
 * OpenACC constructs at known call sites with known counts and bytes:
 * saxpy() runs a compute construct 3 times per step, scale() once, for
 * STEPS steps; stage() moves the arrays with enter/exit data and update
 * once per step. On a device each saxpy construct uploads x and y and
 * downloads y (N floats each); scale uploads and downloads y.
 */
#include <stdio.h>

#define N 100000
#define STEPS 10

static float x[N], y[N];

__attribute__((noinline)) static void saxpy(float a)
{
#pragma acc parallel loop copyin(x[0:N]) copy(y[0:N])
	for (int i = 0; i < N; i++)
		y[i] += a * x[i];
}

__attribute__((noinline)) static void scale(float s)
{
#pragma acc parallel loop copy(y[0:N])
	for (int i = 0; i < N; i++)
		y[i] *= s;
}

__attribute__((noinline)) static void stage(void)
{
#pragma acc enter data copyin(x[0:N])
#pragma acc update device(x[0:N])
#pragma acc exit data delete(x[0:N])
}

int main(void)
{
	double sum = 0.0;

	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 10);
		y[i] = 1.0f;
	}
	for (int step = 0; step < STEPS; step++) {
		for (int k = 0; k < 3; k++)
			saxpy(0.5f);
		scale(0.5f);
		stage();
	}
	for (int i = 0; i < N; i++)
		sum += y[i];
	printf("openacc: %d steps, checksum %.3f\n", STEPS, sum);
	return 0;
}
