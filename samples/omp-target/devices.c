/* SPDX-License-Identifier: MIT */
/*
 * OpenMP target offload to two devices at once: a parallel region of two
 * threads in which thread d runs REPS target regions with device(d) on a
 * slice of SLICE doubles of its own (tofrom). With one device, both threads
 * use it. The profile must show REPS regions per thread under
 * on_devices's parallel region, and kernels on each device.
 */
#include <omp.h>
#include <stdio.h>

#define REPS 10
#define SLICE 4096

static double y[2 * SLICE];

__attribute__((noinline)) static double on_devices(int devices)
{
#pragma omp parallel num_threads(2)
	{
		int d = omp_get_thread_num() % devices;
		double *p = y + omp_get_thread_num() * SLICE;

		for (int r = 0; r < REPS; r++) {
#pragma omp target device(d) map(tofrom : p[0:SLICE])
			for (int i = 0; i < SLICE; i++)
				p[i] += 1.0;
		}
	}
	return y[0]; /* used by the caller: the fork is no tail call */
}

int main(void)
{
	int devices = omp_get_num_devices();
	double sum = 0;

	if (devices < 1) {
		fprintf(stderr, "devices: no offload device\n");
		return 2;
	}
	sum += on_devices(devices < 2 ? 1 : 2);
	for (int i = 0; i < 2 * SLICE; i++)
		sum += y[i];
	printf("devices: %d, checksum %.1f\n", devices, sum);
	return 0;
}
