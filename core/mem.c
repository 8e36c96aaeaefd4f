/* SPDX-License-Identifier: MIT */
#include "core/mem.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Small blocks come from slabs: SLAB_SIZE-aligned mappings of SLAB_SIZE
 * bytes, each cut into blocks of one size class. A freed block goes on its
 * class's free list (linked through its first word) and is handed out again;
 * slabs are never unmapped, so the heap holds at most the tool's peak of
 * small blocks. A block's class is found from its slab's address in a table,
 * so blocks carry no header and a pointer that is not the tool's is told
 * apart without reading memory around it. Larger blocks get a mapping each,
 * found by their address in a second table; freed, a few stay mapped for
 * the next block of their length (KEPT_MAX, KEPT_BYTES_MAX), the rest are
 * unmapped.
 */
#define SLAB_SHIFT 16
#define SLAB_SIZE ((size_t)1 << SLAB_SHIFT)
#define PAGE 4096u

static const unsigned class_size[] = {
	16, 32, 48, 64, 80, 96, 112, 128, 192, 256, 384, 512, 768,
	1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384,
};
#define NCLASS (sizeof(class_size) / sizeof(*class_size))
#define SMALL_MAX 16384u
#define KEPT_MAX 8
#define KEPT_BYTES_MAX ((size_t)32 << 20)

_Static_assert(SMALL_MAX * 4 <= SLAB_SIZE, "a slab holds several blocks of every class");

/* Open addressing, linear probing; key 0 is an empty slot. */
struct slot {
	uintptr_t key;
	size_t val;
};

struct table {
	struct slot *s;
	size_t cap; /* a power of two */
	size_t n;
};

static struct {
	pthread_mutex_t lock;
	void *free[NCLASS];
	char *cur[NCLASS]; /* the class's slab being cut, up to end */
	char *end[NCLASS];
	struct table slabs; /* slab address >> SLAB_SHIFT -> class */
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

static void heap__lock(void)
{
	pthread_mutex_lock(&heap.lock);
}

static void heap__unlock(void)
{
	pthread_mutex_unlock(&heap.lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A child of fork() finds the lock free, whichever thread held it. */
static void heap__atfork(void)
{
	pthread_atfork(heap__lock, heap__unlock, heap__unlock);
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	heap.st.mapped += len;
	return p;
}

static void unmap(void *p, size_t len)
{
	munmap(p, len);
	heap.st.mapped -= len;
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

static size_t slot__of(const struct table *t, uintptr_t key)
{
	/* Fibonacci hashing: the addresses' low bits are all alike. */
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (t->cap - 1);
}

static struct slot *table__find(const struct table *t, uintptr_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot__of(t, key);; i = (i + 1) & (t->cap - 1)) {
		if (t->s[i].key == key)
			return &t->s[i];
		if (!t->s[i].key)
			return NULL;
	}
}

static void table__place(struct table *t, uintptr_t key, size_t val)
{
	size_t i = slot__of(t, key);

	while (t->s[i].key)
		i = (i + 1) & (t->cap - 1);
	t->s[i].key = key;
	t->s[i].val = val;
	t->n++;
}

/* Room for one more key at a load of at most a half. */
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
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].key)
			table__place(&grown, t->s[i].key, t->s[i].val);
	if (t->s)
		unmap(t->s, t->cap * sizeof(struct slot));
	*t = grown;
	return 0;
}

/* Backward-shift deletion: later keys of the run move up into the hole, so
 * lookups never need tombstones. */
static void table__remove(struct table *t, struct slot *s)
{
	size_t hole = (size_t)(s - t->s), mask = t->cap - 1;

	for (size_t i = (hole + 1) & mask; t->s[i].key; i = (i + 1) & mask) {
		size_t home = slot__of(t, t->s[i].key);

		/* Move the key when its home is not in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			t->s[hole] = t->s[i];
			hole = i;
		}
	}
	t->s[hole].key = 0;
	t->n--;
}

static int class__of(size_t size, size_t align)
{
	for (size_t c = 0; c < NCLASS; c++)
		if (class_size[c] >= size && class_size[c] % align == 0)
			return (int)c;
	return -1;
}

static void *small__alloc(int c)
{
	void *p = heap.free[c];

	if (p) {
		heap.free[c] = *(void **)p;
		return p;
	}
	if (heap.end[c] - heap.cur[c] < (ptrdiff_t)class_size[c]) {
		char *slab;

		if (table__reserve(&heap.slabs))
			return NULL;
		slab = map_aligned(SLAB_SIZE, SLAB_SIZE);
		if (!slab)
			return NULL;
		table__place(&heap.slabs, (uintptr_t)slab >> SLAB_SHIFT, (size_t)c);
		heap.cur[c] = slab;
		heap.end[c] = slab + SLAB_SIZE / class_size[c] * class_size[c];
	}
	p = heap.cur[c];
	heap.cur[c] += class_size[c];
	return p;
}

/* A kept block of exactly len bytes (aligned to align), or NULL. */
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

/* Keeps a freed large block for reuse when there is room; false if not. */
static bool kept__put(void *p, size_t len)
{
	if (heap.n_kept == KEPT_MAX || heap.kept_bytes + len > KEPT_BYTES_MAX)
		return false;
	heap.kept[heap.n_kept].p = p;
	heap.kept[heap.n_kept++].len = len;
	heap.kept_bytes += len;
	return true;
}

/* *reused: whether the block held data before (a fresh mapping is zero). */
static void *large__alloc(size_t size, size_t align, bool *reused)
{
	size_t len = (size + PAGE - 1) & ~(size_t)(PAGE - 1);
	void *p;

	if (len < size || table__reserve(&heap.large))
		return NULL;
	p = kept__take(len, align);
	*reused = p != NULL;
	if (!p)
		p = align > PAGE ? map_aligned(len, align) : map(len);
	if (p) {
		table__place(&heap.large, (uintptr_t)p, len);
		heap.st.large += len;
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
	pthread_once(&atfork_once, heap__atfork);
	c = align <= PAGE ? class__of(size, align) : -1;
	heap__lock();
	p = c >= 0 ? small__alloc(c) : large__alloc(size, align, &reused);
	heap__unlock();
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

/* The usable size of a block of this heap, 0 when p is not one; locked. */
static size_t block__size(const void *p)
{
	struct slot *s = table__find(&heap.slabs, (uintptr_t)p >> SLAB_SHIFT);

	if (s)
		return class_size[s->val];
	s = table__find(&heap.large, (uintptr_t)p);
	return s ? s->val : 0;
}

bool gt_mem__owns(const void *p)
{
	size_t size;

	if (!p)
		return false;
	heap__lock();
	size = block__size(p);
	heap__unlock();
	return size != 0;
}

bool gt_mem__free(void *p)
{
	struct slot *s;

	if (!p)
		return true;
	heap__lock();
	s = table__find(&heap.slabs, (uintptr_t)p >> SLAB_SHIFT);
	if (s) {
		*(void **)p = heap.free[s->val];
		heap.free[s->val] = p;
	} else if ((s = table__find(&heap.large, (uintptr_t)p))) {
		size_t len = s->val;

		table__remove(&heap.large, s);
		heap.st.large -= len;
		if (!kept__put(p, len))
			unmap(p, len);
	}
	heap__unlock();
	return s != NULL;
}

void *gt_mem__realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (!p)
		return gt_mem__alloc(size);
	heap__lock();
	old = block__size(p);
	heap__unlock();
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
