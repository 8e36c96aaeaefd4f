/* SPDX-License-Identifier: MIT */
/*
 * Runs until a signal ends it: an OpenMP team computes in work() forever.
 * Once the initial thread has used 0.2 s of CPU it prints "ready" on stderr,
 * so that a test sends its signal while the program runs measured code.
 *
 *   until_signal         the default dispositions
 *   until_signal own     main first installs its own SIGTERM handler, which
 *                        prints "own handler" on stdout and exits 0
 *   until_signal ignore  main first ignores SIGTERM; the program then
 *                        stops by itself after 1 s of CPU time and exits 0
 *   until_signal abort   once ready, calls abort()
 *   until_signal segv    once ready, writes through a null pointer
 *   until_signal fpe     once ready, divides an integer by zero
 *   until_signal ill     once ready, executes an invalid instruction
 *   until_signal bus     once ready, raises SIGBUS (as a truncated mapping would)
 *
 * UNTIL_SIGNAL_SIG=N makes own and ignore act on signal N instead of SIGTERM.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void own(int sig)
{
	static const char msg[] = "own handler\n";
	ssize_t n;

	(void)sig;
	n = write(1, msg, sizeof(msg) - 1);
	(void)n;
	exit(0);
}

static volatile double sink;
/* 0: where the segv mode writes (volatile, so the write is not optimized out). */
static volatile uintptr_t sink_addr;
/* Divided by sink_addr in the fpe mode (volatile: a real division). */
static volatile int fpe_num = 7;

/* About a millisecond of work per call: the clock is read once per call. */
__attribute__((noinline)) static double work(double x)
{
	for (int i = 0; i < 1000000; i++)
		x = x * 0.999 + 1.0;
	return x;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *which = getenv("UNTIL_SIGNAL_SIG");
	int sig = which ? atoi(which) : SIGTERM;
	int ready = 0;
	double t0;

	if (!strcmp(mode, "own"))
		signal(sig, own);
	else if (!strcmp(mode, "ignore"))
		signal(sig, SIG_IGN);
	t0 = cpu_s();
	for (;;) {
		double x = 0;

#pragma omp parallel for reduction(+ : x)
		for (int i = 0; i < 8; i++)
			x += work(i);
		sink = x;
		if (!ready && cpu_s() - t0 > 0.2) {
			fputs("ready\n", stderr);
			ready = 1;
			if (!strcmp(mode, "abort"))
				abort();
			if (!strcmp(mode, "segv"))
				*(volatile int *)(uintptr_t)sink_addr = 1;
			if (!strcmp(mode, "fpe"))
				sink = fpe_num / (int)sink_addr;
			if (!strcmp(mode, "ill"))
				__builtin_trap();
			if (!strcmp(mode, "bus"))
				raise(SIGBUS);
		}
		if (!strcmp(mode, "ignore") && cpu_s() - t0 > 1.0)
			break;
	}
	puts("done");
	return 0;
}
