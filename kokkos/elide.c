/* SPDX-License-Identifier: MIT */
/*
 * Kokkos' code that lives in the program's own modules. Kokkos is mostly
 * header templates: Kokkos::parallel_for, the ParallelFor<...>::execute of
 * each backend, the bodies of the OpenMP regions they start (clang names
 * them <mangled>.omp_outlined, gcc <mangled>._omp_fn.N) are instantiated in
 * the program, between the user's call and libkokkoscore or the OpenMP
 * runtime. Left in, they
 * would be the context of every label ("Kokkos::Impl::ParallelFor<...>::
 * execute > <kokkos parallel_for \"axpy\">") and a tower of template frames
 * under it; elided like a runtime library's frames, the label hangs under
 * the user's call of parallel_for and what runs below it under the label.
 *
 * The code is found once, when Kokkos initializes its tools, in the ELF
 * symbol table of every user module: the functions whose names are in
 * namespace Kokkos (mangled _ZN6Kokkos, _ZNK6Kokkos for const members,
 * _ZZN6Kokkos for lambdas of Kokkos' functions), less the bodies of OpenMP
 * regions: those run the user's functor (mostly inlined into them) and are
 * the frame the OpenMP stitching stops at, as in any OpenMP program. A
 * stripped module
 * has no .symtab: its Kokkos frames stay. A module loaded later is not
 * scanned.
 *
 * Inlined Kokkos code (Kokkos::parallel_for inlined into main) is claimed by
 * name for the symbolizer (kokkos/kokkos.c): the user's frame keeps the line
 * of its call.
 *
 * The table is immutable once published (release store; readers, signal
 * handlers included, load it with acquire), never freed.
 */
#include <gelf.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/modmap.h"
#include "core/unwind.h"
#include "kokkos/kokkos.h"

struct range {
	uintptr_t lo, hi;
};

struct elide_table {
	unsigned n;
	struct range r[];
};

static struct elide_table *_Atomic table;

struct ranges {
	struct range *v;
	size_t n, cap;
};

static int push(struct ranges *rs, uintptr_t lo, uintptr_t hi)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 256;
		struct range *grown = realloc(rs->v, cap * sizeof(*grown));

		if (!grown)
			return -1;
		rs->v = grown;
		rs->cap = cap;
	}
	rs->v[rs->n++] = (struct range){ lo, hi };
	return 0;
}

/* A mangled name in namespace Kokkos (the program's own namespaces
 * that merely contain "Kokkos" further in are not). */
static int kokkos_symbol(const char *name)
{
	static const char *const prefixes[] = { "_ZN6Kokkos", "_ZNK6Kokkos", "_ZZN6Kokkos",
						"_ZZNK6Kokkos" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static void scan(Elf *elf, uintptr_t bias, void *arg)
{
	struct ranges *out = arg;

	Elf_Scn *scn = NULL, *symtab = NULL;
	GElf_Shdr sh;
	Elf_Data *data;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			symtab = scn;
	/* No .symtab (stripped): the dynamic symbols rarely name template
	 * instantiations; nothing is elided. */
	if (!symtab || !gelf_getshdr(symtab, &sh) || !sh.sh_entsize ||
	    !(data = elf_getdata(symtab, NULL)))
		return;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx == SHN_UNDEF || !s.st_value || !s.st_size)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		/* The body of an OpenMP region Kokkos starts stays: it is the
		 * frame that runs the user's functor, and the boundary the
		 * runtime's stitching finds below the worker's region. */
		if (name && kokkos_symbol(name) && !strstr(name, ".omp_outlined") &&
		    !strstr(name, "._omp_fn.") && push(out, bias + s.st_value, bias + s.st_value + s.st_size))
			return;
	}
}

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int gt_kokkos_elide__covers(uintptr_t pc)
{
	/* Pairs with the release store of gt_kokkos_elide__build. */
	const struct elide_table *t = atomic_load_explicit(&table, memory_order_acquire);
	unsigned lo = 0, hi;

	if (!t)
		return 0;
	/* The last range starting at or below pc. */
	hi = t->n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (t->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && pc < t->r[lo - 1].hi;
}

unsigned gt_kokkos_elide__build(void)
{
	struct ranges rs = { 0 };
	struct elide_table *t;
	size_t m = 0;

	if (gt_modmap__each_user_elf(scan, &rs))
		return 0;
	if (!rs.n) {
		free(rs.v);
		return 0;
	}
	qsort(rs.v, rs.n, sizeof(*rs.v), by_lo);
	for (size_t i = 1; i < rs.n; i++) {
		if (rs.v[i].lo <= rs.v[m].hi) {
			if (rs.v[i].hi > rs.v[m].hi)
				rs.v[m].hi = rs.v[i].hi;
		} else {
			rs.v[++m] = rs.v[i];
		}
	}
	m++;
	t = malloc(sizeof(*t) + m * sizeof(*t->r));
	if (t) {
		t->n = (unsigned)m;
		memcpy(t->r, rs.v, m * sizeof(*t->r));
		/* Pairs with the acquire load of gt_kokkos_elide__covers; a
		 * table published before stays valid for its readers. */
		atomic_store_explicit(&table, t, memory_order_release);
		gt_unwind__set_elide_hook(gt_kokkos_elide__covers);
	}
	free(rs.v);
	return t ? (unsigned)m : 0;
}
