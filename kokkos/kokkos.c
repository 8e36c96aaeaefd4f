/* SPDX-License-Identifier: MIT */
/*
 * Kokkos Tools: Kokkos dlopens the library named by KOKKOS_TOOLS_LIBS (or the
 * older KOKKOS_PROFILE_LIBRARY) at Kokkos::initialize, looks the kokkosp_*
 * entry points up with dlsym and calls them on the thread that runs the
 * Kokkos operation (their declarations: kokkos/kokkosp.h).
 *
 * Each operation is a region (core/region.h) named by its label, under the
 * context of the user's call:
 *
 *   parallel_for/reduce/scan  <kokkos parallel_for "axpy">   closed by kID
 *   push/pop_profile_region   <kokkos region "solve">        innermost push
 *   fence                     <kokkos fence "name">          closed by handle
 *   deep_copy                 <kokkos deep_copy "dst <- src"> + KOKKOS_COPY_BYTES
 *   profile sections          <kokkos section "name">        start/stop by id
 *   allocate/deallocate_data  <kokkos alloc HostSpace "x">   + KOKKOS_ALLOC_BYTES
 *                             <kokkos free HostSpace "x">    + KOKKOS_FREE_BYTES
 *
 * REGION_COUNT counts each (for allocations: how many), REGION_TIME their
 * wall time. Ids handed to Kokkos come from one process-wide counter, so a
 * kernel and a fence never share one; sections use the top bit.
 *
 * The tool asks Kokkos for no global fences (kokkosp_request_tool_settings):
 * a device backend measures device work itself, and a fence around every
 * kernel would change how the program runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/log.h"
#include "core/region.h"
#include "core/sample.h"
#include "core/symbolize.h"
#include "core/thread.h"
#include "core/tool.h"
#include "kokkos/kokkos.h"
#include "kokkos/kokkosp.h"

#define EXPORT __attribute__((visibility("default")))
#define LABEL_MAX 512
#define SECTION_BIT (1ull << 63)

/* Set once the tool runs (release, by kokkosp_init_library); every entry
 * point reads it (acquire) and does nothing before. */
static atomic_int started;

/* Ids for kernels and fences: unique, no order needed (relaxed). */
static _Atomic uint64_t next_id = 1;

/* Profile sections: id -> name. Written and read under the lock, in normal
 * context only; a name lives until exit (ids are never reused). */
static struct {
	pthread_mutex_t lock;
	char **names;
	uint32_t n, cap;
} sections = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The calling thread, with its sampling started, or NULL when the tool does
 * not run. */
static struct gt_thread *kokkos__thread(void)
{
	struct gt_thread *t;

	if (!atomic_load_explicit(&started, memory_order_acquire))
		return NULL;
	t = gt_thread__self(GT_THREAD_OTHER);
	if (t)
		gt_sample__thread_start(t);
	return t;
}

/* The caller of an entry point (Kokkos' own library, or the program), for
 * gt_region__open: a region opened again there costs no unwind. */
#define CALLER (uintptr_t)__builtin_return_address(0), GT_UNWIND_KEY()

/* Opens a region; @v (when not 0) is added to its metric @m. */
static void kokkos__open(const char *label, uint64_t id, enum gt_metric m, uint64_t v, uintptr_t ra,
			 uintptr_t key)
{
	struct gt_thread *t = kokkos__thread();
	struct gt_cct_node *n;

	if (!t)
		return;
	gt_thread__enter(t);
	n = gt_region__open(t, GT_REGION_KOKKOS, label, id, 0, ra, key);
	if (n && v)
		gt_cct__add(&t->cct, n, m, v, 0);
	gt_thread__leave(t);
}

static void kokkos__close(uint64_t id)
{
	struct gt_thread *t = kokkos__thread();

	if (!t)
		return;
	gt_thread__enter(t);
	gt_region__close(t, GT_REGION_KOKKOS, id, NULL);
	gt_thread__leave(t);
}

/* A region opened and closed at once, with @m += @v on its node: an
 * allocation's place in the program. */
static void kokkos__mark(const char *label, enum gt_metric m, uint64_t v, uintptr_t ra, uintptr_t key)
{
	struct gt_thread *t = kokkos__thread();
	struct gt_cct_node *n;

	if (!t)
		return;
	gt_thread__enter(t);
	if (gt_region__open(t, GT_REGION_KOKKOS, label, 0, 0, ra, key) &&
	    (n = gt_region__close(t, GT_REGION_KOKKOS, 0, NULL)))
		gt_cct__add(&t->cct, n, m, v, 0);
	gt_thread__leave(t);
}

/* The label of a kernel, region, fence, section: `<kokkos KIND "name">`. */
static const char *label(char *buf, const char *kind, const char *name)
{
	snprintf(buf, LABEL_MAX, "<kokkos %s \"%s\">", kind, name ? name : "");
	return buf;
}

static void kernel_begin(const char *kind, const char *name, uint64_t *kid, uintptr_t ra, uintptr_t key)
{
	char buf[LABEL_MAX];
	/* relaxed: only uniqueness is needed; nothing is published by it. */
	uint64_t id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) & ~SECTION_BIT;

	if (kid)
		*kid = id;
	kokkos__open(label(buf, kind, name), id, GT_M_REGION_COUNT, 0, ra, key);
}

/*
 * Kokkos functions inlined into the program on the way from the user's
 * call to the tool (Kokkos::parallel_for, ParallelReduceAdaptor::execute,
 * the View constructor, Tools::begin_parallel_for inlined into main): an
 * inlined call claimed ends the symbolizer's chain, and the user's frame
 * keeps the line of its call. The classes that run the user's functor
 * (ParallelFor<...>::exec_range inlined into an OpenMP region's body) are
 * not claimed: the functor inlined under them keeps its line.
 */
/* The qualified name in a readable function name: after its return type
 * (the last space outside brackets before the parameter list). */
static const char *qualified_name(const char *f)
{
	const char *name = f;
	int depth = 0;

	for (const char *c = f; *c; c++) {
		if (*c == '<' || *c == '(' || *c == '[')
			depth++;
		else if ((*c == '>' || *c == ')' || *c == ']') && depth > 0)
			depth--;
		else if (*c == ' ' && !depth)
			name = c + 1;
		if (*c == '(' && depth == 1 && c != f && c[-1] != ' ')
			break; /* the parameter list */
	}
	return name;
}

static int kokkos__inline_claim(const char *function, const char *file)
{
	static const char *const body[] = {
		"Kokkos::Impl::ParallelFor<",	      "Kokkos::Impl::ParallelReduce<",
		"Kokkos::Impl::ParallelScan<",	      "Kokkos::Impl::ParallelScanWithTotal<",
		"Kokkos::Impl::HostIterateTile<",     "Kokkos::Impl::CombinedFunctorReducer<",
		"Kokkos::Impl::FunctorAnalysis<",     "Kokkos::Impl::HostThreadTeamMember<",
	};

	(void)file;
	if (!function)
		return 0;
	/* Readable names of function templates start with their return type
	 * ("std::enable_if<...>::type Kokkos::parallel_reduce<...>(...)"). */
	function = qualified_name(function);
	if (strncmp(function, "Kokkos::", 8))
		return 0;
	for (size_t i = 0; i < sizeof(body) / sizeof(*body); i++)
		if (!strncmp(function, body[i], strlen(body[i])))
			return 0;
	return 1;
}

EXPORT void kokkosp_init_library(const int load_seq, const uint64_t interface_version,
				 const uint32_t dev_info_count, struct kokkosp_device_info *dev_info)
{
	char buf[64];
	unsigned ranges;

	(void)load_seq, (void)dev_info_count, (void)dev_info;
	if (atomic_load_explicit(&started, memory_order_acquire) || gt_tool__start())
		return;
	ranges = gt_kokkos_elide__build();
	gt_symbolizer__set_runtime_inline(kokkos__inline_claim);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)interface_version);
	gt_tool__set_fact("kokkos_interface", buf);
	/* Pairs with the acquire load of every entry point. */
	atomic_store_explicit(&started, 1, memory_order_release);
	kokkos__thread();
	gt_info("kokkos", "Kokkos Tools interface %llu; %u ranges of Kokkos code in the program",
		(unsigned long long)interface_version, ranges);
}

/* The output is written at process exit, as for every layer: Kokkos may be
 * finalized long before the program ends. */
EXPORT void kokkosp_finalize_library(void)
{
}

EXPORT void kokkosp_request_tool_settings(const uint32_t num, struct kokkosp_tool_settings *settings)
{
	if (num >= 1 && settings)
		settings->requires_global_fencing = false;
}

/* The kernels and fences, each a begin and an end by Kokkos' id: one pair
 * of entry points per kind, named as kokkosp.h declares them. */
#define KERNEL_KIND(kind)                                                                      \
	EXPORT void kokkosp_begin_##kind(const char *name, const uint32_t dev, uint64_t *kid) \
	{                                                                                      \
		(void)dev;                                                                     \
		kernel_begin(#kind, name, kid, CALLER);                                        \
	}                                                                                      \
	EXPORT void kokkosp_end_##kind(const uint64_t kid)                                     \
	{                                                                                      \
		kokkos__close(kid);                                                            \
	}

KERNEL_KIND(parallel_for)
KERNEL_KIND(parallel_reduce)
KERNEL_KIND(parallel_scan)
KERNEL_KIND(fence)

/* Regions nest in push/pop order on a thread: id 0, so a pop closes the
 * innermost push and never a kernel or a section. */
EXPORT void kokkosp_push_profile_region(const char *name)
{
	char buf[LABEL_MAX];

	kokkos__open(label(buf, "region", name), 0, GT_M_REGION_COUNT, 0, CALLER);
}

EXPORT void kokkosp_pop_profile_region(void)
{
	kokkos__close(0);
}

EXPORT void kokkosp_begin_deep_copy(struct kokkosp_space_handle dst_space, const char *dst_name,
				    const void *dst, struct kokkosp_space_handle src_space,
				    const char *src_name, const void *src, uint64_t size)
{
	char buf[LABEL_MAX];

	(void)dst_space, (void)dst, (void)src_space, (void)src;
	snprintf(buf, sizeof(buf), "<kokkos deep_copy \"%s <- %s\">", dst_name ? dst_name : "",
		 src_name ? src_name : "");
	/* id 0: a deep copy ends with no handle, before any pop. */
	kokkos__open(buf, 0, GT_M_KOKKOS_COPY_BYTES, size, CALLER);
}

EXPORT void kokkosp_end_deep_copy(void)
{
	kokkos__close(0);
}

static void space_label(char *buf, const char *kind, const struct kokkosp_space_handle *space,
			const char *name)
{
	snprintf(buf, LABEL_MAX, name && *name ? "<kokkos %s %.64s \"%s\">" : "<kokkos %s %.64s>",
		 kind, space->name, name);
}

EXPORT void kokkosp_allocate_data(const struct kokkosp_space_handle space, const char *name,
				  const void *ptr, const uint64_t size)
{
	char buf[LABEL_MAX];

	(void)ptr;
	space_label(buf, "alloc", &space, name);
	kokkos__mark(buf, GT_M_KOKKOS_ALLOC_BYTES, size, CALLER);
}

EXPORT void kokkosp_deallocate_data(const struct kokkosp_space_handle space, const char *name,
				    const void *ptr, const uint64_t size)
{
	char buf[LABEL_MAX];

	(void)ptr;
	space_label(buf, "free", &space, name);
	kokkos__mark(buf, GT_M_KOKKOS_FREE_BYTES, size, CALLER);
}

EXPORT void kokkosp_create_profile_section(const char *name, uint32_t *sec_id)
{
	char *copy;

	if (!sec_id)
		return;
	*sec_id = UINT32_MAX; /* not measured: start and stop find no name */
	if (!atomic_load_explicit(&started, memory_order_acquire) || !(copy = strdup(name ? name : "")))
		return;
	pthread_mutex_lock(&sections.lock);
	if (sections.n == sections.cap) {
		uint32_t cap = sections.cap ? sections.cap * 2 : 16;
		char **grown = realloc(sections.names, cap * sizeof(*grown));

		if (!grown) {
			pthread_mutex_unlock(&sections.lock);
			free(copy);
			return;
		}
		sections.names = grown;
		sections.cap = cap;
	}
	sections.names[sections.n] = copy;
	*sec_id = sections.n++;
	pthread_mutex_unlock(&sections.lock);
}

EXPORT void kokkosp_start_profile_section(const uint32_t sec_id)
{
	char buf[LABEL_MAX];
	const char *name = NULL;

	pthread_mutex_lock(&sections.lock);
	if (sec_id < sections.n)
		name = label(buf, "section", sections.names[sec_id]);
	pthread_mutex_unlock(&sections.lock);
	if (name)
		kokkos__open(name, SECTION_BIT | sec_id, GT_M_REGION_COUNT, 0, CALLER);
}

EXPORT void kokkosp_stop_profile_section(const uint32_t sec_id)
{
	kokkos__close(SECTION_BIT | sec_id);
}

/* A section's name stays: its id is never handed out again. */
EXPORT void kokkosp_destroy_profile_section(const uint32_t sec_id)
{
	(void)sec_id;
}

/* Kokkos declares its configuration (tens of keys) at initialize: the
 * profile keeps the version only. */
EXPORT void kokkosp_declare_metadata(const char *key, const char *value)
{
	if (key && value && !strcmp(key, "Kokkos Version") &&
	    atomic_load_explicit(&started, memory_order_acquire))
		gt_tool__set_fact("kokkos_version", value);
}
