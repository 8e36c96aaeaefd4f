/* SPDX-License-Identifier: MIT */
#include "gpu/backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/log.h"
#include "gpu/monitor-internal.h"
#include "gpu/monitor.h"

/*
 * Registration happens a few times per process, from entry points that may
 * run on different threads (CUDA injection, the OpenCL layer, OMPT): a mutex
 * is enough, and no application thread takes it on a measurement path.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Written under lock, each slot once (release); read by gt_backend__probe
 * without it (acquire). */
static void (*_Atomic probes[GT_BACKEND_PROBES])(const char *why);
static const struct gt_backend *table[GT_BACKEND_MAX];
/* Written under lock after the slot (release); read by gt_backend__poll_all
 * on the monitor thread without it (acquire): slots never change once
 * counted. */
static atomic_int n_table;
static int closed; /* set at stop: no more registrations */

static int registered(const struct gt_backend *b)
{
	/* Under lock: relaxed. */
	int n = atomic_load_explicit(&n_table, memory_order_relaxed);

	for (int i = 0; i < n; i++)
		if (table[i] == b)
			return 1;
	return 0;
}

void gt_backend__add_probe(void (*probe)(const char *why))
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < GT_BACKEND_PROBES; i++) {
		void (*have)(const char *) = atomic_load_explicit(&probes[i], memory_order_relaxed);

		if (have == probe)
			break;
		if (!have) {
			/* Release: pairs with the acquire load in gt_backend__probe. */
			atomic_store_explicit(&probes[i], probe, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

void gt_backend__probe(const char *why)
{
	for (int i = 0; i < GT_BACKEND_PROBES; i++) {
		/* Acquire: pairs with the release store in gt_backend__add_probe. */
		void (*probe)(const char *) = atomic_load_explicit(&probes[i], memory_order_acquire);

		if (!probe)
			break;
		probe(why);
	}
}

int gt_backend__register(const struct gt_backend *b)
{
	const char *name = b->name ? b->name : "?";
	int err, n;

	err = gt_monitor__start();
	if (err) {
		gt_warn("gpu", "%s: off (no monitor thread: %s)", name, strerror(-err));
		return err;
	}
	pthread_mutex_lock(&lock);
	if (registered(b)) {
		err = 0;
		goto out_unlock;
	}
	n = atomic_load_explicit(&n_table, memory_order_relaxed);
	if (closed || n == GT_BACKEND_MAX) {
		err = closed ? -ESHUTDOWN : -ENOSPC;
		gt_warn("gpu", "%s: off (%s)", name,
			closed ? "registered while the tool stops" : "too many backends");
		goto out_unlock;
	}
	/* Under the lock, so that a concurrent stop cannot miss a backend
	 * that has started; start must not register another backend. */
	err = b->start ? b->start() : 0;
	if (err) {
		if (err > 0)
			err = -err;
		gt_warn("gpu", "%s: off (%s)", name, strerror(-err));
		goto out_unlock;
	}
	table[n] = b;
	atomic_store_explicit(&n_table, n + 1, memory_order_release);
	gt_info("gpu", "%s: on", name);
out_unlock:
	pthread_mutex_unlock(&lock);
	return err;
}

void gt_backend__poll_all(void)
{
	/* Acquire: pairs with the release store in gt_backend__register. */
	int n = atomic_load_explicit(&n_table, memory_order_acquire);

	for (int i = 0; i < n; i++)
		if (table[i]->poll)
			table[i]->poll();
}

void gt_backend__stop_all(void)
{
	const struct gt_backend *copy[GT_BACKEND_MAX];
	int n;

	pthread_mutex_lock(&lock);
	closed = 1;
	n = atomic_load_explicit(&n_table, memory_order_relaxed);
	memcpy(copy, table, sizeof(copy));
	pthread_mutex_unlock(&lock);

	/* Outside the lock: flush and stop may call back into the monitor. */
	for (int i = n - 1; i >= 0; i--)
		if (copy[i]->flush)
			copy[i]->flush();
	for (int i = n - 1; i >= 0; i--)
		if (copy[i]->stop)
			copy[i]->stop();
}

void gt_backend__settle_all(void)
{
	/* The table is closed: no lock needed. Acquire: pairs with the release
	 * store in gt_backend__register. */
	int n = atomic_load_explicit(&n_table, memory_order_acquire);

	for (int i = 0; i < n; i++)
		if (table[i]->settle)
			table[i]->settle();
}

void gt_backend__atfork_child(void)
{
	/* The parent's lock may have been held by a thread that does not exist
	 * here. Vendor state does not survive fork either: forget the table. */
	pthread_mutex_init(&lock, NULL);
	atomic_store_explicit(&n_table, 0, memory_order_relaxed);
	closed = 1;
}
