/* SPDX-License-Identifier: MIT */
#ifndef GT_KOKKOS_KOKKOS_H
#define GT_KOKKOS_KOKKOS_H

#include <stdint.h>

/*
 * The Kokkos Tools layer (kokkos/kokkos.c): Kokkos loads the library named
 * by KOKKOS_TOOLS_LIBS and calls its kokkosp_* entry points. Its kernels,
 * regions, fences, deep copies and sections are regions (core/region.h)
 * named by the labels the program gave them.
 *
 * kokkos/elide.c: Kokkos' template code instantiated in the program's own
 * modules, elided from contexts as a runtime library's frames are.
 */
/* Scans the loaded user modules once and installs the elide hook. Returns how many address ranges it found.
 * Normal context. */
unsigned gt_kokkos_elide__build(void);
/* Whether pc lies in Kokkos' code in a user module. Async-signal-safe. */
int gt_kokkos_elide__covers(uintptr_t pc);

#endif
