/* SPDX-License-Identifier: MIT */
/*
 * The SM clock of PC sampling (gpu/cupti/smclock.c), read through a
 * stand-in NVML (fake_nvml.c, found through LD_LIBRARY_PATH) for a device
 * at PCI 00000000:17:00.0: only while the device has operations in flight.
 */
#include <time.h>

#include "core/thread.h"
#include "gpu/blame-internal.h"
#include "gpu/cupti/cupti-internal.h"
#include "tests/cupti/cupti-test.h"
#include "tests/unit/test.h"

static CUresult CUDAAPI fake_device_get(CUdevice *dev, int ordinal)
{
	*dev = ordinal;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_pci_attribute(int *v, CUdevice_attribute a, CUdevice dev)
{
	(void)dev;
	*v = a == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID ? 0x17 : 0;
	return CUDA_SUCCESS;
}

/* Device 0 sampled for @ms milliseconds, with @busy operations in flight. */
static void sample_for(int ms, uint32_t busy)
{
	const struct timespec t = { 0, ms * 1000000L };

	gt_cupti_lib.cuDeviceGet = fake_device_get;
	gt_cupti_lib.cuDeviceGetAttribute = fake_pci_attribute;
	for (uint32_t i = 0; i < busy; i++)
		gt_blame__launched(0);
	gt_cupti_smclock__start(0);
	nanosleep(&t, NULL);
	gt_cupti_smclock__stop();
	for (uint32_t i = 0; i < busy; i++)
		gt_blame__unlaunched(0);
}

void test_smclock_idle(void)
{
	uint64_t khz = 0, n = 0;

	sample_for(30, 0);
	CHECK(gt_cupti_smclock__mean_khz(&khz, &n) == -1);
	gt_cupti_smclock__start(0); /* once per process */
	CHECK(gt_cupti_smclock__mean_khz(&khz, &n) == -1);
}

void test_smclock_busy(void)
{
	uint64_t khz = 0, n = 0;

	sample_for(20, 1);
	CHECK(gt_cupti_smclock__mean_khz(&khz, &n) == 0);
	CHECK_EQ_U(khz, 1500000);
	CHECK(n >= 1); /* the first reading comes before the first wait */
}
