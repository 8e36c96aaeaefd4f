/* SPDX-License-Identifier: MIT */
#ifndef GT_SAMPLES_CPU_TIMER_H
#define GT_SAMPLES_CPU_TIMER_H

/*
 * What the samples measure themselves, to compare a profiler's figures with
 * (SAMPLE_TIMES=1): a 1 kHz CPU-time timer per thread, and align(), which
 * spins until the calling thread's timer fired. The kernel checks all of a
 * thread's CPU-time timers at once, so a sampling profiler's timer has fired
 * by then too: the CPU time before align() has been sampled, up to a period.
 *
 * The signal lies above the range a sampler picks its own from (SIGRTMIN+4
 * to SIGRTMAX-4), so a sampler's pending signal, lower-numbered, is handled
 * first. `fired` is written by the handler and read by the thread it
 * interrupts only. One program file includes this.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Thread_local volatile uint64_t fired;
static _Thread_local int has_timer;

static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void tick(int sig)
{
	(void)sig;
	fired = fired + 1;
}

/* Installs the timers' handler, once per process. */
static inline int timer__init(void)
{
	struct sigaction sa = { .sa_handler = tick, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMAX - 1, &sa, NULL)) {
		perror("sigaction");
		return -1;
	}
	return 0;
}

/* Starts the calling thread's timer, once per thread. */
static inline void timer__start(void)
{
	struct itimerspec it = { { 0, 1000000 }, { 0, 1000000 } };
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMAX - 1 };
	timer_t timer;

	if (has_timer)
		return;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) || timer_settime(timer, 0, &it, NULL)) {
		perror("CPU-time timer");
		exit(1);
	}
	has_timer = 1;
}

/* Spins until this thread's timer fired: what came before was sampled. */
static inline void align(void)
{
	uint64_t n = fired;
	volatile double x = 1;

	while (fired == n)
		x = x * 1.0000001 + 1e-9;
}

#endif
