/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_MONITOR_STATE_H
#define GT_GPU_MONITOR_STATE_H

/*
 * The monitor's state, shared by its two halves only: gpu/monitor.c (the
 * monitor thread, start and stop) and gpu/monitor-thread.c (what
 * application and activity threads call). Who writes and reads each field
 * is said at the field.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpu/monitor-internal.h"
#include "gpu/monitor.h"

struct gt_thread;

enum mon_state {
	MON_OFF = 0,	  /* not started, or could not start */
	MON_RUNNING = 1,  /* accepting records */
	MON_STOPPING = 2, /* backends flushing; records still accepted */
	MON_STOPPED = 3,  /* finalized; nothing accepted */
};

/* Indices of the published counters. */
enum {
#define X(field, desc) STAT_##field,
	GT_MONITOR_STATS(X)
#undef X
	STAT_N
};

/*
 * Grouped by who writes how often, one group per cache line or more: the
 * words every correlate and drain reads are written almost never, so their
 * line stays shared in every core's cache.
 */
struct gt_mon {
	pthread_once_t once;
	int start_err;
	pthread_t thread;

	/*
	 * enum mon_state. Release stores (start, stop, the fork child) pair
	 * with the acquire loads at the entry of every call, so a caller that
	 * sees RUNNING sees the monitor's initialized state.
	 */
	atomic_int state;
	/* Set by stop (release); read by the monitor (acquire) at each round. */
	atomic_int stop_req;
	/* Set by the finalizer; see gt_gpu_thread.draining. seq_cst. */
	atomic_int closing;
	/*
	 * Bumped (release) by every thread that publishes its channels; the
	 * monitor rescans the registry when its acquire load sees a change.
	 */
	_Atomic uint32_t generation;

	/*
	 * Futex words, written at each notify and sleep.
	 * `wake`: the monitor sleeps on it; wakers increment it.
	 * `asleep`: 1 while the monitor may be in (or entering) its sleep.
	 */
	alignas(64) _Atomic uint32_t wake;
	atomic_int asleep;

	/* Published counters: written by the monitor (relaxed; `rounds`
	 * seq_cst, last), read anywhere. */
	alignas(64) _Atomic uint64_t pub[STAT_N];

	/* ---- monitor thread only (and the stopper after the join) ---- */
	alignas(64) struct gt_monitor_stats priv;
	struct corr_map map;
	struct gt_gpu_thread **threads; /* channels the monitor drains */
	uint32_t n_threads, cap_threads;
	uint32_t seen_generation, seen_revivals;
	struct gt_gpu_thread *current; /* whose to_monitor is being drained */
	int nested;
	int want_poll;	    /* a sync arrived since the backends were last polled */
	uint64_t last_poll; /* gt_clock__now() of the last poll */
};

extern struct gt_mon gt_mon;



static inline long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	/* The kernel reads the word itself; _Atomic uint32_t has its layout. */
	return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static inline struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u),
				  .tv_nsec = (long)(ns % 1000000000u) };
}

static inline int mon__state(void)
{
	return atomic_load_explicit(&gt_mon.state, memory_order_acquire);
}

/* Wakes the monitor for work already published (see monitor__sleep). */
void gt_monitor__poke(void);
/* Applies one measurement record (a to_thread payload) to the tree of the
 * thread in @arg: its owner, or the finalizer. */
void gt_monitor__apply(void *payload, void *arg);

#endif
