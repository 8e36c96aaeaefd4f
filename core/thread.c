/* SPDX-License-Identifier: MIT */
#include "core/thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/array.h"
#include "core/config.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/sample.h"
#include "core/unwind.h"

/*
 * Registry: slots[] is filled in index order. A creator takes an index with
 * fetch_add (relaxed: the index alone carries no data), initializes its
 * state, then publishes it with a release store to its slot, which pairs with
 * the acquire load in gt_thread__at(). Wait-free; no thread ever retries.
 */
static struct gt_thread *_Atomic slots[GT_MAX_THREADS];
static atomic_uint n_slots;
/* Threads refused a slot (beyond the limit, or out of memory): each counted
 * once (relaxed: a statistic, read at exit). */
static atomic_ullong n_refused;
static __thread int refused;

/* The slots in use: GPUTOOL_MAX_THREADS, at most GT_MAX_THREADS. */
static unsigned limit(void)
{
	return gt_config.max_threads && gt_config.max_threads < GT_MAX_THREADS ? (unsigned)gt_config.max_threads
									     : GT_MAX_THREADS;
}

static struct gt_thread *refuse(int no_memory)
{
	if (!refused) {
		refused = 1;
		if (atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed) != 0)
			return NULL;
		if (no_memory)
			gt_warn("thread", "out of memory for a thread's record: it and others are not measured");
		else
			gt_warn("thread", "more than %u threads: the others are not measured (GPUTOOL_MAX_THREADS)",
				limit());
	}
	return NULL;
}

uint64_t gt_thread__refused(void)
{
	return atomic_load_explicit(&n_refused, memory_order_relaxed);
}

struct tls_find {
	uintptr_t fn;
	size_t size;
};

static int tls__find(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct tls_find *f = arg;
	const ElfW(Phdr) *tls = NULL;
	int inside = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->fn >= lo && f->fn - lo < ph->p_memsz)
			inside = 1;
		else if (ph->p_type == PT_TLS)
			tls = ph;
	}
	if (!inside)
		return 0;
	/* glibc's allocate_dtv_entry: malloc(size) where malloc's own
	 * alignment serves, else size + alignment to align by hand. */
	if (tls && tls->p_memsz)
		f->size = tls->p_align <= alignof(max_align_t) ? tls->p_memsz : tls->p_memsz + tls->p_align;
	return 1;
}

/*
 * The process's malloc and free: those the loader calls. The library's own
 * malloc() goes to the tool's heap (core/mem.h), which would say nothing of
 * whether the loader's can still allocate. Set by gt_thread__tls_size, at
 * init, before any thread is prepared.
 */
static void *(*proc_malloc)(size_t);
static void (*proc_free)(void *);

size_t gt_thread__tls_size(const void *fn)
{
	struct tls_find f = { .fn = (uintptr_t)fn };

	*(void **)&proc_malloc = dlsym(RTLD_DEFAULT, "malloc");
	*(void **)&proc_free = dlsym(RTLD_DEFAULT, "free");
	dl_iterate_phdr(tls__find, &f);
	return f.size;
}

/*
 * One thread at a time between the reservation and the touch: the block
 * freed for the loader is taken by the loader, not by another thread of
 * the tool preparing itself meanwhile (a thread whose malloc has no cache of
 * its own, as at the edge of a memory limit, shares its arena's free
 * blocks). Threads start far too rarely for the lock to matter; fork()
 * leaves it free in the child.
 */
static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
/* Freed with the reservation: what the loader asks for is split from it. */
#define TLS_SLACK 4096u

static void tls__lock(void)
{
	pthread_mutex_lock(&tls_lock);
}

static void tls__unlock(void)
{
	pthread_mutex_unlock(&tls_lock);
}

static void tls__atfork(void)
{
	pthread_atfork(tls__lock, tls__unlock, tls__unlock);
}

int gt_thread__tls_touch(size_t size, void (*touch)(void))
{
	void *p = NULL;

	if (!size || !proc_malloc || !proc_free) {
		touch();
		return 0;
	}
	pthread_once(&tls_once, tls__atfork);
	tls__lock();
	p = proc_malloc(size + TLS_SLACK);
	if (p) {
		/* An allocation freed unused may be elided by the compiler:
		 * this one must reach malloc. */
		__asm__ volatile("" : : "r"(p) : "memory");
		proc_free(p);
		touch();
	}
	tls__unlock();
	return p ? 0 : -ENOMEM;
}

__thread struct gt_thread *gt_thread_self __attribute__((tls_model("initial-exec")));

/*
 * Records of ended threads, for the next thread that no OpenMP runtime
 * reports (see struct gt_thread). The lock orders one owner's last access
 * before the next one's first; threads start and end far too rarely for it
 * to matter. `n_reused` is a statistic (relaxed).
 */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_thread *pool;
static atomic_ullong n_reused;
/* Bumped (release) after a taker's store of `lives`; gt_thread__revivals. */
static _Atomic uint32_t revivals;

uint32_t gt_thread__revivals(void)
{
	/* Acquire: pairs with the release increment in thread__revive. */
	return atomic_load_explicit(&revivals, memory_order_acquire);
}

uint64_t gt_thread__reused(void)
{
	return atomic_load_explicit(&n_reused, memory_order_relaxed);
}

/* A record no other thread's state points into: nothing of OpenMP's (its
 * tasks and regions are imported by other threads) and no layer's pin. */
static int pool__fits(const struct gt_thread *t)
{
	return t->kind == GT_THREAD_OTHER && !t->ompt && !t->pinned;
}

static struct gt_thread *pool__take(void)
{
	struct gt_thread *t;

	pthread_mutex_lock(&pool_lock);
	t = pool;
	if (t)
		pool = t->next_free;
	pthread_mutex_unlock(&pool_lock);
	return t;
}

static void pool__give(struct gt_thread *t)
{
	pthread_mutex_lock(&pool_lock);
	t->next_free = pool;
	pool = t;
	pthread_mutex_unlock(&pool_lock);
}

/* The calling thread takes over @t, whose thread has ended. */
static struct gt_thread *thread__revive(struct gt_thread *t)
{
	if (gt_unwind__memo_rearm(t->memo)) {
		pool__give(t);
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	t->ended = 0;
	t->next_free = NULL;
	/* Relaxed: the monitor reads it after the acquire load of `lives`,
	 * which this release store orders after it. */
	atomic_store_explicit(&t->exited, 0, memory_order_relaxed);
	atomic_store_explicit(&t->lives, atomic_load_explicit(&t->lives, memory_order_relaxed) + 1,
			      memory_order_release);
	atomic_fetch_add_explicit(&n_reused, 1, memory_order_relaxed);
	/* Release: the store of `lives` precedes it for whoever sees it. */
	atomic_fetch_add_explicit(&revivals, 1, memory_order_release);
	/* The layers start a thread's sampling at their first call; this one
	 * may make none that would (its layer state is the record's). */
	gt_sample__thread_start(t);
	return t;
}

/* One import: another tree's node, this thread's copy of it, and the entry
 * of the import asked for after it last time (index + 1; 0: none). */
struct import_ent {
	const struct gt_cct_node *foreign;
	struct gt_cct_node *own;
	uint32_t next;
};

/*
 * Another tree's node -> this thread's copy of it (gt_thread__import). A
 * worker imports its region's node at every fork; a program of many region
 * contexts (reached through many call paths) imports them in the same
 * order every time step, so each import links to the one that came next
 * last time, and that one is checked first (a compare of the foreign
 * pointer: nothing of the node is read) with its entry fetched ahead.
 */
struct gt_import_map {
	struct gt_hmap map; /* foreign -> index + 1 in ent */
	struct import_ent *ent;
	uint32_t n, cap;
	uint32_t last, pred; /* the last answer's entry, and its successor (index + 1) */
};

static void import_map__free(struct gt_import_map *m);

/*
 * A thread's end. OMPT says when its threads end; any other thread (one
 * only CUDA, OpenACC or OpenCL saw, or that OpenMP did not report) ends
 * through this key's destructor. Layers register what they do first.
 * Hooks are registered at start and only appended: count is stored with
 * release after the slot, and loaded with acquire before the slots.
 */
#define MAX_EXIT_HOOKS 8
static void (*exit_hooks[MAX_EXIT_HOOKS])(struct gt_thread *t);
static atomic_uint n_exit_hooks;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int have_exit_key;

int gt_thread__on_exit(void (*fn)(struct gt_thread *t))
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned n;
	int err = 0;

	pthread_mutex_lock(&lock);
	n = atomic_load_explicit(&n_exit_hooks, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++)
		if (exit_hooks[i] == fn)
			goto out;
	if (n == MAX_EXIT_HOOKS) {
		err = -1;
		goto out;
	}
	exit_hooks[n] = fn;
	/* Pairs with the acquire load in gt_thread__exit. */
	atomic_store_explicit(&n_exit_hooks, n + 1, memory_order_release);
out:
	pthread_mutex_unlock(&lock);
	return err;
}

static void thread__end(void *arg)
{
	gt_thread__exit(arg);
}

static void exit_key__init(void)
{
	have_exit_key = !pthread_key_create(&exit_key, thread__end);
}

struct gt_thread *gt_thread__self_slow(enum gt_thread_kind kind)
{
	struct gt_thread *t = gt_thread_self;
	unsigned idx;

	if (t)
		return t;
	if (refused)
		return NULL;
	if (kind == GT_THREAD_OTHER && (t = pool__take()) && (t = thread__revive(t)))
		goto own;
	idx = atomic_fetch_add_explicit(&n_slots, 1, memory_order_relaxed);
	if (idx >= limit()) {
		/* Keep the counter saturated so gt_thread__count stays valid. */
		atomic_store_explicit(&n_slots, limit(), memory_order_relaxed);
		return refuse(0);
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return refuse(1);
	t->index = idx;
	t->tid = (pid_t)syscall(SYS_gettid);
	t->kind = kind;
	gt_arena__init(&t->arena);
	gt_cct__init(&t->cct, &t->arena);
	if (!t->cct.root) {
		free(t);
		return refuse(1);
	}
	t->idle_node = gt_cct__placeholder(&t->cct, t->cct.root, GT_PH_OMP_IDLE);
	t->memo = gt_unwind__memo_new();
	atomic_init(&t->exited, 0);
	atomic_init(&t->lives, 1);
	/* Release: pairs with the acquire load in gt_thread__at(). */
	atomic_store_explicit(&slots[idx], t, memory_order_release);
own:
	gt_unwind__thread_init();
	gt_thread_self = t;
	pthread_once(&exit_key_once, exit_key__init);
	if (have_exit_key)
		pthread_setspecific(exit_key, t);
	return t;
}

void gt_thread__exit(struct gt_thread *t)
{
	unsigned n;
	int pooled;

	if (!t || t->ended)
		return;
	t->ended = 1;
	/* Acquire: pairs with the release store in gt_thread__on_exit. */
	n = atomic_load_explicit(&n_exit_hooks, memory_order_acquire);
	for (unsigned i = 0; i < n; i++)
		exit_hooks[i](t);
	gt_sample__thread_stop(t);
	pooled = t == gt_thread_self && pool__fits(t);
	/*
	 * Give back what only a running thread needs. The tree stays where it
	 * is: other threads' import maps and the finalizer point into it. The
	 * thread's own late signals find no spare chunk and drop their sample;
	 * in_tool keeps one from landing while the spare is being unmapped.
	 * A record bound for the pool keeps its arena's chunks for the next
	 * thread.
	 */
	gt_thread__enter(t);
	gt_unwind__memo_release(t->memo);
	if (t->imports) {
		import_map__free(t->imports);
		t->imports = NULL;
	}
	memset(t->last_import, 0, sizeof(t->last_import));
	memset(t->last_import_own, 0, sizeof(t->last_import_own));
	if (!pooled)
		gt_arena__trim(&t->arena);
	gt_thread__leave(t);
	/* Release: pairs with the acquire loads of the finalizer and the
	 * monitor; the thread's last records precede it. */
	atomic_store_explicit(&t->exited, 1, memory_order_release);
	if (!pooled)
		return;
	/*
	 * The record goes to the next thread. This one forgets it first: a
	 * late signal here finds no state and drops its sample, a late call
	 * of a layer starts a record of its own, and the key's destructor
	 * does not end the record's next thread.
	 */
	gt_thread_self = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	if (have_exit_key)
		pthread_setspecific(exit_key, NULL);
	pool__give(t);
}

uint32_t gt_thread__count(void)
{
	unsigned n = atomic_load_explicit(&n_slots, memory_order_acquire);

	return n > limit() ? limit() : n;
}

struct gt_thread *gt_thread__at(uint32_t index)
{
	if (index >= GT_MAX_THREADS)
		return NULL;
	return atomic_load_explicit(&slots[index], memory_order_acquire);
}

/* k's entry (index + 1), or 0. */
static uint32_t import_map__find(const struct gt_import_map *m, const struct gt_cct_node *k)
{
	const uint64_t *v = gt_hmap__get(&m->map, (uintptr_t)k);

	return v ? (uint32_t)*v : 0;
}

static struct gt_cct_node *import_map__get(const struct gt_import_map *m, const struct gt_cct_node *k)
{
	uint32_t i = import_map__find(m, k);

	return i ? m->ent[i - 1].own : NULL;
}

/* k's new entry (index + 1); 0 when out of memory: the node is imported
 * again next time, to the same copy. */
static uint32_t import_map__put(struct gt_import_map *m, struct gt_cct_node *k, struct gt_cct_node *v)
{
	if (gt_array__grow((void **)&m->ent, &m->cap, m->n, sizeof(*m->ent), 64) ||
	    gt_hmap__put(&m->map, (uintptr_t)k, m->n + 1))
		return 0;
	m->ent[m->n++] = (struct import_ent){ .foreign = k, .own = v };
	return m->n;
}

/* Entry i (index + 1) answered an import: the successor of the previous
 * answer, and its own successor is fetched for the next one. */
static void import_map__answered(struct gt_import_map *m, uint32_t i)
{
	if (m->last && m->ent[m->last - 1].next != i)
		m->ent[m->last - 1].next = i;
	m->last = i;
	m->pred = m->ent[i - 1].next;
	if (m->pred)
		__builtin_prefetch(&m->ent[m->pred - 1]);
}

static void import_map__free(struct gt_import_map *m)
{
	gt_hmap__fini(&m->map);
	free(m->ent);
	free(m);
}

uint64_t gt_thread__imports_predicted(const struct gt_thread *t)
{
	return t->imports_predicted;
}

struct gt_cct_node *gt_thread__imported(const struct gt_thread *t, const struct gt_cct_node *foreign)
{
	if (!foreign)
		return NULL;
	if (foreign == t->last_import[0])
		return t->last_import_own[0];
	if (foreign == t->last_import[1])
		return t->last_import_own[1];
	return t->imports ? import_map__get(t->imports, (struct gt_cct_node *)foreign) : NULL;
}

struct gt_cct_node *gt_thread__import_slow(struct gt_thread *t, struct gt_cct_node *foreign)
{
	struct gt_cct_node *path[64];
	struct gt_cct_node *own, *n;
	struct gt_import_map *m = t->imports;
	unsigned depth = 0;
	uint32_t i;

	if (!foreign)
		return t->cct.root;
	/*
	 * The answers for a node imported before read nothing of it: its
	 * owner keeps writing its line (children, cells), and a read here
	 * would take the line from the owner's core. A worker imports the
	 * same region's node at every instance.
	 */
	if (foreign == t->last_import[0])
		return t->last_import_own[0];
	if (foreign == t->last_import[1])
		return t->last_import_own[1];
	if (m && m->pred && m->ent[m->pred - 1].foreign == foreign) {
		t->imports_predicted++;
		i = m->pred;
		goto answered;
	}
	if (m && (i = import_map__find(m, foreign)))
		goto answered;
	if (gt_cct__owns(&t->cct, foreign)) {
		own = foreign;
		goto out;
	}
	if (!m) {
		m = t->imports = calloc(1, sizeof(*t->imports));
		if (!m)
			return t->cct.root;
	}
	/* Climb until a node already imported (or a root), then come back down. */
	for (n = foreign; n && n->kind != GT_NODE_ROOT; n = n->parent) {
		own = import_map__get(m, n);
		if (own)
			break;
		if (depth == sizeof(path) / sizeof(path[0])) {
			/* Very deep: import the upper part first, recursively. */
			own = gt_thread__import_slow(t, n);
			break;
		}
		path[depth++] = n;
	}
	if (!n || n->kind == GT_NODE_ROOT)
		own = t->cct.root;
	i = 0;
	while (depth--) {
		n = path[depth];
		own = gt_cct__child(&t->cct, own, n->kind, n->key, 0);
		if (!own)
			return t->cct.root;
		i = import_map__put(m, n, own);
	}
	/* The last one made is foreign's. */
	if (i)
		import_map__answered(m, i);
	goto out;
answered:
	import_map__answered(m, i);
	own = m->ent[i - 1].own;
out:
	t->last_import[1] = t->last_import[0];
	t->last_import_own[1] = t->last_import_own[0];
	t->last_import[0] = foreign;
	t->last_import_own[0] = own;
	return own;
}
