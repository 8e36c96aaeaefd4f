/* SPDX-License-Identifier: MIT */
/*
 * A CUDA driver with no device, as libcuda.so.1: cuInit fails the way it
 * does on a machine whose GPU is missing or not visible. Preloaded, it lets
 * the tests see what the CUDA backend does then.
 */
#define EXPORT __attribute__((visibility("default")))

enum { NO_DEVICE = 100 };

EXPORT int cuInit(unsigned flags);
EXPORT int cuDriverGetVersion(int *v);
EXPORT int cuDeviceGetCount(int *n);
EXPORT int cuDeviceGet(int *d, int ordinal);
EXPORT int cuDeviceGetName(char *name, int len, int d);
EXPORT int cuDeviceGetAttribute(int *v, int attr, int d);
EXPORT int cuCtxGetDevice(int *d);
EXPORT int cuGetErrorString(int e, const char **s);

int cuInit(unsigned flags)
{
	(void)flags;
	return NO_DEVICE;
}

int cuDriverGetVersion(int *v)
{
	*v = 13000;
	return 0;
}

int cuDeviceGetCount(int *n)
{
	*n = 0;
	return NO_DEVICE;
}

int cuDeviceGet(int *d, int ordinal)
{
	(void)d, (void)ordinal;
	return NO_DEVICE;
}

int cuDeviceGetName(char *name, int len, int d)
{
	(void)name, (void)len, (void)d;
	return NO_DEVICE;
}

int cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)v, (void)attr, (void)d;
	return NO_DEVICE;
}

int cuCtxGetDevice(int *d)
{
	(void)d;
	return NO_DEVICE;
}

int cuGetErrorString(int e, const char **s)
{
	*s = e == NO_DEVICE ? "no CUDA-capable device is detected" : "unknown error";
	return 0;
}
