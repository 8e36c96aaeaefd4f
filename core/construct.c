/* SPDX-License-Identifier: MIT */
#include "core/construct.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

/* Written under lock, each slot once (release store); read by every device
 * API call without the lock (acquire loads). */
static gt_construct_fn _Atomic providers[GT_CONSTRUCT_PROVIDERS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int gt_construct__provide(gt_construct_fn fn)
{
	int err = -ENOSPC;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < GT_CONSTRUCT_PROVIDERS; i++) {
		gt_construct_fn have = atomic_load_explicit(&providers[i], memory_order_relaxed);

		if (have == fn) {
			err = 0;
			break;
		}
		if (!have) {
			/* Release: pairs with the acquire load in current. */
			atomic_store_explicit(&providers[i], fn, memory_order_release);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return err;
}

struct gt_cct_node *gt_construct__current(struct gt_thread *t)
{
	for (int i = 0; i < GT_CONSTRUCT_PROVIDERS; i++) {
		/* Acquire: pairs with the release store in provide. */
		gt_construct_fn fn = atomic_load_explicit(&providers[i], memory_order_acquire);
		struct gt_cct_node *node;

		if (!fn)
			break;
		node = fn(t);
		if (node)
			return node;
	}
	return NULL;
}
