/* SPDX-License-Identifier: MIT */
#include "core/symbolize.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

/*
 * libdwfl finds a line through .debug_aranges, which clang does not emit by
 * default; for such modules we index the compile units' address ranges once
 * and look the line up in the right unit ourselves.
 */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

struct mod_index {
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct cu_range *r;
	size_t n;
};

struct gt_symbolizer {
	Dwfl *dwfl;
	struct mod_index *mods;
	size_t n_mods;
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct gt_symbolizer *gt_symbolizer__new(void)
{
	struct gt_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl)
		goto out_free;
	dwfl_report_begin(s->dwfl);
	if (dwfl_linux_proc_report(s->dwfl, getpid()) != 0)
		goto out_end;
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		goto out_end;
	return s;

out_end:
	gt_warn("symbols", "cannot read this process's modules: %s", dwfl_errmsg(-1));
	dwfl_end(s->dwfl);
out_free:
	free(s);
	return NULL;
}

void gt_symbolizer__delete(struct gt_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_mods; i++)
		free(s->mods[i].r);
	free(s->mods);
	dwfl_end(s->dwfl);
	free(s);
}

static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct mod_index *mod_index__get(struct gt_symbolizer *s, Dwfl_Module *mod)
{
	struct mod_index *grown, *mi;
	Dwarf_Die *cu = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i].mod == mod)
			return &s->mods[i];
	grown = realloc(s->mods, (s->n_mods + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	s->mods = grown;
	mi = &s->mods[s->n_mods++];
	memset(mi, 0, sizeof(*mi));
	mi->mod = mod;
	while ((cu = dwfl_module_nextcu(mod, cu, &mi->bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (mi->n == cap) {
				struct cu_range *r;

				cap = cap ? cap * 2 : 16;
				r = realloc(mi->r, cap * sizeof(*r));
				if (!r)
					return mi;
				mi->r = r;
			}
			mi->r[mi->n].lo = lo;
			mi->r[mi->n].hi = hi;
			mi->r[mi->n].die = *cu;
			mi->n++;
		}
	}
	if (mi->n) /* a module without ranges has no array to sort */
		qsort(mi->r, mi->n, sizeof(*mi->r), by_lo);
	return mi;
}

static Dwarf_Line *line_by_cu(struct gt_symbolizer *s, Dwfl_Module *mod, uintptr_t pc)
{
	struct mod_index *mi = mod_index__get(s, mod);
	size_t lo = 0, hi;
	Dwarf_Addr addr;

	if (!mi)
		return NULL;
	addr = pc - mi->bias;
	hi = mi->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < mi->r[mid].lo)
			hi = mid;
		else if (addr >= mi->r[mid].hi)
			lo = mid + 1;
		else
			return dwarf_getsrc_die(&mi->r[mid].die, addr);
	}
	return NULL;
}

int gt_symbolizer__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out)
{
	Dwfl_Module *mod;
	Dwfl_Line *line;
	Dwarf_Addr base = 0;

	memset(out, 0, sizeof(*out));
	out->offset = pc;
	if (!s)
		return -1;
	mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod)
		return -1;
	out->module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* The file-relative address (what addr2line takes): pc - load bias. */
	if (dwfl_module_getelf(mod, &base))
		out->offset = pc - base;
	out->function = dwfl_module_addrname(mod, pc);
	line = dwfl_module_getsrc(mod, pc);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			out->file = file;
			out->line = lineno;
		}
	} else {
		Dwarf_Line *dl = line_by_cu(s, mod, pc);
		int lineno = 0;

		if (dl && !dwarf_lineno(dl, &lineno) && lineno > 0) {
			out->file = dwarf_linesrc(dl, NULL, NULL);
			out->line = out->file ? lineno : 0;
		}
	}
	return out->function ? 0 : -1;
}
