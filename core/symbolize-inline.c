/* SPDX-License-Identifier: MIT */
/*
 * The calls inlined at an address, outermost to innermost, each with the
 * line it was called from (gt_symbolizer__chain).
 */
#include <dwarf.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/symbolize-internal.h"
#include "core/unwind.h"

#define RUNTIME_INLINE_HOOKS 4

/* Each slot written once by a backend at its start (release), read at exit
 * (acquire): NULL until its hook is in. n_runtime_inline hands out slots. */
static int (*_Atomic runtime_inline[RUNTIME_INLINE_HOOKS])(const char *function, const char *file);
static atomic_uint n_runtime_inline;

void gt_symbolizer__set_runtime_inline(int (*is_runtime)(const char *function, const char *file))
{
	unsigned n = atomic_load_explicit(&n_runtime_inline, memory_order_relaxed), slot;

	for (unsigned i = 0; i < n && i < RUNTIME_INLINE_HOOKS; i++)
		if (atomic_load_explicit(&runtime_inline[i], memory_order_acquire) == is_runtime)
			return;
	/* relaxed: the slot index only; readers pair with the release store. */
	slot = atomic_fetch_add_explicit(&n_runtime_inline, 1, memory_order_relaxed);
	if (slot < RUNTIME_INLINE_HOOKS)
		atomic_store_explicit(&runtime_inline[slot], is_runtime, memory_order_release);
}

/* Whether a backend claims @function (or @file) as its runtime's code. */
static int runtime_claims(const char *function, const char *file)
{
	for (unsigned i = 0; i < RUNTIME_INLINE_HOOKS; i++) {
		/* Pairs with the release store of gt_symbolizer__set_runtime_inline. */
		int (*claims)(const char *, const char *) =
			atomic_load_explicit(&runtime_inline[i], memory_order_acquire);

		if (!claims)
			break;
		if (claims(function, file))
			return 1;
	}
	return 0;
}

/*
 * Headers whose functions are a runtime's code compiled into the program:
 * NVTX v3 is header-only, and its API functions (static inline, in the
 * program's module) stand between the program and the tool's handler. Their
 * frames, inlined or not, are elided as a runtime library's would be.
 */
static const char *const runtime_headers[] = { "/nvtx3/" };

static int runtime_header(const char *file)
{
	for (size_t i = 0; file && i < sizeof(runtime_headers) / sizeof(*runtime_headers); i++)
		if (strstr(file, runtime_headers[i]))
			return 1;
	return 0;
}

/* ---- inline chains -------------------------------------------------------------- */

static int function_scope(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram || tag == DW_TAG_entry_point;
}

/* A call the user wrote: not one of a compiler-made function (the body of
 * an outlined region, which clang inlines into the region's entry). */
static int user_inline(Dwarf_Die *call)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;

	return !(dwarf_attr(call, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &origin) &&
		 gt_sym__flag_attr(&origin, DW_AT_artificial));
}

#define MAX_CALLS 64

Dwarf_Addr gt_sym__entry_of(struct mod_index *mi, const char *sym);

/* An inlined call into a runtime's code: the function also has an
 * out-of-line copy among the runtime's ranges (gt_unwind__elided), or the
 * backend claims it by name or by the file that defines it. */
static int runtime_call(struct gt_symbolizer *s, Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Die *call)
{
	struct mod_index *mi = gt_sym__mod_index_get(s, mod);
	const char *sym = gt_sym__die_symbol(call);
	Dwarf_Word decl = 0;
	Dwarf_Addr lo;

	const char *file;

	if (sym && mi && (lo = gt_sym__entry_of(mi, sym)) && gt_unwind__elided(lo + mi->bias))
		return 1;
	file = gt_sym__udata_attr(call, DW_AT_decl_file, &decl) ? NULL : gt_sym__file_of(cu, decl);
	if (runtime_header(file))
		return 1;
	/* Before the first readable name is made for sym: it is the one kept. */
	gt_sym__fortran_in_unit(s, cu, sym);
	return runtime_claims(sym ? gt_symbolizer__readable(s, sym) : NULL, file);
}

/* Adds the out-of-line functions under die (the unit, a namespace) to u;
 * 0 or -ENOMEM. */
static int unit_fns__collect(struct unit_fns *u, Dwarf_Die *die)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		/* Definitions sit at the unit's level or in a namespace; a
		 * class holds only declarations (its members' definitions
		 * name them with DW_AT_specification), so its members are
		 * not walked: C++ headers declare thousands. */
		if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
			if (unit_fns__collect(u, &child))
				return -ENOMEM;
			continue;
		}
		if (tag == DW_TAG_subprogram && gt_sym__ranges_add(&u->r, &u->n, &u->cap, &child))
			return -ENOMEM;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The out-of-line function of unit cu that holds addr, or NULL. */
static Dwarf_Die *function_at(struct mod_index *mi, Dwarf_Die *cu, Dwarf_Addr addr)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct unit_fns *u = NULL;

	for (size_t i = 0; i < mi->n_units && !u; i++)
		if (mi->units[i].cu == off)
			u = &mi->units[i];
	if (!u) {
		struct unit_fns *grown = realloc(mi->units, (mi->n_units + 1) * sizeof(*grown));

		if (!grown)
			return NULL;
		mi->units = grown;
		u = &mi->units[mi->n_units++];
		memset(u, 0, sizeof(*u));
		u->cu = off;
		if (unit_fns__collect(u, cu))
			u->n = 0; /* out of memory: the unit's scopes are walked instead */
		else
			gt_sym__ranges_sort(u->r, u->n);
	}
	return gt_sym__ranges_find(u->r, u->n, addr);
}

static int has_pc(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/*
 * Appends to path the inlined calls under die that hold addr, outermost
 * first, descending through the one scope that holds it (a block without
 * addresses of its own is looked into). Returns whether it found one.
 */
static int scopes__descend(Dwarf_Die *die, Dwarf_Addr addr, Dwarf_Die *path, int *n, int max)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), before = *n;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block && tag != DW_TAG_try_block &&
		    tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, addr) == 1) {
			if (tag == DW_TAG_inlined_subroutine && *n < max)
				path[(*n)++] = child;
			scopes__descend(&child, addr, path, n, max);
			return 1;
		}
		if (!has_pc(&child) && scopes__descend(&child, addr, path, n, max) && *n > before)
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/*
 * The inlined calls that hold the module-relative address addr, innermost
 * first. The function that holds addr comes from the unit's index; its
 * scopes are walked down to addr. A function the index does not have (one
 * nested in another) takes the general way: dwarf_getscopes gives the
 * innermost call's scopes in its abstract definition, and the concrete
 * calls around it come from dwarf_getscopes_die, one inlined call at a time
 * (as eu-addr2line -i walks them).
 */
static int inlined_calls(struct mod_index *mi, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *calls, int max)
{
	Dwarf_Die *scopes = NULL, cur, *fn = mi ? function_at(mi, cu, addr) : NULL;
	int n = 0, k, found = 0, n_scopes;

	if (fn) {
		Dwarf_Die path[MAX_CALLS];
		int m = 0;

		scopes__descend(fn, addr, path, &m, MAX_CALLS);
		for (k = m - 1; k >= 0 && n < max; k--)
			calls[n++] = path[k];
		return n;
	}
	n_scopes = dwarf_getscopes(cu, addr, &scopes);
	for (k = 0; k < n_scopes; k++)
		if (function_scope(&scopes[k]))
			break;
	if (k < n_scopes && dwarf_tag(&scopes[k]) == DW_TAG_inlined_subroutine) {
		cur = scopes[k];
		found = 1;
	}
	free(scopes);
	while (found && n < max) {
		int m;

		calls[n++] = cur;
		scopes = NULL;
		m = dwarf_getscopes_die(&cur, &scopes);
		found = 0;
		for (k = 1; k < m; k++) {
			if (!function_scope(&scopes[k]))
				continue;
			if (dwarf_tag(&scopes[k]) == DW_TAG_inlined_subroutine) {
				cur = scopes[k];
				found = 1;
			}
			break;
		}
		free(scopes);
	}
	return n;
}

int gt_symbolizer__chain(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out, int max)
{
	Dwarf_Die calls[MAX_CALLS], *cu;
	int inl[MAX_CALLS];
	int n_calls, n_inl = 0, n = 1, cut = 0, cut_line = 0;
	const char *cut_file = NULL;
	struct mod_index *mi;
	Dwfl_Module *mod;
	Dwarf_Addr addr;

	gt_sym__lookup(s, pc, &out[0], &mod);
	/* A runtime's function compiled into the program, out of line (the
	 * host stub of a kernel). */
	if (out[0].function)
		out[0].runtime = runtime_claims(out[0].function, NULL);
	if (!mod || max < 2)
		return 1;
	cu = gt_sym__unit_of(s, mod, pc, &addr, &mi);
	if (!cu)
		return 1;
	n_calls = inlined_calls(mi, cu, addr, calls, MAX_CALLS);
	/* A runtime header's function compiled out of line (at -O0): its
	 * own code, no call inlined into it, is at a line of that header. */
	if (!n_calls && runtime_header(out[0].file))
		out[0].runtime = 1;
	for (int i = 0; i < n_calls; i++)
		if (user_inline(&calls[i]))
			inl[n_inl++] = i;
	/* From the outermost call into the runtime inward, nothing is the
	 * user's: the frame that made that call keeps its line. */
	for (int k = n_inl; k-- > 0;) {
		Dwarf_Word file = 0, line = 0;

		if (!runtime_call(s, mod, cu, &calls[inl[k]]))
			continue;
		if (!gt_sym__udata_attr(&calls[inl[k]], DW_AT_call_file, &file) &&
		    !gt_sym__udata_attr(&calls[inl[k]], DW_AT_call_line, &line) && line > 0) {
			cut_file = gt_sym__source_path(s, cu, gt_sym__file_of(cu, file));
			cut_line = (int)line;
		}
		memmove(inl, inl + k + 1, (size_t)(n_inl - k - 1) * sizeof(*inl));
		n_inl -= k + 1;
		cut = 1;
		break;
	}
	if (n_inl > max - 1)
		n_inl = max - 1; /* the innermost calls are kept */
	/* out[0], the real frame, is at the outermost inlined call's line;
	 * out[k] is the (n_inl - k)-th inlined function, at the line of the
	 * call inlined into it, or for the innermost at pc's own line. A call
	 * left out (compiler-made) lends its frame the line of the call it
	 * holds. */
	for (int k = n_inl; k >= 1; k--) {
		Dwarf_Die *call = &calls[inl[k - 1]];
		struct gt_symbol *caller = &out[n_inl - k];
		struct gt_symbol *callee = &out[n_inl - k + 1];
		Dwarf_Word file = 0, line = 0;

		*callee = *caller; /* module, offset; file and line, for the innermost */
		callee->kind = GT_SYM_INLINE;
		gt_sym__fortran_in_unit(s, cu, gt_sym__die_symbol(call));
		gt_sym__set_name(s, callee, gt_sym__die_symbol(call));
		if (!gt_sym__udata_attr(call, DW_AT_call_file, &file) && !gt_sym__udata_attr(call, DW_AT_call_line, &line) &&
		    line > 0) {
			caller->file = gt_sym__source_path(s, cu, gt_sym__file_of(cu, file));
			caller->line = caller->file ? (int)line : 0;
		}
		n++;
	}
	if (cut) {
		out[n - 1].file = cut_file;
		out[n - 1].line = cut_file ? cut_line : 0;
	}
	return n;
}

