/* SPDX-License-Identifier: MIT */
#include "core/clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "core/bytes.h"

int gt_clock_use_tsc;
double gt_clock_ns_per_tick = 1.0;

#define CALIBRATION_NS 2000000ull
/* A vDSO clock read takes tens of ns, a system call in a guest several
 * hundred: 400 ticks is 0.1 to 0.2 us at today's TSC rates. */
#define VDSO_MAX_TICKS 400u

/* The kernel's clocksource, "" if unknown. */
static void clocksource(char *buf, size_t size)
{
	gt_read_small("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf, size);
	buf[strcspn(buf, "\n")] = 0;
}

#if defined(__x86_64__)
/* The TSC runs at a constant rate in every power state (CPUID
 * 0x80000007, EDX bit 8). */
static int tsc_invariant(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return 0;
	return !!(d & (1u << 8));
}

/* CLOCK_MONOTONIC is read in user space (the vDSO), not by a system call:
 * the fastest of a few reads takes well under a system call's time. */
static int clock_in_user_space(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t t0 = __builtin_ia32_rdtsc(), t1;

		(void)gt_clock__now();
		t1 = __builtin_ia32_rdtsc();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return best < VDSO_MAX_TICKS;
}
#endif

/*
 * Durations can be read from the TSC when the kernel keeps time with it,
 * having found it invariant and synchronized across CPUs ("tsc"), and
 * under KVM's clock when the TSC is invariant and the clock is read in
 * user space: kvm-clock's vDSO reads the TSC itself, and only when the
 * hypervisor vouches that it is stable across virtual CPUs (otherwise
 * every read is a system call).
 */
static int tsc_usable(void)
{
#if defined(__x86_64__)
	char src[32];

	clocksource(src, sizeof(src));
	if (!strcmp(src, "tsc"))
		return 1;
	return !strcmp(src, "kvm-clock") && tsc_invariant() && clock_in_user_space();
#else
	return 0;
#endif
}

void gt_clock__init(void)
{
#if defined(__x86_64__)
	uint64_t ns0, ns1, t0, t1;

	if (!tsc_usable())
		return;
	/* The rate, against CLOCK_MONOTONIC over a short spin: 2 ms give an
	 * error far below a part in a thousand. */
	ns0 = gt_clock__now();
	t0 = __builtin_ia32_rdtsc();
	do
		ns1 = gt_clock__now();
	while (ns1 - ns0 < CALIBRATION_NS);
	t1 = __builtin_ia32_rdtsc();
	if (t1 <= t0)
		return;
	gt_clock_ns_per_tick = (double)(ns1 - ns0) / (double)(t1 - t0);
	gt_clock_use_tsc = 1;
#endif
}
