/* SPDX-License-Identifier: MIT */
/*
 * Frames a CUDA program has between its own code and the driver that are
 * not the user's, although they live in the user's binary:
 *
 *   - the CUDA runtime, which nvcc links statically by default
 *     (libcudart_static.a): cudaLaunchKernel, cudaMemcpy, ..., its
 *     internals (named libcudart_static_<hash> in CUDA 13, cudart::... or
 *     __cudart<n> before);
 *   - the launch stubs nvcc generates into every .cu file: the host-side
 *     function named after each kernel, __device_stub__<kernel>,
 *     __cudaLaunchKernel_helper, and the C++ wrappers of cuda_runtime.h
 *     (cudaLaunchKernel<T>, cudaMalloc<T>, ...).
 *
 * The unwinder elides whole load modules (libcudart.so, libcuda, the tool);
 * these need address ranges. They are found once, at start, in the ELF
 * symbol table of every user module (libelf): the runtime's functions are
 * the runs of consecutive functions with runtime names, kept when a run has
 * a name only the runtime uses or at least RUN_MIN functions (so that a
 * user's cudaCheck() helper is not taken for the runtime); the stubs are
 * found by name, and the host stub of each kernel from its device stub's
 * name. A stripped binary has no .symtab: its runtime frames stay (the
 * context then ends inside the runtime, one or two frames too deep).
 *
 * The table is immutable once published (release store; the callbacks load
 * it with acquire), so filtering takes no lock.
 */
#include <ctype.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/modmap.h"
#include "gpu/cupti/cupti-internal.h"

#define RUN_MIN 4

struct range {
	uintptr_t lo, hi;
};

struct elide_table {
	uintptr_t lo, hi; /* hull of every range: the fast rejection */
	unsigned n;
	struct range r[];
};

static struct elide_table *_Atomic table;

enum sym_class { SYM_OTHER, SYM_RUNTIME, SYM_MARKER, SYM_STUB };

struct sym {
	uintptr_t lo, hi;
	const char *name;
	uint8_t cls;
};

struct vec {
	void *v;
	size_t n, cap, size;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *grown = realloc(v->v, cap * v->size);

		if (!grown)
			return NULL;
		v->v = grown;
		v->cap = cap;
	}
	return (char *)v->v + v->n++ * v->size;
}

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* _Z<len><id>... or _ZL<len><id>...: the first identifier, else NULL. */
static const char *mangled_id(const char *s, size_t *len)
{
	char *end;

	if (!prefix(s, "_Z"))
		return NULL;
	s += 2;
	if (*s == 'L')
		s++;
	if (!isdigit((unsigned char)*s))
		return NULL;
	*len = strtoul(s, &end, 10);
	if (strnlen(end, *len) < *len)
		return NULL;
	return end;
}

static enum sym_class classify(const char *name)
{
	const char *id;
	size_t len;

	if (prefix(name, "libcudart_static_") || prefix(name, "_ZN6cudart") ||
	    prefix(name, "__cudart"))
		return SYM_MARKER;
	if (prefix(name, "cuda") || prefix(name, "__cuda"))
		return SYM_RUNTIME;
	id = mangled_id(name, &len);
	if (id && (prefix(id, "__device_stub__") || prefix(id, "__cudaLaunchKernel_helper") ||
		   (len >= 4 && !strncmp(id, "cuda", 4))))
		return SYM_STUB;
	return SYM_OTHER;
}

/*
 * The names a device stub's kernel has on the host: _Z26__device_stub__Z5scalePffiPffi
 * is the stub of _Z5scalePffi, whose host function is _Z5scalePffi, or
 * scale for an extern "C" kernel. Appends them to @names.
 */
static void host_stub_names(const char *name, struct vec *names)
{
	const char *id, *k;
	size_t len, klen, n;
	char *s, **slot;
	char *end;

	id = mangled_id(name, &len);
	if (!id || !prefix(id, "__device_stub__"))
		return;
	k = id + strlen("__device_stub__");
	klen = len - strlen("__device_stub__");
	if (!klen || (slot = vec_push(names)) == NULL || !(s = malloc(klen + 2)))
		return;
	s[0] = '_';
	memcpy(s + 1, k, klen);
	s[klen + 1] = 0;
	*slot = s;
	if (k[0] == 'Z' && isdigit((unsigned char)k[1])) {
		n = strtoul(k + 1, &end, 10);
		if (!n || (size_t)(end - k) + n > klen || !(s = strndup(end, n)))
			return;
		if (!(slot = vec_push(names))) {
			free(s);
			return;
		}
		*slot = s;
	}
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int is_host_stub(const char *name, const struct vec *names)
{
	char *const *v = names->v;

	for (size_t i = 0; i < names->n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

/* Adds the ranges of one module's symbol table to @out. */
static void scan(Elf *elf, uintptr_t bias, void *arg)
{
	struct vec *out = arg;

	struct vec syms = { .size = sizeof(struct sym) }, names = { .size = sizeof(char *) };
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, use;
	Elf_Data *data;
	int interesting = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	scn = symtab ? symtab : dynsym;
	if (!scn || !gelf_getshdr(scn, &use) || !use.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return;
	for (size_t i = 0; i < use.sh_size / use.sh_entsize; i++) {
		GElf_Sym s;
		const char *name;
		struct sym *e;

		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx == SHN_UNDEF || !s.st_value || !s.st_size)
			continue;
		name = elf_strptr(elf, use.sh_link, s.st_name);
		if (!name || !(e = vec_push(&syms)))
			continue;
		e->lo = bias + s.st_value;
		e->hi = e->lo + s.st_size;
		e->name = name;
		e->cls = (uint8_t)classify(name);
		if (e->cls == SYM_STUB)
			host_stub_names(name, &names);
		if (e->cls == SYM_MARKER || e->cls == SYM_STUB)
			interesting = 1;
	}
	if (interesting) {
		struct sym *v = syms.v;
		size_t i = 0;

		for (size_t j = 0; names.n && j < syms.n; j++)
			if (v[j].cls == SYM_OTHER && is_host_stub(v[j].name, &names))
				v[j].cls = SYM_STUB;
		qsort(v, syms.n, sizeof(*v), by_addr);
		while (i < syms.n) {
			struct range *r;

			if (v[i].cls == SYM_STUB) {
				if ((r = vec_push(out)))
					*r = (struct range){ v[i].lo, v[i].hi };
				i++;
			} else if (v[i].cls == SYM_RUNTIME || v[i].cls == SYM_MARKER) {
				size_t j = i, count = 0;
				int marker = 0;
				uintptr_t hi = v[i].hi;

				/* Aliases share addresses: a run ends at the first
				 * other function that is not at the same place. */
				while (j < syms.n && (v[j].cls == SYM_RUNTIME || v[j].cls == SYM_MARKER ||
						      v[j].lo < hi)) {
					if (v[j].cls != SYM_OTHER) {
						marker |= v[j].cls == SYM_MARKER;
						count++;
					}
					if (v[j].hi > hi)
						hi = v[j].hi;
					j++;
				}
				if ((marker || count >= RUN_MIN) && (r = vec_push(out)))
					*r = (struct range){ v[i].lo, hi };
				i = j;
			} else {
				i++;
			}
		}
	}
	for (size_t i = 0; i < names.n; i++)
		free(((char **)names.v)[i]);
	free(names.v);
	free(syms.v);
}

/* Sorts and merges @ranges, then publishes them. */
static void publish(struct vec *ranges)
{
	struct elide_table *t;
	struct range *r = ranges->v;
	size_t m = 0;

	if (!ranges->n)
		return;
	qsort(r, ranges->n, sizeof(*r), by_lo);
	for (size_t i = 1; i < ranges->n; i++) {
		if (r[i].lo <= r[m].hi) {
			if (r[i].hi > r[m].hi)
				r[m].hi = r[i].hi;
		} else {
			r[++m] = r[i];
		}
	}
	m++;
	t = malloc(sizeof(*t) + m * sizeof(*r));
	if (!t)
		return;
	t->n = (unsigned)m;
	memcpy(t->r, r, m * sizeof(*r));
	t->lo = r[0].lo;
	t->hi = r[m - 1].hi;
	/* Pairs with the acquire loads of the callbacks; a table published
	 * earlier stays valid for its readers (never freed). */
	atomic_store_explicit(&table, t, memory_order_release);
}

void gt_cupti_elide__build(void)
{
	struct vec ranges = { .size = sizeof(struct range) };

	if (gt_modmap__each_user_elf(scan, &ranges))
		return;
	publish(&ranges);
	free(ranges.v);
}

int gt_cupti_elide__build_file(const char *path)
{
	struct vec ranges = { .size = sizeof(struct range) };
	int fd;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		scan(elf, 0, &ranges);
		elf_end(elf);
	}
	close(fd);
	publish(&ranges);
	free(ranges.v);
	return elf ? 0 : -1;
}

unsigned gt_cupti_elide__ranges(void)
{
	const struct elide_table *t = atomic_load_explicit(&table, memory_order_acquire);

	return t ? t->n : 0;
}

static int covers(const struct elide_table *t, uintptr_t pc)
{
	unsigned lo = 0, hi = t->n;

	if (pc < t->lo || pc >= t->hi)
		return 0;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pc < t->r[mid].lo)
			hi = mid;
		else if (pc >= t->r[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

int gt_cupti_elide__covers(uintptr_t pc)
{
	const struct elide_table *t = atomic_load_explicit(&table, memory_order_acquire);

	return t && covers(t, pc);
}

int gt_cupti_elide__filter(struct gt_frame *f, int n)
{
	const struct elide_table *t = atomic_load_explicit(&table, memory_order_acquire);
	int m = 0;

	if (!t)
		return n;
	for (int i = 0; i < n; i++)
		/* A return address: the call is the instruction before it. */
		if (!covers(t, f[i].ip - 1))
			f[m++] = f[i];
	return m;
}

/*
 * What nvcc and the runtime's headers inline into the program: the host
 * stub nvcc names after each kernel (known here by the kernels that ran),
 * the stubs of the generated <file>.cudafe1.stub.c, and the inline
 * functions of the runtime's own headers (cuda_runtime.h and the crt/
 * headers; not the libraries beside them, thrust, CUB, libcu++).
 */
int gt_cupti_elide__inline(const char *function, const char *file)
{
	static const char *const headers[] = {
		"cuda_runtime.h", "cuda_runtime_api.h", "device_functions.h", "host_runtime.h",
	};
	const char *base;

	if (function && (!strncmp(function, "__device_stub__", 15) ||
			 !strncmp(function, "__wrapper__device_stub_", 23) ||
			 !strncmp(function, "__cudaLaunchKernel_helper", 25) || gt_cupti__kernel_seen(function)))
		return 1;
	if (!file)
		return 0;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (strstr(base, ".cudafe1.stub.c") || strstr(file, "/crt/"))
		return 1;
	for (size_t i = 0; i < sizeof(headers) / sizeof(*headers); i++)
		if (!strcmp(base, headers[i]))
			return 1;
	return 0;
}
