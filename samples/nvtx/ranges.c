/* SPDX-License-Identifier: MIT */
/*
 * A plain C program annotated with NVTX ranges (the header-only NVTX v3 of
 * the CUDA toolkit; no CUDA, no GPU), with known counts and known CPU time:
 *
 *   solve()     30 push ranges "solve", each about UNIT of CPU, of which a
 *               third in a nested range "smooth" (smooth())
 *   setup()     10 push ranges "setup", each about UNIT, with a mark
 *               "checkpoint" in each: solve:setup is 3:1
 *   assemble()   4 ranges of the domain "solver", named by the registered
 *               string "assemble" in the category named "Compute"
 *   main()      a start/end range "io" that ends while "phase" is open (out
 *               of order), "phase" pushed in begin_phase() and popped in
 *               end_phase(), a wide-string range "wide über", a range
 *               "handoff" started here and ended by another thread, then
 *               pops and ends of ranges that are not open
 *
 * The work is a count of iterations, the rate measured once at start; each
 * range's CPU time is read on the thread's CPU-time clock at its edges and
 * printed on stderr as "nvtx times: solve_ns N setup_ns N smooth_ns N
 * phase_ns N assemble_ns N". stdout carries a fixed line.
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SOLVES 30
#define SETUPS 10
#define ASSEMBLES 4

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile double sink;
static double per_ns; /* iterations of spin() per ns of CPU */
static uint64_t solve_ns, setup_ns, smooth_ns, phase_ns, assemble_ns;

__attribute__((noinline)) static void spin(uint64_t iters)
{
	double x = sink;

	for (uint64_t i = 0; i < iters; i++)
		x += (double)i * 1e-9;
	sink = x;
}

/* The rate, on growing rounds (no clock read inside the work itself). */
static void calibrate(void)
{
	uint64_t t0 = cpu_ns(), done = 0, n = 1u << 16;

	while (cpu_ns() - t0 < 20000000) {
		spin(n);
		done += n;
		n *= 2;
	}
	per_ns = (double)done / (double)(cpu_ns() - t0);
}

static uint64_t iters(uint64_t ns)
{
	return (uint64_t)(per_ns * (double)ns);
}

__attribute__((noinline)) static void smooth(uint64_t ns)
{
	uint64_t t0;

	nvtxRangePushA("smooth");
	t0 = cpu_ns();
	spin(iters(ns));
	smooth_ns += cpu_ns() - t0;
	nvtxRangePop();
}

__attribute__((noinline)) static void solve(uint64_t ns)
{
	uint64_t t0;

	nvtxRangePushA("solve");
	t0 = cpu_ns();
	spin(iters(ns - ns / 3));
	smooth(ns / 3);
	solve_ns += cpu_ns() - t0;
	nvtxRangePop();
}

__attribute__((noinline)) static void setup(uint64_t ns)
{
	uint64_t t0;

	nvtxRangePushA("setup");
	t0 = cpu_ns();
	nvtxMarkA("checkpoint");
	spin(iters(ns));
	setup_ns += cpu_ns() - t0;
	nvtxRangePop();
}

__attribute__((noinline)) static void assemble(nvtxDomainHandle_t dom, nvtxStringHandle_t name, uint64_t ns)
{
	nvtxEventAttributes_t ea = { 0 };
	uint64_t t0;

	ea.version = NVTX_VERSION;
	ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	ea.category = 7;
	ea.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	ea.message.registered = name;
	nvtxDomainRangePushEx(dom, &ea);
	t0 = cpu_ns();
	spin(iters(ns));
	assemble_ns += cpu_ns() - t0;
	nvtxDomainRangePop(dom);
}

static uint64_t phase_t0;

/* A range opened here and closed in end_phase(). */
__attribute__((noinline)) static void begin_phase(void)
{
	nvtxRangePushA("phase");
	phase_t0 = cpu_ns();
}

__attribute__((noinline)) static void end_phase(void)
{
	phase_ns += cpu_ns() - phase_t0;
	nvtxRangePop();
}

static void *ender(void *arg)
{
	nvtxRangeEnd(*(nvtxRangeId_t *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t unit = (argc > 1 ? strtoull(argv[1], NULL, 10) : 15) * 1000000ull; /* ms */
	nvtxDomainHandle_t dom = nvtxDomainCreateA("solver");
	nvtxStringHandle_t name = nvtxDomainRegisterStringA(dom, "assemble");
	nvtxRangeId_t io, handoff;
	pthread_t th;

	nvtxDomainNameCategoryA(dom, 7, "Compute");
	calibrate();
	for (int i = 0; i < SETUPS; i++)
		setup(unit);
	for (int i = 0; i < SOLVES; i++)
		solve(unit);
	for (int i = 0; i < ASSEMBLES; i++)
		assemble(dom, name, unit / 2);

	io = nvtxRangeStartA("io");
	begin_phase();
	spin(iters(unit));
	nvtxRangeEnd(io); /* out of order: "phase" is still open */
	spin(iters(unit));
	end_phase();

	/* Long enough for its row to hold samples whatever the load. */
	nvtxRangePushW(L"wide \u00fcber");
	spin(iters(unit));
	spin(iters(unit));
	nvtxRangePop();

	handoff = nvtxRangeStartA("handoff");
	if (pthread_create(&th, NULL, ender, &handoff) || pthread_join(th, NULL))
		return 1;
	nvtxMarkA("after handoff"); /* the first NVTX call here since: closes it */

	/* Misuse a tool must survive: pops with nothing open, ends of ranges
	 * that are not open (one already ended, one never started). */
	nvtxRangePop();
	nvtxDomainRangePop(dom);
	nvtxRangeEnd(io);
	nvtxRangeEnd(0x123456789abull);

	fprintf(stderr, "nvtx times: solve_ns %llu setup_ns %llu smooth_ns %llu phase_ns %llu assemble_ns %llu\n",
		(unsigned long long)solve_ns, (unsigned long long)setup_ns, (unsigned long long)smooth_ns,
		(unsigned long long)phase_ns, (unsigned long long)assemble_ns);
	printf("nvtx ranges: %d solves, %d setups\n", SOLVES, SETUPS);
	return 0;
}
