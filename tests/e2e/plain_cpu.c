/* SPDX-License-Identifier: MIT */
/*
 * A program with no OpenMP, no GPU and no other runtime the tool attaches
 * to: what only the preload (`gputool run`) measures. burn() uses about
 * SECONDS of CPU (argv[1], default 0.3), measured by the program itself on
 * CLOCK_PROCESS_CPUTIME_ID, which it prints on stderr as
 * "plain_cpu times: pid P burn_ns N total_ns M" (total: the process's CPU
 * time from its start to the end of main). stdout carries a fixed line, and
 * the program exits with status 3, for a tool that must change neither.
 * With "fork" (argv[2]), a child forked without exec then burns as much and
 * prints its own line; the parent waits for it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile double sink;

/*
 * About ns of CPU. The loop makes no system call: reading a CPU-time clock
 * often (every few microseconds) makes some kernels (6.18 seen) lose a
 * CPU-time timer's signal under load and never rearm the timer, which would
 * blind any sampler. So the rate is measured on a few growing rounds, and
 * the rest is a count of iterations.
 */
__attribute__((noinline)) static void burn(uint64_t ns)
{
	uint64_t t0 = process_cpu_ns(), spent = 0, done = 0, n = 1u << 16, rest;
	double x = 0;

	while (spent < ns / 8) {
		for (uint64_t i = 0; i < n; i++)
			x += (double)i * 1e-9;
		done += n;
		n *= 2;
		spent = process_cpu_ns() - t0;
	}
	rest = spent < ns ? (uint64_t)((double)done * (double)(ns - spent) / (double)spent) : 0;
	for (uint64_t i = 0; i < rest; i++)
		x += (double)i * 1e-9;
	sink = x;
}

static void report(uint64_t burn_ns)
{
	fprintf(stderr, "plain_cpu times: pid %d burn_ns %llu total_ns %llu\n", (int)getpid(),
		(unsigned long long)burn_ns, (unsigned long long)process_cpu_ns());
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	int fork_too = argc > 2 && !strcmp(argv[2], "fork");
	uint64_t t0, t1;
	int status;
	pid_t child;

	t0 = process_cpu_ns();
	burn((uint64_t)(seconds * 1e9));
	t1 = process_cpu_ns();
	printf("plain_cpu: burned %.2f s of CPU%s\n", seconds, fork_too ? ", and a child as much" : "");
	fflush(stdout);
	if (fork_too) {
		child = fork();
		if (child < 0)
			return 1;
		if (child == 0) {
			t0 = process_cpu_ns();
			burn((uint64_t)(seconds * 1e9));
			report(process_cpu_ns() - t0);
			exit(0);
		}
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	report(t1 - t0);
	return 3;
}
