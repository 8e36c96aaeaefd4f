/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges as context nodes. NVTX v3 is header-only: each program (or
 * library) that includes nvToolsExt.h carries its own copy of the API, whose
 * functions call through a table of pointers. At the first NVTX call that
 * copy dlopens the library NVTX_INJECTION64_PATH names (`gputool run` sets
 * it; a preloaded library is opened again by the same path and is the same
 * instance) and calls its InitializeInjectionNvtx2 with the copy's export
 * table. The tool fills the slots of the CORE and CORE2 callback modules it
 * handles; every other slot stays NVTX's no-op.
 *
 * A push or a start opens a region (core/region.h) on the calling thread,
 * named "<nvtx "MSG">", "<nvtx DOMAIN "MSG">" or "<nvtx "MSG" [CATEGORY]>":
 * what the thread does below the function that opened it hangs under it.
 * A pop closes the innermost push range of its domain on the thread; an end
 * closes its range wherever it is on the stack. A range ended on another
 * thread than the one that started it cannot be closed there (only the
 * starting thread touches its tree and its region stack): the ender leaves
 * the end time in a slot, and the starting thread closes the range at its
 * next NVTX call or at its exit, with the length the ender measured, and
 * counts NVTX_ENDED_ELSEWHERE on it. A mark adds NVTX_MARKS on
 * "<nvtx mark "MSG">" under the thread's innermost open range (or its root).
 *
 * State: per thread (struct nvtx_thread, reached through a thread-local
 * pointer, written only by that thread); domains, registered strings and
 * category names are process-wide, made under one mutex (rare calls, never
 * from a signal handler) and read without it after their publication.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/region.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"

#define NVTX_DEPTH 128	  /* open ranges a thread keeps track of */
#define NVTX_LABEL 256	  /* a label's bytes, longer messages are cut */
#define NVTX_CATEGORIES 64 /* named categories per domain */
#define NVTX_REMOTE 256	  /* ranges ended elsewhere, not yet closed by their starter */

/* Range ids: a start range's carries its starting thread's index + 1 above
 * bit 40, so an end on any thread knows whose it is; push ranges, never
 * returned to the program, have bit 63 set. */
#define ID_THREAD_SHIFT 40
#define ID_PUSH (1ull << 63)

struct nvtx_category {
	uint32_t id;
	const char *name;
};

/* A domain (NVTX's opaque nvtxDomainRegistration): lives until exit.
 * Categories are appended under `lock`; `n_categories` is published with
 * release after the entry is written and read with acquire. */
struct nvtxDomainRegistration_st {
	const char *name;
	struct nvtxDomainRegistration_st *next;
	struct nvtx_category categories[NVTX_CATEGORIES];
	atomic_uint n_categories;
	struct nvtxStringRegistration_st *strings;
};

/* A registered string: its handle is this struct; lives until exit. */
struct nvtxStringRegistration_st {
	const char *s;
	struct nvtxStringRegistration_st *next;
};

/* One open range of a thread. */
struct nvtx_open {
	const struct nvtxDomainRegistration_st *dom;
	uint64_t id;
	struct gt_cct_node *node; /* NULL: not measured (the region stack was full) */
};

struct nvtx_thread {
	unsigned n;	   /* entries in open[] */
	unsigned overflow; /* push ranges past NVTX_DEPTH, so that pops still pair */
	uint64_t pushes;   /* push ids */
	uint64_t remote_seen; /* `remote_ends` when this thread last looked */
	struct nvtx_open open[NVTX_DEPTH];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The default domain (a NULL handle) and the domains made so far, under lock. */
static struct nvtxDomainRegistration_st default_domain;
static struct nvtxDomainRegistration_st *domains;

/*
 * Ends of start ranges on another thread than their starter's. The ender
 * claims a free slot (id 0 -> ID_CLAIMED, CAS, relaxed), writes `end`, then
 * publishes the range's id (release) and bumps `remote_ends` (release). The
 * starter, seeing `remote_ends` move (acquire), reads the ids of the slots
 * (acquire, pairs with the ender's publication) and takes its own: reads
 * `end`, then frees the slot (store 0, release: the read of `end` comes
 * before a next ender's write). Bounded: with every slot taken the end is
 * lost and the range closes at its starter's exit.
 */
#define ID_CLAIMED UINT64_MAX
static struct {
	_Atomic uint64_t id;
	uint64_t end;
} remote[NVTX_REMOTE];
static atomic_uint_fast64_t remote_ends;
static atomic_uint_fast64_t remote_lost;
/* Start range ids, process-wide (relaxed: only uniqueness matters). */
static atomic_uint_fast64_t starts;

static _Thread_local struct nvtx_thread *self;
static atomic_int attached;

static struct nvtx_thread *nvtx__thread(struct gt_thread *t)
{
	if (self)
		return self;
	self = calloc(1, sizeof(*self));
	/* Threads that name ranges are sampled from their first one (a no-op
	 * when preloading or a runtime started it already). */
	if (self)
		gt_sample__thread_start(t);
	return self;
}

/* UTF-8 of a wide string (UTF-32 on Linux) into buf, cut at whole
 * characters. libc's wcstombs would follow the program's locale, where
 * "C" fails on anything past ASCII. */
static void utf8_of(const wchar_t *w, char *buf, size_t len)
{
	size_t o = 0;

	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		unsigned char b[4];
		size_t k;

		if (c < 0x80) {
			b[0] = (unsigned char)c, k = 1;
		} else if (c < 0x800) {
			b[0] = (unsigned char)(0xc0 | c >> 6), b[1] = (unsigned char)(0x80 | (c & 0x3f)), k = 2;
		} else if (c < 0x10000) {
			if (c >= 0xd800 && c < 0xe000)
				c = 0xfffd; /* a lone surrogate */
			b[0] = (unsigned char)(0xe0 | c >> 12), b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (unsigned char)(0x80 | (c & 0x3f)), k = 3;
		} else if (c < 0x110000) {
			b[0] = (unsigned char)(0xf0 | c >> 18), b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f)), b[3] = (unsigned char)(0x80 | (c & 0x3f));
			k = 4;
		} else {
			b[0] = '?', k = 1;
		}
		if (o + k >= len)
			break;
		memcpy(buf + o, b, k);
		o += k;
	}
	buf[o] = 0;
}

/* The message of an NVTX call that passes a narrow (@a) or a wide (@w)
 * string: @a, or @w in UTF-8 in @buf; NULL for neither. */
static const char *narrow(const char *a, const wchar_t *w, char *buf, size_t len)
{
	if (a || !w)
		return a;
	utf8_of(w, buf, len);
	return buf;
}

/* A copy that lives until exit (under lock), or NULL. */
static char *keep(const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = malloc(n);

	if (c)
		memcpy(c, s, n);
	return c;
}

static const char *category_name(const struct nvtxDomainRegistration_st *d, uint32_t id)
{
	unsigned n;

	if (!id)
		return NULL;
	if (!d)
		d = &default_domain;
	n = atomic_load_explicit(&d->n_categories, memory_order_acquire); /* pairs with name_category */
	for (unsigned i = n; i-- > 0;)
		if (d->categories[i].id == id)
			return d->categories[i].name;
	return NULL;
}

/*
 * The label of a range or a mark: `<nvtx [mark ][DOMAIN ]"MSG"[ [CATEGORY]]>`
 * into buf. The message comes from a string (ascii or wide) or from event
 * attributes (ASCII, UNICODE, REGISTERED); the category only when it was
 * named. Returns buf.
 */
static const char *label_of(char *buf, const struct nvtxDomainRegistration_st *d, const char *kind,
			    const char *a, const wchar_t *w, const nvtxEventAttributes_t *ea)
{
	char msg[NVTX_LABEL], w8[NVTX_LABEL];
	const char *cat = NULL;

	msg[0] = 0;
	if (ea) {
		/* Version 1 and 2 share the fields read here; a struct too
		 * short to hold the message is read as having none. */
		if (ea->size >= offsetof(nvtxEventAttributes_t, message) + sizeof(ea->message)) {
			switch (ea->messageType) {
			case NVTX_MESSAGE_TYPE_ASCII:
				a = ea->message.ascii;
				break;
			case NVTX_MESSAGE_TYPE_UNICODE:
				w = ea->message.unicode;
				break;
			case NVTX_MESSAGE_TYPE_REGISTERED:
				a = ea->message.registered ? ea->message.registered->s : NULL;
				break;
			default:
				break;
			}
		}
		if (ea->size >= offsetof(nvtxEventAttributes_t, category) + sizeof(ea->category))
			cat = category_name(d, ea->category);
	}
	a = narrow(a, w, w8, sizeof(w8));
	snprintf(msg, sizeof(msg), "%s", a ? a : "");
	snprintf(buf, NVTX_LABEL, "<nvtx %s%s%s\"%s\"%s%s%s>", kind, d ? d->name : "", d ? " " : "", msg,
		 cat ? " [" : "", cat ? cat : "", cat ? "]" : "");
	return buf;
}

/* The ranges of @nt ended on other threads: closed now, with the length
 * their ender measured. Inside gt_thread__enter. */
static void take_remote_ends(struct gt_thread *t, struct nvtx_thread *nt)
{
	uint64_t mine = (uint64_t)(t->index + 1) << ID_THREAD_SHIFT;

	for (unsigned i = 0; i < NVTX_REMOTE; i++) {
		uint64_t id = atomic_load_explicit(&remote[i].id, memory_order_acquire);
		uint64_t end, ns;
		struct gt_cct_node *node;

		if (!id || id == ID_CLAIMED || (id & ~((1ull << ID_THREAD_SHIFT) - 1)) != mine)
			continue;
		end = remote[i].end;
		atomic_store_explicit(&remote[i].id, 0, memory_order_release);
		for (unsigned k = 0; k < nt->n; k++) {
			if (nt->open[k].id != id)
				continue;
			node = nt->open[k].node;
			memmove(&nt->open[k], &nt->open[k + 1], (nt->n - k - 1) * sizeof(nt->open[0]));
			nt->n--;
			if (node && (node = gt_region__close_at(t, GT_REGION_NVTX, id, end, &ns)))
				gt_cct__add(&t->cct, node, GT_M_NVTX_ENDED_ELSEWHERE, 1, 0);
			break;
		}
	}
}

/*
 * Every handler runs between enter() and leave(): the calling thread's
 * record, its NVTX state, and its sampling handler kept off the tree.
 * NULL when the thread cannot be measured (the NVTX call then does nothing).
 */
static struct nvtx_thread *enter(struct gt_thread **tp)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);
	struct nvtx_thread *nt;

	if (!t || !(nt = nvtx__thread(t)))
		return NULL;
	gt_thread__enter(t);
	{
		uint64_t seen = atomic_load_explicit(&remote_ends, memory_order_acquire);

		if (seen != nt->remote_seen) {
			nt->remote_seen = seen;
			take_remote_ends(t, nt);
		}
	}
	*tp = t;
	return nt;
}

static void leave(struct gt_thread *t)
{
	gt_thread__leave(t);
}

/* Opens a range: a region under the caller's context. Returns its level
 * among the thread's open push ranges of its domain (push) or its id. */
static uint64_t open_range(const struct nvtxDomainRegistration_st *d, int push, const char *a,
			   const wchar_t *w, const nvtxEventAttributes_t *ea, uintptr_t ra, uintptr_t key)
{
	struct gt_thread *t;
	struct nvtx_thread *nt = enter(&t);
	char buf[NVTX_LABEL];
	struct nvtx_open *o;
	uint64_t ret = 0;

	if (!nt)
		return push ? (uint64_t)NVTX_NO_PUSH_POP_TRACKING : 0;
	if (nt->n == NVTX_DEPTH) {
		nt->overflow += push;
		leave(t);
		return push ? NVTX_DEPTH + nt->overflow - 1 : 0;
	}
	o = &nt->open[nt->n++];
	o->dom = d;
	if (push) {
		o->id = ID_PUSH | ++nt->pushes;
		for (unsigned i = 0; i + 1 < nt->n; i++)
			ret += (nt->open[i].id & ID_PUSH) && nt->open[i].dom == d;
	} else {
		o->id = (uint64_t)(t->index + 1) << ID_THREAD_SHIFT |
			((atomic_fetch_add_explicit(&starts, 1, memory_order_relaxed) + 1) &
			 ((1ull << ID_THREAD_SHIFT) - 1));
		ret = o->id;
	}
	o->node = gt_region__open(t, GT_REGION_NVTX, label_of(buf, d, "", a, w, ea), o->id, 0, ra, key);
	leave(t);
	return ret;
}

/* Closes the innermost push range of @d on this thread: its level, or -1. */
static int pop_range(const struct nvtxDomainRegistration_st *d)
{
	struct gt_thread *t;
	struct nvtx_thread *nt = enter(&t);
	int level = -1;

	if (!nt)
		return NVTX_NO_PUSH_POP_TRACKING;
	if (nt->overflow) {
		nt->overflow--;
		leave(t);
		return NVTX_DEPTH + (int)nt->overflow;
	}
	for (unsigned i = nt->n; i-- > 0;) {
		struct nvtx_open o = nt->open[i];

		if (!(o.id & ID_PUSH) || o.dom != d)
			continue;
		memmove(&nt->open[i], &nt->open[i + 1], (nt->n - i - 1) * sizeof(nt->open[0]));
		nt->n--;
		if (o.node)
			gt_region__close(t, GT_REGION_NVTX, o.id, NULL);
		level = 0;
		for (unsigned k = 0; k < i; k++)
			level += (nt->open[k].id & ID_PUSH) && nt->open[k].dom == d;
		break;
	}
	leave(t);
	return level;
}

/* Ends a start range: here when this thread started it, else handed to
 * its starter through a slot of remote[]. */
static void end_range(nvtxRangeId_t id)
{
	struct gt_thread *t;
	struct nvtx_thread *nt;
	uint64_t now;

	if (!id || (id & ID_PUSH) || !(nt = enter(&t)))
		return;
	for (unsigned i = nt->n; i-- > 0;) {
		struct nvtx_open o = nt->open[i];

		if (o.id != id)
			continue;
		memmove(&nt->open[i], &nt->open[i + 1], (nt->n - i - 1) * sizeof(nt->open[0]));
		nt->n--;
		if (o.node)
			gt_region__close(t, GT_REGION_NVTX, id, NULL);
		leave(t);
		return;
	}
	leave(t);
	if ((id >> ID_THREAD_SHIFT) == (uint64_t)t->index + 1)
		return; /* this thread's, not measured or ended already */
	now = gt_clock__now();
	for (unsigned i = 0; i < NVTX_REMOTE; i++) {
		uint64_t free_id = 0;

		if (atomic_load_explicit(&remote[i].id, memory_order_relaxed) ||
		    !atomic_compare_exchange_strong_explicit(&remote[i].id, &free_id, ID_CLAIMED,
							     memory_order_acquire, memory_order_relaxed))
			continue;
		/* acquire: pairs with the starter's release of the slot, after
		 * its read of the previous `end`. */
		remote[i].end = now;
		atomic_store_explicit(&remote[i].id, id, memory_order_release);
		atomic_fetch_add_explicit(&remote_ends, 1, memory_order_release);
		return;
	}
	if (!atomic_fetch_add_explicit(&remote_lost, 1, memory_order_relaxed))
		gt_warn("nvtx", "more than %d ranges ended on other threads than their own at once: "
				"the later ones close at their thread's end",
			NVTX_REMOTE);
}

static void mark(const struct nvtxDomainRegistration_st *d, const char *a, const wchar_t *w,
		 const nvtxEventAttributes_t *ea)
{
	struct gt_thread *t;
	struct nvtx_thread *nt = enter(&t);
	struct gt_cct_node *at = NULL, *n;
	const char *name;
	char buf[NVTX_LABEL];

	if (!nt)
		return;
	for (unsigned i = nt->n; i-- > 0 && !at;)
		at = nt->open[i].node;
	name = gt_region__intern(t, label_of(buf, d, "mark ", a, w, ea));
	n = name ? gt_cct__child(&t->cct, at ? at : t->cct.root, GT_NODE_NAME, (uint64_t)(uintptr_t)name, 0)
		 : NULL;
	if (n)
		gt_cct__add(&t->cct, n, GT_M_NVTX_MARKS, 1, 0);
	leave(t);
}

static void name_category(struct nvtxDomainRegistration_st *d, uint32_t id, const char *a, const wchar_t *w)
{
	char w8[NVTX_LABEL];
	unsigned n;

	a = narrow(a, w, w8, sizeof(w8));
	if (!a || !id)
		return;
	if (!d)
		d = &default_domain;
	pthread_mutex_lock(&lock);
	n = atomic_load_explicit(&d->n_categories, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++)
		if (d->categories[i].id == id)
			goto out; /* named once: the first name stays (labels made keep it) */
	if (n < NVTX_CATEGORIES && (d->categories[n].name = keep(a))) {
		d->categories[n].id = id;
		atomic_store_explicit(&d->n_categories, n + 1, memory_order_release); /* pairs with category_name */
	}
out:
	pthread_mutex_unlock(&lock);
}

static nvtxDomainHandle_t domain_create(const char *a, const wchar_t *w)
{
	struct nvtxDomainRegistration_st *d;
	char w8[NVTX_LABEL];

	a = narrow(a, w, w8, sizeof(w8));
	if (!a)
		return NULL;
	pthread_mutex_lock(&lock);
	for (d = domains; d; d = d->next)
		if (!strcmp(d->name, a))
			goto out;
	d = calloc(1, sizeof(*d));
	if (d && !(d->name = keep(a))) {
		free(d);
		d = NULL;
	}
	if (d) {
		d->next = domains;
		domains = d;
	}
out:
	pthread_mutex_unlock(&lock);
	return d;
}

/* Registered strings: one handle per string and domain, interned. */
static nvtxStringHandle_t register_string(nvtxDomainHandle_t d, const char *a, const wchar_t *w)
{
	struct nvtxStringRegistration_st *s;
	char w8[NVTX_LABEL];

	a = narrow(a, w, w8, sizeof(w8));
	if (!a)
		return NULL;
	if (!d)
		d = &default_domain;
	pthread_mutex_lock(&lock);
	for (s = d->strings; s; s = s->next)
		if (!strcmp(s->s, a))
			goto out;
	s = calloc(1, sizeof(*s));
	if (s && !(s->s = keep(a))) {
		free(s);
		s = NULL;
	}
	if (s) {
		s->next = d->strings;
		d->strings = s;
	}
out:
	pthread_mutex_unlock(&lock);
	return s;
}

/* The program's call site of a handler, for gt_region__open: a range
 * opened again there costs no unwind. */
#define CALLER (uintptr_t)__builtin_return_address(0), GT_UNWIND_KEY()

/* The handlers NVTX calls, by its function types (a wrong signature does
 * not compile where the table is filled). */
static void NVTX_API markEx(const nvtxEventAttributes_t *ea) { mark(NULL, NULL, NULL, ea); }
static void NVTX_API markA(const char *m) { mark(NULL, m, NULL, NULL); }
static void NVTX_API markW(const wchar_t *m) { mark(NULL, NULL, m, NULL); }
static nvtxRangeId_t NVTX_API startEx(const nvtxEventAttributes_t *ea) { return open_range(NULL, 0, NULL, NULL, ea, CALLER); }
static nvtxRangeId_t NVTX_API startA(const char *m) { return open_range(NULL, 0, m, NULL, NULL, CALLER); }
static nvtxRangeId_t NVTX_API startW(const wchar_t *m) { return open_range(NULL, 0, NULL, m, NULL, CALLER); }
static void NVTX_API rangeEnd(nvtxRangeId_t id) { end_range(id); }
static int NVTX_API pushEx(const nvtxEventAttributes_t *ea) { return (int)open_range(NULL, 1, NULL, NULL, ea, CALLER); }
static int NVTX_API pushA(const char *m) { return (int)open_range(NULL, 1, m, NULL, NULL, CALLER); }
static int NVTX_API pushW(const wchar_t *m) { return (int)open_range(NULL, 1, NULL, m, NULL, CALLER); }
static int NVTX_API pop(void) { return pop_range(NULL); }
static void NVTX_API nameCategoryA(uint32_t c, const char *n) { name_category(NULL, c, n, NULL); }
static void NVTX_API nameCategoryW(uint32_t c, const wchar_t *n) { name_category(NULL, c, NULL, n); }

static void NVTX_API domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *ea) { mark(d, NULL, NULL, ea); }
static nvtxRangeId_t NVTX_API domainStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *ea)
{
	return open_range(d, 0, NULL, NULL, ea, CALLER);
}
static void NVTX_API domainEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { (void)d, end_range(id); }
static int NVTX_API domainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *ea)
{
	return (int)open_range(d, 1, NULL, NULL, ea, CALLER);
}
static int NVTX_API domainPop(nvtxDomainHandle_t d) { return pop_range(d); }
static void NVTX_API domainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *n) { name_category(d, c, n, NULL); }
static void NVTX_API domainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t *n) { name_category(d, c, NULL, n); }
static nvtxStringHandle_t NVTX_API registerStringA(nvtxDomainHandle_t d, const char *s) { return register_string(d, s, NULL); }
static nvtxStringHandle_t NVTX_API registerStringW(nvtxDomainHandle_t d, const wchar_t *s) { return register_string(d, NULL, s); }
static nvtxDomainHandle_t NVTX_API domainCreateA(const char *n) { return domain_create(n, NULL); }
static nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t *n) { return domain_create(NULL, n); }
/* A domain's handle stays valid (and its name in the labels made) after
 * nvtxDomainDestroy: the default no-op is right for it. */

/* Writes @fn into slot @cbid of a module's table when the table has it. */
static void set_slot(NvtxFunctionTable table, unsigned size, unsigned cbid, NvtxFunctionPointer fn)
{
	if (cbid < size && table[cbid])
		*table[cbid] = fn;
}

/* The handler must have NVTX's own type for the slot: checked here. */
#define SLOT(table, size, mod, id, fn)                                                    \
	set_slot(table, size, NVTX_CBID_##mod##_##id,                                     \
		 (NvtxFunctionPointer)(nvtx##id##_impl_fntype){ fn })

static void nvtx__thread_end(struct gt_thread *t)
{
	struct nvtx_thread *nt = self;

	/* Ranges other threads ended close with the length they measured,
	 * before core closes what is left at the thread's end. */
	if (!nt || gt_thread__peek() != t)
		return;
	gt_thread__enter(t);
	take_remote_ends(t, nt);
	gt_thread__leave(t);
	self = NULL;
	free(nt);
}

/*
 * NVTX calls this at its first call in the process, with its export table.
 * Returns 1 when the tool handles NVTX; 0 leaves every NVTX call a no-op.
 */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;
	NvtxFunctionTable core = NULL, core2 = NULL;
	unsigned n_core = 0, n_core2 = 0;

	if (!get || gt_tool__start())
		return 0;
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable ||
	    !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n_core) ||
	    !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n_core2) || !core || !core2) {
		gt_warn("nvtx", "off (this NVTX has no callback table for its core modules)");
		return 0;
	}
	vi = get(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	/* Each copy of NVTX in the process (the program's, a library's)
	 * attaches on its own; the state they feed is one. */
	if (!atomic_exchange_explicit(&attached, 1, memory_order_relaxed))
		gt_thread__on_exit(nvtx__thread_end);

	SLOT(core, n_core, CORE, MarkEx, markEx);
	SLOT(core, n_core, CORE, MarkA, markA);
	SLOT(core, n_core, CORE, MarkW, markW);
	SLOT(core, n_core, CORE, RangeStartEx, startEx);
	SLOT(core, n_core, CORE, RangeStartA, startA);
	SLOT(core, n_core, CORE, RangeStartW, startW);
	SLOT(core, n_core, CORE, RangeEnd, rangeEnd);
	SLOT(core, n_core, CORE, RangePushEx, pushEx);
	SLOT(core, n_core, CORE, RangePushA, pushA);
	SLOT(core, n_core, CORE, RangePushW, pushW);
	SLOT(core, n_core, CORE, RangePop, pop);
	SLOT(core, n_core, CORE, NameCategoryA, nameCategoryA);
	SLOT(core, n_core, CORE, NameCategoryW, nameCategoryW);

	SLOT(core2, n_core2, CORE2, DomainMarkEx, domainMarkEx);
	SLOT(core2, n_core2, CORE2, DomainRangeStartEx, domainStartEx);
	SLOT(core2, n_core2, CORE2, DomainRangeEnd, domainEnd);
	SLOT(core2, n_core2, CORE2, DomainRangePushEx, domainPushEx);
	SLOT(core2, n_core2, CORE2, DomainRangePop, domainPop);
	SLOT(core2, n_core2, CORE2, DomainNameCategoryA, domainNameCategoryA);
	SLOT(core2, n_core2, CORE2, DomainNameCategoryW, domainNameCategoryW);
	SLOT(core2, n_core2, CORE2, DomainRegisterStringA, registerStringA);
	SLOT(core2, n_core2, CORE2, DomainRegisterStringW, registerStringW);
	SLOT(core2, n_core2, CORE2, DomainCreateA, domainCreateA);
	SLOT(core2, n_core2, CORE2, DomainCreateW, domainCreateW);
	gt_info("nvtx", "NVTX injection attached (NVTX %u)", vi ? vi->version : 0u);
	return 1;
}
