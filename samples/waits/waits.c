/* SPDX-License-Identifier: MIT */
/*
 * Time a CPU profile does not see: a program that mostly waits. Two call
 * sites wait 3:1 (site A: poll() with a timeout, ROUNDS times; site B:
 * nanosleep() for a third of that, ROUNDS times), with usleep(), select(),
 * ppoll() with a signal mask of its own (one that blocks nothing) and
 * sleep() waits beside them, and one stretch of computation. It checks
 * that every wait lasted at least what it asked for and returned no error
 * (a profiler's signal must not cut it short), and prints what it measured
 * itself, for a tool's wall-clock figures to be checked against:
 *
 *   waits ok: site_a_ns N site_b_ns N other_ns N compute_ns N total_ns N
 *
 * Exit status 0, or 1 when a wait ended early or failed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 6
#define WAIT_MS 30 /* site A's wait; site B waits a third of it */

static int bad;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Checks one wait of want_ms that returned rc after dt ns. */
static uint64_t waited(const char *what, int rc, uint64_t dt, unsigned want_ms)
{
	if (rc != 0 || dt < (uint64_t)want_ms * 1000000u) {
		fprintf(stderr, "waits: %s returned %d (errno %d) after %llu ns of %u ms\n", what, rc, errno,
			(unsigned long long)dt, want_ms);
		bad = 1;
	}
	return dt;
}

__attribute__((noinline)) static uint64_t site_a(void)
{
	uint64_t t0 = now_ns();
	int rc = poll(NULL, 0, WAIT_MS);

	return waited("poll", rc, now_ns() - t0, WAIT_MS);
}

__attribute__((noinline)) static uint64_t site_b(void)
{
	struct timespec ts = { 0, WAIT_MS / 3 * 1000000L };
	uint64_t t0 = now_ns();
	int rc = nanosleep(&ts, NULL);

	return waited("nanosleep", rc, now_ns() - t0, WAIT_MS / 3);
}

__attribute__((noinline)) static uint64_t others(void)
{
	struct timeval tv = { 0, 20000 };
	uint64_t t0 = now_ns(), sum;
	int rc;

	rc = usleep(20000);
	sum = waited("usleep", rc, now_ns() - t0, 20);
	t0 = now_ns();
	rc = select(0, NULL, NULL, NULL, &tv);
	sum += waited("select", rc, now_ns() - t0, 20);
	{
		struct timespec ts = { 0, 20000000 };
		sigset_t none;

		sigemptyset(&none);
		t0 = now_ns();
		rc = ppoll(NULL, 0, &ts, &none);
		sum += waited("ppoll", rc, now_ns() - t0, 20);
	}
	t0 = now_ns();
	rc = (int)sleep(1);
	sum += waited("sleep", rc, now_ns() - t0, 1000);
	return sum;
}

/* About 100 ms of arithmetic; the result is printed so that it is done. */
__attribute__((noinline)) static double compute(void)
{
	volatile double x = 1.0;

	for (long i = 0; i < 60000000; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

int main(void)
{
	uint64_t a = 0, b = 0, o, c, t0 = now_ns();
	double x;

	for (int i = 0; i < ROUNDS; i++) {
		a += site_a();
		b += site_b();
	}
	o = others();
	c = now_ns();
	x = compute();
	c = now_ns() - c;
	printf("result %.6f\n", x);
	if (bad)
		return 1;
	fprintf(stderr, "waits ok: site_a_ns %llu site_b_ns %llu other_ns %llu compute_ns %llu total_ns %llu\n",
		(unsigned long long)a, (unsigned long long)b, (unsigned long long)o, (unsigned long long)c,
		(unsigned long long)(now_ns() - t0));
	return 0;
}
