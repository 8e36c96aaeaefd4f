/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_SAMPLE_H
#define GT_CORE_SAMPLE_H

#include <stdint.h>

#include "core/unwind.h"

struct gt_thread;

/*
 * CPU-time sampling: a per-thread POSIX timer on the thread's CPU-time clock
 * delivers a real-time signal to that thread every 1/hz s of CPU it uses.
 * The handler unwinds, finds the context (stitched by the hook the OpenMP
 * layer installs) and adds CPUTIME there. It allocates only from the
 * thread's preallocated arena, takes no lock and logs nothing.
 *
 * Wall-clock sampling (GPUTOOL_SAMPLE=wall or cpu,wall): a second timer per
 * thread, on the monotonic clock, with a signal of its own; its handler adds
 * WALLTIME. Waits a signal would cut short are measured whole instead
 * (core/wall.c), which needs the library preloaded.
 */

/* Fills st for a sample on t. Must be async-signal-safe. */
typedef void (*gt_sample_stitch_fn)(struct gt_thread *t, struct gt_stitch *st);

enum { GT_SAMPLE_CPU = 1, GT_SAMPLE_WALL = 2 };

/* hz: samples per second of each clock; what: GPUTOOL_SAMPLE ("cpu",
 * "wall", "cpu,wall"; NULL: cpu). 0, or -EBUSY when nothing samples. */
int gt_sample__init(unsigned hz, const char *what);
/* Whether sampling runs now (after init, before fini). Any thread. */
int gt_sample__active(void);
/* What is sampled: GT_SAMPLE_* bits. */
unsigned gt_sample__kinds(void);
void gt_sample__set_stitch(gt_sample_stitch_fn fn);
/*
 * Called by the handler after it charged a sample's CPU time (@weight ns)
 * to @node of @t's tree; it may add to that tree in signal context
 * (gt_cct__add(..., 1)). Must be async-signal-safe. A few hooks, called in
 * the order added (GPU-idle blame, gpu/blame.c; the MPI layer's work
 * before a call, mpi/pmpi.c); one added twice is kept once; none is ever
 * removed. Any thread, at any time: 0, or -ENOSPC when all slots are taken.
 */
typedef void (*gt_sample_hook_fn)(struct gt_thread *t, struct gt_cct_node *node, uint64_t weight);
int gt_sample__add_hook(gt_sample_hook_fn fn);
/* Where a context of the calling thread hangs now, by the installed hook
 * (a full context when none is installed). Other layers use it too: an
 * OpenACC construct inside an OpenMP task hangs under that task. */
void gt_sample__stitch(struct gt_thread *t, struct gt_stitch *st);
/* The programming model's stitch alone, without the open regions of
 * core/region.h (which gt_sample__stitch applies on top). */
void gt_sample__stitch_model(struct gt_thread *t, struct gt_stitch *st);
/* The node a sample's time goes to, given the context @node its frames
 * gave under @st: st->runtime's placeholder under the base when no frame
 * of the program was left (the runtime's own time), else @node. NULL only
 * in signal context (@signal_ctx) out of memory. */
struct gt_cct_node *gt_sample__charged(struct gt_thread *t, struct gt_cct_node *node,
				       const struct gt_stitch *st, int signal_ctx);
/* Starts/stops the calling thread's timer. */
void gt_sample__thread_start(struct gt_thread *t);
void gt_sample__thread_stop(struct gt_thread *t);
/* Stops sampling everywhere and waits (bounded) for running handlers. */
void gt_sample__fini(void);

#endif
