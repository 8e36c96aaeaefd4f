/* SPDX-License-Identifier: MIT */
#include "core/tool.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/endsig.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/modmap.h"
#include "core/output.h"
#include "core/profile.h"
#include "core/region.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/trace-format.h"
#include "core/trace.h"
#include "core/unwind.h"
#include "core/wsig.h"

#define MAX_FLUSH 8
#define MAX_FACTS 32

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_result = -1;
/* 1 once a runtime's entry point started the tool (gt_tool__start), as
 * opposed to the load-time start alone. A flag read on its own at stop:
 * nothing is published through it, relaxed on both sides. */
static atomic_int attached;
static atomic_int stopping;
/* The process the tool measures: set at start and in a forked child (a vfork
 * child runs no fork handler, and keeps its parent's). */
static pid_t tool_pid, tool_ppid;
/* 1 in a child forked from a measured process (set in the fork handler). */
static int forked;
/* Set (release) when the output is written, or known not to be; a second
 * stop (the program exits while a signal's writer writes) waits for it
 * (acquire), at most STOP_WAIT_MS. */
static atomic_int stopped;
#define STOP_WAIT_MS 60000
static uint64_t start_ns;
static gt_tool_flush_fn flushers[MAX_FLUSH];
static atomic_int n_flushers;
static struct {
	char key[32];
	char value[224];
} facts[MAX_FACTS];
static atomic_int n_facts;

/*
 * The last chance to write the output when no runtime said it finished. A
 * destructor, not atexit(): the OpenMP runtime reports its workers' last
 * events and calls the tool's finalize from its own exit handler, which an
 * atexit() registered during its initialization would run before.
 */
__attribute__((destructor)) static void tool__fini(void)
{
	gt_tool__stop();
	gt_endsig__exiting();
}

static void tool__zero_visit(struct gt_cct_node *n, void *arg)
{
	(void)arg;
	for (struct gt_metric_cell *c = n->metrics; c; c = c->next)
		c->value = 0;
}

/* A child forked without exec measures only what it does itself: what its
 * trees hold is the parent's and is the parent's to report. Timers are not
 * inherited: the forking thread, the child's only thread, starts its own. */
static void tool__atfork_child(void)
{
	uint32_t n = gt_thread__count();
	struct gt_thread *self = gt_thread__peek();

	start_ns = gt_clock__now();
	tool_pid = getpid();
	tool_ppid = getppid();
	forked = 1;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (!t)
			continue;
		gt_cct__walk(t->cct.root, tool__zero_visit, NULL);
		t->has_timer = t->has_wall_timer = 0;
		t->samples = t->tool_samples = t->dropped_samples = 0;
		t->wall_samples = t->wall_tool_samples = 0;
		if (t != self)
			atomic_store_explicit(&t->exited, 1, memory_order_relaxed);
	}
	gt_tracer__atfork_child();
	if (self) {
		/* The child's thread has an id of its own: its timer goes there. */
		self->tid = (pid_t)syscall(SYS_gettid);
		gt_sample__thread_start(self);
	}
}

static void tool__configure(void)
{
	gt_config__load(NULL);
	gt_log__init(gt_config.log, (int)gt_config.verbose);
}

/*
 * Whether this process is an MPI or batch launcher's (gt_output__launcher):
 * decided once, at start, from the executable's name. It inherited the
 * ranks' environment but is no rank: nothing of it is measured or written.
 */
static int tool__launcher(void)
{
	const char *exe = gt_output__launcher();

	if (exe)
		gt_info("tool", "inactive in %s, a launcher's process (not a rank)", exe);
	return exe != NULL;
}

static void tool__start_once(void)
{
	pthread_once(&config_once, tool__configure);
	if (gt_config.disable)
		return;
	/* A setuid or setgid program (or one with file capabilities): its
	 * files would belong to its owner, where the user says. */
	if (getauxval(AT_SECURE)) {
		gt_warn("tool", "inactive in a setuid, setgid or privileged program");
		return;
	}
	if (tool__launcher())
		return;
	start_ns = gt_clock__now();
	tool_pid = getpid();
	tool_ppid = getppid();
	gt_output__remember_cwd();
	gt_clock__init();
	gt_tracer__init();
	if (gt_modmap__init() || gt_unwind__init())
		gt_warn("unwind", "unwinder setup incomplete; contexts may be shallow");
	if (gt_sample__init((unsigned)gt_config.sample_hz, gt_config.sample))
		gt_config.sample_hz = 0;
	if (gt_config.on_signal)
		gt_endsig__init();
	pthread_atfork(NULL, NULL, tool__atfork_child);
	start_result = 0;
}

static int tool__start(void)
{
	pthread_once(&start_once, tool__start_once);
	return start_result;
}

int gt_tool__start(void)
{
	int rc = tool__start();

	if (!rc)
		atomic_store_explicit(&attached, 1, memory_order_relaxed);
	return rc;
}

/*
 * Preloaded (LD_PRELOAD, GPUTOOL_PRELOAD=1: what `gputool run` sets): start
 * at load, before any runtime's entry point, so that the initial thread is
 * sampled from process start and a program that loads no runtime at all is
 * measured too. A runtime that later opens the library by the same path
 * gets this instance, and its entry point finds the tool started. Without
 * the variable nothing happens here, not even reading the configuration.
 *
 * The initial thread's timer starts only when the constructor runs on it (a
 * preload's constructor always does); a dlopen from another thread leaves
 * that thread to the entry point that follows.
 */
__attribute__((constructor)) static void tool__init(void)
{
	struct gt_thread *t;

	if (!getenv("GPUTOOL_PRELOAD"))
		return;
	pthread_once(&config_once, tool__configure);
	if (!gt_config.preload || tool__start() || (pid_t)syscall(SYS_gettid) != getpid())
		return;
	t = gt_thread__self(GT_THREAD_INITIAL);
	if (t)
		gt_sample__thread_start(t);
}

/* Whether any thread took a sample (since the fork, in a forked child). */
static int tool__sampled(void)
{
	uint32_t n = gt_thread__count();

	for (uint32_t i = 0; i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (t && t->samples + t->tool_samples + t->dropped_samples)
			return 1;
	}
	return 0;
}

/* Whether a process that no runtime attached to has anything to report:
 * a helper it ran (a shell, env) that never used a sampling period of CPU
 * leaves no files and no line on stderr. */
static int tool__measured(void)
{
	return atomic_load_explicit(&attached, memory_order_relaxed) || tool__sampled();
}

void gt_tool__before_exec(void)
{
	if (start_result || getpid() != tool_pid)
		return;
	/* fork, then exec at once (system(), a launcher): the child measured
	 * nothing of its own; its empty profile would only be noise. */
	if (forked && !tool__sampled())
		return;
	gt_info("exit", "the program execs another: writing the output first");
	gt_tool__stop();
	gt_endsig__exiting();
}

int gt_tool__stopping(void)
{
	return atomic_load_explicit(&stopping, memory_order_acquire);
}

void gt_tool__on_stop(gt_tool_flush_fn fn)
{
	int i = atomic_fetch_add_explicit(&n_flushers, 1, memory_order_acq_rel);

	if (i < MAX_FLUSH)
		flushers[i] = fn;
}

void gt_tool__set_fact(const char *key, const char *value)
{
	int i = atomic_fetch_add_explicit(&n_facts, 1, memory_order_acq_rel);

	if (i >= MAX_FACTS)
		return;
	snprintf(facts[i].key, sizeof(facts[i].key), "%s", key);
	snprintf(facts[i].value, sizeof(facts[i].value), "%s", value);
}

const char *gt_tool__fact(const char *key)
{
	/* Acquire: pairs with the acq_rel increment of the setter; a fact
	 * being written just now may be missed. */
	int n = atomic_load_explicit(&n_facts, memory_order_acquire);

	for (int i = 0; i < n && i < MAX_FACTS; i++)
		if (!strcmp(facts[i].key, key))
			return facts[i].value;
	return NULL;
}

/* Relaxed: a statistic, read once the backends have stopped. */
static atomic_ullong unmeasured_ops;

void gt_tool__unmeasured_ops(uint64_t n)
{
	atomic_fetch_add_explicit(&unmeasured_ops, n, memory_order_relaxed);
}

static void tool__meta(struct gt_profile *p, const struct gt_output *o, uint64_t end_ns)
{
	char buf[4096];
	uint64_t tool_samples = 0, dropped = 0, samples = 0, wall = 0, wall_tool = 0;
	uint64_t region_hits = 0, region_misses = 0, rh, rm, imports_predicted = 0;
	unsigned kinds = gt_sample__kinds();
	struct gt_unwind_stats us, sum = { 0 };
	struct gt_mem_stats heap;
	uint32_t n = gt_thread__count();
	long len;
	int nf;

	gt_profile__set_meta(p, "tool_version", GT_VERSION);
	gt_profile__set_meta(p, "exe", o->exe);
	/* The run this process belongs to (`gputool run` sets it; inherited by
	 * everything the run starts): what the report tells runs apart by. */
	if (gt_config.run && *gt_config.run)
		gt_profile__set_meta(p, "run", gt_config.run);
	len = gt_read_small("/proc/self/cmdline", buf, sizeof(buf));
	if (len >= 0) {
		for (long i = 0; i + 1 < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		gt_profile__set_meta(p, "cmdline", buf);
	}
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	gt_profile__set_meta(p, "pid", buf);
	/* The parent as it was at the start: a helper the program ran (a
	 * compiler the JIT starts) is reported with it, not as another run. */
	snprintf(buf, sizeof(buf), "%d", (int)tool_ppid);
	gt_profile__set_meta(p, "ppid", buf);
	snprintf(buf, sizeof(buf), "%d", o->rank);
	gt_profile__set_meta(p, "rank", buf);
	if (gt_output__job_size() > 0) {
		snprintf(buf, sizeof(buf), "%d", gt_output__job_size());
		gt_profile__set_meta(p, "ranks", buf);
	}
	if (gethostname(buf, sizeof(buf)) == 0)
		gt_profile__set_meta(p, "host", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)start_ns);
	gt_profile__set_meta(p, "start_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)end_ns);
	gt_profile__set_meta(p, "end_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(end_ns - start_ns));
	gt_profile__set_meta(p, "wall_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)gt_config.sample_hz);
	gt_profile__set_meta(p, "sample_hz", buf);
	for (uint32_t i = 0; i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (t) {
			tool_samples += t->tool_samples;
			samples += t->samples;
			wall += t->wall_samples;
			wall_tool += t->wall_tool_samples;
			dropped += t->dropped_samples;
			gt_unwind__stats(t, &us);
			gt_region__stats(t, &rh, &rm);
			region_hits += rh;
			region_misses += rm;
			sum.memo_hits += us.memo_hits;
			sum.memo_misses += us.memo_misses;
			sum.derived += us.derived;
			sum.predicted += us.predicted;
			imports_predicted += gt_thread__imports_predicted(t);
			sum.full_unwinds += us.full_unwinds;
		}
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)tool_samples);
	gt_profile__set_meta(p, "tool_samples", buf);
	if (gt_config.sample_hz) {
		static const char *const sampled[] = { "none", "cpu", "wall", "cpu,wall" }; /* by GT_SAMPLE_* bits */

		gt_profile__set_meta(p, "sample", sampled[kinds & 3]);
	}
	if (kinds & GT_SAMPLE_WALL) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)wall);
		gt_profile__set_meta(p, "wall_samples", buf);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)wall_tool);
		gt_profile__set_meta(p, "wall_tool_samples", buf);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)dropped);
	gt_profile__set_meta(p, "dropped_samples", buf);
	snprintf(buf, sizeof(buf), "%llu hits (%llu predicted), %llu misses, %llu derived, %llu full unwinds",
		 (unsigned long long)sum.memo_hits, (unsigned long long)sum.predicted, (unsigned long long)sum.memo_misses,
		 (unsigned long long)sum.derived, (unsigned long long)sum.full_unwinds);
	gt_profile__set_meta(p, "context_memo", buf);
	if (region_hits + region_misses) {
		snprintf(buf, sizeof(buf), "%llu hits, %llu misses", (unsigned long long)region_hits,
			 (unsigned long long)region_misses);
		gt_profile__set_meta(p, "region_memo", buf);
	}
	/* The tool's own heap (core/mem.h), as the program's end left it: what
	 * the tool holds beside its per-thread trees. 0 in the sanitizer
	 * builds, which use libc's. */
	gt_mem__stats(&heap);
	if (heap.mapped) {
		snprintf(buf, sizeof(buf), "%zu", heap.mapped);
		gt_profile__set_meta(p, "tool_heap_bytes", buf);
	}
	/* What the tool cost, for benchmarks (GPUTOOL_VERBOSE=2). */
	gt_info("exit",
		"overhead: %llu context lookups, %llu full unwinds; %llu samples, %llu inside the tool; heap %zu KiB; "
		"%llu lookups predicted, %llu imports",
		(unsigned long long)(sum.memo_hits + sum.memo_misses),
		(unsigned long long)sum.full_unwinds,
		(unsigned long long)(samples + tool_samples + dropped), (unsigned long long)tool_samples,
		heap.mapped >> 10, (unsigned long long)sum.predicted, (unsigned long long)imports_predicted);
	gt_profile__set_meta(p, "output_dir", o->dir);
	if (gt_thread__reused()) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)gt_thread__reused());
		gt_profile__set_meta(p, "threads_reused", buf);
	}
	if (gt_thread__refused()) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)gt_thread__refused());
		gt_profile__set_meta(p, "threads_unmeasured", buf);
	}
	if (atomic_load_explicit(&unmeasured_ops, memory_order_relaxed)) {
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)atomic_load_explicit(&unmeasured_ops, memory_order_relaxed));
		gt_profile__set_meta(p, "ops_unmeasured", buf);
	}
	nf = atomic_load_explicit(&n_facts, memory_order_acquire);
	for (int i = 0; i < nf && i < MAX_FACTS; i++)
		gt_profile__set_meta(p, facts[i].key, facts[i].value);
}

/* Set by a constructor before any thread of the library's can run (release
 * there pairs with the acquire at stop). */
static _Atomic gt_tool_report_fn report_fn;

void gt_tool__set_report(gt_tool_report_fn fn)
{
	atomic_store_explicit(&report_fn, fn, memory_order_release);
}

/* Writes one file of the output under its temporary name: 0 or a negative errno. */
static int tool__file(struct gt_output *o, const char *ext, struct gt_output_file *of,
		      int (*fill)(const void *arg, FILE *f), const void *arg)
{
	int err = gt_output__open(o, ext, of);

	if (err)
		return err;
	errno = 0;
	if (fill(arg, of->f)) {
		err = errno ? -errno : -EIO;
		gt_output__discard(of);
		return err;
	}
	return gt_output__finish(of);
}

static int tool__fill_profile(const void *arg, FILE *f)
{
	return gt_profile__write(arg, f);
}

struct text_arg {
	const struct gt_profile *p;
	const char *path;
	gt_tool_report_fn report;
};

static int tool__fill_text(const void *arg, FILE *f)
{
	const struct text_arg *t = arg;

	return t->report(t->p, t->path, f, (unsigned)gt_config.report_top);
}

/*
 * The line that says where the files went. In a job of several ranks they
 * all write into one directory (core/output.h), so one line names it for
 * the whole run, from rank 0, with the command that merges the ranks;
 * every other rank is silent (each of its own lines would only repeat it).
 * @stem_q: the stem, escaped; @text: the text report was written.
 */
static void tool__say_written(const struct gt_output *o, const char *stem_q, int text)
{
	char dir[GT_LOG_VALUE];
	int size = gt_output__job_size();

	if (size > 1) {
		if (o->rank != 0)
			return;
		gt_log__escape(o->dir, dir, sizeof(dir));
		gt_log__printf("gputool: the %d ranks' profiles are in %s; merge them with `gputool report %s`%s%s%s\n",
			       size, dir, dir, text ? " (rank 0's own report: " : "", text ? stem_q : "",
			       text ? ".txt)" : "");
		return;
	}
	if (text)
		gt_log__printf("gputool: report %s.txt, profile %s.gtprof\n", stem_q, stem_q);
	else
		gt_log__printf("gputool: profile %s.gtprof\n", stem_q);
}

/*
 * The profile first: it claims the name the files beside it take; then the
 * trace (written before, waiting under its temporary name) and the text
 * report. A file that cannot be written whole is not there at all.
 */
static int tool__write(const struct gt_profile *p, struct gt_output *o, struct gt_output_file *trace)
{
	gt_tool_report_fn report = atomic_load_explicit(&report_fn, memory_order_acquire);
	char path[sizeof(o->stem) + 32], q[GT_LOG_VALUE];
	struct text_arg text = { .p = p, .path = path, .report = report };
	struct gt_output_file of;
	int err;

	err = tool__file(o, ".gtprof", &of, tool__fill_profile, p);
	if (!err)
		err = gt_output__publish(o, &of, path, sizeof(path));
	if (err) {
		gt_err("output", "cannot write %s.gtprof: %s", gt_log__escape(o->stem, q, sizeof(q)), strerror(-err));
		gt_output__discard(trace);
		return -1;
	}
	/* The stem as claimed, as it may appear in a line. */
	gt_log__escape(o->stem, q, sizeof(q));
	if (trace->tmp[0]) {
		err = gt_output__publish(o, trace, NULL, 0);
		if (err)
			gt_err("trace", "cannot write %s%s: %s", q, GT_TRACE_SUFFIX, strerror(-err));
	}
	if (!report) {
		tool__say_written(o, q, 0);
		return 0;
	}
	err = tool__file(o, ".txt", &of, tool__fill_text, &text);
	if (!err)
		err = gt_output__publish(o, &of, NULL, 0);
	if (err)
		gt_err("output", "cannot write %s.txt: %s", q, strerror(-err));
	if (gt_config.report_stderr && gt_log__stderr())
		report(p, path, gt_log__stderr(), (unsigned)gt_config.report_top);
	tool__say_written(o, q, !err);
	return err ? -1 : 0;
}

/*
 * A program `gputool run` started that measured nothing (no runtime of
 * ours attached, no CPU sample: `ls`, a script that execs something
 * unmeasured) would leave its directory empty but for the run's mark
 * (analysis/claim.c) and say nothing. The process `gputool run` became
 * (its pid is the one in a run id "host:pid:start"; a job's id names no
 * process, and its ranks say nothing here) says so, and removes the
 * directory when nothing else is in it, so no process of the run wrote
 * there, and `gputool run` made it (GPUTOOL_OUTPUT_MADE names it): a
 * directory the user made stays, with the run's mark. A process of the
 * run that writes later creates it again.
 */
static void tool__say_unmeasured(void)
{
	const char *run = gt_config.run, *dir = gt_config.output, *colon, *made = gt_config.output_made;
	char mark[PATH_MAX + 32], q[GT_LOG_VALUE], exe[GT_LOG_VALUE];
	struct dirent *d;
	DIR *dp;
	int others = 0;

	if (!run || !dir || dir[0] != '/' || !(colon = strchr(run, ':')) || !strncmp(run, "job:", 4) ||
	    strtol(colon + 1, NULL, 10) != (long)getpid() || gt_output__rank() != 0)
		return;
	if (!(dp = opendir(dir)))
		return;
	while (!others && (d = readdir(dp)))
		others = strcmp(d->d_name, ".") && strcmp(d->d_name, "..") && strcmp(d->d_name, ".gputool-run");
	closedir(dp);
	gt_log__escape(dir, q, sizeof(q));
	gt_log__escape(program_invocation_short_name, exe, sizeof(exe));
	if (others)
		return; /* another process of the run was measured */
	if (!made || strcmp(made, dir)) {
		gt_log__printf("gputool: %s was not measured (it started no OpenMP, OpenACC, CUDA or OpenCL runtime "
			       "and ended before its first CPU sample): nothing written in %s\n",
			       exe, q);
		return;
	}
	if ((size_t)snprintf(mark, sizeof(mark), "%s/.gputool-run", dir) < sizeof(mark))
		unlink(mark);
	gt_log__printf("gputool: %s was not measured (it started no OpenMP, OpenACC, CUDA or OpenCL runtime "
		       "and ended before its first CPU sample): nothing written%s%s\n",
		       exe, rmdir(dir) ? " in " : "; removed the empty directory ", q);
}

void gt_tool__stop(void)
{
	struct gt_profile p;
	struct gt_output o;
	struct gt_output_file trace;
	struct gt_wsig w;
	uint64_t end_ns = gt_clock__now(), flushed_ns, built_ns;
	int nf;

	if (start_result)
		return;
	if (atomic_exchange_explicit(&stopping, 1, memory_order_acq_rel)) {
		struct timespec ms = { 0, 1000000 };

		for (int i = 0; i < STOP_WAIT_MS && !atomic_load_explicit(&stopped, memory_order_acquire); i++)
			nanosleep(&ms, NULL);
		return;
	}
	gt_sample__fini();
	nf = atomic_load_explicit(&n_flushers, memory_order_acquire);
	for (int i = (nf < MAX_FLUSH ? nf : MAX_FLUSH) - 1; i >= 0; i--)
		flushers[i]();
	if (!tool__measured()) {
		gt_info("exit", "preloaded, no runtime attached and no CPU sample: no output");
		tool__say_unmeasured();
		goto out;
	}
	/* From here the tool writes files: no write of its own may end the
	 * program (core/wsig.h). */
	gt_wsig__block(&w);
	if (gt_output__init(&o, gt_config.output)) {
		gt_wsig__restore(&w);
		goto out;
	}
	gt_profile__init(&p);
	flushed_ns = gt_clock__now();
	gt_output__build(&p);
	built_ns = gt_clock__now();
	gt_tracer__write(&o, &p, &trace);
	tool__meta(&p, &o, end_ns);
	tool__write(&p, &o, &trace);
	gt_profile__fini(&p);
	gt_wsig__restore(&w);
	/* Where the time at exit went, for benchmarks (GPUTOOL_VERBOSE=2). */
	gt_info("exit", "stop: backends flushed in %.1f ms, profile built (symbols) in %.1f ms, files in %.1f ms",
		(double)(flushed_ns - end_ns) / 1e6, (double)(built_ns - flushed_ns) / 1e6,
		(double)(gt_clock__now() - built_ns) / 1e6);
out:
	gt_log__fini();
	atomic_store_explicit(&stopped, 1, memory_order_release);
}
