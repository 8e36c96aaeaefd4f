/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_MODMAP_H
#define GT_CORE_MODMAP_H

#include <stdint.h>

/*
 * The load modules of the process (dl_iterate_phdr), with the executable
 * address ranges of each, classified so that the unwinder can elide the
 * tool's own frames and those of runtime libraries.
 *
 * The map is an immutable snapshot published through an atomic pointer:
 * gt_modmap__refresh (normal context only) builds a new one and publishes it
 * with a release store; lookups (any context, signal handlers included) load
 * it with acquire. Old snapshots are kept for the life of the process, so a
 * reader never sees freed memory. A lookup that misses marks the map stale;
 * the next safe point refreshes it.
 *
 * The snapshots together are the load-module history: every module seen
 * while the process ran, at the address it had, closed ones included. A
 * module that a miss meets in a signal handler (loaded since the last
 * refresh, and perhaps closed before the next) is captured there: the
 * dynamic loader's lock-free _dl_find_object names it, and the name is
 * copied into one of a fixed set of slots that the next refresh takes in.
 */

enum gt_module_class {
	GT_MOD_USER = 0,    /* the application and its own libraries */
	GT_MOD_TOOL = 1,    /* libgputool, and the vendors' measurement libraries (CUPTI, libnvperf_host,
			     * ...: modmap.c lists them): their time is the tool's */
	GT_MOD_RUNTIME = 2, /* programming-model runtimes: libomp, libcuda, libOpenCL ... */
	GT_MOD_SYSTEM = 3,  /* libc, the dynamic loader: trimmed at the root of a path */
};

struct gt_module {
	uintptr_t lo, hi; /* executable range [lo, hi) */
	uintptr_t bias;   /* load address: offset = pc - bias */
	const char *path;
	enum gt_module_class cls;
	uint32_t id; /* stable across snapshots, in order of first sight */
};

int gt_modmap__init(void);
void gt_modmap__refresh(void);
int gt_modmap__stale(void);
const struct gt_module *gt_modmap__find(uintptr_t pc);
enum gt_module_class gt_modmap__class(uintptr_t pc);
/* Every module in the history once per (path, load address), the current
 * snapshot's first, then older ones newest first; normal context only. */
void gt_modmap__history(void (*fn)(const char *path, uintptr_t bias, void *arg), void *arg);
/* Classification by file name, exposed for tests. */
enum gt_module_class gt_modmap__classify(const char *path);

/*
 * Calls @fn with the ELF image of each module of the program's own loaded
 * now (GT_MOD_USER: the executable and its libraries, not the tool's,
 * runtimes' or the system's) and its load bias, for a backend that looks
 * for a runtime's code inside them (a statically linked CUDA runtime,
 * Kokkos' templates). The image is closed when @fn returns. 0, or -1 when
 * libelf cannot be used. Normal context.
 */
typedef struct Elf Elf;
typedef void (*gt_modmap_elf_fn)(Elf *elf, uintptr_t bias, void *arg);
int gt_modmap__each_user_elf(gt_modmap_elf_fn fn, void *arg);

#endif
