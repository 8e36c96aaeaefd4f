/* SPDX-License-Identifier: MIT */
/*
 * Threads the program creates, when the library is preloaded (`gputool
 * run`): this pthread_create comes before libc's, and each new thread's
 * CPU-time sampling starts as the thread starts. Runtimes that never call
 * a tool (GCC's libgomp has no OMPT; a plain pthread program) would
 * otherwise leave every thread but the initial one unsampled. A layer that
 * hears of the thread later (OMPT's thread_begin, a CUDA or OpenCL call)
 * finds its record and its timer there: starting a timer is idempotent.
 *
 * Loaded by a runtime (OMP_TOOL_LIBRARIES, ...) the library does not come
 * first and libc's pthread_create is called directly. Threads the tool
 * creates itself (its monitor, its exit writer) are never sampled: a call
 * from the library's own code passes straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/sample.h"
#include "core/thread.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* What the new thread runs, handed from its creator (freed by the thread). */
struct thread_create_start {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_create__trampoline(void *p)
{
	struct thread_create_start s = *(struct thread_create_start *)p;
	struct gt_thread *t;

	free(p);
	/* Sampling may have stopped meanwhile (the program is exiting):
	 * then no record is made either. */
	if (gt_sample__active() && (t = gt_thread__self(GT_THREAD_OTHER)))
		gt_sample__thread_start(t);
	return s.fn(s.arg);
}

/* Whether the return address @ra lies in this library. */
static int thread_create__from_tool(const void *ra)
{
	Dl_info self, caller;

	return dladdr((const void *)thread_create__trampoline, &self) && dladdr(ra, &caller) &&
	       self.dli_fbase == caller.dli_fbase;
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	/* Resolved at each call: threads are created far too rarely for a
	 * cached pointer (and its ordering) to pay. */
	pthread_create_fn real = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	struct thread_create_start *s;
	int rc;

	if (!real)
		return EAGAIN;
	if (!gt_sample__active() || thread_create__from_tool(__builtin_return_address(0)) ||
	    !(s = malloc(sizeof(*s))))
		return real(thread, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	rc = real(thread, attr, thread_create__trampoline, s);
	if (rc)
		free(s);
	return rc;
}
