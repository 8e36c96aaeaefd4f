/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend's life: finding libcuda and libcupti (dlopen'ed, never
 * linked), subscribing to CUPTI, the backend table's start/flush/stop, the
 * flush at exit, fork, and the devices' facts for the report header. See
 * docs/CUDA.md.
 *
 * Starting takes two steps, so that each way it can fail gives one line:
 *   attach  (this file, gputool[cupti]: off (...))  the libraries, their
 *           versions, the devices, the subscription; callbacks stay off;
 *   start   (the backend table, gputool[gpu]: cupti: off (...))  buffers,
 *           activity kinds and callbacks enabled; the monitor runs then.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/unwind.h"
#include "core/modmap.h"
#include "core/symbolize.h"
#include "core/tool.h"
#include "gpu/backend.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/cupti.h"
#include "gpu/monitor.h"

/* The flush at exit may wait this long for CUPTI; past it, what CUPTI
 * still holds is not measured and the process exits normally. */
#define FLUSH_TIMEOUT_MS 5000

struct gt_cupti_lib gt_cupti_lib;
struct gt_cupti_device gt_cupti_devices[GT_CUPTI_MAX_DEVICES];
struct gt_cupti_stats gt_cupti_stats;
atomic_int gt_cupti_live;

static struct {
	pthread_mutex_t lock; /* attach runs once; rare, never on a measured path */
	int tried;
	CUpti_SubscriberHandle sub;
	void *cupti, *cuda;
	char cupti_path[512];
	uint32_t version;
	pid_t pid;	     /* the process that subscribed */
	atomic_int finished; /* the last flush ran: CUPTI is not called again */
} cupti = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- libraries ---------------------------------------------------------- */

static int resolve(void *lib, const char *name, void **out, int required)
{
	*out = dlsym(lib, name);
	return !*out && required ? -1 : 0;
}

static const char *resolve_all(void)
{
	static char missing[96];

#define X(f, required)                                                                        \
	if (resolve(cupti.cupti, GT_CUPTI_STR(f), (void **)&gt_cupti_lib.f, required)) {      \
		snprintf(missing, sizeof(missing), "%s missing in libcupti", GT_CUPTI_STR(f)); \
		return missing;                                                               \
	}
	GT_CUPTI_FNS(X)
#undef X
#define X(f, required)                                                                        \
	if (resolve(cupti.cuda, GT_CUPTI_STR(f), (void **)&gt_cupti_lib.f, required)) {       \
		snprintf(missing, sizeof(missing), "%s missing in libcuda", GT_CUPTI_STR(f));  \
		return missing;                                                               \
	}
	GT_CUDA_FNS(X)
#undef X
	/* From the application's C++ runtime if it has one; CUDA programs
	 * built with nvcc do. Else kernel names stay mangled. */
	*(void **)&gt_cupti_lib.demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	return NULL;
}

static void *try_open(const char *dir, const char *file)
{
	char path[512];
	void *h;

	if (!dir || !*dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		snprintf(cupti.cupti_path, sizeof(cupti.cupti_path), "%s", path);
	return h;
}

/*
 * libcupti, in this order: GPUTOOL_CUPTI_PATH (the library itself or its
 * folder), $CUDA_HOME's, /usr/local/cuda's, then the loader's search path.
 */
static void *open_cupti(void)
{
	static const char *const files[] = { "libcupti.so", "libcupti.so.13" };
	static const char *const subdirs[] = { "extras/CUPTI/lib64", "targets/x86_64-linux/lib",
					       "lib64", "lib" };
	const char *env = gt_config.cupti_path, *home = getenv("CUDA_HOME");
	char dir[448];
	void *h;

	if (env && *env) {
		h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			snprintf(cupti.cupti_path, sizeof(cupti.cupti_path), "%s", env);
			return h;
		}
		for (size_t f = 0; f < 2; f++)
			if ((h = try_open(env, files[f])))
				return h;
	}
	for (int root = 0; root < 2; root++) {
		const char *r = root == 0 ? home : "/usr/local/cuda";

		for (size_t s = 0; r && s < sizeof(subdirs) / sizeof(*subdirs); s++) {
			snprintf(dir, sizeof(dir), "%s/%s", r, subdirs[s]);
			for (size_t f = 0; f < 2; f++)
				if ((h = try_open(dir, files[f])))
					return h;
		}
	}
	for (size_t f = 0; f < 2; f++) {
		h = dlopen(files[f], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			snprintf(cupti.cupti_path, sizeof(cupti.cupti_path), "%s", files[f]);
			return h;
		}
	}
	return NULL;
}

static const char *cupti_error(CUptiResult r)
{
	const char *s = NULL;

	if (gt_cupti_lib.cuptiGetResultString)
		gt_cupti_lib.cuptiGetResultString(r, &s);
	return s ? s : "unknown CUPTI error";
}

static const char *cuda_error(CUresult r)
{
	const char *s = NULL;

	if (gt_cupti_lib.cuGetErrorString)
		gt_cupti_lib.cuGetErrorString(r, &s);
	return s ? s : "unknown CUDA error";
}

/* ---- devices --------------------------------------------------------------- */

void gt_cupti__device_probe(int ordinal)
{
	static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
	struct gt_cupti_device *d;
	CUdevice dev;
	const struct {
		CUdevice_attribute a;
		size_t off;
	} attrs[] = {
#define A(attr, field) { CU_DEVICE_ATTRIBUTE_##attr, offsetof(struct gt_cupti_device, field) }
		A(COMPUTE_CAPABILITY_MAJOR, cc_major),
		A(COMPUTE_CAPABILITY_MINOR, cc_minor),
		A(MULTIPROCESSOR_COUNT, sm_count),
		A(WARP_SIZE, warp_size),
		A(MAX_THREADS_PER_MULTIPROCESSOR, max_threads_per_sm),
		A(MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_per_sm),
		A(MAX_REGISTERS_PER_MULTIPROCESSOR, regs_per_sm),
		A(MAX_REGISTERS_PER_BLOCK, regs_per_block),
		A(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, smem_per_sm),
		A(RESERVED_SHARED_MEMORY_PER_BLOCK, smem_reserved_per_block),
		A(CLOCK_RATE, clock_khz),
		A(MEMORY_CLOCK_RATE, mem_clock_khz),
		A(GLOBAL_MEMORY_BUS_WIDTH, mem_bus_bits),
#undef A
	};

	if (ordinal < 0 || ordinal >= GT_CUPTI_MAX_DEVICES)
		return;
	d = &gt_cupti_devices[ordinal];
	if (atomic_load_explicit(&d->ready, memory_order_acquire))
		return;
	pthread_mutex_lock(&probe_lock);
	if (atomic_load_explicit(&d->ready, memory_order_relaxed) ||
	    gt_cupti_lib.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS)
		goto out_unlock;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(*attrs); i++) {
		int v = 0;

		gt_cupti_lib.cuDeviceGetAttribute(&v, attrs[i].a, dev);
		*(int *)((char *)d + attrs[i].off) = v;
	}
	if (gt_cupti_lib.cuDeviceGetName(d->name, sizeof(d->name), dev) != CUDA_SUCCESS)
		snprintf(d->name, sizeof(d->name), "device %d", ordinal);
	if (gt_cupti_recording)
		gt_cupti_record__device(ordinal, d);
	/* Pairs with the acquire loads of the activity threads. */
	atomic_store_explicit(&d->ready, 1, memory_order_release);
out_unlock:
	pthread_mutex_unlock(&probe_lock);
}

/* The peak DRAM bandwidth in bytes/s (double data rate: two transfers per
 * memory clock), and the warp slots of an SM, for the report's advice. */
static uint64_t dram_bytes_per_s(const struct gt_cupti_device *d)
{
	return d->mem_clock_khz > 0 && d->mem_bus_bits > 0
		       ? 2000ULL * (uint64_t)d->mem_clock_khz * (uint64_t)d->mem_bus_bits / 8
		       : 0;
}

static uint64_t warps_per_sm(const struct gt_cupti_device *d)
{
	return d->warp_size > 0 && d->max_threads_per_sm > 0 ? (uint64_t)(d->max_threads_per_sm / d->warp_size) : 0;
}

/* Fact key: "index:value" per device probed, where value() knows it. */
static void device_list_fact(const char *key, uint64_t (*value)(const struct gt_cupti_device *d))
{
	char buf[224];
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < GT_CUPTI_MAX_DEVICES && len < sizeof(buf); i++) {
		const struct gt_cupti_device *d = &gt_cupti_devices[i];
		uint64_t v;

		if (!atomic_load_explicit(&d->ready, memory_order_acquire) || !(v = value(d)))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d:%llu", len ? " " : "", i,
					(unsigned long long)v);
	}
	if (buf[0])
		gt_tool__set_fact(key, buf);
}

/* "cuda_devices": each device once, in the report header. */
void gt_cupti__devices_fact(void)
{
	char buf[224];
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < GT_CUPTI_MAX_DEVICES && len < sizeof(buf); i++) {
		const struct gt_cupti_device *d = &gt_cupti_devices[i];

		if (!atomic_load_explicit(&d->ready, memory_order_acquire))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s%d: %s (sm_%d%d, %d SMs, %d MHz, memory %d MHz)",
					len ? "; " : "", i, d->name, d->cc_major, d->cc_minor,
					d->sm_count, d->clock_khz / 1000, d->mem_clock_khz / 1000);
	}
	if (buf[0])
		gt_tool__set_fact("cuda_devices", buf);
	device_list_fact("gpu_dram_bytes_per_s", dram_bytes_per_s);
	device_list_fact("gpu_warps_per_sm", warps_per_sm);
}

/* ---- flush and stop --------------------------------------------------------- */

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flush_cond = PTHREAD_COND_INITIALIZER;

static void *flush__thread(void *arg)
{
	int *done = arg;

	gt_cupti_lib.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&flush_lock);
	*done = 1;
	pthread_cond_broadcast(&flush_cond);
	pthread_mutex_unlock(&flush_lock);
	return NULL;
}

/*
 * Hands everything CUPTI holds to the completion callback, on a helper
 * thread, waiting at most FLUSH_TIMEOUT_MS: a driver in trouble must not
 * hang the application's exit. @last: CUPTI is not called again afterwards.
 */
static void flush__bounded(int last)
{
	static int done_storage[2];
	struct timespec until;
	pthread_t th;
	int *done, timed_out = 0;

	if (atomic_load_explicit(&cupti.finished, memory_order_acquire) || getpid() != cupti.pid)
		return;
	if (last)
		atomic_store_explicit(&cupti.finished, 1, memory_order_release);
	done = &done_storage[last ? 1 : 0];
	*done = 0;
	if (pthread_create(&th, NULL, flush__thread, done)) {
		flush__thread(done);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FLUSH_TIMEOUT_MS / 1000;
	until.tv_nsec += (FLUSH_TIMEOUT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&flush_lock);
	while (!*done && !timed_out)
		timed_out = pthread_cond_timedwait(&flush_cond, &flush_lock, &until) == ETIMEDOUT;
	pthread_mutex_unlock(&flush_lock);
	if (timed_out) {
		gt_warn("cupti", "CUPTI did not flush within %d ms; activities it still holds are "
				 "not measured",
			FLUSH_TIMEOUT_MS);
		pthread_detach(th);
		return;
	}
	pthread_join(th, NULL);
}

/*
 * Registered with atexit when the backend starts, that is during the CUDA
 * runtime's initialization: it runs before the runtime's own exit handler,
 * so CUPTI is flushed while the contexts still exist. The tool's stop
 * comes later (a destructor), after libcupti may have been finalized: it
 * does not call CUPTI again.
 */
static void cupti__atexit(void)
{
	if (!atomic_load_explicit(&gt_cupti_live, memory_order_acquire))
		return;
	gt_cupti_pcsamp__finish();
	flush__bounded(1);
}

static void cupti__flush(void)
{
	gt_cupti__poll_off();
	flush__bounded(1);
}

static void facts(void)
{
	char buf[224];

	gt_cupti__devices_fact();
	snprintf(buf, sizeof(buf),
		 "%llu records, %llu dropped by CUPTI, %llu of calls not seen, %llu evicted from "
		 "the correlation table, %llu calls failed; %llu buffers",
		 (unsigned long long)atomic_load(&gt_cupti_stats.records),
		 (unsigned long long)atomic_load(&gt_cupti_stats.dropped),
		 (unsigned long long)atomic_load(&gt_cupti_stats.untracked),
		 (unsigned long long)atomic_load(&gt_cupti_stats.overwritten),
		 (unsigned long long)atomic_load(&gt_cupti_stats.failed_calls),
		 (unsigned long long)atomic_load(&gt_cupti_stats.buffers));
	gt_tool__set_fact("cupti_records", buf);
}

static void cupti__stop(void)
{
	gt_cupti__poll_off();
	facts();
	/* Activity records CUPTI dropped (no buffer in time): operations that
	 * ran and are not in the profile. */
	gt_tool__unmeasured_ops(atomic_load_explicit(&gt_cupti_stats.dropped, memory_order_relaxed));
	atomic_store_explicit(&gt_cupti_live, 0, memory_order_release);
	gt_cupti_activity__stop();
	if (gt_cupti_recording)
		gt_cupti_record__close();
}

/* A child forked without exec: CUDA does not work there and CUPTI's state
 * is the parent's. Everything CUPTI calls now returns at once; the child
 * never flushes (its pid differs) and keeps its own measurements. */
static void cupti__atfork_child(void)
{
	atomic_store_explicit(&gt_cupti_live, 0, memory_order_release);
	atomic_store_explicit(&cupti.finished, 1, memory_order_release);
}

static int cupti__start(void)
{
	CUptiResult r;
	int err;

	err = gt_cupti_activity__start();
	if (err)
		return err;
	r = gt_cupti__enable_callbacks(cupti.sub);
	if (r != CUPTI_SUCCESS) {
		gt_cupti_activity__stop();
		return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? -EACCES : -EIO;
	}
	atomic_store_explicit(&gt_cupti_live, 1, memory_order_release);
	atexit(cupti__atexit);
	return 0;
}

/*
 * The monitor's polls flush CUPTI from a thread that makes no CUDA call. A
 * context being destroyed, or the backend stopping, must not meet a flush
 * in progress: both take poll_lock and switch polling off for good (the
 * buffers are then handed over by CUPTI's periodic flush and at exit). The
 * monitor only tries the lock, so it never waits for an application thread.
 */
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static int poll_off; /* under poll_lock */

void gt_cupti__poll_off(void)
{
	pthread_mutex_lock(&poll_lock);
	poll_off = 1;
	pthread_mutex_unlock(&poll_lock);
}

/* On the monitor thread, when a sync waits for completed kernels: the
 * buffers CUPTI has filled so far, handed over now (flag 0: no wait for
 * what is still running). */
static void cupti__poll(void)
{
	if (pthread_mutex_trylock(&poll_lock))
		return;
	if (!poll_off && atomic_load_explicit(&gt_cupti_live, memory_order_acquire) &&
	    gt_cupti_lib.cuptiActivityFlushAll)
		gt_cupti_lib.cuptiActivityFlushAll(0);
	pthread_mutex_unlock(&poll_lock);
}

static const struct gt_backend cupti_backend = {
	.name = "cupti",
	.start = cupti__start,
	.flush = cupti__flush,
	.stop = cupti__stop,
	.poll = cupti__poll,
	.settle = gt_cupti_pcsamp__settle,
};

/* ---- attach ------------------------------------------------------------------ */

/* Returns NULL when CUPTI is subscribed, else why not (one line). */
static const char *attach__locked(int injected, char *why, size_t len)
{
	const char *missing;
	CUptiResult r;
	CUresult cr;
	int v = 0;

	cupti.cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cupti.cuda)
		return "no CUDA driver (libcuda.so.1 is not loaded)";
	cupti.cupti = open_cupti();
	if (!cupti.cupti) {
		snprintf(why, len, "libcupti not found (set GPUTOOL_CUPTI_PATH or CUDA_HOME): %s",
			 dlerror());
		return why;
	}
	missing = resolve_all();
	if (missing)
		return missing;
	if (gt_cupti_lib.cuptiGetVersion(&cupti.version) != CUPTI_SUCCESS ||
	    cupti.version / 10000 != CUPTI_API_VERSION / 10000) {
		char q[GT_LOG_VALUE];

		snprintf(why, len, "%.256s has CUPTI API version %u; this build reads version %d.x",
			 gt_log__escape(cupti.cupti_path, q, sizeof(q)), cupti.version, CUPTI_API_VERSION / 10000);
		return why;
	}
	/* Inside cuInit (injection), the driver is not ready for calls yet:
	 * devices are read when the first context is created. */
	if (!injected) {
		cr = gt_cupti_lib.cuInit(0);
		if (cr == CUDA_SUCCESS)
			cr = gt_cupti_lib.cuDeviceGetCount(&v);
		if (cr != CUDA_SUCCESS) {
			snprintf(why, len, "cuInit: %s", cuda_error(cr));
			return why;
		}
		if (v == 0)
			return "no CUDA device";
		for (int i = 0; i < v && i < GT_CUPTI_MAX_DEVICES; i++)
			gt_cupti__device_probe(i);
	}
	r = gt_cupti_lib.cuptiSubscribe(&cupti.sub, gt_cupti__callback, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return "CUPTI already has a subscriber (another tool: Nsight Systems, Nsight "
		       "Compute, a debugger or a profiler in the application)";
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		return "insufficient privilege for CUPTI (see NVIDIA's ERR_NVGPUCTRPERM)";
	if (r != CUPTI_SUCCESS) {
		snprintf(why, len, "cuptiSubscribe: %s", cupti_error(r));
		return why;
	}
	return NULL;
}

static void attach(int injected, const char *how)
{
	char why[384], buf[64];
	const char *fail;
	int drv = 0;

	if (gt_tool__start())
		return;
	pthread_mutex_lock(&cupti.lock);
	if (cupti.tried) {
		pthread_mutex_unlock(&cupti.lock);
		return;
	}
	cupti.tried = 1;
	cupti.pid = getpid();
	if (injected)
		gt_cupti_pcsamp__ask_eager();
	if (gt_config.cupti_record && *gt_config.cupti_record &&
	    gt_cupti_record__open(gt_config.cupti_record)) {
		char q[GT_LOG_VALUE];

		gt_warn("cupti", "cannot record into %s", gt_log__escape(gt_config.cupti_record, q, sizeof(q)));
	}
	fail = attach__locked(injected, why, sizeof(why));
	if (fail) {
		gt_warn("cupti", "off (%s)", fail);
		pthread_mutex_unlock(&cupti.lock);
		return;
	}
	pthread_atfork(NULL, NULL, cupti__atfork_child);
	/* The driver and CUPTI were just loaded: their frames are elided. */
	gt_modmap__refresh();
	gt_cupti_elide__build();
	/* CPU samples and other contexts skip the static CUDA runtime too. */
	gt_unwind__set_elide_hook(gt_cupti_elide__covers);
	gt_symbolizer__set_runtime_inline(gt_cupti_elide__inline);
	if (gt_backend__register(&cupti_backend)) {
		gt_cupti_lib.cuptiUnsubscribe(cupti.sub);
		pthread_mutex_unlock(&cupti.lock);
		return;
	}
	{
		char q[GT_LOG_VALUE];

		gt_info("cupti", "on (%s; %s, API %u; %u static CUDA runtime ranges)", how,
			gt_log__escape(cupti.cupti_path, q, sizeof(q)), cupti.version, gt_cupti_elide__ranges());
	}
	if (gt_cupti_lib.cuDriverGetVersion(&drv) == CUDA_SUCCESS) {
		snprintf(buf, sizeof(buf), "%d.%d", drv / 1000, drv % 1000 / 10);
		gt_tool__set_fact("cuda_driver", buf);
	}
	snprintf(buf, sizeof(buf), "%u.%u.%u", cupti.version / 10000, cupti.version / 100 % 100,
		 cupti.version % 100);
	gt_tool__set_fact("cupti_version", buf);
	pthread_mutex_unlock(&cupti.lock);
	/* Last: the loader's lock, which its dlopen holds, is taken above
	 * (the elided ranges, the module map). */
	gt_cupti_pcsamp__preload(cupti.cupti_path);
}

/* The backend's probe, added when its code is loaded: a layer that sees a
 * runtime bring libcuda in asks it to look (gt_backend__probe). */
__attribute__((constructor)) static void cupti__add_probe(void)
{
	gt_backend__add_probe(gt_cupti__attach);
}

void gt_cupti__attach(const char *why)
{
	/* Only when the runtime being measured has loaded the driver: a
	 * program that does not use CUDA never loads libcupti. */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!cuda)
		return;
	dlclose(cuda);
	attach(0, why);
}

/*
 * The CUDA driver calls this during cuInit when CUDA_INJECTION64_PATH names
 * libgputool.so. Returns 1 when the backend runs.
 */
__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	attach(1, "CUDA injection");
	return atomic_load_explicit(&gt_cupti_live, memory_order_acquire) ? 1 : 0;
}
