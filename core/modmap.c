/* SPDX-License-Identifier: MIT */
#include "core/modmap.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "core/array.h"

struct snapshot {
	struct snapshot *older; /* retired snapshots, freed at fini */
	uint32_t n;
	struct gt_module mods[];
};

static struct snapshot *_Atomic current;
static atomic_int stale;
/* Paths seen so far, for stable ids. Touched only under refresh, which runs
 * in normal context on one thread at a time (refresh_busy). */
static char **known_paths;
static uint32_t n_known;
static atomic_flag refresh_busy = ATOMIC_FLAG_INIT;

/*
 * Modules met by a lookup that missed, captured where the lookup ran (a
 * signal handler, perhaps): no allocation, no lock. A slot goes FREE ->
 * FILLING (the CAS that claims it) -> READY (release store after the
 * fields; pairs with the acquire load in modmap__take_captures) -> FREE
 * (the refresh, which alone empties slots, under refresh_busy).
 */
#define CAPTURE_SLOTS 16
#define CAPTURE_PATH 512
enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

static struct capture_slot {
	atomic_int state;
	uintptr_t lo, hi, bias;
	char path[CAPTURE_PATH];
} captures[CAPTURE_SLOTS];

/* Modules taken in from the slots, by refresh; read by history. */
struct captured {
	uint32_t id; /* into known_paths */
	uintptr_t bias;
};
static struct captured *captured;
static uint32_t n_captured;

/*
 * The measurement's own libraries: this one, and the vendor libraries that
 * only a measuring tool loads (CUPTI, and the host libraries CUPTI's PC
 * sampling opens: libnvperf_host, libnvperf_target, libpcsamplingutil).
 * Time in them is the measurement's cost, never the program's work: CPU
 * samples there count as the tool's (core/sample.c), frames of them that
 * reach a tree hang under a "<tool: NAME>" node (core/output.c), and the
 * advice names no context in them (report/ptree.c). The CUDA driver
 * (libcuda) is not one: the work a program asks of it is the program's,
 * and it stays a runtime, left out of contexts with its time charged to the
 * call that made it. The one list of them.
 */
static const char *const tool_prefixes[] = {
	"libgputool", "libcupti", "libnvperf_host", "libnvperf_target", "libpcsamplingutil",
};

static const char *const runtime_prefixes[] = {
	"libomp.", "libomp-", "libiomp", "libomptarget", "libgomp", "libcuda.", "libcudart",
	"libnvidia-", "libnvrtc", "libOpenCL", "libpocl", "libaccinj", "libnvhpc",
	"libacc", "libpgi", "libnvomp", "libze_", "libamdhip", "libhsa",
	/* NVTX's library (v1/v2 and the v3 wrappers some codes link). */
	"libnvToolsExt",
	/* Kokkos' own libraries: what they run is the kernel the program
	 * labelled (the code Kokkos instantiates in the program is told by
	 * kokkos/elide.c). */
	"libkokkoscore", "libkokkoscontainers", "libkokkossimd",
	/* MPI libraries and what they run on: Open MPI's (its components are
	 * mca_*.so; hwloc and libevent under them), UCX, PMIx, libfabric, MPICH. */
	"libmpi", "libopen-pal", "libopen-rte", "mca_", "libmca_", "libucp", "libuct", "libucs",
	"libucm", "libpmix", "libfabric", "libmpich", "libhcoll", "libpsm", "libhwloc",
	"libevent_core", "libevent_pthreads",
	/* Compilers that runtimes call at run time (OpenCL builds, JIT). */
	"libclang", "libLLVM", "libnvJitLink", "libnvptxcompiler",
};

static const char *const system_prefixes[] = {
	"libc.", "libc-", "ld-linux", "libpthread", "libdl.", "libm.", "linux-vdso", "libgcc_s",
};

static int has_prefix(const char *base, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(base, list[i], strlen(list[i])))
			return 1;
	return 0;
}

enum gt_module_class gt_modmap__classify(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (has_prefix(base, tool_prefixes, sizeof(tool_prefixes) / sizeof(*tool_prefixes)))
		return GT_MOD_TOOL;
	if (has_prefix(base, runtime_prefixes, sizeof(runtime_prefixes) / sizeof(*runtime_prefixes)))
		return GT_MOD_RUNTIME;
	if (has_prefix(base, system_prefixes, sizeof(system_prefixes) / sizeof(*system_prefixes)))
		return GT_MOD_SYSTEM;
	return GT_MOD_USER;
}

static uint32_t path_id(const char *path)
{
	char **grown, abs[PATH_MAX];

	/* dlopen("./libx.so") names the module as it was asked for: made
	 * absolute now, while the working directory is still the one that
	 * name was relative to (into a buffer: realpath's own would come from
	 * the program's heap). */
	if (path[0] != '/' && path[0] != '[' && strchr(path, '/') && realpath(path, abs))
		return path_id(abs);

	for (uint32_t i = 0; i < n_known; i++)
		if (!strcmp(known_paths[i], path))
			return i;
	grown = realloc(known_paths, (n_known + 1) * sizeof(*grown));
	if (!grown)
		return UINT32_MAX;
	known_paths = grown;
	known_paths[n_known] = strdup(path);
	return known_paths[n_known] ? n_known++ : UINT32_MAX;
}

struct collect {
	struct gt_module *mods;
	uint32_t n, cap;
	uintptr_t self_pc;
};

static int collect__phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct collect *c = arg;
	const char *path = info->dlpi_name;
	char exe[4096];

	(void)size;
	if (!path || !*path) {
		/* The main program has an empty name; vdso too, but has no file. */
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (info->dlpi_addr && getauxval(AT_SYSINFO_EHDR) == info->dlpi_addr) {
			path = "[vdso]";
		} else if (len > 0) {
			exe[len] = 0;
			path = exe;
		} else {
			path = "[exe]";
		}
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct gt_module *m;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (gt_array__grow((void **)&c->mods, &c->cap, c->n, sizeof(*c->mods), 64))
			return 1;
		m = &c->mods[c->n++];
		m->lo = info->dlpi_addr + ph->p_vaddr;
		m->hi = m->lo + ph->p_memsz;
		m->bias = info->dlpi_addr;
		m->id = path_id(path);
		m->path = m->id == UINT32_MAX ? "?" : known_paths[m->id];
		if (c->self_pc >= m->lo && c->self_pc < m->hi)
			m->cls = GT_MOD_TOOL;
		else if (!strcmp(path, "[vdso]"))
			m->cls = GT_MOD_SYSTEM;
		else
			m->cls = gt_modmap__classify(path);
	}
	return 0;
}

static void modmap__capture(uintptr_t pc)
{
	struct dl_find_object r;
	struct capture_slot *slot = NULL;
	const char *name;
	size_t len;

	if (_dl_find_object((void *)pc, &r) != 0 || !r.dlfo_link_map)
		return;
	name = r.dlfo_link_map->l_name;
	/* The program and the vdso are in every snapshot. */
	if (!name || !*name)
		return;
	for (int i = 0; i < CAPTURE_SLOTS; i++) {
		struct capture_slot *c = &captures[i];
		/* Acquire: pairs with the release store that made it READY. */
		int st = atomic_load_explicit(&c->state, memory_order_acquire);

		if (st == SLOT_READY && c->lo == (uintptr_t)r.dlfo_map_start)
			return; /* captured already */
		if (st == SLOT_FREE && !slot)
			slot = c;
	}
	if (!slot)
		return;
	{
		int expected = SLOT_FREE;

		/* Relaxed: the fields are published by the release store below. */
		if (!atomic_compare_exchange_strong_explicit(&slot->state, &expected, SLOT_FILLING,
							     memory_order_relaxed, memory_order_relaxed))
			return;
	}
	slot->lo = (uintptr_t)r.dlfo_map_start;
	slot->hi = (uintptr_t)r.dlfo_map_end;
	slot->bias = r.dlfo_link_map->l_addr;
	len = strnlen(name, CAPTURE_PATH - 1);
	memcpy(slot->path, name, len);
	slot->path[len] = 0;
	/* Release: pairs with the acquire loads of capture and take_captures. */
	atomic_store_explicit(&slot->state, SLOT_READY, memory_order_release);
}

/* Under refresh_busy. */
static void modmap__take_captures(void)
{
	for (int i = 0; i < CAPTURE_SLOTS; i++) {
		struct capture_slot *c = &captures[i];
		struct captured *grown;
		uint32_t id;

		/* Acquire: pairs with the release store in modmap__capture. */
		if (atomic_load_explicit(&c->state, memory_order_acquire) != SLOT_READY)
			continue;
		id = path_id(c->path);
		grown = id == UINT32_MAX ? NULL : realloc(captured, (n_captured + 1) * sizeof(*grown));
		if (grown) {
			captured = grown;
			captured[n_captured].id = id;
			captured[n_captured].bias = c->bias;
			n_captured++;
		}
		/* Relaxed: nothing is published with a FREE slot. */
		atomic_store_explicit(&c->state, SLOT_FREE, memory_order_relaxed);
	}
}

static int by_lo(const void *a, const void *b)
{
	const struct gt_module *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void gt_modmap__refresh(void)
{
	struct collect c = { .self_pc = (uintptr_t)&gt_modmap__refresh };
	struct snapshot *s, *old;

	if (atomic_flag_test_and_set_explicit(&refresh_busy, memory_order_acquire))
		return; /* another thread is refreshing; its snapshot will do */
	atomic_store_explicit(&stale, 0, memory_order_relaxed);
	modmap__take_captures();
	dl_iterate_phdr(collect__phdr, &c);
	qsort(c.mods, c.n, sizeof(*c.mods), by_lo);
	s = malloc(sizeof(*s) + c.n * sizeof(s->mods[0]));
	if (s) {
		s->n = c.n;
		if (c.n)
			memcpy(s->mods, c.mods, c.n * sizeof(s->mods[0]));
		old = atomic_load_explicit(&current, memory_order_relaxed);
		s->older = old;
		/* Pairs with the acquire load in gt_modmap__find. */
		atomic_store_explicit(&current, s, memory_order_release);
	}
	free(c.mods);
	atomic_flag_clear_explicit(&refresh_busy, memory_order_release);
}

int gt_modmap__init(void)
{
	gt_modmap__refresh();
	return atomic_load_explicit(&current, memory_order_acquire) ? 0 : -1;
}

struct seen {
	uint32_t id;
	uintptr_t bias;
};

static int seen__add(struct seen **v, uint32_t *n, uint32_t id, uintptr_t bias)
{
	struct seen *grown;

	for (uint32_t i = 0; i < *n; i++)
		if ((*v)[i].id == id && (*v)[i].bias == bias)
			return 0;
	grown = realloc(*v, (*n + 1) * sizeof(*grown));
	if (!grown)
		return 0;
	*v = grown;
	(*v)[*n].id = id;
	(*v)[*n].bias = bias;
	(*n)++;
	return 1;
}

void gt_modmap__history(void (*fn)(const char *path, uintptr_t bias, void *arg), void *arg)
{
	struct snapshot *s;
	struct seen *seen = NULL;
	uint32_t n_seen = 0;

	while (atomic_flag_test_and_set_explicit(&refresh_busy, memory_order_acquire))
		;
	modmap__take_captures();
	/* Acquire: pairs with the release store in gt_modmap__refresh. */
	for (s = atomic_load_explicit(&current, memory_order_acquire); s; s = s->older)
		for (uint32_t i = 0; i < s->n; i++)
			if (s->mods[i].id != UINT32_MAX &&
			    seen__add(&seen, &n_seen, s->mods[i].id, s->mods[i].bias))
				fn(s->mods[i].path, s->mods[i].bias, arg);
	for (uint32_t i = n_captured; i-- > 0;)
		if (seen__add(&seen, &n_seen, captured[i].id, captured[i].bias))
			fn(known_paths[captured[i].id], captured[i].bias, arg);
	atomic_flag_clear_explicit(&refresh_busy, memory_order_release);
	free(seen);
}

int gt_modmap__stale(void)
{
	return atomic_load_explicit(&stale, memory_order_relaxed);
}

const struct gt_module *gt_modmap__find(uintptr_t pc)
{
	struct snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
	uint32_t lo = 0, hi;

	if (!s)
		return NULL;
	hi = s->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (pc < s->mods[mid].lo)
			hi = mid;
		else if (pc >= s->mods[mid].hi)
			lo = mid + 1;
		else
			return &s->mods[mid];
	}
	atomic_store_explicit(&stale, 1, memory_order_relaxed);
	modmap__capture(pc);
	return NULL;
}

enum gt_module_class gt_modmap__class(uintptr_t pc)
{
	const struct gt_module *m = gt_modmap__find(pc);

	return m ? m->cls : GT_MOD_USER;
}
