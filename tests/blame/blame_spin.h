/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_BLAME_SPIN_H
#define GT_TESTS_BLAME_SPIN_H

#include <stdint.h>

/*
 * Spin until the calling thread used @ns of CPU time and then until
 * *@samples, the thread's count of CPU-time samples, changed: the phase ends
 * just after a sample taken in it. Return the CPU time used.
 */
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_idle(uint64_t ns,
									   const volatile uint64_t *samples);
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_busy(uint64_t ns,
									   const volatile uint64_t *samples);
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_covered(uint64_t ns,
									      const volatile uint64_t *samples);
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_mixed(uint64_t ns,
									    const volatile uint64_t *samples);
/* Spin until *@samples changed: what follows begins just after a sample. */
__attribute__((visibility("default"), noinline)) void blame_spin_align(const volatile uint64_t *samples);

#endif
