/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_SYMBOLIZE_INTERNAL_H
#define GT_CORE_SYMBOLIZE_INTERNAL_H

/*
 * Shared by the symbolizer's files: symbolize.c (modules, units, names,
 * lines), symbolize-inline.c (inline chains) and symbolize-tail.c (tail
 * calls).
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdint.h>

#include "core/symbolize.h"

/*
 * An address range of a DIE (module-relative). libdwfl finds a line through
 * .debug_aranges, which clang does not emit by default, so the units' ranges
 * are indexed once and a line is looked up in the right unit; a unit's
 * functions are indexed the same way for inline chains.
 */
struct die_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

/* Appends die's ranges to *r (*n used, *cap allocated): 0 or -ENOMEM. */
int gt_sym__ranges_add(struct die_range **r, size_t *n, size_t *cap, Dwarf_Die *die);
/* Sorts r[n] for gt_sym__ranges_find. */
void gt_sym__ranges_sort(struct die_range *r, size_t n);
/* The DIE of sorted r[n] whose range holds addr, or NULL. */
Dwarf_Die *gt_sym__ranges_find(struct die_range *r, size_t n, Dwarf_Addr addr);

/* A call site of a unit (DW_TAG_call_site): where it returns to, or for a
 * tail call where it jumps from, and the name of the function it calls. */
struct call_site {
	Dwarf_Addr pc;    /* DW_AT_call_return_pc, or DW_AT_call_pc of a tail call */
	Dwarf_Addr fn_lo; /* entry of the function that holds it */
	const char *callee;
	int tail;
};

struct mod_index {
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct die_range *r; /* the units' ranges */
	size_t n;
	struct call_site *cs; /* by pc, of the units in cs_units */
	size_t n_cs, cap_cs;
	Dwarf_Off *cs_units; /* units whose call sites are in cs */
	size_t n_cs_units;
	struct fn_sym {
		const char *name;
		Dwarf_Addr lo; /* module-relative entry */
	} *fns;		   /* the module's functions, by name */
	size_t n_fns;
	int fns_built;
	struct unit_fns *units; /* the units whose functions are indexed */
	size_t n_units;
};

/* The out-of-line functions of one unit, by address: where an address's
 * inlined calls are looked for (a walk of one function's scopes instead of
 * the whole unit's tree, which in C++ holds every declaration it included). */
struct unit_fns {
	Dwarf_Off cu; /* the unit's offset */
	struct die_range *r;
	size_t n, cap;
};

/* Strings made here (demangled names), freed with the symbolizer. */
struct owned {
	struct owned *next;
	const char *from; /* the name it was made from */
	char text[];
};

struct gt_symbolizer {
	Dwfl *hist; /* the history's modules, from their files; may be NULL */
	Dwfl *dwfl; /* the modules mapped now, as /proc says */
	struct mod_index *mods;
	size_t n_mods;
	struct owned *strings;
	char *(*demangle)(const char *, char *, size_t *, int *);
	void *libstdcxx;
};

Dwfl_Module *gt_sym__module_at(struct gt_symbolizer *s, uintptr_t pc);
/* The index of mod's units (built at the first call); NULL when out of memory. */
struct mod_index *gt_sym__mod_index_get(struct gt_symbolizer *s, Dwfl_Module *mod);
/* The compile unit that holds the module-relative address addr. */
Dwarf_Die *gt_sym__cu_of(struct mod_index *mi, Dwarf_Addr addr);
/* pc's unit, for lines and scopes; *addr the address DWARF uses. */
Dwarf_Die *gt_sym__unit_of(struct gt_symbolizer *s, Dwfl_Module *mod, uintptr_t pc, Dwarf_Addr *addr,
			   struct mod_index **out_mi);
const char *gt_sym__file_of(Dwarf_Die *cu, Dwarf_Word idx);
const char *gt_sym__source_path(struct gt_symbolizer *s, Dwarf_Die *cu, const char *path);
int gt_sym__udata_attr(Dwarf_Die *die, unsigned int name, Dwarf_Word *v);
int gt_sym__flag_attr(Dwarf_Die *die, unsigned int name);
const char *gt_sym__die_symbol(Dwarf_Die *die);
void gt_sym__set_name(struct gt_symbolizer *s, struct gt_symbol *out, const char *sym);
/* In a unit DWARF says is Fortran, sym's readable name made now, where it
 * needs the unit: the main program by its name, gfortran's external `x_`
 * as `x`; gt_symbolizer__readable then returns it. Nothing in other units. */
void gt_sym__fortran_in_unit(struct gt_symbolizer *s, Dwarf_Die *cu, const char *sym);
int gt_sym__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out, Dwfl_Module **out_mod);
/* The entry (module-relative) of the function the module defines as sym;
 * 0 when it defines none (one of another module). */
Dwarf_Addr gt_sym__entry_of(struct mod_index *mi, const char *sym);

#endif
