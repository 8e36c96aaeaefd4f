/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_CUPTI_H
#define GT_GPU_CUPTI_H

/*
 * The CUDA backend (CUPTI), seen from the rest of the tool. See docs/CUDA.md.
 *
 * It starts, once per process, at the first of:
 *   - InitializeInjection, which the CUDA driver calls during cuInit when
 *     CUDA_INJECTION64_PATH names libgputool.so;
 *   - gt_cupti__attach, which another entry point calls when a runtime it
 *     measures has brought CUDA into the process (OpenACC device init,
 *     OpenMP device initialize): it starts only if libcuda is already loaded.
 *
 * gt_cupti__attach is the backend's probe (gpu/backend.h): the layers reach
 * it through gt_backend__probe, and it is added to the probes when the
 * backend's code is loaded.
 */

/* Starts the backend if libcuda is loaded in the process and it has not
 * started yet. @why names the caller in the log. Thread-safe. */
void gt_cupti__attach(const char *why);

#endif
