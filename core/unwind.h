/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_UNWIND_H
#define GT_CORE_UNWIND_H

#include <stdint.h>

#include "core/cct.h"

struct gt_thread;
struct gt_unwind_memo;

struct gt_frame {
	uintptr_t ip; /* return address, or the interrupted pc for a signal's first frame */
	uintptr_t sp; /* the frame's stack pointer (its callee's canonical frame address) */
};

/*
 * Where a context hangs in the thread's tree.
 *   base == NULL: a full context, from the root of the stack (the frames of
 *                 libc's start routines trimmed).
 *   base, boundary: the frames below boundary (sp < boundary) under base:
 *                 the body of an OpenMP outlined function or task under the
 *                 node that stands for its construct.
 *   base, no boundary: base itself (the thread is in the runtime, not in user
 *                 code, e.g. between two tasks).
 */
struct gt_stitch {
	struct gt_cct_node *base;
	uintptr_t boundary;
	/* A CPU sample with no user frame under base (the thread was in the
	 * runtime only: a fork, a join, handing out work) goes to this
	 * placeholder under base; GT_PH_THREAD_ROOT (0): to base itself. */
	enum gt_placeholder runtime;
	/*
	 * An open region (core/region.h) cuts the context instead of a
	 * boundary: the frames above the frame whose return address is cut_ip,
	 * cut_depth frames from the root of the stack (cut_sp: its stack
	 * pointer, 0 if unknown), and the frame just below it, are the region's
	 * opener and its callers, already in base. cut_depth 0: no frame is
	 * kept (the region's own time).
	 */
	int cut;
	uint32_t cut_depth;
	uintptr_t cut_ip, cut_sp;
};

/* A value that identifies the stack position of the calling tool function:
 * the same for the same call path at the same depth. */
#define GT_UNWIND_KEY() ((uintptr_t)__builtin_frame_address(0))

int gt_unwind__init(void);
struct gt_unwind_memo *gt_unwind__memo_new(void);
/* Frees the table of a thread that has ended; its statistics stay, and
 * nothing more is memoized. */
void gt_unwind__memo_release(struct gt_unwind_memo *memo);
/* A released memo memoizes again, for the next thread of its record; its
 * statistics go on. 0, or -ENOMEM (it stays released). */
int gt_unwind__memo_rearm(struct gt_unwind_memo *memo);

/* Unwinds the calling thread into out[]. uc: the ucontext of a signal (the
 * first frame is then the interrupted instruction) or NULL. Returns the number
 * of frames. Async-signal-safe. */
int gt_unwind__raw(void *uc, struct gt_frame *out, int max);

/*
 * The context of a runtime event whose user call site has return address ra
 * (0 if the runtime did not say), under st: first a memo lookup keyed by
 * (ra, st->base, key's depth below st->boundary), verified against the live
 * stack; NULL if it misses. On a miss call gt_unwind__context with the same
 * arguments, which unwinds (only down to the boundary), inserts, and
 * remembers. key: GT_UNWIND_KEY() of the runtime's callback. Both run in
 * normal context, inside gt_thread__enter/leave. st->base with no boundary
 * is the caller's case (the context is the base itself).
 */
struct gt_cct_node *gt_unwind__memo_lookup(struct gt_thread *t, uintptr_t ra, uintptr_t key,
					   const struct gt_stitch *st);
struct gt_cct_node *gt_unwind__context(struct gt_thread *t, uintptr_t ra, uintptr_t key,
				       const struct gt_stitch *st);
/*
 * Both of the above for a stitch that has only a base and a boundary
 * (no region open on the thread: the caller checked): the memo's answer,
 * else an unwind's, else the tree's root. Arguments by value, so that a
 * runtime's callback (OpenMP's task creation and waits) can end in it
 * without a frame of its own for the stitch.
 */
struct gt_cct_node *gt_unwind__memo_context(struct gt_thread *t, uintptr_t ra, uintptr_t key,
					    struct gt_cct_node *base, uintptr_t boundary);

/* The context of unwound frames (a CPU sample): signal_ctx allocates only
 * from preallocated memory and may return NULL. Frames without stack
 * pointers (sp == 0) end a stitched context at the first runtime frame
 * above the user's instead of at the boundary. */
struct gt_cct_node *gt_unwind__frames_context(struct gt_thread *t, const struct gt_frame *f,
					      int n, int exact_leaf, const struct gt_stitch *st,
					      int signal_ctx);

/*
 * The frames of the calling thread, from the caller, with stack pointers,
 * through GCC's unwinder (no lock, no system call: the caller may be a
 * runtime's callback made under the runtime's own lock); where libgcc_s is
 * missing, libunwind's (sp = 0). Normal context. Returns the number of
 * frames.
 */
int gt_unwind__ips(struct gt_frame *f, int max);
/*
 * The frames of the code a signal interrupted (uc: the handler's
 * ucontext), its pc exact in f[0], for a sample that hangs under @st
 * (gt_sample__stitch): as far as they matter to it. Under a base with a
 * boundary (a task's exit frame), to the first frame at or above it, with
 * stack pointers; under a base alone, to the first frame neither a
 * runtime's nor the system's; else all of them. Stack pointers are 0 but
 * in the first case. Async-signal-safe once gt_unwind__thread_init ran.
 * Returns the number of frames.
 */
int gt_unwind__sample_frames(void *uc, struct gt_frame *f, int max, const struct gt_stitch *st);
/* The context of the calling thread's current call path, from
 * gt_unwind__ips: for runtime callbacks that have no return address to
 * memoize on (CUDA, OpenACC). Normal context. */
struct gt_cct_node *gt_unwind__ips_context(struct gt_thread *t, const struct gt_stitch *st);
/* Prepares the calling thread for gt_unwind__ips (libunwind's per-thread
 * cache is set up outside any signal handler). */
void gt_unwind__thread_init(void);

/*
 * A backend that knows of runtime code inside user modules (a statically
 * linked CUDA runtime) says so: frames whose pc it covers are elided like
 * a runtime library's. @covers must be async-signal-safe. Each backend
 * adds its own (the CUDA runtime, Kokkos' templates): up to
 * GT_UNWIND_ELIDE_HOOKS, a hook added twice is kept once.
 */
#define GT_UNWIND_ELIDE_HOOKS 4
void gt_unwind__set_elide_hook(int (*covers)(uintptr_t pc));
/* Whether contexts leave the frame of pc out: the tool's, a runtime's. */
int gt_unwind__elided(uintptr_t pc);

/* Counters for tests and benchmarks. */
struct gt_unwind_stats {
	/* derived: misses answered from a shape (core/unwind.c), no unwind;
	 * predicted: hits answered by the entry that followed the previous
	 * answer last time */
	uint64_t memo_hits, memo_misses, derived, full_unwinds, predicted;
};
void gt_unwind__stats(const struct gt_thread *t, struct gt_unwind_stats *s);

#endif
