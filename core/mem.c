/* SPDX-License-Identifier: MIT */
#include "core/mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Small blocks come from slabs: SLAB_SIZE-aligned pieces of SLAB_SIZE
 * bytes, mapped SLAB_BATCH at a time, each cut into blocks of one size
 * class. A freed block goes on its class's free list (linked through its
 * first word) and is handed out again; slabs are never unmapped, so the heap
 * holds at most the tool's peak of small blocks. A block's class is found
 * from its slab's address in a table, so blocks carry no header and a
 * pointer that is not the tool's is told apart without reading memory
 * around it. Larger blocks get a mapping each, found by their address in a
 * second table; freed, a few stay mapped for the next block of their length
 * (KEPT_MAX, KEPT_BYTES_MAX), the rest are unmapped.
 *
 * Each thread keeps freed small blocks of each class in a cache of its own
 * (struct cache, up to CACHE_BYTES a class): a small block is taken and
 * given back without the lock while its class's cache has one or has room.
 * Past that, the lock is taken once for a batch, half a cache. The slab
 * table is read without the lock (slab__class): it is only ever added to,
 * and a grown table replaces the old one, which stays mapped for readers
 * that still hold it. Mappings of large blocks are made and unmade outside
 * the lock. Sixteen threads that make contexts at once (a task tree's
 * first tasks) otherwise queue on the lock behind each other's system calls.
 */
#define SLAB_SHIFT 16
#define SLAB_SIZE ((size_t)1 << SLAB_SHIFT)
#define SLAB_BATCH 16 /* slabs mapped at once */
#define SPAN_MAX 4    /* slabs cut into blocks of one class together */
#define PAGE 4096u

static const unsigned class_size[] = {
	16, 32, 48, 64, 80, 96, 112, 128, 192, 256, 384, 512, 768,
	1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536,
};
#define NCLASS (sizeof(class_size) / sizeof(*class_size))
#define SMALL_MAX 65536u
#define KEPT_MAX 8
#define KEPT_BYTES_MAX ((size_t)32 << 20)
#define CACHE_BYTES (32u << 10)
#define CACHE_MAX 64u

_Static_assert(SMALL_MAX * 4 <= SPAN_MAX * SLAB_SIZE, "a span holds several blocks of every class");
_Static_assert(SPAN_MAX <= SLAB_BATCH, "a batch holds a span");

/* Large blocks' table: open addressing, linear probing; key 0 is an empty
 * slot. Under the lock. */
struct slot {
	uintptr_t key;
	size_t val;
};

struct table {
	struct slot *s;
	size_t cap; /* a power of two */
	size_t n;
};

/* The slab table (slab address >> SLAB_SHIFT -> class), read without the
 * lock: a key is stored with release after its class, and loaded with
 * acquire before it; a table is published with release when it replaces
 * a smaller one, after all its keys. */
struct slab_slot {
	_Atomic uintptr_t key;
	_Atomic size_t class;
};

struct slab_table {
	size_t cap, n;
	struct slab_slot s[];
};

/* A thread's freed small blocks, per class (see above). */
struct cache {
	void *head[NCLASS];
	uint16_t n[NCLASS];
};

static struct {
	pthread_mutex_t lock;
	void *free[NCLASS];
	char *cur[NCLASS]; /* the class's slab being cut, up to end */
	char *end[NCLASS];
	char *slab_next, *slab_end; /* mapped slabs not given to a class yet */
	_Atomic(struct slab_table *) slabs;
	struct table large; /* block address -> mapped length */
	/* Large blocks freed lately, kept mapped for the next of their length:
	 * a buffer freed and taken again at a high rate (CUPTI's activity
	 * buffers) then costs no mapping and no page faults each time. */
	struct {
		void *p;
		size_t len;
	} kept[KEPT_MAX];
	unsigned n_kept;
	size_t kept_bytes;
	struct gt_mem_stats st;
} heap = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The calling thread's cache; CACHE_NONE once its thread is ending (or
 * when it could not have one): its blocks then go through the lock. */
static __thread struct cache *my_cache __attribute__((tls_model("initial-exec")));
#define CACHE_NONE ((struct cache *)(uintptr_t)1)
static pthread_key_t cache_key;
static bool have_cache_key;

static void heap__lock(void)
{
	pthread_mutex_lock(&heap.lock);
}

static void heap__unlock(void)
{
	pthread_mutex_unlock(&heap.lock);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void cache__exit(void *arg);

/* A child of fork() finds the lock free, whichever thread held it. A
 * thread's end gives its cache back (cache__exit). */
static void heap__init(void)
{
	pthread_atfork(heap__lock, heap__unlock, heap__unlock);
	have_cache_key = !pthread_key_create(&cache_key, cache__exit);
}

/* The system calls alone: what is mapped is counted under the lock. */
static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t len)
{
	munmap(p, len);
}

/* len bytes aligned to align (a power of two above PAGE): maps more, then
 * gives back the ends, so no more than len stays mapped. */
static void *map_aligned(size_t len, size_t align)
{
	char *p = map(len + align), *a;

	if (!p)
		return NULL;
	a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (a > p)
		unmap(p, (size_t)(a - p));
	if (a + len < p + len + align)
		unmap(a + len, (size_t)(p + len + align - (a + len)));
	return a;
}

static size_t slot__of(size_t cap, uintptr_t key)
{
	/* Fibonacci hashing: the addresses' low bits are all alike. */
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

static struct slot *table__find(const struct table *t, uintptr_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot__of(t->cap, key);; i = (i + 1) & (t->cap - 1)) {
		if (t->s[i].key == key)
			return &t->s[i];
		if (!t->s[i].key)
			return NULL;
	}
}

static void table__place(struct table *t, uintptr_t key, size_t val)
{
	size_t i = slot__of(t->cap, key);

	while (t->s[i].key)
		i = (i + 1) & (t->cap - 1);
	t->s[i].key = key;
	t->s[i].val = val;
	t->n++;
}

/* Room for one more key at a load of at most a half. Locked. */
static int table__reserve(struct table *t)
{
	struct table grown;

	if (2 * (t->n + 1) <= t->cap)
		return 0;
	grown.cap = t->cap ? 2 * t->cap : PAGE / sizeof(struct slot);
	grown.n = 0;
	grown.s = map(grown.cap * sizeof(struct slot));
	if (!grown.s)
		return -1;
	heap.st.mapped += grown.cap * sizeof(struct slot);
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].key)
			table__place(&grown, t->s[i].key, t->s[i].val);
	if (t->s) {
		unmap(t->s, t->cap * sizeof(struct slot));
		heap.st.mapped -= t->cap * sizeof(struct slot);
	}
	*t = grown;
	return 0;
}

/* Backward-shift deletion: later keys of the run move up into the hole, so
 * lookups never need tombstones. */
static void table__remove(struct table *t, struct slot *s)
{
	size_t hole = (size_t)(s - t->s), mask = t->cap - 1;

	for (size_t i = (hole + 1) & mask; t->s[i].key; i = (i + 1) & mask) {
		size_t home = slot__of(t->cap, t->s[i].key);

		/* Move the key when its home is not in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			t->s[hole] = t->s[i];
			hole = i;
		}
	}
	t->s[hole].key = 0;
	t->n--;
}

static void slabs__place(struct slab_table *t, uintptr_t key, size_t class)
{
	size_t i = slot__of(t->cap, key);

	while (atomic_load_explicit(&t->s[i].key, memory_order_relaxed))
		i = (i + 1) & (t->cap - 1);
	atomic_store_explicit(&t->s[i].class, class, memory_order_relaxed);
	/* Pairs with the acquire load in slab__class. */
	atomic_store_explicit(&t->s[i].key, key, memory_order_release);
	t->n++;
}

/* Room for more slabs at a load of at most a half; the table a grown one
 * replaces stays mapped (readers may hold it). Locked. */
static int slabs__reserve(size_t more)
{
	struct slab_table *t = atomic_load_explicit(&heap.slabs, memory_order_relaxed), *g;
	size_t cap, len;

	if (t && 2 * (t->n + more) <= t->cap)
		return 0;
	cap = t ? 2 * t->cap : PAGE / sizeof(struct slab_slot);
	len = sizeof(*g) + cap * sizeof(struct slab_slot);
	g = map(len);
	if (!g)
		return -1;
	heap.st.mapped += len;
	g->cap = cap;
	for (size_t i = 0; t && i < t->cap; i++) {
		uintptr_t key = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);

		if (key)
			slabs__place(g, key, atomic_load_explicit(&t->s[i].class, memory_order_relaxed));
	}
	/* Pairs with the acquire load in slab__class. */
	atomic_store_explicit(&heap.slabs, g, memory_order_release);
	return 0;
}

/* The class of a block of a slab, -1 for any other pointer. No lock: a
 * thread that frees a block got it after its slab was published. */
static int slab__class(const void *p)
{
	/* Pairs with the release stores in slabs__reserve. */
	const struct slab_table *t = atomic_load_explicit(&heap.slabs, memory_order_acquire);
	uintptr_t key = (uintptr_t)p >> SLAB_SHIFT;

	if (!t || !key)
		return -1;
	for (size_t i = slot__of(t->cap, key);; i = (i + 1) & (t->cap - 1)) {
		/* Pairs with the release store in slabs__place. */
		uintptr_t k = atomic_load_explicit(&t->s[i].key, memory_order_acquire);

		if (k == key)
			return (int)atomic_load_explicit(&t->s[i].class, memory_order_relaxed);
		if (!k)
			return -1;
	}
}

static int class__of(size_t size, size_t align)
{
	for (size_t c = 0; c < NCLASS; c++)
		if (class_size[c] >= size && class_size[c] % align == 0)
			return (int)c;
	return -1;
}

/* The slabs that a class's blocks are cut from together: one, or for the
 * largest classes SPAN_MAX, so that a span holds four blocks at least. */
static size_t span__slabs(size_t class)
{
	return class_size[class] * 4 > SLAB_SIZE ? SPAN_MAX : 1;
}

/* A span of slabs for a class, from the mapped batch; each of its slabs
 * is in the table. Locked. */
static char *span__new(size_t class)
{
	size_t n = span__slabs(class);
	char *span;

	if (slabs__reserve(n))
		return NULL;
	if ((size_t)(heap.slab_end - heap.slab_next) < n * SLAB_SIZE) {
		size_t m = SLAB_BATCH;
		char *b = map_aligned(m * SLAB_SIZE, SLAB_SIZE);

		if (!b) {
			m = n;
			b = map_aligned(m * SLAB_SIZE, SLAB_SIZE);
		}
		if (!b)
			return NULL;
		/* Huge pages would make a first touch fault in 2 MiB. */
		madvise(b, m * SLAB_SIZE, MADV_NOHUGEPAGE);
		heap.st.mapped += m * SLAB_SIZE;
		heap.slab_next = b;
		heap.slab_end = b + m * SLAB_SIZE;
	}
	span = heap.slab_next;
	heap.slab_next += n * SLAB_SIZE;
	for (size_t i = 0; i < n; i++)
		slabs__place(atomic_load_explicit(&heap.slabs, memory_order_relaxed),
			     ((uintptr_t)span >> SLAB_SHIFT) + i, class);
	return span;
}

/* A block of class c from the shared lists or a slab. Locked. */
static void *small__alloc(int c)
{
	void *p = heap.free[c];

	if (p) {
		heap.free[c] = *(void **)p;
		return p;
	}
	if (heap.end[c] - heap.cur[c] < (ptrdiff_t)class_size[c]) {
		char *span = span__new((size_t)c);
		size_t len = span__slabs((size_t)c) * SLAB_SIZE;

		if (!span)
			return NULL;
		heap.cur[c] = span;
		heap.end[c] = span + len / class_size[c] * class_size[c];
	}
	p = heap.cur[c];
	heap.cur[c] += class_size[c];
	return p;
}

/* Gives block p of class c to the shared list. Locked. */
static void small__push(void *p, int c)
{
	*(void **)p = heap.free[c];
	heap.free[c] = p;
}

/* The class of a thread's cache itself. */
static int cache__class(void)
{
	return class__of(sizeof(struct cache), 16);
}

static void cache__push(struct cache *k, int c, void *p)
{
	*(void **)p = k->head[c];
	k->head[c] = p;
	k->n[c]++;
}

/* A block of the cache's class c list, which has one. */
static void *cache__pop(struct cache *k, int c)
{
	void *p = k->head[c];

	k->head[c] = *(void **)p;
	k->n[c]--;
	return p;
}

static unsigned cache__max(int c)
{
	unsigned n = CACHE_BYTES / class_size[c];

	return n < 2 ? 2 : n > CACHE_MAX ? CACHE_MAX : n;
}

/* The calling thread's cache, made at its first use; NULL when it has none. */
static struct cache *cache__get(void)
{
	struct cache *k = my_cache;

	if (k)
		return k == CACHE_NONE ? NULL : k;
	my_cache = CACHE_NONE;
	pthread_once(&init_once, heap__init);
	if (!have_cache_key)
		return NULL;
	heap__lock();
	k = small__alloc(cache__class());
	heap__unlock();
	if (!k)
		return NULL;
	memset(k, 0, sizeof(*k));
	if (pthread_setspecific(cache_key, k)) {
		heap__lock();
		small__push(k, cache__class());
		heap__unlock();
		return NULL;
	}
	my_cache = k;
	return k;
}

/* The thread's end: its cached blocks, and the cache, back to the lists. */
static void cache__exit(void *arg)
{
	struct cache *k = arg;

	my_cache = CACHE_NONE;
	heap__lock();
	for (int c = 0; c < (int)NCLASS; c++)
		while (k->head[c])
			small__push(cache__pop(k, c), c);
	small__push(k, cache__class());
	heap__unlock();
}

/* A block of class c: the thread's cache's, else a batch taken under the
 * lock for it. */
static void *small__take(int c)
{
	struct cache *k = cache__get();
	void *p;

	if (k && k->head[c])
		return cache__pop(k, c);
	heap__lock();
	p = small__alloc(c);
	for (unsigned i = k && p ? cache__max(c) / 2 : 0; i > 0; i--) {
		void *q = small__alloc(c);

		if (!q)
			break;
		cache__push(k, c, q);
	}
	heap__unlock();
	return p;
}

/* A small block of class c given back: to the thread's cache; when it is
 * full, half of it with the block to the shared list. */
static void small__give(void *p, int c)
{
	struct cache *k = cache__get();

	if (k && k->n[c] < cache__max(c)) {
		cache__push(k, c, p);
		return;
	}
	heap__lock();
	small__push(p, c);
	for (unsigned i = k ? k->n[c] / 2 : 0; i > 0; i--)
		small__push(cache__pop(k, c), c);
	heap__unlock();
}

/* A kept block of exactly len bytes (aligned to align), or NULL. Locked. */
static void *kept__take(size_t len, size_t align)
{
	for (unsigned i = 0; i < heap.n_kept; i++) {
		void *p = heap.kept[i].p;

		if (heap.kept[i].len != len || ((uintptr_t)p & (align - 1)))
			continue;
		heap.kept[i] = heap.kept[--heap.n_kept];
		heap.kept_bytes -= len;
		return p;
	}
	return NULL;
}

/* Keeps a freed large block for reuse when there is room; false if not.
 * Locked. */
static bool kept__put(void *p, size_t len)
{
	if (heap.n_kept == KEPT_MAX || heap.kept_bytes + len > KEPT_BYTES_MAX)
		return false;
	heap.kept[heap.n_kept].p = p;
	heap.kept[heap.n_kept++].len = len;
	heap.kept_bytes += len;
	return true;
}

/* *reused: whether the block held data before (a fresh mapping is zero).
 * A new mapping is made outside the lock. */
static void *large__alloc(size_t size, size_t align, bool *reused)
{
	size_t len = (size + PAGE - 1) & ~(size_t)(PAGE - 1);
	void *p;
	int err;

	if (len < size)
		return NULL;
	heap__lock();
	err = table__reserve(&heap.large);
	p = err ? NULL : kept__take(len, align);
	if (p) {
		table__place(&heap.large, (uintptr_t)p, len);
		heap.st.large += len;
	}
	heap__unlock();
	*reused = true;
	if (p || err)
		return p;
	*reused = false;
	p = align > PAGE ? map_aligned(len, align) : map(len);
	if (!p)
		return NULL;
	heap__lock();
	err = table__reserve(&heap.large);
	if (!err) {
		table__place(&heap.large, (uintptr_t)p, len);
		heap.st.large += len;
		heap.st.mapped += len;
	}
	heap__unlock();
	if (err) {
		unmap(p, len);
		return NULL;
	}
	return p;
}

/* zero: the block must read as zeros (calloc). */
static void *heap__alloc(size_t align, size_t size, bool zero)
{
	bool reused = true;
	void *p;
	int c;

	if (align < 16)
		align = 16;
	if (align & (align - 1) || size > SIZE_MAX / 2)
		return NULL;
	if (!size)
		size = 1;
	pthread_once(&init_once, heap__init);
	c = align <= PAGE ? class__of(size, align) : -1;
	p = c >= 0 ? small__take(c) : large__alloc(size, align, &reused);
	if (p && zero && reused)
		memset(p, 0, size);
	return p;
}

void *gt_mem__aligned(size_t align, size_t size)
{
	return heap__alloc(align, size, false);
}

void *gt_mem__alloc(size_t size)
{
	return heap__alloc(16, size, false);
}

void *gt_mem__calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return heap__alloc(16, n * size, true);
}

/* The usable size of a block of this heap, 0 when p is not one. */
static size_t block__size(const void *p)
{
	int c = slab__class(p);
	struct slot *s;
	size_t len;

	if (c >= 0)
		return class_size[c];
	heap__lock();
	s = table__find(&heap.large, (uintptr_t)p);
	len = s ? s->val : 0;
	heap__unlock();
	return len;
}

bool gt_mem__owns(const void *p)
{
	return p && block__size(p) != 0;
}

bool gt_mem__free(void *p)
{
	size_t len = 0;
	struct slot *s;
	bool drop;
	int c;

	if (!p)
		return true;
	c = slab__class(p);
	if (c >= 0) {
		small__give(p, c);
		return true;
	}
	heap__lock();
	s = table__find(&heap.large, (uintptr_t)p);
	if (s) {
		len = s->val;
		table__remove(&heap.large, s);
		heap.st.large -= len;
	}
	drop = s && !kept__put(p, len);
	if (drop)
		heap.st.mapped -= len;
	heap__unlock();
	if (drop)
		unmap(p, len);
	return s != NULL;
}

void *gt_mem__realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (!p)
		return gt_mem__alloc(size);
	old = block__size(p);
	if (!old)
		return NULL;
	/* Kept in place when it fits and would not waste more than half. */
	if (size <= old && size >= old / 2)
		return p;
	q = gt_mem__alloc(size);
	if (!q)
		return NULL;
	memcpy(q, p, size < old ? size : old);
	gt_mem__free(p);
	return q;
}

void gt_mem__stats(struct gt_mem_stats *s)
{
	heap__lock();
	*s = heap.st;
	heap__unlock();
}
