/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_BLAME_SPIN_H
#define GT_TESTS_BLAME_SPIN_H

#include <stdint.h>

/* Spin until the calling thread used @ns of CPU time; return the CPU time used. */
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_idle(uint64_t ns);
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_busy(uint64_t ns);
__attribute__((visibility("default"), noinline)) uint64_t blame_spin_mixed(uint64_t ns);

#endif
