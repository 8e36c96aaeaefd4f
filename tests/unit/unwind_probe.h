/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_UNWIND_PROBE_H
#define GT_TESTS_UNWIND_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define PROBE_API __attribute__((visibility("default")))

PROBE_API void probe_init(int memo);
PROBE_API void probe_context(void *ra, int depth);
PROBE_API void probe_memo_context(void *ra, int depth);
PROBE_API void probe_ips_context(void *ra, int depth);
PROBE_API void probe_region(void *ra, int depth);
PROBE_API void probe_region_stats(uint64_t *hits, uint64_t *misses);
PROBE_API void *probe_last(void);
PROBE_API int probe_path(void *node, char *buf, size_t len);
PROBE_API void probe_stats(uint64_t *hits, uint64_t *misses, uint64_t *full);
/* Contexts stitched under base node number base (0: none) up to boundary,
 * a stack address (frames above it are cut): probe_stitched looks them up
 * through the memo (or unwinds, without it). */
PROBE_API void probe_set_stitch(int base, void *boundary);
PROBE_API void probe_stitched(void *ra, int depth);
PROBE_API uint64_t probe_derived(void);
/* Memo hits answered by the predicted entry (gt_memo__recent). */
PROBE_API uint64_t probe_predicted(void);
/* probe_copied under the stitch: mode 1 looks a context up and copies the
 * call path of the memo's recent entry that answered (probe_copy_taken);
 * mode 0 checks that copy against its own stack (probe_copy_holds). */
PROBE_API void probe_set_copy(int mode);
PROBE_API void probe_copied(void *ra, int depth);
PROBE_API int probe_copy_taken(void);
PROBE_API int probe_copy_holds(void);

/* A sample's walk (gt_unwind__sample_frames) under the stitch of
 * probe_set_stitch, taken by the probe's handler of SIGUSR2, which
 * probe_arm_sample installs: probe_sample_frames copies its frames' pcs and
 * stack pointers out (at most max) and returns how many it had. */
PROBE_API void probe_arm_sample(void);
PROBE_API int probe_sample_frames(uintptr_t *ip, uintptr_t *sp, int max);

/* Samples the probe's handler has taken. */
PROBE_API int probe_samples_taken(void);

void rt_call(void (*cb)(void *ra, int depth), int depth);
void rt_spin(volatile int *state);
void rt_call_own_ra(void (*cb)(void *ra, int depth), int depth);

#endif
