/* SPDX-License-Identifier: MIT */
/*
 * OpenMP devices as OMPT reports them (initialize, finalize, images), and
 * what the report says of them at exit: the devices and images, how target
 * regions were timed, and why none was measured when libomptarget never
 * connected to the OpenMP runtime's OMPT.
 */
#include "ompt/target.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/construct.h"
#include "core/log.h"
#include "core/thread.h"
#include "core/tool.h"
#include "core/unwind.h"
#include "gpu/blame.h"
#include "gpu/backend.h"
#include "gpu/monitor.h"
#include "ompt/ompt-internal.h"
#include "ompt/target-internal.h"


atomic_int gt_ompt_target_seen;

/* ---- devices ---- */

void ompt__on_device_initialize(int device_num, const char *type, ompt_device_t *device,
				ompt_function_lookup_t lookup, const char *documentation)
{
	struct gt_ompt_device *d;

	(void)documentation;
	atomic_store_explicit(&gt_ompt_target_seen, 1, memory_order_relaxed);
	if (device_num < 0 || device_num >= GT_OMPT_MAX_DEVICES) {
		gt_info("ompt", "device %d (%s): beyond the %d devices measured one by one", device_num,
			type ? type : "?", GT_OMPT_MAX_DEVICES);
		return;
	}
	d = &gt_ompt_devices[device_num];
	/* Its strings are written once, before the first publication. */
	if (atomic_load_explicit(&d->state, memory_order_acquire) == GT_DEV_UNSEEN) {
		snprintf(d->type, sizeof(d->type), "%s", type && *type ? type : "?");
		snprintf(d->full_name, sizeof(d->full_name), "device %d (%s)", device_num, d->type);
		atomic_store_explicit(&d->name, d->full_name, memory_order_release);
	}
	d->handle = device;
	/* Pairs with the acquire load in gt_ompt__device. */
	atomic_store_explicit(&d->state, GT_DEV_UP, memory_order_release);
	gt_info("ompt", "device %d: %s", device_num, d->type);
	if (lookup && !gt_tool__stopping())
		ompt__trace_start(device_num, device, lookup);
	/* An NVIDIA device brings libcuda in: the CUDA backend measures the
	 * work libomptarget issues, under this layer's placeholders. */
	if (!ompt__trace_on(device_num))
		gt_backend__probe("OpenMP device initialize");
}

void ompt__on_device_finalize(int device_num)
{
	struct gt_ompt_device *d = gt_ompt__device(device_num);

	if (!d)
		return;
	ompt__trace_stop(device_num);
	atomic_store_explicit(&d->state, GT_DEV_DOWN, memory_order_release);
}

void ompt__on_device_load(int device_num, const char *filename, int64_t offset_in_file,
			  void *vma_in_file, size_t bytes, void *host_addr, void *device_addr,
			  uint64_t module_id)
{
	struct gt_ompt_device *d;
	int expected = 0;

	(void)offset_in_file, (void)vma_in_file, (void)host_addr, (void)device_addr, (void)module_id;
	atomic_store_explicit(&gt_ompt_target_seen, 1, memory_order_relaxed);
	if (device_num < 0 || device_num >= GT_OMPT_MAX_DEVICES)
		return;
	d = &gt_ompt_devices[device_num];
	atomic_fetch_add_explicit(&d->images, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&d->image_bytes, bytes, memory_order_relaxed);
	if (filename && *filename &&
	    atomic_compare_exchange_strong_explicit(&d->file_state, &expected, 1, memory_order_relaxed,
						    memory_order_relaxed)) {
		snprintf(d->file, sizeof(d->file), "%s", filename);
		/* Pairs with the acquire load when the facts are written. */
		atomic_store_explicit(&d->file_state, 2, memory_order_release);
	}
}

void ompt__on_device_unload(int device_num, uint64_t module_id)
{
	(void)module_id;
	if (device_num >= 0 && device_num < GT_OMPT_MAX_DEVICES)
		atomic_fetch_add_explicit(&gt_ompt_devices[device_num].unloads, 1, memory_order_relaxed);
}

/* ---- the report's facts ---- */

/* Appends to buf[size] at *len; output that does not fit is cut. */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t size, size_t *len,
							  const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

/*
 * "0 generic-64bit, of 4 offered": runs of the devices that ran a construct
 * or an operation, by type, then how many the runtime initialized when that
 * is more; "none used, of 4 offered" when none ran anything.
 */
static void describe_devices(char *buf, size_t size)
{
	size_t len = 0;
	int offered = 0, used = 0;

	buf[0] = 0;
	for (int i = 0; i < GT_OMPT_MAX_DEVICES; i++)
		if (gt_ompt__device(i))
			offered++;
	for (int i = 0; i < GT_OMPT_MAX_DEVICES;) {
		const struct gt_ompt_device *d = gt_ompt__device(i);
		int j = i + 1;

		if (!d || !atomic_load_explicit(&d->used, memory_order_relaxed)) {
			i++;
			continue;
		}
		while (j < GT_OMPT_MAX_DEVICES && gt_ompt__device(j) &&
		       atomic_load_explicit(&gt_ompt_devices[j].used, memory_order_relaxed) &&
		       !strcmp(gt_ompt_devices[j].type, d->type))
			j++;
		append(buf, size, &len, len ? ", " : "");
		if (j - i > 1)
			append(buf, size, &len, "%d-%d %s", i, j - 1, d->type);
		else
			append(buf, size, &len, "%d %s", i, d->type);
		used += j - i;
		i = j;
	}
	if (!used && offered)
		append(buf, size, &len, "none used");
	if (offered > used)
		append(buf, size, &len, ", of %d offered", offered);
}

static void describe_images(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < GT_OMPT_MAX_DEVICES; i++) {
		struct gt_ompt_device *d = &gt_ompt_devices[i];
		uint64_t n = atomic_load_explicit(&d->images, memory_order_relaxed);

		if (!n)
			continue;
		append(buf, size, &len, "%sdevice %d: %llu image%s, %llu bytes", len ? "; " : "", i,
		       (unsigned long long)n, n == 1 ? "" : "s",
		       (unsigned long long)atomic_load_explicit(&d->image_bytes, memory_order_relaxed));
		if (atomic_load_explicit(&d->file_state, memory_order_acquire) == 2)
			append(buf, size, &len, " (%s)", d->file);
	}
}

/* ---- target regions that cannot be measured ---- */

struct loaded {
	char omp[PATH_MAX];   /* the libomp in use, "" when none */
	int omptarget;	      /* libomptarget is mapped */
};

static int loaded__visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, "libomptarget.so", 15))
		l->omptarget = 1;
	else if (!strncmp(base, "libomp.so", 9) && !l->omp[0])
		snprintf(l->omp, sizeof(l->omp), "%s", info->dlpi_name);
	return 0;
}

/*
 * LLVM's libomptarget connects to the OpenMP runtime's OMPT by
 * dlopen("libomp.so"), the development name, which Debian, for one, ships only
 * in LLVM's own directory: a program that finds libomp there through its
 * RUNPATH runs its target regions with no target callback at all. Called at
 * exit when no device or target event ever arrived; when libomptarget is
 * mapped and "libomp.so" does not lead to a loaded library (the case above,
 * or a libomp.so that is another runtime's), says so once on stderr and in
 * the report, with the fix. Programs without libomptarget get nothing.
 */
static void target__hint(void)
{
	struct loaded l = { .omp = "", .omptarget = 0 };
	char dir[PATH_MAX], link[PATH_MAX + 16], real[PATH_MAX], fix[PATH_MAX + 64] = "", hint[224];
	void *h;

	dl_iterate_phdr(loaded__visit, &l);
	if (!l.omptarget || !l.omp[0])
		return;
	/* Loaded or found under that name: libomptarget could connect, and the
	 * silence has another cause. */
	h = dlopen("libomp.so", RTLD_NOLOAD | RTLD_LAZY);
	if (h) {
		dlclose(h);
		return;
	}
	if (!realpath(l.omp, real))
		snprintf(real, sizeof(real), "%s", l.omp);
	snprintf(dir, sizeof(dir), "%s", real);
	*strrchr(dir, '/') = '\0';
	snprintf(link, sizeof(link), "%s/libomp.so", dir);
	/* LD_LIBRARY_PATH helps only where a libomp.so beside it names it. */
	{
		char there[PATH_MAX];

		if (realpath(link, there) && !strcmp(there, real))
			snprintf(fix, sizeof(fix), ", or set LD_LIBRARY_PATH=%s", dir);
	}
	gt_warn("ompt",
		"OpenMP target regions are not measured: libomptarget is loaded but never connected to OMPT, "
		"since it looks for the OpenMP runtime as libomp.so and none leads to the one in use (%s); run "
		"the program as `gputool run -- %s`%s",
		real, program_invocation_name, fix);
	snprintf(hint, sizeof(hint), "not measured: libomptarget found no libomp.so leading to %s; run as "
		 "`gputool run -- %s`%s", real, program_invocation_name, fix);
	gt_tool__set_fact("omp_target_hint", hint);
}

void gt_ompt__target_facts(void)
{
	char buf[224], traced[64];

	if (!atomic_load_explicit(&gt_ompt_target_seen, memory_order_relaxed)) {
		target__hint();
		return;
	}
	describe_devices(buf, sizeof(buf));
	if (buf[0])
		gt_tool__set_fact("omp_devices", buf);
	describe_images(buf, sizeof(buf));
	if (buf[0])
		gt_tool__set_fact("omp_images", buf);
	ompt__trace_describe(traced, sizeof(traced));
	if (traced[0])
		snprintf(buf, sizeof(buf),
			 "device timestamps from OMPT tracing on device %s (GKER, GXCOPY, GMEM under each "
			 "operation); OMP_TGT_*_TIME from host callbacks",
			 traced);
	else
		snprintf(buf, sizeof(buf),
			 "host begin/end callbacks (OMP_TGT_*_TIME); the runtime offers no OMPT device tracing");
	gt_tool__set_fact("omp_target_timing", buf);
}
