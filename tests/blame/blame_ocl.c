/* SPDX-License-Identifier: MIT */
/*
 * Blame shifting through the OpenCL layer (test_blame_ocl.py): a kernel of
 * about 0.3 s launched in launch_site() and waited for with clFinish in
 * wait_site(), then about 0.4 s of CPU time in cpu_work() with nothing
 * queued. Prints what it measured itself, one "key value" per line, so that
 * the tool's figures can be checked against it on a machine of any load:
 *   wait_s    wall time of the clFinish in wait_site
 *   busy_s    the part of that wait during which the kernel certainly ran:
 *             its profiled START and END, on the host's clock through the
 *             offset that the enqueue's CL_PROFILING_COMMAND_QUEUED bounds
 *             (the command was queued between the two clock reads around
 *             clEnqueueNDRangeKernel), START as late and END as early as
 *             that allows
 *   cpu_s     CPU time of cpu_work
 *   gap_s     the longest CPU time between two expirations of a 1 kHz
 *             CPU-time timer of its own, from before the launch to the end
 *             of cpu_work: how coarsely the kernel delivered CPU-time timer
 *             signals then (a few ms on an idle machine, far more on a busy
 *             one), and so how far a sampler's CPU time may shift across a
 *             function's ends
 *   kernel_s  the kernel's own profiled time
 * Exit 77 when there is no OpenCL device.
 */
#include <CL/cl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define TARGET_S 0.3

#define CHECK(call)                                                                        \
	do {                                                                               \
		cl_int err_ = (call);                                                      \
		if (err_ != CL_SUCCESS) {                                                  \
			fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, \
				(int)err_);                                                \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

static const char *source =
	"__kernel void spin(__global float *out, uint n)\n"
	"{\n"
	"	float x = out[0];\n"
	"	for (uint i = 0; i < n; i++)\n"
	"		x = x * 1.0000001f + 1e-7f;\n"
	"	out[0] = x;\n"
	"}\n";

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The gaps between the expirations of a CPU-time timer of the main thread,
 * at the tool's sampling rate (the test sets GPUTOOL_SAMPLE_HZ=1000). Its
 * signal lies above the range the tool picks its own from (SIGRTMIN+4 to
 * SIGRTMAX-4). Written by the handler on the main thread only; read there.
 */
#define GAP_PERIOD_NS 1000000
static volatile uint64_t gap_last, gap_max;

static void gap__tick(int sig)
{
	uint64_t t = now_ns(CLOCK_THREAD_CPUTIME_ID);

	(void)sig;
	if (t - gap_last > gap_max)
		gap_max = t - gap_last;
	gap_last = t;
}

static void gap__start(void)
{
	struct sigaction sa = { .sa_handler = gap__tick, .sa_flags = SA_RESTART };
	struct itimerspec it = { { 0, GAP_PERIOD_NS }, { 0, GAP_PERIOD_NS } };
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMAX - 1 };
	timer_t timer;

	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	sigemptyset(&sa.sa_mask);
	gap_last = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (sigaction(SIGRTMAX - 1, &sa, NULL) || timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) ||
	    timer_settime(timer, 0, &it, NULL)) {
		perror("CPU-time timer");
		exit(1);
	}
}

struct ocl {
	cl_context ctx;
	cl_command_queue q;
	cl_kernel k;
	cl_mem buf;
	uint64_t enqueue_ns[2]; /* host time before and after the launch */
};

static NOINLINE cl_event launch_site(struct ocl *o, cl_uint n)
{
	size_t one = 1;
	cl_event ev;

	CHECK(clSetKernelArg(o->k, 1, sizeof(n), &n));
	o->enqueue_ns[0] = now_ns(CLOCK_MONOTONIC);
	CHECK(clEnqueueNDRangeKernel(o->q, o->k, 1, NULL, &one, &one, 0, NULL, &ev));
	o->enqueue_ns[1] = now_ns(CLOCK_MONOTONIC);
	return ev;
}

static NOINLINE void wait_site(struct ocl *o)
{
	CHECK(clFinish(o->q));
}

/* Calibration launches and waits, elsewhere than the sites checked. */
static NOINLINE double calibrate(struct ocl *o, cl_uint n)
{
	size_t one = 1;
	double t0 = now(CLOCK_MONOTONIC);

	CHECK(clSetKernelArg(o->k, 1, sizeof(n), &n));
	CHECK(clEnqueueNDRangeKernel(o->q, o->k, 1, NULL, &one, &one, 0, NULL, NULL));
	CHECK(clFinish(o->q));
	return now(CLOCK_MONOTONIC) - t0;
}

static NOINLINE double cpu_work(double secs)
{
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), t;
	volatile double x = 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
		t = now(CLOCK_THREAD_CPUTIME_ID);
	} while (t - t0 < secs);
	return t - t0;
}

int main(void)
{
	cl_platform_id plat;
	cl_device_id dev;
	cl_program prog;
	cl_event ev;
	cl_ulong queued, start, end;
	cl_int err;
	struct ocl o;
	float zero = 1;
	cl_uint n = 1u << 20;
	double t, wait, cpu, gap;
	uint64_t w0, w1;
	int64_t busy_from, busy_to;

	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
		return 77;
	o.ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK(err);
	o.q = clCreateCommandQueue(o.ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
	CHECK(err);
	prog = clCreateProgramWithSource(o.ctx, 1, &source, NULL, &err);
	CHECK(err);
	CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
	o.k = clCreateKernel(prog, "spin", &err);
	CHECK(err);
	o.buf = clCreateBuffer(o.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zero), &zero,
			       &err);
	CHECK(err);
	CHECK(clSetKernelArg(o.k, 0, sizeof(o.buf), &o.buf));

	/* Iterations for about TARGET_S, from kernels of 20 ms and more (the
	 * first launch also compiles the kernel). */
	calibrate(&o, 1);
	for (int i = 0; i < 20; i++) {
		t = calibrate(&o, n);
		if (t > 0.02)
			break;
		n *= 4;
	}
	/* The fastest of three: a busy machine that stalls one calibration
	 * must not shrink the kernel (one stalled 6 times made it 0.05 s). */
	for (int i = 0; i < 2; i++) {
		double again = calibrate(&o, n);

		t = again < t ? again : t;
	}
	n = (cl_uint)((double)n * TARGET_S / t);

	gap__start();
	ev = launch_site(&o, n);
	gap_max = 0;
	w0 = now_ns(CLOCK_MONOTONIC);
	wait_site(&o);
	w1 = now_ns(CLOCK_MONOTONIC);
	wait = (double)(w1 - w0) / 1e9;
	CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof(queued), &queued, NULL));
	CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL));
	CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL));
	CHECK(clReleaseEvent(ev));
	cpu = cpu_work(0.4);
	gap = (double)gap_max / 1e9;

	/* Host time = device time + offset, where enqueue_ns[0] - queued <=
	 * offset <= enqueue_ns[1] - queued. */
	busy_from = (int64_t)start + (int64_t)o.enqueue_ns[1] - (int64_t)queued;
	busy_to = (int64_t)end + (int64_t)o.enqueue_ns[0] - (int64_t)queued;
	if (busy_from < (int64_t)w0)
		busy_from = (int64_t)w0;
	if (busy_to > (int64_t)w1)
		busy_to = (int64_t)w1;
	printf("wait_s %.6f\nbusy_s %.6f\ncpu_s %.6f\ngap_s %.6f\nkernel_s %.6f\n", wait,
	       busy_to > busy_from ? (double)(busy_to - busy_from) / 1e9 : 0.0, cpu, gap,
	       (double)(end - start) / 1e9);
	clReleaseMemObject(o.buf);
	clReleaseKernel(o.k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(o.q);
	clReleaseContext(o.ctx);
	return 0;
}
