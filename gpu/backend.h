/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_BACKEND_H
#define GT_GPU_BACKEND_H

/*
 * The table every device backend (gpu/cupti/, gpu/opencl/, the OpenMP
 * target trace of ompt/target-trace.c) plugs into. A backend fills a static
 * struct gt_backend and calls gt_backend__register from its entry point,
 * after gt_tool__start(). OpenACC has no backend of its own: it only probes
 * (below), so that the vendor's backend starts.
 *
 *   start   called once by gt_backend__register, after the monitor thread
 *           runs. Returns 0, or a negative errno when the backend cannot
 *           work here (no library, another subscriber, an old runtime). It
 *           logs nothing: the table logs one line and the backend stays off.
 *   flush   at exit, with the monitor still running: hand every completed
 *           activity to the monitor (gt_monitor__activity). May be NULL.
 *   stop    at exit, after every backend's flush: stop delivering, release
 *           vendor resources. Activities handed over from inside stop are
 *           still processed. May be NULL.
 *   poll    on the monitor thread, when a synchronization waits for the
 *           activity of operations that have completed: hand what the
 *           vendor holds over now (without waiting for the device), so that
 *           no application thread has to. Called at most once per
 *           GT_MONITOR_POLL_NS; may be NULL; must not call back into the
 *           monitor's flush or stop, and may run after stop (then it does
 *           nothing).
 *   settle  at exit, after the monitor's finalizer applied every
 *           measurement: every thread's tree is final and no thread writes
 *           it, so a backend may add what it measured apart from the
 *           operations (PC samples, placed under the kernels' launch
 *           contexts). On the stopping thread; may be NULL; must not call the
 *           vendor's library (it may be finalized by then).
 *
 * None of them is called for a backend whose start failed; flush and stop
 * run on the thread that stops the tool.
 */

struct gt_backend {
	const char *name;
	int (*start)(void);
	void (*flush)(void);
	void (*stop)(void);
	void (*poll)(void);
	void (*settle)(void);
};

/* Most backends one process may register. */
#define GT_BACKEND_MAX 8

/*
 * Starts the monitor (once), then @b. Returns 0 when @b runs, else a
 * negative errno after one log line. Thread-safe; @b must live until exit.
 * Registering the same table twice returns 0 and starts nothing.
 */
int gt_backend__register(const struct gt_backend *b);

/* The monitor thread: every started backend's poll. */
void gt_backend__poll_all(void);

/*
 * Probes: a backend that can start when its vendor's library is already in
 * the process (the CUDA backend, once a runtime has loaded libcuda) adds a
 * probe when its code is loaded; a programming-model layer that has seen a
 * runtime bring a device API in (OpenACC device init, OpenMP device
 * initialize) calls gt_backend__probe, naming no vendor. A probe starts its
 * backend if it can (it registers itself) and logs as the backend does;
 * @why names the caller. Both thread-safe.
 */
#define GT_BACKEND_PROBES 8
void gt_backend__add_probe(void (*probe)(const char *why));
void gt_backend__probe(const char *why);

#endif
