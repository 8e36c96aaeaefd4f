/* SPDX-License-Identifier: MIT */
/*
 * The best-practice checks of the OpenCL layer (after Intel's GPU
 * optimization guide, as HPCToolkit applies it). Each adds a count to the
 * calling context that shows the problem; the report prints one line of
 * advice per metric (report/advice.c).
 *
 *   SINGLE_DEVICE_USE_AOT_COMPILATION       <gpu jit> of a run-time build of
 *       source or IL, when contexts have used one device so far
 *   OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL  <gpu copy h2d> (or the buffer's
 *       creation) sending host bytes read back from a device and not changed
 *   KERNEL_PARAMS_NOT_ALIASED               the kernel's name node: a launch
 *       whose buffer arguments do not overlap, the kernel not saying restrict
 *   KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS  the kernel's name node: the
 *       first launch of a kernel in a context other than its first one
 *   INORDER_QUEUE                           the queue's creation site
 *   ALL_DEVICES_NOT_USED                    the context's creation site, when
 *       the contexts so far leave a device of some platform unused
 *
 * Checks that need the whole process (devices, contexts per kernel) decide
 * with what the process has done up to the call, since only the calling
 * thread may write its tree.
 */
#include <stdlib.h>
#include <string.h>

#include "core/thread.h"
#include "gpu/resend.h"
#include "gpu/opencl/ocl-internal.h"

/* ---- reads, then writes of the same bytes ---- */

void gt_ocl__note_read(struct ocl_thread *ot, const void *ptr, uint64_t size, cl_command_queue q,
		       cl_event ev, int done)
{
	struct ocl_read *r = NULL;

	if (!ptr || !size)
		return;
	for (uint32_t i = 0; i < ot->n_reads; i++)
		if (ot->reads[i].ptr == ptr)
			r = &ot->reads[i];
	if (!r) {
		if (ot->n_reads < OCL_READS)
			r = &ot->reads[ot->n_reads++];
		else
			r = &ot->reads[ot->next_read++ % OCL_READS];
	}
	r->ptr = ptr;
	r->size = size;
	r->q = done ? NULL : q;
	r->ev = done ? NULL : ev;
	if (done)
		r->hash = gt_resend__hash(ptr, size);
}

void gt_ocl__reads_visible(struct ocl_thread *ot, cl_command_queue q, const cl_event *list, cl_uint n)
{
	for (uint32_t i = 0; i < ot->n_reads; i++) {
		struct ocl_read *r = &ot->reads[i];
		int now = 0;

		if (!r->q)
			continue;
		if (q && r->q == q)
			now = 1;
		for (cl_uint j = 0; !now && list && r->ev && j < n; j++)
			now = list[j] == r->ev;
		if (now) {
			r->hash = gt_resend__hash(r->ptr, r->size);
			r->q = NULL;
			r->ev = NULL;
		}
	}
}

int gt_ocl__is_resend(struct ocl_thread *ot, const void *ptr, uint64_t size)
{
	if (!ot || !ptr || !size)
		return 0;
	for (uint32_t i = 0; i < ot->n_reads; i++) {
		const struct ocl_read *r = &ot->reads[i];

		if (r->ptr == ptr && r->size == size && !r->q)
			return gt_resend__hash(ptr, size) == r->hash;
	}
	return 0;
}

/* ---- restrict in the source ---- */

static int ident_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* The source with comments blanked, so that a scan cannot be misled by them. */
static char *strip_comments(const char *s, size_t n)
{
	char *o = malloc(n + 1);

	if (!o)
		return NULL;
	for (size_t i = 0; i < n;) {
		if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				o[i++] = ' ';
		} else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
			o[i] = o[i + 1] = ' ';
			for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
				o[i] = s[i] == '\n' ? '\n' : ' ';
			if (i < n) {
				o[i] = o[i + 1] = ' ';
				i += 2;
			}
		} else {
			o[i] = s[i];
			i++;
		}
	}
	o[n] = 0;
	return o;
}

/* The end of the balanced parentheses opening at s[i] == '('. */
static size_t skip_parens(const char *s, size_t i, size_t n)
{
	int depth = 0;

	for (; i < n; i++) {
		if (s[i] == '(')
			depth++;
		else if (s[i] == ')' && --depth == 0)
			return i + 1;
	}
	return n;
}

static int has_word(const char *s, size_t a, size_t b, const char *w)
{
	size_t len = strlen(w);

	for (size_t i = a; i + len <= b; i++)
		if (!strncmp(s + i, w, len) && (i == a || !ident_char(s[i - 1])) &&
		    (i + len == b || !ident_char(s[i + len])))
			return 1;
	return 0;
}

static void add_restrict_name(struct ocl_program *pr, const char *name, size_t len)
{
	const char **grown = realloc(pr->restrict_names, (pr->n_restrict + 1) * sizeof(*grown));
	const char *s = gt_ocl__intern(name, len);

	if (!grown || !s) {
		if (grown)
			pr->restrict_names = grown;
		return;
	}
	pr->restrict_names = grown;
	pr->restrict_names[pr->n_restrict++] = s;
}

/*
 * For each "kernel"/"__kernel" declaration: its name is the identifier just
 * before the first '(' that does not open an __attribute__; its parameter
 * list is that parenthesis. A kernel says restrict when any parameter does.
 */
void gt_ocl__scan_source(struct ocl_program *pr, cl_uint count, const char **strings, const size_t *lengths)
{
	size_t n = 0, at = 0;
	char *src, *s;

	if (!strings)
		return;
	for (cl_uint i = 0; i < count; i++)
		if (strings[i])
			n += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
	if (!(src = malloc(n + 1)))
		return;
	for (cl_uint i = 0; i < count; i++) {
		size_t len;

		if (!strings[i])
			continue;
		len = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
		memcpy(src + at, strings[i], len);
		at += len;
	}
	s = strip_comments(src, n);
	free(src);
	if (!s)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t kw = 0, j, name_end, name_start, close;

		if (i && ident_char(s[i - 1]))
			continue;
		if (!strncmp(s + i, "__kernel", 8) && !ident_char(s[i + 8]))
			kw = 8;
		else if (!strncmp(s + i, "kernel", 6) && !ident_char(s[i + 6]))
			kw = 6;
		if (!kw)
			continue;
		for (j = i + kw; j < n && s[j] != '(' && s[j] != ';' && s[j] != '{'; j++)
			if (!strncmp(s + j, "__attribute__", 13) && (j == 0 || !ident_char(s[j - 1]))) {
				j += 13;
				while (j < n && s[j] != '(')
					j++;
				j = skip_parens(s, j, n) - 1;
			}
		if (j >= n || s[j] != '(')
			continue;
		name_end = j;
		while (name_end > i && (s[name_end - 1] == ' ' || s[name_end - 1] == '\t' || s[name_end - 1] == '\n' ||
					s[name_end - 1] == '\r'))
			name_end--;
		name_start = name_end;
		while (name_start > i + kw && ident_char(s[name_start - 1]))
			name_start--;
		close = skip_parens(s, j, n);
		if (name_start < name_end &&
		    (has_word(s, j, close, "restrict") || has_word(s, j, close, "__restrict") ||
		     has_word(s, j, close, "__restrict__")))
			add_restrict_name(pr, s + name_start, name_end - name_start);
		i = close > i ? close - 1 : i;
	}
	free(s);
}

int gt_ocl__program_says_restrict(const struct ocl_program *pr, const char *name)
{
	for (uint32_t i = 0; i < pr->n_restrict; i++)
		if (pr->restrict_names[i] == name)
			return 1;
	return 0;
}

/* ---- devices ---- */

#define MAX_USED 64

static struct {
	pthread_mutex_t lock;
	int counted;
	uint32_t available;
	uint32_t n_used;
	cl_device_id used[MAX_USED];
} devs = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Devices of every platform, counted once (under the lock). */
static uint32_t count_available(void)
{
	cl_platform_id plats[16];
	cl_uint np = 0, total = 0;

	if (gt_ocl_next.clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
		return 0;
	for (cl_uint i = 0; i < np && i < 16; i++) {
		cl_uint nd = 0;

		if (gt_ocl_next.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS)
			total += nd;
	}
	return total;
}

/* A sub-device counts as its root device. */
static cl_device_id root_of(cl_device_id d)
{
	for (int depth = 0; depth < 8; depth++) {
		cl_device_id parent = NULL;

		if (gt_ocl_next.clGetDeviceInfo(d, CL_DEVICE_PARENT_DEVICE, sizeof(parent), &parent, NULL) !=
			    CL_SUCCESS ||
		    !parent)
			break;
		d = parent;
	}
	return d;
}

void gt_ocl__devices_used(const cl_device_id *list, cl_uint n, uint32_t *used, uint32_t *available)
{
	pthread_mutex_lock(&devs.lock);
	if (!devs.counted) {
		devs.available = count_available();
		devs.counted = 1;
	}
	for (cl_uint i = 0; i < n; i++) {
		cl_device_id d = root_of(list[i]);
		uint32_t j;

		for (j = 0; j < devs.n_used && devs.used[j] != d; j++)
			;
		if (j == devs.n_used && devs.n_used < MAX_USED)
			devs.used[devs.n_used++] = d;
	}
	*used = devs.n_used;
	/* Unknown (no platform list): nothing to advise. */
	*available = devs.available ? devs.available : devs.n_used;
	pthread_mutex_unlock(&devs.lock);
}

uint32_t gt_ocl__n_devices_used(void)
{
	uint32_t n;

	pthread_mutex_lock(&devs.lock);
	n = devs.n_used;
	pthread_mutex_unlock(&devs.lock);
	return n;
}

/* ---- kernels: contexts per name ---- */

#define CTX_PER_NAME 8

struct name_ctx {
	const char *name;
	uint32_t n;
	cl_context ctx[CTX_PER_NAME];
};

static struct {
	pthread_mutex_t lock;
	struct name_ctx *tab;
	uint32_t cap, n;
} names = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t hash_name(const char *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static struct name_ctx *names__slot(const char *name)
{
	uint32_t j;

	if ((names.n + 1) * 2 > names.cap) {
		uint32_t cap = names.cap ? names.cap * 2 : 64;
		struct name_ctx *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (uint32_t i = 0; i < names.cap; i++) {
			if (!names.tab[i].name)
				continue;
			for (j = hash_name(names.tab[i].name) & (cap - 1); t[j].name; j = (j + 1) & (cap - 1))
				;
			t[j] = names.tab[i];
		}
		free(names.tab);
		names.tab = t;
		names.cap = cap;
	}
	for (j = hash_name(name) & (names.cap - 1); names.tab[j].name; j = (j + 1) & (names.cap - 1))
		if (names.tab[j].name == name)
			return &names.tab[j];
	names.tab[j].name = name;
	names.n++;
	return &names.tab[j];
}

/* 1 when ctx is a new context for a kernel name already run in another. */
static int kernel__new_context(const char *name, cl_context ctx)
{
	struct name_ctx *e;
	int fire = 0;
	uint32_t i;

	if (!name || !ctx)
		return 0;
	pthread_mutex_lock(&names.lock);
	if ((e = names__slot(name))) {
		for (i = 0; i < e->n && i < CTX_PER_NAME && e->ctx[i] != ctx; i++)
			;
		if (i == e->n || i == CTX_PER_NAME) {
			fire = e->n > 0;
			if (e->n < CTX_PER_NAME)
				e->ctx[e->n] = ctx;
			e->n++;
		}
	}
	pthread_mutex_unlock(&names.lock);
	return fire;
}

/* ---- kernels: overlapping arguments ---- */

static int overlap(const struct ocl_range *a, const struct ocl_range *b)
{
	uint64_t sa = a->size ? a->size : 1, sb = b->size ? b->size : 1;

	return a->space == b->space && a->start < b->start + sb && b->start < a->start + sa;
}

/* 2 when two or more buffer arguments and no two overlap; else 1. */
static uint8_t kernel__verdict(const struct ocl_kernel *kr)
{
	uint32_t bufs = 0;

	for (uint32_t i = 0; i < kr->n_args && i < OCL_MAX_ARGS; i++) {
		if (!kr->args[i].space)
			continue;
		bufs++;
		for (uint32_t j = i + 1; j < kr->n_args && j < OCL_MAX_ARGS; j++)
			if (kr->args[j].space && overlap(&kr->args[i], &kr->args[j]))
				return 1;
	}
	return bufs >= 2 ? 2 : 1;
}

void gt_ocl__advise_dispatch(struct ocl_call *c, struct gt_cct_node *ph, struct ocl_kernel *kr)
{
	struct gt_cct *cct = &c->t->cct;
	struct gt_cct_node *n = ph;
	uint8_t verdict;

	if (kr->name && !(n = gt_cct__child(cct, ph, GT_NODE_NAME, (uint64_t)(uintptr_t)kr->name, 0)))
		return;
	/* Relaxed: the exchange only picks the one dispatch that checks. */
	if (!atomic_load_explicit(&kr->dispatched, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&kr->dispatched, 1, memory_order_relaxed) &&
	    kernel__new_context(kr->name, kr->ctx))
		gt_cct__add(cct, n, GT_M_KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS, 1, 0);
	if (kr->restrict_declared)
		return;
	verdict = atomic_load_explicit(&kr->verdict, memory_order_relaxed);
	if (!verdict) {
		verdict = kernel__verdict(kr);
		atomic_store_explicit(&kr->verdict, verdict, memory_order_relaxed);
	}
	if (verdict == 2)
		gt_cct__add(cct, n, GT_M_KERNEL_PARAMS_NOT_ALIASED, 1, 0);
}
