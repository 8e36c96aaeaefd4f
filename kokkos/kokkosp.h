/* SPDX-License-Identifier: MIT */
#ifndef GT_KOKKOS_KOKKOSP_H
#define GT_KOKKOS_KOKKOSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The Kokkos Tools entry points the library exports (libgputool.map), as
 * Kokkos' C interface header declares them (Kokkos_Profiling_C_Interface.h,
 * KOKKOSP_INTERFACE_VERSION 20240906): Kokkos calls them through pointers
 * of these types after dlsym. Written from that header's C ABI; Kokkos'
 * own header is C++-guarded C and could serve, but Kokkos is not a build
 * dependency.
 */
#define GT_KOKKOSP_INTERFACE_VERSION 20240906u

struct kokkosp_device_info {
	size_t deviceID;
};

/* Passed by value: a 64-byte struct, in memory on the stack. */
struct kokkosp_space_handle {
	char name[64];
};

struct kokkosp_tool_settings {
	bool requires_global_fencing;
	bool padding[255];
};

void kokkosp_init_library(const int load_seq, const uint64_t interface_version,
			  const uint32_t dev_info_count, struct kokkosp_device_info *dev_info);
void kokkosp_finalize_library(void);
void kokkosp_request_tool_settings(const uint32_t num, struct kokkosp_tool_settings *settings);
void kokkosp_begin_parallel_for(const char *name, const uint32_t dev, uint64_t *kid);
void kokkosp_end_parallel_for(const uint64_t kid);
void kokkosp_begin_parallel_reduce(const char *name, const uint32_t dev, uint64_t *kid);
void kokkosp_end_parallel_reduce(const uint64_t kid);
void kokkosp_begin_parallel_scan(const char *name, const uint32_t dev, uint64_t *kid);
void kokkosp_end_parallel_scan(const uint64_t kid);
void kokkosp_begin_fence(const char *name, const uint32_t dev, uint64_t *handle);
void kokkosp_end_fence(const uint64_t handle);
void kokkosp_push_profile_region(const char *name);
void kokkosp_pop_profile_region(void);
void kokkosp_begin_deep_copy(struct kokkosp_space_handle dst_space, const char *dst_name,
			     const void *dst, struct kokkosp_space_handle src_space,
			     const char *src_name, const void *src, uint64_t size);
void kokkosp_end_deep_copy(void);
void kokkosp_allocate_data(const struct kokkosp_space_handle space, const char *name,
			   const void *ptr, const uint64_t size);
void kokkosp_deallocate_data(const struct kokkosp_space_handle space, const char *name,
			     const void *ptr, const uint64_t size);
void kokkosp_create_profile_section(const char *name, uint32_t *sec_id);
void kokkosp_start_profile_section(const uint32_t sec_id);
void kokkosp_stop_profile_section(const uint32_t sec_id);
void kokkosp_destroy_profile_section(const uint32_t sec_id);
void kokkosp_declare_metadata(const char *key, const char *value);

#endif
