/* SPDX-License-Identifier: MIT */
/*
 * test_cupti's modes on files: a recording made on a GPU machine replayed
 * through the real conversion and the monitor (replay, replay-blame), and
 * the static CUDA runtime and nvcc's stubs found in an nvcc-built program
 * (elide).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/thread.h"
#include "gpu/blame.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/monitor.h"
#include "tests/cupti/cupti-test.h"
#include "tests/unit/test.h"
#include "tests/gpu/monitor-test.h"

/* ---- replay ------------------------------------------------------------------ */

#define MAX_OPS 65536

struct replay {
	struct gt_thread *t;
	uint64_t from[MAX_OPS], to[MAX_OPS]; /* recorded id → id issued now */
	struct gt_cct_node *site[MAX_OPS];   /* its call site's node, now */
	enum gt_placeholder ph[MAX_OPS];
	size_t n;
	uint64_t waited;		     /* the recorded waits, ns */
	const char *sites[256];
	size_t n_sites;
};

static uint64_t replay__map(struct replay *r, uint64_t orig)
{
	for (size_t i = r->n; i-- > 0;)
		if (r->from[i] == orig)
			return r->to[i];
	return 0;
}

static void replay__api(void *arg, uint32_t cupti_id, uint64_t id, int32_t parts,
			enum gt_placeholder ph, const char *site, uint64_t issued_ns)
{
	struct replay *r = arg;
	struct gt_cct_node *node = r->t->cct.root;
	uint64_t now = replay__map(r, id);
	size_t i;

	if (now) {
		/* A driver call under a runtime call: the same operation. */
		gt_cupti_corr__put(cupti_id, now, parts);
		return;
	}
	if (site) {
		for (i = 0; i < r->n_sites && strcmp(r->sites[i], site); i++)
			;
		if (i == r->n_sites && r->n_sites < 256)
			r->sites[r->n_sites++] = site;
		node = gt_cct__child(&r->t->cct, node, GT_NODE_NAME, (uintptr_t)r->sites[i], 0);
	}
	gt_thread__enter(r->t);
	/* Issued when recorded, on the recorded buffers' clock as the
	 * activities are. */
	now = gt_cupti__issue(r->t, node, ph, cupti_id, parts, 0, issued_ns);
	gt_thread__leave(r->t);
	CHECK(now && r->n < MAX_OPS);
	r->from[r->n] = id;
	r->site[r->n] = node;
	r->ph[r->n] = ph;
	r->to[r->n++] = now;
}

/* A wait as the backend blamed it, at the node of the call that waited; its
 * times moved to the recorded buffers' clock (CUPTI's). */
static void replay__wait(void *arg, const struct gt_cupti_wait *w)
{
	struct replay *r = arg;
	struct gt_cct_node *node = NULL;

	for (size_t i = r->n; i-- > 0;) {
		if (r->from[i] != w->id)
			continue;
		gt_thread__enter(r->t);
		node = r->ph[i] < GT_PH__COUNT ? gt_cct__placeholder(&r->t->cct, r->site[i], r->ph[i])
					       : r->site[i];
		gt_thread__leave(r->t);
		break;
	}
	CHECK(node);
	r->waited += w->end_ns - w->begin_ns;
	gt_blame__sync(r->t, node, (uint64_t)((int64_t)w->begin_ns - w->cupti_offset),
		       (uint64_t)((int64_t)w->end_ns - w->cupti_offset), w->device, w->stream);
}

static void replay__op(void *arg, const struct gt_device_op *op)
{
	struct replay *r = arg;
	struct gt_device_op o = *op;

	o.correlation = replay__map(r, op->correlation);
	CHECK(o.correlation);
	gt_monitor__activity(r->t, &o);
}

static void replay__buffer(void *arg, uint8_t *buf, size_t valid, const uint32_t *rec, size_t n)
{
	(void)arg;
	deliver(buf, valid, rec, n);
}

static void replay__device(void *arg, int ordinal, const struct gt_cupti_device *d)
{
	(void)arg;
	if (ordinal >= 0 && ordinal < GT_CUPTI_MAX_DEVICES) {
		memcpy((void *)&gt_cupti_devices[ordinal], d, sizeof(*d));
		atomic_store(&gt_cupti_devices[ordinal].ready, 1);
	}
}

/* Sums a metric over the nodes under sites whose function is @fn (NULL:
 * every site), at placeholder @ph, below kernel names containing @kernel
 * (NULL: on the placeholder itself): CUPTI's names may be mangled or not. */
static uint64_t sum(struct replay *r, const char *fn, enum gt_placeholder ph, const char *kernel,
		    enum gt_metric m)
{
	uint64_t v = 0;

	for (struct gt_cct_node *s = r->t->cct.root->children; s; s = s->sibling) {
		const char *name = s->kind == GT_NODE_NAME ? (const char *)(uintptr_t)s->key : "";
		struct gt_cct_node *p;

		/* "_ZL6uploadPfPKf (ops.cu:82)" is a site of upload. */
		if (fn && !strstr(name, fn))
			continue;
		p = child(s, GT_NODE_PLACEHOLDER, ph);
		if (!kernel) {
			v += metric_at(p, m);
			continue;
		}
		for (struct gt_cct_node *k = p ? p->children : NULL; k; k = k->sibling)
			if (k->kind == GT_NODE_NAME && strstr((const char *)(uintptr_t)k->key, kernel))
				v += metric_at(k, m);
	}
	return v;
}

#define EXPECT(got, want)                                                                  \
	do {                                                                               \
		uint64_t g_ = (got), w_ = (want);                                          \
		printf("  %-62s %10llu (expected %llu)\n", #got, (unsigned long long)g_,   \
		       (unsigned long long)w_);                                            \
		if (g_ != w_)                                                              \
			failed++;                                                          \
	} while (0)

/*
 * samples/cuda/blame recorded on a GPU machine: every wait the recording
 * blamed is CPU_IDLE at its call site, exactly, and the waits for the busy
 * kernels (0.3 s in cudaDeviceSynchronize, 0.2 s in a blocking cudaMemcpy)
 * are charged on to their launch (CPU_IDLE_CAUSE).
 */
static struct replay r;

struct gt_thread *replay_activity_begin(struct gt_cupti_replay *cb)
{
	cb->api = replay__api;
	cb->op = replay__op;
	cb->buffer = replay__buffer;
	cb->device = replay__device;
	cb->arg = &r;
	gt_cupti_lib.demangle = NULL; /* names as CUPTI gives them (mangled) */
	CHECK(gt_monitor__start() == 0);
	r.t = gt_thread__self(GT_THREAD_INITIAL);
	return r.t;
}

void replay_activity_end(void)
{
	monitor_test__flush();
	gt_monitor__drain(r.t);
}

int replay_blame(const char *path)
{
	struct gt_cupti_replay cb = { .wait = replay__wait };
	uint64_t sync, copy, cause, idle;
	int failed = 0;

	replay_activity_begin(&cb);
	CHECK(gt_cupti_record__replay(path, &cb) == 0);
	monitor_test__flush();
	replay_activity_end();
	sync = sum(&r, "wait_all", GT_PH_GPU_SYNC, NULL, GT_M_CPU_IDLE);
	copy = sum(&r, "copy_back", GT_PH_GPU_COPY_D2H, NULL, GT_M_CPU_IDLE);
	idle = tree_sum(r.t, GT_PH_GPU_SYNC, GT_M_CPU_IDLE) + tree_sum(r.t, GT_PH_GPU_COPY_D2H, GT_M_CPU_IDLE) +
	       tree_sum(r.t, GT_PH_GPU_FREE, GT_M_CPU_IDLE) + tree_sum(r.t, GT_PH_GPU_MEMSET, GT_M_CPU_IDLE) +
	       tree_sum(r.t, GT_PH_GPU_COPY_H2D, GT_M_CPU_IDLE);
	cause = sum(&r, "launch", GT_PH_GPU_KERNEL, "busy_kernel", GT_M_CPU_IDLE_CAUSE);
	printf("%s: %zu operations from %zu call sites; waits %.3f s\n", path, r.n, r.n_sites,
	       (double)r.waited / 1e9);
	printf("  CPU_IDLE at wait_all %.3f s, at copy_back %.3f s, all %.3f s; CPU_IDLE_CAUSE at launch %.3f s\n",
	       (double)sync / 1e9, (double)copy / 1e9, (double)idle / 1e9, (double)cause / 1e9);
	/* Every recorded wait charged, exactly. */
	EXPECT(idle, r.waited);
	/* The sample's kernels: 0.3 s and 0.2 s, by the GPU's timer. */
	EXPECT(sync >= 290000000 && sync <= 330000000, 1);
	EXPECT(copy >= 190000000 && copy <= 230000000, 1);
	/* Charged on to the busy kernel's launch, all but what ran no kernel. */
	EXPECT(cause >= (sync + copy) * 95 / 100 && cause <= sync + copy, 1);
	return failed;
}

int replay(const char *path, unsigned short_launches)
{
	struct gt_cupti_replay cb = { 0 };
	struct gt_monitor_stats st;
	int failed = 0;

	replay_activity_begin(&cb);
	CHECK(gt_cupti_record__replay(path, &cb) == 0);
	replay_activity_end();
	printf("%s: %zu operations from %zu call sites\n", path, r.n, r.n_sites);
	EXPECT(sum(&r, "upload", GT_PH_GPU_COPY_H2D, NULL, GT_M_GXCOPY_H2D_BYTES), 4u << 20);
	EXPECT(sum(&r, "upload", GT_PH_GPU_COPY_H2D, NULL, GT_M_GXCOPY_H2D_COUNT), 4);
	EXPECT(sum(&r, "download", GT_PH_GPU_COPY_D2H, NULL, GT_M_GXCOPY_D2H_BYTES), 3u * (512 << 10));
	/* upload and download copy from and to malloc'ed memory, streams to a
	 * cudaMallocHost buffer: pageable bytes as CUPTI saw them. */
	EXPECT(sum(&r, "upload", GT_PH_GPU_COPY_H2D, NULL, GT_M_GXCOPY_PAGEABLE_BYTES), 4u << 20);
	EXPECT(sum(&r, "download", GT_PH_GPU_COPY_D2H, NULL, GT_M_GXCOPY_PAGEABLE_BYTES), 3u * (512 << 10));
	EXPECT(sum(&r, "streams", GT_PH_GPU_COPY_D2H, NULL, GT_M_GXCOPY_PAGEABLE_BYTES), 0);
	EXPECT(sum(&r, "shuffle", GT_PH_GPU_COPY_D2D, NULL, GT_M_GXCOPY_D2D_BYTES), 2u * (256 << 10));
	EXPECT(sum(&r, "clear", GT_PH_GPU_MEMSET, NULL, GT_M_GMSET_BYTES), 5u * (64 << 10));
	EXPECT(sum(&r, "clear", GT_PH_GPU_MEMSET, NULL, GT_M_GMSET_COUNT), 5);
	EXPECT(sum(&r, "many_short", GT_PH_GPU_KERNEL, "empty_kernel", GT_M_GKER_COUNT),
	       short_launches);
	EXPECT(sum(&r, "streams", GT_PH_GPU_KERNEL, "scale", GT_M_GKER_COUNT), 200);
	EXPECT(sum(&r, "streams", GT_PH_GPU_KERNEL, "scale", GT_M_GKER_BLKS), 200 * 64);
	EXPECT(sum(&r, "streams", GT_PH_GPU_KERNEL, "scale", GT_M_GKER_BLK_THR), 200 * 256);
	EXPECT(sum(&r, "streams", GT_PH_GPU_COPY_D2H, NULL, GT_M_GXCOPY_D2H_BYTES), 4u * (128 << 10));
	EXPECT(sum(&r, NULL, GT_PH_GPU_KERNEL, "axpy", GT_M_GKER_COUNT), 400 + 10);
	EXPECT(sum(&r, "stencil_run", GT_PH_GPU_KERNEL, "stencil", GT_M_GKER_COUNT), 20);
	EXPECT(sum(&r, "stencil_run", GT_PH_GPU_KERNEL, "stencil", GT_M_GKER_DYMEM),
	       20 * 1024);
	EXPECT(sum(&r, "graph", GT_PH_GPU_KERNEL, "scale", GT_M_GKER_COUNT), 10);
	EXPECT(sum(&r, "graph", GT_PH_GPU_KERNEL, "axpy", GT_M_GKER_COUNT), 10);
	EXPECT(sum(&r, "graph", GT_PH_GPU_KERNEL, "stencil", GT_M_GKER_COUNT), 10);
	EXPECT(sum(&r, "driver_calls", GT_PH_GPU_MEMSET, NULL, GT_M_GMSET_BYTES), 3u * (32 << 10));
	EXPECT(sum(&r, "many_short", GT_PH_GPU_SYNC, NULL, GT_M_GSYNC_COUNT), 1);
	EXPECT(sum(&r, "streams", GT_PH_GPU_SYNC, NULL, GT_M_GSYNC_COUNT), 4);
	EXPECT(sum(&r, "event_wait", GT_PH_GPU_SYNC, NULL, GT_M_GSYNC_COUNT), 1);
	EXPECT(sum(&r, "main", GT_PH_GPU_ALLOC, NULL, GT_M_GMEM_COUNT), 4);
	EXPECT(sum(&r, "main", GT_PH_GPU_ALLOC, NULL, GT_M_GMEM_BYTES), 4u << 20);
	EXPECT(sum(&r, "main", GT_PH_GPU_FREE, NULL, GT_M_GMEM_COUNT), 4);
	gt_monitor__stats(&st);
	printf("  monitor: %llu correlations, %llu activities, %llu waiting at the end\n",
	       (unsigned long long)st.correlations, (unsigned long long)st.activities,
	       (unsigned long long)st.map_size);
	EXPECT(st.map_size, 0);
	EXPECT(atomic_load(&gt_cupti_stats.overwritten), 0);
	return failed;
}

/* ---- elide --------------------------------------------------------------------- */

/* The link-time address of @name in @path, or 0. */
static uintptr_t symbol(const char *path, const char *name, int prefix_only)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Elf_Scn *scn = NULL;
	uintptr_t addr = 0;

	while (elf && !addr && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_value || !(n = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			if (prefix_only ? !strncmp(n, name, strlen(name)) : !strcmp(n, name)) {
				addr = (uintptr_t)s.st_value + 1;
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return addr;
}

int elide(const char *exe)
{
	static const struct {
		const char *name;
		int prefix, elided; /* 2: elided where present */
	} want[] = {
		{ "cudaMalloc", 0, 1 },		 { "cudaMemcpy", 0, 1 },
		{ "__cudaLaunchKernel", 0, 1 },	 { "libcudart_static_", 1, 1 },
		{ "_Z5scalePffi", 0, 1 },		 /* host stub of a kernel */
		{ "_Z12empty_kernelv", 0, 1 },	 { "_Z26__device_stub__Z5scalePffiPffi", 0, 1 },
		{ "_ZL25__cudaLaunchKernel_helper", 1, 2 }, /* inlined at -O2 */
		{ "main", 0, 0 },			 { "_ZL6uploadPfPKf", 0, 0 },
		{ "_ZL10many_shorti", 0, 0 },	 { "_ZL7streamsPfS_", 0, 0 },
	};
	int failed = 0;

	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	CHECK(gt_cupti_elide__build_file(exe) == 0);
	printf("%s: %u ranges\n", exe, gt_cupti_elide__ranges());
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		uintptr_t a = symbol(exe, want[i].name, want[i].prefix);
		int got = a && gt_cupti_elide__covers(a);

		printf("  %-40s %s (expected %s)\n", want[i].name, !a ? "absent" : got ? "elided" : "kept",
		       want[i].elided ? "elided" : "kept");
		if (want[i].elided == 2 ? a && !got : !a || got != want[i].elided)
			failed++;
	}
	return failed;
}
