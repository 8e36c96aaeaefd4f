/* SPDX-License-Identifier: MIT */
/*
 * Threads that only OpenACC sees: N threads (default 20) each run an OpenACC
 * loop and end; then the program prints how many POSIX timers the process
 * still has ("timers K", from /proc/self/timers) and "threads N".
 * Built by gcc with its OpenACC runtime, host fallback.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double out[20][4096];

static void *body(void *arg)
{
	double *v = arg;

	for (int rep = 0; rep < 50; rep++) {
#pragma acc parallel loop copyout(v[0:4096])
		for (int i = 0; i < 4096; i++)
			v[i] = i * 0.5 + rep;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	pthread_t th[20];
	char line[256];
	int timers = 0;
	FILE *f;

	if (n > 20)
		n = 20;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, body, out[i]);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	f = fopen("/proc/self/timers", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "ID:", 3))
			timers++;
	if (f)
		fclose(f);
	printf("timers %d\nthreads %d\n", timers, n);
	return 0;
}
