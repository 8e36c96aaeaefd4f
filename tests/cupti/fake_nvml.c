/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for NVML (libnvidia-ml.so.1) for cupti.unit: one device, at PCI
 * 00000000:17:00.0, whose SM clock reads 1500 MHz.
 */
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

struct nvml_device;

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, struct nvml_device **dev);
EXPORT int nvmlDeviceGetClockInfo(struct nvml_device *dev, int type, unsigned int *mhz);

static int inits;

int nvmlInit_v2(void)
{
	inits++;
	return 0;
}

int nvmlShutdown(void)
{
	return inits-- > 0 ? 0 : 1;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *id, struct nvml_device **dev)
{
	if (strcmp(id, "00000000:17:00.0"))
		return 13; /* not found */
	*dev = (struct nvml_device *)&inits;
	return 0;
}

int nvmlDeviceGetClockInfo(struct nvml_device *dev, int type, unsigned int *mhz)
{
	if (dev != (struct nvml_device *)&inits || type != 1 || inits <= 0)
		return 1;
	*mhz = 1500;
	return 0;
}
