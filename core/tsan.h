/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_TSAN_H
#define GT_CORE_TSAN_H

/*
 * Hand-overs that a runtime orders for us, told to ThreadSanitizer.
 *
 * The OpenMP runtime is not instrumented: when it hands a task or a region
 * from one thread to another, the tool's records travel with it, ordered by
 * the runtime's own synchronization, which ThreadSanitizer cannot see.
 * gt_tsan__release(p) on the thread that hands p over and gt_tsan__acquire(p)
 * on the thread that takes it state that order. They compile to nothing in
 * other builds. A race the runtime does not order stays a race.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GT_TSAN_BUILD 1
#endif
#endif
#if !defined(GT_TSAN_BUILD) && defined(__SANITIZE_THREAD__)
#define GT_TSAN_BUILD 1
#endif

#ifdef GT_TSAN_BUILD
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define gt_tsan__acquire(p) __tsan_acquire((void *)(p))
#define gt_tsan__release(p) __tsan_release((void *)(p))
#else
#define gt_tsan__acquire(p) ((void)(p))
#define gt_tsan__release(p) ((void)(p))
#endif

#endif
