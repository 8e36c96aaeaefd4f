/* SPDX-License-Identifier: MIT */
/*
 * A CUDA driver with no device, as libcuda.so.1: cuInit fails the way it
 * does on a machine whose GPU is missing or not visible. Preloaded, it lets
 * the tests see what the CUDA backend does then.
 */
#define EXPORT __attribute__((visibility("default")))

/* The driver's own result type, by name: calls through the tool's typed
 * pointers must match it (UBSan checks function types). */
typedef enum cudaError_enum { FAKE_SUCCESS = 0, NO_DEVICE = 100 } CUresult;

EXPORT CUresult cuInit(unsigned flags);
EXPORT CUresult cuDriverGetVersion(int *v);
EXPORT CUresult cuDeviceGetCount(int *n);
EXPORT CUresult cuDeviceGet(int *d, int ordinal);
EXPORT CUresult cuDeviceGetName(char *name, int len, int d);
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, int d);
EXPORT CUresult cuCtxGetDevice(int *d);
EXPORT CUresult cuGetErrorString(CUresult e, const char **s);

CUresult cuInit(unsigned flags)
{
	(void)flags;
	return NO_DEVICE;
}

CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return 0;
}

CUresult cuDeviceGetCount(int *n)
{
	*n = 0;
	return NO_DEVICE;
}

CUresult cuDeviceGet(int *d, int ordinal)
{
	(void)d, (void)ordinal;
	return NO_DEVICE;
}

CUresult cuDeviceGetName(char *name, int len, int d)
{
	(void)name, (void)len, (void)d;
	return NO_DEVICE;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)v, (void)attr, (void)d;
	return NO_DEVICE;
}

CUresult cuCtxGetDevice(int *d)
{
	(void)d;
	return NO_DEVICE;
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
	*s = e == NO_DEVICE ? "no CUDA-capable device is detected" : "unknown error";
	return 0;
}
