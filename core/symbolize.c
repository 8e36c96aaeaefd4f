/* SPDX-License-Identifier: MIT */
#include "core/symbolize.h"
#include "core/symbolize-internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <dwarf.h>
#include <stdatomic.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fortran-names.h"
#include "core/log.h"
#include "core/modmap.h"
#include "core/thread.h"
#include "core/unwind.h"

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/*
 * The modules of the history, reported from their files at the address they
 * had, newest first: one that overlaps a module reported already (its range
 * was reused) is refused by libdwfl. They come before what is mapped at the
 * end: a library closed during the run may have left its addresses to one
 * opened after the measurement (by the symbolizer itself, for one).
 */
static void report_seen(const char *path, uintptr_t bias, void *arg)
{
	Dwfl *dwfl = arg;

	if (path[0] != '/')
		return; /* the vdso: from memory, as mapped now */
	dwfl_report_elf(dwfl, path, path, -1, bias, false);
}

Dwfl_Module *gt_sym__module_at(struct gt_symbolizer *s, uintptr_t pc)
{
	Dwfl_Module *mod = s->hist ? dwfl_addrmodule(s->hist, pc) : NULL;

	return mod ? mod : dwfl_addrmodule(s->dwfl, pc);
}

static void symbolize__touch_dw(void)
{
	dwarf_errno();
}

static void symbolize__touch_elf(void)
{
	elf_errno();
}

struct gt_symbolizer *gt_symbolizer__new(void)
{
	struct gt_symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	/* libdw and libelf keep their error codes in dynamic thread-local
	 * storage, touched at their first error, which comes when memory
	 * runs out: touch both now, or symbolize nothing. */
	if (gt_thread__tls_touch(gt_thread__tls_size((const void *)(uintptr_t)&dwarf_errno), symbolize__touch_dw) ||
	    gt_thread__tls_touch(gt_thread__tls_size((const void *)(uintptr_t)&elf_errno), symbolize__touch_elf))
		goto out_free;
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl)
		goto out_free;
	dwfl_report_begin(s->dwfl);
	/* dwfl_linux_proc_report returns an errno value (not a libdw error)
	 * when /proc/PID/maps cannot be read. */
	err = dwfl_linux_proc_report(s->dwfl, getpid());
	if (err > 0) {
		gt_warn("symbols", "cannot read this process's modules: %s", strerror(err));
		goto out_dwfl;
	}
	if (err || dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		goto out_end;
	s->hist = dwfl_begin(&proc_callbacks);
	if (s->hist) {
		dwfl_report_begin(s->hist);
		gt_modmap__history(report_seen, s->hist);
		dwfl_report_end(s->hist, NULL, NULL);
	}
	return s;

out_end:
	gt_warn("symbols", "cannot read this process's modules: %s", dwfl_errmsg(-1));
out_dwfl:
	dwfl_end(s->dwfl);
out_free:
	free(s);
	return NULL;
}

void gt_symbolizer__delete(struct gt_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_mods; i++) {
		free(s->mods[i].r);
		free(s->mods[i].cs);
		free(s->mods[i].cs_units);
		free(s->mods[i].fns);
		for (size_t u = 0; u < s->mods[i].n_units; u++)
			free(s->mods[i].units[u].r);
		free(s->mods[i].units);
	}
	free(s->mods);
	while (s->strings) {
		struct owned *next = s->strings->next;

		free(s->strings);
		s->strings = next;
	}
	if (s->libstdcxx)
		dlclose(s->libstdcxx);
	if (s->hist)
		dwfl_end(s->hist);
	dwfl_end(s->dwfl);
	free(s);
}

/* ---- names ---------------------------------------------------------------------- */

static const char *own(struct gt_symbolizer *s, const char *from, const char *text, size_t len)
{
	struct owned *o = malloc(sizeof(*o) + len + 1);

	if (!o)
		return from;
	memcpy(o->text, text, len);
	o->text[len] = 0;
	o->from = from;
	o->next = s->strings;
	s->strings = o;
	return o->text;
}

const char *gt_symbolizer__readable(struct gt_symbolizer *s, const char *name)
{
	const char *at;
	char *d;
	int status = -1;

	if (!name || !s)
		return name;
	for (struct owned *o = s->strings; o; o = o->next)
		if (o->from == name)
			return o->text;
	if (name[0] == '_' && name[1] == 'Z') {
		/* libstdc++'s demangler (the one GDB and perf use, through
		 * libiberty): every C++ program has it loaded already. */
		if (!s->demangle && !s->libstdcxx) {
			s->libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (s->libstdcxx)
				*(void **)&s->demangle = dlsym(s->libstdcxx, "__cxa_demangle");
		}
		d = s->demangle ? s->demangle(name, NULL, NULL, &status) : NULL;
		if (d && status == 0) {
			const char *r = own(s, name, d, strlen(d));

			free(d);
			return r;
		}
		free(d);
	}
	/* Fortran's schemes, where no DWARF is needed to tell them (without
	 * DWARF the main program is "main program"; gt_sym__fortran_in_unit
	 * names it, and reads `x_`, when DWARF says the unit is Fortran). */
	{
		char buf[1024];
		size_t n = gt_fortran__demangle(name, NULL, buf, sizeof(buf));

		if (n)
			return own(s, name, buf, n);
	}
	at = strchr(name, '@');
	if (at && at != name)
		return own(s, name, name, (size_t)(at - name));
	return name;
}

static int fortran_unit(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_Fortran77:
	case DW_LANG_Fortran90:
	case DW_LANG_Fortran95:
	case DW_LANG_Fortran03:
	case DW_LANG_Fortran08:
	case 0x2d: /* DW_LANG_Fortran18: newer than elfutils 0.188's dwarf.h */
		return 1;
	default:
		return 0;
	}
}

/* The name of the unit's main program (gfortran: the DW_AT_name of the
 * subprogram marked DW_AT_main_subprogram), or NULL. flang 19 names it
 * `_QQmain` there too, which tells nothing. */
static const char *program_name(Dwarf_Die *cu)
{
	Dwarf_Die d;
	Dwarf_Attribute a;

	if (dwarf_child(cu, &d) != 0)
		return NULL;
	do {
		const char *name;

		if (dwarf_tag(&d) != DW_TAG_subprogram || !gt_sym__flag_attr(&d, DW_AT_main_subprogram))
			continue;
		name = dwarf_attr(&d, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
		return name && !gt_fortran__wants_program(name) ? name : NULL;
	} while (dwarf_siblingof(&d, &d) == 0);
	return NULL;
}

/* Whether sym's Fortran name may need its unit: a main program's, or
 * `x_` (before a suffix) that only a Fortran unit makes a procedure's. */
static int fortran_in_unit_wanted(const char *sym)
{
	size_t n = sym ? strcspn(sym, ".") : 0;

	return sym && (gt_fortran__wants_program(sym) || (n > 0 && sym[n - 1] == '_'));
}

/* Names are kept by the symbol's address (own()), the first one made for
 * it: whoever asks first with the unit at hand decides, and every later
 * gt_symbolizer__readable returns the same. */
void gt_sym__fortran_in_unit(struct gt_symbolizer *s, Dwarf_Die *cu, const char *sym)
{
	char buf[1024];
	size_t n = 0;

	if (!sym || !cu)
		return;
	for (struct owned *o = s->strings; o; o = o->next)
		if (o->from == sym)
			return; /* made already: one name for one symbol */
	if (!fortran_unit(cu))
		return;
	if (gt_fortran__wants_program(sym)) {
		const char *program = program_name(cu);

		if (program)
			n = gt_fortran__demangle(sym, program, buf, sizeof(buf));
	} else if (!gt_fortran__demangle(sym, NULL, buf, sizeof(buf))) {
		n = gt_fortran__external(sym, buf, sizeof(buf));
	}
	if (n)
		own(s, sym, buf, n);
}

/* ---- modules and units ---------------------------------------------------------- */

static int by_lo(const void *a, const void *b)
{
	const struct die_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int gt_sym__ranges_add(struct die_range **r, size_t *n, size_t *cap, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			struct die_range *grown = realloc(*r, c * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			*r = grown;
			*cap = c;
		}
		(*r)[(*n)++] = (struct die_range){ .lo = lo, .hi = hi, .die = *die };
	}
	return 0;
}

void gt_sym__ranges_sort(struct die_range *r, size_t n)
{
	if (n) /* no array to sort without ranges */
		qsort(r, n, sizeof(*r), by_lo);
}

Dwarf_Die *gt_sym__ranges_find(struct die_range *r, size_t n, Dwarf_Addr addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < r[mid].lo)
			hi = mid;
		else if (addr >= r[mid].hi)
			lo = mid + 1;
		else
			return &r[mid].die;
	}
	return NULL;
}

struct mod_index *gt_sym__mod_index_get(struct gt_symbolizer *s, Dwfl_Module *mod)
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
	while ((cu = dwfl_module_nextcu(mod, cu, &mi->bias)))
		if (gt_sym__ranges_add(&mi->r, &mi->n, &cap, cu))
			break; /* out of memory: the units found so far */
	gt_sym__ranges_sort(mi->r, mi->n);
	return mi;
}

/* The compile unit that holds the module-relative address addr. */
Dwarf_Die *gt_sym__cu_of(struct mod_index *mi, Dwarf_Addr addr)
{
	return gt_sym__ranges_find(mi->r, mi->n, addr);
}

/* pc's unit, for lines and scopes; *addr the address DWARF uses. */
Dwarf_Die *gt_sym__unit_of(struct gt_symbolizer *s, Dwfl_Module *mod, uintptr_t pc, Dwarf_Addr *addr,
			  struct mod_index **out_mi)
{
	struct mod_index *mi = gt_sym__mod_index_get(s, mod);

	if (out_mi)
		*out_mi = mi;
	if (!mi)
		return NULL;
	*addr = pc - mi->bias;
	return gt_sym__cu_of(mi, *addr);
}

const char *gt_sym__file_of(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/*
 * A source path as the user knows it: DWARF 5 line tables may name files
 * relative to a directory that is itself relative ("../src/x.c"), which
 * libdw leaves so; those are joined to the unit's compilation directory.
 * "." and ".." steps are taken ("/b/x/../../src/x.c" is "/src/x.c").
 */
const char *gt_sym__source_path(struct gt_symbolizer *s, Dwarf_Die *cu, const char *path)
{
	char buf[4096];
	const char *dir;
	size_t len = 0;
	Dwarf_Attribute a;

	if (!path || (path[0] == '/' && !strstr(path, "/./") && !strstr(path, "/../")))
		return path;
	for (struct owned *o = s->strings; o; o = o->next)
		if (o->from == path)
			return o->text;
	dir = path[0] == '/' ? "" : cu && dwarf_attr(cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL;
	if (!dir || (dir[0] && dir[0] != '/') || strlen(dir) + strlen(path) + 2 > sizeof(buf))
		return path;
	/* Components one at a time onto buf: "." skipped, ".." drops one. */
	for (const char *part = dir, *next; part; part = next ? next : NULL) {
		for (const char *p = part; *p;) {
			const char *slash = strchr(p, '/');
			size_t n = slash ? (size_t)(slash - p) : strlen(p);

			if (n == 0 || (n == 1 && p[0] == '.')) {
				/* nothing */
			} else if (n == 2 && p[0] == '.' && p[1] == '.') {
				while (len > 0 && buf[len - 1] != '/')
					len--;
				if (len > 0)
					len--;
			} else {
				buf[len++] = '/';
				memcpy(buf + len, p, n);
				len += n;
			}
			p += n;
			while (*p == '/')
				p++;
		}
		next = part == dir ? path : NULL;
	}
	return own(s, path, buf, len);
}

int gt_sym__udata_attr(Dwarf_Die *die, unsigned int name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formudata(&a, v) : -1;
}

int gt_sym__flag_attr(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;
	bool v = false;

	return dwarf_attr_integrate(die, name, &a) && !dwarf_formflag(&a, &v) && v;
}

/* A function's symbol name: its linkage name, else its name. */
const char *gt_sym__die_symbol(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) {
		name = dwarf_formstring(&a);
		if (name)
			return name;
	}
	return dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
}

void gt_sym__set_name(struct gt_symbolizer *s, struct gt_symbol *out, const char *sym)
{
	out->function = gt_symbolizer__readable(s, sym);
	out->linkage = out->function != sym ? sym : NULL;
}

int gt_sym__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out, Dwfl_Module **out_mod)
{
	Dwfl_Module *mod;
	Dwfl_Line *line;
	Dwarf_Addr base = 0;
	const char *sym;

	memset(out, 0, sizeof(*out));
	out->offset = pc;
	*out_mod = NULL;
	if (!s)
		return -1;
	mod = gt_sym__module_at(s, pc);
	if (!mod)
		return -1;
	*out_mod = mod;
	out->module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* libdwfl names the vdso "[vdso: PID]": one name in every process. */
	if (out->module && !strncmp(out->module, "[vdso", 5))
		out->module = "[vdso]";
	/* The file-relative address (what addr2line takes): pc - load bias. */
	if (dwfl_module_getelf(mod, &base))
		out->offset = pc - base;
	sym = dwfl_module_addrname(mod, pc);
	if (fortran_in_unit_wanted(sym)) {
		Dwarf_Addr addr;

		gt_sym__fortran_in_unit(s, gt_sym__unit_of(s, mod, pc, &addr, NULL), sym);
	}
	gt_sym__set_name(s, out, sym);
	line = dwfl_module_getsrc(mod, pc);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			out->file = gt_sym__source_path(s, dwfl_linecu(line), file);
			out->line = lineno;
		}
	} else {
		Dwarf_Addr addr;
		Dwarf_Die *cu = gt_sym__unit_of(s, mod, pc, &addr, NULL);
		Dwarf_Line *dl = cu ? dwarf_getsrc_die(cu, addr) : NULL;
		int lineno = 0;

		if (dl && !dwarf_lineno(dl, &lineno) && lineno > 0) {
			out->file = gt_sym__source_path(s, cu, dwarf_linesrc(dl, NULL, NULL));
			out->line = out->file ? lineno : 0;
		}
	}
	return out->function ? 0 : -1;
}

int gt_symbolizer__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out)
{
	Dwfl_Module *mod;

	return gt_sym__lookup(s, pc, out, &mod);
}

