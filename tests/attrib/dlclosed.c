/* SPDX-License-Identifier: MIT */
/*
 * Opens the library named by argv[1], burns CPU_S seconds of CPU time in it,
 * closes it and opens another library (argv[2]) that may take its place in
 * the address space. Prints on stderr the CPU time the call took:
 *   dlclosed times: plugin cpu_ns N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#define CPU_S 0.4

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double (*burn)(double);
	long long t0, t1;
	int team = 0;
	void *h;

	if (argc < 3)
		return 2;
	/* A parallel region, so that the OpenMP runtime starts the tool. */
#pragma omp parallel reduction(+ : team)
	team++;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&burn = dlsym(h, "plugin_burn");
	t0 = cpu_ns();
	burn(CPU_S);
	t1 = cpu_ns();
	dlclose(h);
	h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (h)
		dlclose(h);
	fprintf(stderr, "dlclosed times: plugin cpu_ns %lld\n", t1 - t0);
	printf("team %s\n", team > 0 ? "ran" : "did not run");
	return 0;
}
