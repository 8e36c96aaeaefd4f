// SPDX-License-Identifier: MIT
//
// Blame shifting with CUDA: launch() starts a kernel that runs BUSY_S
// seconds (by the GPU's global timer), wait_all() waits for it with
// cudaDeviceSynchronize, then cpu_only() computes CPU_S seconds of CPU time
// with nothing on the GPU. A profile must show CPU_IDLE ~ BUSY_S at the
// synchronization, blamed on the kernel's launch site (CPU_IDLE_CAUSE), and
// GPU_IDLE_CAUSE ~ CPU_S in cpu_only(). Then launch() starts a COPY_S
// kernel again, and copy_back() waits for it in a cudaMemcpy to the host: an
// implicit synchronization, CPU_IDLE ~ COPY_S at the copy. A first empty
// kernel takes the context's creation out of the way.
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>

#define BUSY_S 0.3
#define CPU_S 0.4
#define COPY_S 0.2

__global__ void empty_kernel() {}

__global__ void busy_kernel(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

__attribute__((noinline)) static void warm_up()
{
	empty_kernel<<<1, 1>>>();
	cudaDeviceSynchronize();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void launch(double secs)
{
	busy_kernel<<<1, 1>>>((unsigned long long)(secs * 1e9));
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void wait_all()
{
	cudaDeviceSynchronize();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static int copy_back(const int *dev)
{
	int host = 0;

	cudaMemcpy(&host, dev, sizeof(host), cudaMemcpyDeviceToHost);
	asm volatile("" ::: "memory");
	return host;
}

static double cpu_seconds()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noinline)) static double cpu_only(double secs)
{
	double t0 = cpu_seconds(), x = 0.0;

	while (cpu_seconds() - t0 < secs)
		x += 1.0;
	return x;
}

int main()
{
	int *dev = NULL;
	int copied;

	warm_up();
	launch(BUSY_S);
	wait_all();
	printf("blame: %s\n", cpu_only(CPU_S) > 0.0 ? "done" : "?");
	cudaMalloc(&dev, sizeof(int));
	cudaMemset(dev, 0, sizeof(int));
	cudaDeviceSynchronize();
	launch(COPY_S);
	copied = copy_back(dev);
	cudaFree(dev);
	printf("copy: %s\n", copied == 0 ? "done" : "?");
	return 0;
}
