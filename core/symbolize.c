/* SPDX-License-Identifier: MIT */
#include "core/symbolize.h"

#include <dlfcn.h>
#include <errno.h>
#include <dwarf.h>
#include <stdatomic.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/modmap.h"
#include "core/unwind.h"

/*
 * libdwfl finds a line through .debug_aranges, which clang does not emit by
 * default; for such modules we index the compile units' address ranges once
 * and look the line up in the right unit ourselves.
 */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

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
	struct cu_range *r;
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
	struct fn_range {
		Dwarf_Addr lo, hi;
		Dwarf_Die die;
	} *r;
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

static char *debuginfo_path;

/* Written once by a backend at its start (release), read at exit (acquire). */
static int (*_Atomic runtime_inline)(const char *function, const char *file);

void gt_symbolizer__set_runtime_inline(int (*is_runtime)(const char *function, const char *file))
{
	atomic_store_explicit(&runtime_inline, is_runtime, memory_order_release);
}

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

static Dwfl_Module *module_at(struct gt_symbolizer *s, uintptr_t pc)
{
	Dwfl_Module *mod = s->hist ? dwfl_addrmodule(s->hist, pc) : NULL;

	return mod ? mod : dwfl_addrmodule(s->dwfl, pc);
}

struct gt_symbolizer *gt_symbolizer__new(void)
{
	struct gt_symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
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
	at = strchr(name, '@');
	if (at && at != name)
		return own(s, name, name, (size_t)(at - name));
	return name;
}

/* ---- modules and units ---------------------------------------------------------- */

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

/* The compile unit that holds the module-relative address addr. */
static Dwarf_Die *cu_of(struct mod_index *mi, Dwarf_Addr addr)
{
	size_t lo = 0, hi = mi->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < mi->r[mid].lo)
			hi = mid;
		else if (addr >= mi->r[mid].hi)
			lo = mid + 1;
		else
			return &mi->r[mid].die;
	}
	return NULL;
}

/* pc's unit, for lines and scopes; *addr the address DWARF uses. */
static Dwarf_Die *unit_of(struct gt_symbolizer *s, Dwfl_Module *mod, uintptr_t pc, Dwarf_Addr *addr,
			  struct mod_index **out_mi)
{
	struct mod_index *mi = mod_index__get(s, mod);

	if (out_mi)
		*out_mi = mi;
	if (!mi)
		return NULL;
	*addr = pc - mi->bias;
	return cu_of(mi, *addr);
}

static const char *file_of(Dwarf_Die *cu, Dwarf_Word idx)
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
static const char *source_path(struct gt_symbolizer *s, Dwarf_Die *cu, const char *path)
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

static int udata_attr(Dwarf_Die *die, unsigned int name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formudata(&a, v) : -1;
}

static int flag_attr(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;
	bool v = false;

	return dwarf_attr_integrate(die, name, &a) && !dwarf_formflag(&a, &v) && v;
}

/* A function's symbol name: its linkage name, else its name. */
static const char *die_symbol(Dwarf_Die *die)
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

static void set_name(struct gt_symbolizer *s, struct gt_symbol *out, const char *sym)
{
	out->function = gt_symbolizer__readable(s, sym);
	out->linkage = out->function != sym ? sym : NULL;
}

static int lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out, Dwfl_Module **out_mod)
{
	Dwfl_Module *mod;
	Dwfl_Line *line;
	Dwarf_Addr base = 0;

	memset(out, 0, sizeof(*out));
	out->offset = pc;
	*out_mod = NULL;
	if (!s)
		return -1;
	mod = module_at(s, pc);
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
	set_name(s, out, dwfl_module_addrname(mod, pc));
	line = dwfl_module_getsrc(mod, pc);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			out->file = source_path(s, dwfl_linecu(line), file);
			out->line = lineno;
		}
	} else {
		Dwarf_Addr addr;
		Dwarf_Die *cu = unit_of(s, mod, pc, &addr, NULL);
		Dwarf_Line *dl = cu ? dwarf_getsrc_die(cu, addr) : NULL;
		int lineno = 0;

		if (dl && !dwarf_lineno(dl, &lineno) && lineno > 0) {
			out->file = source_path(s, cu, dwarf_linesrc(dl, NULL, NULL));
			out->line = out->file ? lineno : 0;
		}
	}
	return out->function ? 0 : -1;
}

int gt_symbolizer__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out)
{
	Dwfl_Module *mod;

	return lookup(s, pc, out, &mod);
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
		 flag_attr(&origin, DW_AT_artificial));
}

#define MAX_CALLS 64

static Dwarf_Addr entry_of(struct mod_index *mi, const char *sym);

/* An inlined call into a runtime's code: the function also has an
 * out-of-line copy among the runtime's ranges (gt_unwind__elided), or the
 * backend claims it by name or by the file that defines it. */
static int runtime_call(struct gt_symbolizer *s, Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Die *call)
{
	int (*claims)(const char *, const char *) =
		atomic_load_explicit(&runtime_inline, memory_order_acquire);
	struct mod_index *mi = mod_index__get(s, mod);
	const char *sym = die_symbol(call);
	Dwarf_Word decl = 0;
	Dwarf_Addr lo;

	if (sym && mi && (lo = entry_of(mi, sym)) && gt_unwind__elided(lo + mi->bias))
		return 1;
	if (!claims)
		return 0;
	return claims(sym ? gt_symbolizer__readable(s, sym) : NULL,
		      udata_attr(call, DW_AT_decl_file, &decl) ? NULL : file_of(cu, decl));
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
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		/* Definitions sit at the unit's level or in a namespace; a
		 * class holds only declarations (its members' definitions
		 * name them with DW_AT_specification), so its members are
		 * not walked: C++ headers declare thousands. */
		if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
			if (unit_fns__collect(u, &child))
				return -ENOMEM;
			continue;
		}
		if (tag != DW_TAG_subprogram)
			continue;
		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (u->n == u->cap) {
				size_t cap = u->cap ? u->cap * 2 : 64;
				struct fn_range *r = realloc(u->r, cap * sizeof(*r));

				if (!r)
					return -ENOMEM;
				u->r = r;
				u->cap = cap;
			}
			u->r[u->n++] = (struct fn_range){ .lo = lo, .hi = hi, .die = child };
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int by_fn_lo(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The out-of-line function of unit cu that holds addr, or NULL. */
static Dwarf_Die *function_at(struct mod_index *mi, Dwarf_Die *cu, Dwarf_Addr addr)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct unit_fns *u = NULL;
	size_t lo = 0, hi;

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
		else if (u->n)
			qsort(u->r, u->n, sizeof(*u->r), by_fn_lo);
	}
	hi = u->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < u->r[mid].lo)
			hi = mid;
		else if (addr >= u->r[mid].hi)
			lo = mid + 1;
		else
			return &u->r[mid].die;
	}
	return NULL;
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

	lookup(s, pc, &out[0], &mod);
	if (out[0].function) {
		int (*claims)(const char *, const char *) =
			atomic_load_explicit(&runtime_inline, memory_order_acquire);

		/* A runtime's function compiled into the program, out of line
		 * (the host stub of a kernel). */
		out[0].runtime = claims && claims(out[0].function, NULL);
	}
	if (!mod || max < 2)
		return 1;
	cu = unit_of(s, mod, pc, &addr, &mi);
	if (!cu)
		return 1;
	n_calls = inlined_calls(mi, cu, addr, calls, MAX_CALLS);
	for (int i = 0; i < n_calls; i++)
		if (user_inline(&calls[i]))
			inl[n_inl++] = i;
	/* From the outermost call into the runtime inward, nothing is the
	 * user's: the frame that made that call keeps its line. */
	for (int k = n_inl; k-- > 0;) {
		Dwarf_Word file = 0, line = 0;

		if (!runtime_call(s, mod, cu, &calls[inl[k]]))
			continue;
		if (!udata_attr(&calls[inl[k]], DW_AT_call_file, &file) &&
		    !udata_attr(&calls[inl[k]], DW_AT_call_line, &line) && line > 0) {
			cut_file = source_path(s, cu, file_of(cu, file));
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
		set_name(s, callee, die_symbol(call));
		if (!udata_attr(call, DW_AT_call_file, &file) && !udata_attr(call, DW_AT_call_line, &line) &&
		    line > 0) {
			caller->file = source_path(s, cu, file_of(cu, file));
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

			cs.tail = flag_attr(&child, DW_AT_call_tail_call) ||
				  flag_attr(&child, DW_AT_GNU_tail_call);
			if (cs.tail ? addr_attr(&child, DW_AT_call_pc, &cs.pc)
				    : addr_attr(&child, DW_AT_call_return_pc, &cs.pc) &&
					      addr_attr(&child, DW_AT_low_pc, &cs.pc))
				continue;
			if (!(dwarf_attr(&child, DW_AT_call_origin, &a) ||
			      dwarf_attr(&child, DW_AT_abstract_origin, &a)) ||
			    !dwarf_formref_die(&a, &callee))
				continue;
			cs.callee = die_symbol(&callee);
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
	Dwarf_Die *cu = cu_of(mi, addr);
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
static Dwarf_Addr entry_of(struct mod_index *mi, const char *sym)
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

		if (mi->cs[i].tail && mi->cs[i].fn_lo == fn_lo && (e = entry_of(mi, mi->cs[i].callee)) &&
		    e != fn_lo)
			next[n++] = e;
	}
	for (size_t k = 0; k < n; k++)
		call_sites__reach(mi, next[k], depth + 1);
	free(next);
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
		if (target ? !strcmp(cs->callee, target) : !entry_of(mi, cs->callee)) {
			if ((*n_paths)++ == 0) {
				path[depth] = cs;
				*len = depth + 1;
			}
		} else if (depth + 1 < TAIL_DEPTH) {
			Dwarf_Addr next = entry_of(mi, cs->callee);
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
	lookup(s, entry + sym.st_size - 1, out, &m);
	out->kind = GT_SYM_TAIL;
	return 1;
}

int gt_symbolizer__tail_calls(struct gt_symbolizer *s, uintptr_t caller_pc, uintptr_t callee_pc,
			      struct gt_symbol *out, int max)
{
	const struct call_site *path[TAIL_DEPTH], *cs;
	Dwfl_Module *mod = s ? module_at(s, caller_pc) : NULL;
	struct mod_index *mi;
	const char *callee_sym;
	Dwarf_Addr fn_lo;
	int len = 0, n_paths = 0;

	if (!mod || (callee_pc && module_at(s, callee_pc) != mod))
		return 0;
	mi = mod_index__get(s, mod);
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
	fn_lo = entry_of(mi, cs->callee);
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
		lookup(s, path[i]->pc + mi->bias, &out[i], &m);
		out[i].kind = GT_SYM_TAIL;
	}
	return len;
}
