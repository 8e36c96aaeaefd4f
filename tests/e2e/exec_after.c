/* SPDX-License-Identifier: MIT */
/*
 * Ends by exec'ing another program: an OpenMP team computes in burn() for
 * 0.2 s of the initial thread's CPU time, a child forked without delay
 * execs /bin/true (system()-like: it measures nothing of its own), then the
 * program execs /bin/echo, which prints "after exec".
 */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noinline)) static double burn(double x)
{
	for (int i = 0; i < 1000000; i++)
		x = x * 0.999 + 1.0;
	return x;
}

int main(void)
{
	double t0 = cpu_s(), x = 0;
	pid_t child;

	while (cpu_s() - t0 < 0.2) {
#pragma omp parallel for reduction(+ : x)
		for (int i = 0; i < 4; i++)
			x += burn(i);
	}
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 1;
	execl("/bin/echo", "echo", x > 0 ? "after exec" : "?", (char *)NULL);
	perror("execl");
	return 1;
}
