/* SPDX-License-Identifier: MIT */
/*
 * Frames that tail calls left off the stack, from the call-site information
 * (DW_TAG_call_site) of the units the search reaches (gt_symbolizer__tail_calls).
 */
#include <dwarf.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/symbolize-internal.h"
#include "core/unwind.h"

/* ---- tail calls ----------------------------------------------------------------- */

static int by_pc(const void *a, const void *b)
{
	const struct call_site *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int addr_attr(Dwarf_Die *die, unsigned int name, Dwarf_Addr *v)
{
	Dwarf_Attribute a;

	return dwarf_attr(die, name, &a) ? dwarf_formaddr(&a, v) : -1;
}

/*
 * Where a tail call jumps from. Clang gives the jump's own address
 * (DW_AT_call_pc); GCC (and so nvcc's host code) gives only the address
 * after it (DW_AT_call_return_pc, DW_AT_low_pc before DWARF 5), whose line
 * is whatever code the compiler placed next: one byte back is inside the
 * jump, at its line. Either way the pc lies in the jump instruction.
 */
static int tail_jump_pc(Dwarf_Die *die, Dwarf_Addr *pc)
{
	if (!addr_attr(die, DW_AT_call_pc, pc))
		return 0;
	if (addr_attr(die, DW_AT_call_return_pc, pc) && addr_attr(die, DW_AT_low_pc, pc))
		return -1;
	if (!*pc)
		return -1;
	*pc -= 1;
	return 0;
}

struct cs_collect {
	struct mod_index *mi;
	size_t cap;
};

static void collect_call_sites(struct cs_collect *c, Dwarf_Die *die, Dwarf_Addr fn_lo)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr lo;

		if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
			struct call_site cs = { .fn_lo = fn_lo };
			Dwarf_Attribute a;
			Dwarf_Die callee;

			cs.tail = gt_sym__flag_attr(&child, DW_AT_call_tail_call) ||
				  gt_sym__flag_attr(&child, DW_AT_GNU_tail_call);
			if (cs.tail ? tail_jump_pc(&child, &cs.pc)
				    : addr_attr(&child, DW_AT_call_return_pc, &cs.pc) &&
					      addr_attr(&child, DW_AT_low_pc, &cs.pc))
				continue;
			if (!(dwarf_attr(&child, DW_AT_call_origin, &a) ||
			      dwarf_attr(&child, DW_AT_abstract_origin, &a)) ||
			    !dwarf_formref_die(&a, &callee))
				continue;
			cs.callee = gt_sym__die_symbol(&callee);
			if (!cs.callee)
				continue;
			if (c->mi->n_cs == c->cap) {
				size_t cap = c->cap ? c->cap * 2 : 64;
				struct call_site *grown = realloc(c->mi->cs, cap * sizeof(*grown));

				if (!grown)
					return;
				c->mi->cs = grown;
				c->cap = cap;
			}
			c->mi->cs[c->mi->n_cs++] = cs;
			continue;
		}
		if (tag == DW_TAG_subprogram && dwarf_lowpc(&child, &lo) == 0)
			collect_call_sites(c, &child, lo);
		else if (tag == DW_TAG_subprogram || tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			 tag == DW_TAG_structure_type)
			collect_call_sites(c, &child, 0);
		else if (fn_lo && (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine))
			collect_call_sites(c, &child, fn_lo);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The call sites of the unit that holds addr (module-relative) join
 * mi->cs, which may move. */
static void call_sites__unit(struct mod_index *mi, Dwarf_Addr addr)
{
	struct cs_collect c = { .mi = mi, .cap = mi->cap_cs };
	Dwarf_Die *cu = gt_sym__cu_of(mi, addr);
	Dwarf_Off off, *grown;

	if (!cu)
		return;
	off = dwarf_dieoffset(cu);
	for (size_t i = 0; i < mi->n_cs_units; i++)
		if (mi->cs_units[i] == off)
			return;
	grown = realloc(mi->cs_units, (mi->n_cs_units + 1) * sizeof(*grown));
	if (!grown)
		return;
	mi->cs_units = grown;
	mi->cs_units[mi->n_cs_units++] = off;
	collect_call_sites(&c, cu, 0);
	mi->cap_cs = c.cap;
	if (mi->n_cs)
		qsort(mi->cs, mi->n_cs, sizeof(*mi->cs), by_pc);
}

static const struct call_site *call_site_at(struct mod_index *mi, Dwarf_Addr pc, int tail)
{
	size_t lo = 0, hi = mi->n_cs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (mi->cs[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < mi->n_cs && mi->cs[lo].pc == pc; lo++)
		if (mi->cs[lo].tail == tail)
			return &mi->cs[lo];
	return NULL;
}

/* The entry (module-relative) of the function called sym, or 0. */
static int fn_by_name(const void *a, const void *b)
{
	const struct fn_sym *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The entry (module-relative) of the function the module defines as sym;
 * 0 when it defines none (one of another module). */
Dwarf_Addr gt_sym__entry_of(struct mod_index *mi, const char *sym)
{
	struct fn_sym key = { .name = sym }, *f;

	if (!mi->fns_built) {
		int n = dwfl_module_getsymtab(mi->mod);

		mi->fns_built = 1;
		mi->fns = n > 0 ? calloc((size_t)n, sizeof(*mi->fns)) : NULL;
		for (int i = 1; mi->fns && i < n; i++) {
			GElf_Sym es;
			GElf_Addr addr;
			const char *name = dwfl_module_getsym_info(mi->mod, i, &es, &addr, NULL, NULL, NULL);

			if (name && GELF_ST_TYPE(es.st_info) == STT_FUNC && es.st_value) {
				mi->fns[mi->n_fns].name = name;
				mi->fns[mi->n_fns].lo = addr - mi->bias;
				mi->n_fns++;
			}
		}
		if (mi->n_fns)
			qsort(mi->fns, mi->n_fns, sizeof(*mi->fns), fn_by_name);
	}
	f = mi->n_fns ? bsearch(&key, mi->fns, mi->n_fns, sizeof(*mi->fns), fn_by_name) : NULL;
	return f ? f->lo : 0;
}

#define TAIL_DEPTH 4

/* The call sites of the function at fn_lo and of every function its tail
 * calls reach within TAIL_DEPTH are in mi->cs (their units read): what
 * tail_paths walks, read before it walks, since reading moves mi->cs. */
static void call_sites__reach(struct mod_index *mi, Dwarf_Addr fn_lo, int depth)
{
	Dwarf_Addr *next;
	size_t n = 0;

	call_sites__unit(mi, fn_lo);
	if (depth + 1 >= TAIL_DEPTH)
		return;
	for (size_t i = 0; i < mi->n_cs; i++)
		n += mi->cs[i].tail && mi->cs[i].fn_lo == fn_lo;
	next = n ? malloc(n * sizeof(*next)) : NULL;
	if (!next)
		return;
	n = 0;
	for (size_t i = 0; i < mi->n_cs; i++) {
		Dwarf_Addr e;

		if (mi->cs[i].tail && mi->cs[i].fn_lo == fn_lo && (e = gt_sym__entry_of(mi, mi->cs[i].callee)) &&
		    e != fn_lo)
			next[n++] = e;
	}
	for (size_t k = 0; k < n; k++)
		call_sites__reach(mi, next[k], depth + 1);
	free(next);
}

/* Whether a call to sym leaves the user's code: a function of another
 * module, or runtime code linked into this one (nvcc links the CUDA runtime
 * statically, so a tail call to cudaMemcpy stays in the module). */
static int goes_to_runtime(struct mod_index *mi, const char *sym)
{
	Dwarf_Addr e = gt_sym__entry_of(mi, sym);

	return !e || gt_unwind__elided(e + mi->bias);
}

/* Depth-first: paths of tail calls from the function at fn_lo to target (NULL:
 * to a function of another module); path[] gets the tail call sites of the
 * first, *n_paths counts them all. */
static void tail_paths(struct mod_index *mi, Dwarf_Addr fn_lo, const char *target, int depth,
		       const struct call_site **path, int *len, int *n_paths)
{
	for (size_t i = 0; i < mi->n_cs && *n_paths < 2; i++) {
		const struct call_site *cs = &mi->cs[i];

		if (!cs->tail || cs->fn_lo != fn_lo)
			continue;
		if (target ? !strcmp(cs->callee, target) : goes_to_runtime(mi, cs->callee)) {
			if ((*n_paths)++ == 0) {
				path[depth] = cs;
				*len = depth + 1;
			}
		} else if (depth + 1 < TAIL_DEPTH) {
			Dwarf_Addr next = gt_sym__entry_of(mi, cs->callee);
			int before = *n_paths;

			if (next && next != fn_lo) {
				tail_paths(mi, next, target, depth + 1, path, len, n_paths);
				if (before == 0 && *n_paths > 0)
					path[depth] = cs;
			}
		}
	}
}

/*
 * A function called for an operation that a runtime then made, with no tail
 * call in its call-site information: it jumped to the runtime itself, a call
 * compilers do not describe (clang's __kmpc_fork_call, for one). Unless it
 * has tail calls of its own (then which one led there is not known), it is
 * the frame left out, at the line of its end, where such a jump is.
 */
static int jump_to_runtime(struct gt_symbolizer *s, struct mod_index *mi, Dwarf_Addr fn_lo,
			   struct gt_symbol *out)
{
	uintptr_t entry = fn_lo + mi->bias;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Module *m;

	for (size_t i = 0; i < mi->n_cs; i++)
		if (mi->cs[i].tail && mi->cs[i].fn_lo == fn_lo)
			return 0;
	if (gt_unwind__elided(entry) ||
	    !dwfl_module_addrinfo(mi->mod, entry, &off, &sym, NULL, NULL, NULL) || off || !sym.st_size)
		return 0;
	gt_sym__lookup(s, entry + sym.st_size - 1, out, &m);
	out->kind = GT_SYM_TAIL;
	return 1;
}

int gt_symbolizer__tail_calls(struct gt_symbolizer *s, uintptr_t caller_pc, uintptr_t callee_pc,
			      struct gt_symbol *out, int max)
{
	const struct call_site *path[TAIL_DEPTH], *cs;
	Dwfl_Module *mod = s ? gt_sym__module_at(s, caller_pc) : NULL;
	struct mod_index *mi;
	const char *callee_sym;
	Dwarf_Addr fn_lo;
	int len = 0, n_paths = 0;

	if (!mod || (callee_pc && gt_sym__module_at(s, callee_pc) != mod))
		return 0;
	mi = gt_sym__mod_index_get(s, mod);
	if (!mi)
		return 0;
	/* The call returns to caller_pc + 1. */
	call_sites__unit(mi, caller_pc + 1 - mi->bias);
	cs = call_site_at(mi, caller_pc + 1 - mi->bias, 0);
	callee_sym = callee_pc ? dwfl_module_addrname(mod, callee_pc) : NULL;
	if (!cs || (callee_pc && (!callee_sym || !strcmp(cs->callee, callee_sym))))
		return 0;
	/* A call to another module (callee_pc 0: the runtime the operation
	 * went to) left no frame out. */
	fn_lo = gt_sym__entry_of(mi, cs->callee);
	if (!fn_lo)
		return 0;
	call_sites__reach(mi, fn_lo, 0);
	tail_paths(mi, fn_lo, callee_sym, 0, path, &len, &n_paths);
	if (!callee_pc && !n_paths && max > 0)
		return jump_to_runtime(s, mi, fn_lo, out);
	if (n_paths != 1 || len > max)
		return 0;
	for (int i = 0; i < len; i++) {
		Dwfl_Module *m;

		/* Runtime code in the user's module (nvcc's launch stubs):
		 * left out like the runtime's frames. */
		if (gt_unwind__elided(path[i]->pc + mi->bias))
			return 0;
		/* The function the tail call left, at the line of its jump. */
		gt_sym__lookup(s, path[i]->pc + mi->bias, &out[i], &m);
		out[i].kind = GT_SYM_TAIL;
	}
	return len;
}

