/* SPDX-License-Identifier: MIT */
/*
 * The SM clock during the run, for the rates derived from PC samples (HPCToolkit
 * ICS'20, equations 8-10 take the average SM clock while kernels run): with
 * GPUTOOL_PC_SAMPLING, a thread of the tool reads NVML's current SM clock
 * of the sampled device every SAMPLE_MS while the device has operations in
 * flight (gt_blame__in_flight), and the mean of those readings replaces the
 * device's nominal clock in the report. Each reading is a call into the
 * GPU's firmware, which the driver serializes with the program's own
 * calls, and the clock changes little within a period: SAMPLE_MS is 20. NVML is the driver's
 * libnvidia-ml.so.1, loaded at run time; without it (or without a reading
 * while busy) the nominal clock stays, and the profile says which it is.
 *
 * The NVML entry points used are declared here: this CUDA toolkit has no
 * nvml.h, and these four are NVML's documented, stable API.
 *
 * Threads: start and stop on the backend's threads (under pcsamp's lock);
 * the sampler thread starts NVML and writes started, sum and n, read after
 * it is joined.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "gpu/blame.h"
#include "gpu/cupti/cupti-internal.h"

#define SAMPLE_MS 20
#define NVML_CLOCK_SM 1
#define NVML_SUCCESS 0

typedef struct nvml_device *nvml_device_t;

static struct {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	int (*by_pci)(const char *bus_id, nvml_device_t *dev);
	int (*clock)(nvml_device_t dev, int type, unsigned int *mhz);
	nvml_device_t dev;
	int ordinal;
	pthread_t thread;
	pid_t pid; /* the process the thread runs in: a fork's child has none */
	int running, tried;
	int started;	   /* NVML started: the sampler's, read after the join */
	/* stop wakes the sampler at once: the program's exit never waits
	 * out a period. Both under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;
	int wake_ready; /* lock and wake initialized */
	uint64_t sum_mhz;  /* the sampler's; read after the join */
	uint64_t n;	   /* readings taken while busy */
} clk;

/* The PCI bus id NVML names the device by, from the driver. */
static int bus_id(int ordinal, char *out, int len)
{
	CUdevice dev;
	int domain = 0, bus = 0, device = 0;

	if (!gt_cupti_lib.cuDeviceGet || !gt_cupti_lib.cuDeviceGetAttribute ||
	    gt_cupti_lib.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
	    gt_cupti_lib.cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) != CUDA_SUCCESS ||
	    gt_cupti_lib.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) != CUDA_SUCCESS ||
	    gt_cupti_lib.cuDeviceGetAttribute(&device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) != CUDA_SUCCESS)
		return -1;
	snprintf(out, (size_t)len, "%08x:%02x:%02x.0", domain, bus, device);
	return 0;
}

/* NVML, loaded and started on the sampler's thread: nvmlInit takes tens of
 * milliseconds, which the context's creation would otherwise wait for.
 * 0, or -1 (logged; the nominal clock is used). */
static int nvml__open(void)
{
	char id[32];

	if (!(clk.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL))) {
		gt_info("cupti", "SM clock: no NVML (libnvidia-ml.so.1); the nominal clock is used");
		return -1;
	}
	*(void **)&clk.init = dlsym(clk.lib, "nvmlInit_v2");
	*(void **)&clk.shutdown = dlsym(clk.lib, "nvmlShutdown");
	*(void **)&clk.by_pci = dlsym(clk.lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&clk.clock = dlsym(clk.lib, "nvmlDeviceGetClockInfo");
	if (!clk.init || !clk.shutdown || !clk.by_pci || !clk.clock || bus_id(clk.ordinal, id, sizeof(id)) ||
	    clk.init() != NVML_SUCCESS) {
		gt_info("cupti", "SM clock: NVML did not start; the nominal clock is used");
		return -1;
	}
	if (clk.by_pci(id, &clk.dev) != NVML_SUCCESS) {
		gt_info("cupti", "SM clock: NVML does not know device %s; the nominal clock is used", id);
		clk.shutdown();
		return -1;
	}
	clk.started = 1;
	return 0;
}

static void *sampler(void *arg)
{
	(void)arg;
	if (nvml__open())
		return NULL;
	/* A reading first, then one per period until stopped: a run shorter
	 * than a period still gets its reading. */
	for (;;) {
		struct timespec until;
		unsigned int mhz;
		int stop;

		if (gt_blame__in_flight(clk.ordinal) > 0 && clk.clock(clk.dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS &&
		    mhz) {
			clk.sum_mhz += mhz;
			clk.n++;
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += SAMPLE_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&clk.lock);
		while (!clk.stop && pthread_cond_timedwait(&clk.wake, &clk.lock, &until) == 0)
			;
		stop = clk.stop;
		pthread_mutex_unlock(&clk.lock);
		if (stop)
			break;
	}
	return NULL;
}

void gt_cupti_smclock__start(int ordinal)
{
	if (clk.running || clk.tried)
		return;
	clk.tried = 1;
	clk.ordinal = ordinal;
	if (!clk.wake_ready) {
		pthread_condattr_t ca;

		/* Periods on the monotonic clock: a change of the wall clock
		 * neither stalls nor hurries them. */
		if (pthread_condattr_init(&ca))
			return;
		clk.wake_ready = !pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) &&
				 !pthread_cond_init(&clk.wake, &ca) && !pthread_mutex_init(&clk.lock, NULL);
		pthread_condattr_destroy(&ca);
		if (!clk.wake_ready)
			return;
	}
	clk.stop = 0;
	if (pthread_create(&clk.thread, NULL, sampler, NULL))
		return;
	clk.pid = getpid();
	clk.running = 1;
}

void gt_cupti_smclock__stop(void)
{
	if (!clk.running)
		return;
	if (clk.pid != getpid()) { /* a fork's child: the thread stayed with the parent */
		clk.running = 0;
		clk.n = 0;
		return;
	}
	pthread_mutex_lock(&clk.lock);
	clk.stop = 1;
	pthread_cond_signal(&clk.wake);
	pthread_mutex_unlock(&clk.lock);
	pthread_join(clk.thread, NULL);
	clk.running = 0;
	if (!clk.started)
		return;
	clk.shutdown();
	gt_info("cupti", "SM clock: %llu readings while busy, mean %llu MHz",
		(unsigned long long)clk.n, (unsigned long long)(clk.n ? clk.sum_mhz / clk.n : 0));
}

int gt_cupti_smclock__mean_khz(uint64_t *khz, uint64_t *readings)
{
	if (clk.running || !clk.n)
		return -1;
	*khz = clk.sum_mhz * 1000 / clk.n;
	*readings = clk.n;
	return 0;
}
