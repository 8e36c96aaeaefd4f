// SPDX-License-Identifier: MIT
//
// One process driving two GPUs, with known numbers (tests/gpu/check_multigpu.py):
//
//   threads  two host threads, thread d on device d: on_device() launches
//            3 - 2d kernels of SPIN_MS each (3 on device 0, 1 on device 1),
//            then waits for its device (cudaDeviceSynchronize).
//   streams  one thread, a stream on each device: launch_both() starts a
//            LONG_MS kernel on device 1 and a SPIN_MS one on device 0; then
//            sync_dev0() waits for device 0 only (cudaStreamSynchronize),
//            which must not blame device 1's kernel, and sync_dev1() waits
//            for device 1 (the rest of LONG_MS).
//   peer     peer copies: copy_0to1() PEER_MB MiB from device 0 to device 1
//            twice, copy_1to0() PEER_MB / 4 MiB back once (cudaMemcpyPeer).
//
// Kernels spin on the GPU's global timer, so their lengths are known. With
// no argument it runs all three; it prints what it measured itself:
//   multigpu: devices N peer P sync0_ms X sync1_ms Y
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include "check.h"
#include "spin.h"

#define SPIN_MS 40
#define LONG_MS 300
#define PEER_MB 64

static double now_ms()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

NOINLINE static void on_device(int d)
{
	CHECK(cudaSetDevice(d));
	for (int i = 0; i < 3 - 2 * d; i++)
		spin<<<1, 1>>>(SPIN_MS * 1000000ull);
	CHECK(cudaDeviceSynchronize());
}

NOINLINE static void threads()
{
	std::thread a(on_device, 0), b(on_device, 1);

	a.join();
	b.join();
}

NOINLINE static void launch_both(cudaStream_t s0, cudaStream_t s1)
{
	CHECK(cudaSetDevice(1));
	spin<<<1, 1, 0, s1>>>(LONG_MS * 1000000ull);
	CHECK(cudaGetLastError());
	CHECK(cudaSetDevice(0));
	spin<<<1, 1, 0, s0>>>(SPIN_MS * 1000000ull);
	CHECK(cudaGetLastError()); // (also: the launch is no tail call)
}

NOINLINE static void sync_dev0(cudaStream_t s0)
{
	CHECK(cudaStreamSynchronize(s0));
}

NOINLINE static void sync_dev1(cudaStream_t s1)
{
	CHECK(cudaStreamSynchronize(s1));
}

NOINLINE static void streams(double *sync0, double *sync1)
{
	cudaStream_t s0, s1;
	double t;

	CHECK(cudaSetDevice(1));
	CHECK(cudaStreamCreate(&s1));
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s0));
	launch_both(s0, s1);
	t = now_ms();
	sync_dev0(s0);
	*sync0 = now_ms() - t;
	t = now_ms();
	sync_dev1(s1);
	*sync1 = now_ms() - t;
	CHECK(cudaStreamDestroy(s0));
	CHECK(cudaStreamDestroy(s1));
}

NOINLINE static void copy_0to1(void *d1, const void *d0, size_t n)
{
	CHECK(cudaMemcpyPeer(d1, 1, d0, 0, n));
}

NOINLINE static void copy_1to0(void *d0, const void *d1, size_t n)
{
	CHECK(cudaMemcpyPeer(d0, 0, d1, 1, n));
}

NOINLINE static int peer()
{
	size_t n = (size_t)PEER_MB << 20;
	void *d0, *d1;
	int can = 0;

	CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
	if (can) {
		CHECK(cudaSetDevice(0));
		(void)cudaDeviceEnablePeerAccess(1, 0);
		CHECK(cudaSetDevice(1));
		(void)cudaDeviceEnablePeerAccess(0, 0);
	}
	CHECK(cudaSetDevice(0));
	CHECK(cudaMalloc(&d0, n));
	CHECK(cudaMemset(d0, 1, n));
	CHECK(cudaSetDevice(1));
	CHECK(cudaMalloc(&d1, n));
	copy_0to1(d1, d0, n);
	copy_0to1(d1, d0, n);
	copy_1to0(d0, d1, n / 4);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(d1));
	CHECK(cudaSetDevice(0));
	CHECK(cudaFree(d0));
	return can;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	double sync0 = 0, sync1 = 0;
	int n = 0, can = -1;

	CHECK(cudaGetDeviceCount(&n));
	if (n < 2) {
		fprintf(stderr, "multigpu: %d device(s); two are needed\n", n);
		return 2;
	}
	for (int d = 0; d < 2; d++) { // contexts made before anything is timed
		CHECK(cudaSetDevice(d));
		CHECK(cudaFree(0));
	}
	if (!strcmp(what, "all") || !strcmp(what, "threads"))
		threads();
	if (!strcmp(what, "all") || !strcmp(what, "streams"))
		streams(&sync0, &sync1);
	if (!strcmp(what, "all") || !strcmp(what, "peer"))
		can = peer();
	printf("multigpu: devices %d peer %d sync0_ms %.1f sync1_ms %.1f\n", n, can, sync0, sync1);
	return 0;
}
