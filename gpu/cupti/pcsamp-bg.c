/* SPDX-License-Identifier: MIT */
/*
 * With PC sampling, each module is disassembled as it loads, on a thread of
 * the tool's, while the program runs: nvdisasm takes 0.5 s for the smallest
 * cubin and seconds for large ones (XSBench's 2.9 MB module: 2.3 s on an
 * H200's host), which the program's exit would otherwise wait for. What it
 * writes is kept across runs (gpu/sass/cache.c), so a second run of the
 * program finds it at once.
 *
 * One thread takes the modules in the order they loaded. At exit
 * (gt_cupti_pcsamp__bg_take) the modules that have samples are taken: one
 * done is read; one being disassembled is waited for, or left to the
 * caller, who disassembles its kernels with samples alone; one not begun is
 * left to the caller (not behind modules without samples).
 * Then the thread is told to stop (gt_cupti_pcsamp__bg_stop), and a run of
 * nvdisasm it has begun is ended.
 *
 * Everything is under bg.lock; nvdisasm runs without it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/sass/sass.h"

/* Past this many bytes of modules queued, the rest wait for the exit: a
 * program that loads every module of a large library eagerly does not keep
 * a core busy disassembling modules it may never run. */
#define BG_MAX_BYTES (64ull << 20)

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
	uint64_t crc;
	const void *bytes; /* the copy pcsamp.c keeps to the end */
	size_t size;
	enum job_state state;
	char *text;
	size_t len;
	int err;
	struct job *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a job queued or done, or stop */
	struct job *jobs;    /* in load order */
	pthread_t thread;
	pid_t pid; /* the process the thread runs in */
	int started, stop;
	uint64_t queued;
} bg = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static struct job *next_queued(void)
{
	for (struct job *j = bg.jobs; j; j = j->next)
		if (j->state == JOB_QUEUED)
			return j;
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&bg.lock);
	for (;;) {
		struct job *j;
		char *text = NULL;
		size_t len = 0;
		int err;

		while (!bg.stop && !(j = next_queued()))
			pthread_cond_wait(&bg.cond, &bg.lock);
		if (bg.stop)
			break;
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&bg.lock);
		err = gt_sass__disassemble(gt_config.nvdisasm, j->bytes, j->size, NULL, 0, &text, &len);
		pthread_mutex_lock(&bg.lock);
		j->text = text;
		j->len = len;
		j->err = err;
		j->state = JOB_DONE;
		pthread_cond_broadcast(&bg.cond);
	}
	pthread_mutex_unlock(&bg.lock);
	return NULL;
}

/* A fork while the thread holds the lock would leave the child's copy
 * locked forever: the fork waits for it. The child has no thread (take
 * and queue see another pid). */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&bg.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&bg.lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&bg.lock, NULL);
	pthread_cond_init(&bg.cond, NULL);
}

/* Under bg.lock. The thread's signals are blocked: the program's handlers
 * run on its own threads. */
static int start(void)
{
	sigset_t all, old;
	int err;

	if (bg.started)
		return bg.pid == getpid() ? 0 : -ECHILD;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&bg.thread, NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	bg.started = 1;
	bg.pid = getpid();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	return 0;
}

void gt_cupti_pcsamp__bg_queue(uint64_t crc, const void *bytes, size_t size)
{
	struct job *j, **tail;

	/* A test's stand-in, nvdisasm switched off, or too much queued. A
	 * module of which an earlier run kept a part (its kernels with
	 * samples, a run too short for the whole) has its part taken at
	 * exit: the whole would not be done by then either. */
	if (!bytes || size <= 16 || (gt_config.nvdisasm && (!strcmp(gt_config.nvdisasm, "0") ||
							    !strcmp(gt_config.nvdisasm, "off"))) ||
	    gt_sass__cached(gt_config.nvdisasm, bytes, size) == 1)
		return;
	pthread_mutex_lock(&bg.lock);
	if (bg.stop || bg.queued + size > BG_MAX_BYTES)
		goto out;
	for (tail = &bg.jobs; *tail; tail = &(*tail)->next)
		if ((*tail)->crc == crc)
			goto out;
	if (!(j = calloc(1, sizeof(*j))))
		goto out;
	j->crc = crc;
	j->bytes = bytes;
	j->size = size;
	j->state = JOB_QUEUED;
	if (start()) {
		free(j);
		goto out;
	}
	*tail = j;
	bg.queued += size;
	pthread_cond_broadcast(&bg.cond);
out:
	pthread_mutex_unlock(&bg.lock);
}

int gt_cupti_pcsamp__bg_take(uint64_t crc, int wait, char **text, size_t *len)
{
	struct job *j;
	int err = -ENOENT;

	*text = NULL;
	*len = 0;
	pthread_mutex_lock(&bg.lock);
	for (j = bg.jobs; j && j->crc != crc; j = j->next)
		;
	if (!j || !bg.started || bg.pid != getpid())
		goto out;
	if (j->state == JOB_QUEUED) {
		/* Not begun: the caller runs it now, ahead of the queue. */
		j->state = JOB_DONE;
		j->err = -ENOENT;
		goto out;
	}
	if (j->state == JOB_RUNNING && !wait) {
		err = -EINPROGRESS;
		goto out;
	}
	/* gt_sass__disassemble ends a run of nvdisasm past its time limit. */
	while (j->state == JOB_RUNNING)
		pthread_cond_wait(&bg.cond, &bg.lock);
	err = j->err;
	if (!err) {
		*text = j->text;
		*len = j->len;
		j->text = NULL;
	}
out:
	pthread_mutex_unlock(&bg.lock);
	return err;
}

void gt_cupti_pcsamp__bg_stop(void)
{
	pthread_mutex_lock(&bg.lock);
	bg.stop = 1;
	/* A module without samples being disassembled: not waited for. */
	gt_sass__cancel();
	pthread_cond_broadcast(&bg.cond);
	for (struct job *j = bg.jobs, *next; j; j = next) {
		next = j->next;
		/* One still running is the thread's until it ends: left. */
		if (j->state == JOB_RUNNING)
			continue;
		free(j->text);
		free(j);
	}
	bg.jobs = NULL;
	pthread_mutex_unlock(&bg.lock);
}
