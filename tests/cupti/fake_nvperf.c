/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for NVIDIA's profiler host library (libnvperf_host.so) for
 * cupti.unit: a library beside a stand-in libcupti's path, which the PC
 * sampling layer loads ahead of CUPTI (gt_cupti_pcsamp__preload).
 */
#define EXPORT __attribute__((visibility("default")))

EXPORT int gt_fake_nvperf_loaded(void);

int gt_fake_nvperf_loaded(void)
{
	return 1;
}
