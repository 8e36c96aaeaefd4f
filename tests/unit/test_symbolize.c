/* SPDX-License-Identifier: MIT */
/* The symbolizer on this very program: readable names, the vdso's module
 * name, and a real frame without inline information. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "core/modmap.h"
#include "core/symbolize.h"
#include "core/unwind.h"
#include "test.h"

static void readable_names(void)
{
	struct gt_symbolizer *s = gt_symbolizer__new();

	CHECK(s);
	CHECK(!strcmp(gt_symbolizer__readable(s, "_ZN7physics6SolverIdE4stepEi"),
		      "physics::Solver<double>::step(int)"));
	CHECK(!strcmp(gt_symbolizer__readable(s, "_ZL5scalePdi.omp_outlined"),
		      "scale(double*, int) [clone .omp_outlined]"));
	CHECK(!strcmp(gt_symbolizer__readable(s, "clock_gettime@@GLIBC_2.17"), "clock_gettime"));
	CHECK(!strcmp(gt_symbolizer__readable(s, "memcpy@GLIBC_2.2.5"), "memcpy"));
	CHECK(!strcmp(gt_symbolizer__readable(s, "main"), "main"));
	/* Not a mangled name, though it looks like one: left as it is. */
	CHECK(!strcmp(gt_symbolizer__readable(s, "_Zfoo"), "_Zfoo"));
	/* Fortran's names, as C++'s: flang's and gfortran's module procedures,
	 * and a main program with no DWARF to name it (core/fortran-names.h). */
	CHECK(!strcmp(gt_symbolizer__readable(s, "_QMphysicsPshared_step"), "physics::shared_step"));
	CHECK(!strcmp(gt_symbolizer__readable(s, "__physics_MOD_shared_step"), "physics::shared_step"));
	CHECK(!strcmp(gt_symbolizer__readable(s, "MAIN__"), "main program"));
	/* Plain `x_` outside a Fortran unit: left as it is. */
	CHECK(!strcmp(gt_symbolizer__readable(s, "ext_"), "ext_"));
	/* Asked twice, one answer. */
	CHECK(gt_symbolizer__readable(s, "_Z4workPdi") == gt_symbolizer__readable(s, "_Z4workPdi"));
	gt_symbolizer__delete(s);
}

__attribute__((noinline)) static int plain(int x)
{
	return x * 3 + 1;
}

static void frame_and_chain(void)
{
	struct gt_symbolizer *s;
	struct gt_symbol sym[8];
	int n;

	CHECK(gt_modmap__init() == 0);
	s = gt_symbolizer__new();
	CHECK(s);
	CHECK(plain(1) == 4);
	n = gt_symbolizer__chain(s, (uintptr_t)&plain + 1, sym, 8);
	CHECK_EQ_U(n, 1);
	CHECK(sym[0].function && !strcmp(sym[0].function, "plain"));
	CHECK(!sym[0].linkage);
	CHECK(sym[0].kind == GT_SYM_FRAME);
	CHECK(sym[0].file && strstr(sym[0].file, "test_symbolize.c"));
	gt_symbolizer__delete(s);
}

/* ---- inline chains ---- */

__attribute__((noinline)) static uintptr_t where_from(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) uintptr_t rt_helper(void)
{
	uintptr_t ra = where_from(); /* LINE_IN_HELPER */

	/* Code after the call: no tail call. */
	__asm__ volatile("" ::: "memory");
	return ra;
}

static inline __attribute__((always_inline)) uintptr_t user_helper(void)
{
	return rt_helper() + 0; /* LINE_CALL_RT */
}

__attribute__((noinline)) static uintptr_t user_fn(void)
{
	return user_helper(); /* LINE_CALL_USER */
}

static int claims_rt(const char *function, const char *file)
{
	(void)file;
	return function && !strcmp(function, "rt_helper");
}

static int claims_where(const char *function, const char *file)
{
	(void)file;
	return function && !strcmp(function, "where_from");
}

static int line_of(const char *marker)
{
	FILE *f = fopen(__FILE__, "r");
	char buf[256];
	int n = 0, hit = 0;

	while (f && fgets(buf, sizeof(buf), f) && !hit)
		if (++n, strstr(buf, marker) && !strstr(buf, "line_of"))
			hit = n;
	if (f)
		fclose(f);
	return hit;
}

/* A pc two inlined calls deep: both calls at their lines; a runtime's
 * inlined call ends the chain at the line of that call. */
static void inline_chain(void)
{
	uintptr_t pc = user_fn() - 1;
	struct gt_symbolizer *s;
	struct gt_symbol sym[8];
	int n;

	CHECK(gt_modmap__init() == 0);
	s = gt_symbolizer__new();
	CHECK(s);
	n = gt_symbolizer__chain(s, pc, sym, 8);
	CHECK_EQ_U(n, 3);
	CHECK(!strcmp(sym[0].function, "user_fn") && sym[0].kind == GT_SYM_FRAME);
	CHECK_EQ_U(sym[0].line, line_of("LINE_CALL_USER"));
	CHECK(!strcmp(sym[1].function, "user_helper") && sym[1].kind == GT_SYM_INLINE);
	CHECK_EQ_U(sym[1].line, line_of("LINE_CALL_RT"));
	CHECK(!strcmp(sym[2].function, "rt_helper") && sym[2].kind == GT_SYM_INLINE);
	CHECK_EQ_U(sym[2].line, line_of("LINE_IN_HELPER"));
	CHECK(!sym[0].runtime);
	gt_symbolizer__set_runtime_inline(claims_rt);
	n = gt_symbolizer__chain(s, pc, sym, 8);
	CHECK_EQ_U(n, 2);
	CHECK(!strcmp(sym[1].function, "user_helper"));
	CHECK_EQ_U(sym[1].line, line_of("LINE_CALL_RT"));
	CHECK(!sym[0].runtime);
	/* A real frame the test claims by name. */
	CHECK(gt_symbolizer__chain(s, (uintptr_t)&where_from + 1, sym, 8) == 1);
	CHECK(!sym[0].runtime);
	gt_symbolizer__set_runtime_inline(claims_where);
	CHECK(gt_symbolizer__chain(s, (uintptr_t)&where_from + 1, sym, 8) == 1);
	CHECK(sym[0].runtime);
	gt_symbolizer__set_runtime_inline(NULL);
	gt_symbolizer__delete(s);
}

/* ---- tail calls as GCC describes them (tail_gcc.c) ---- */

#if defined(GT_TAIL_GCC)

uintptr_t gt_tailgcc_main(int x, int rt);
uintptr_t gt_tailgcc_fn(int which);

static int line_in(const char *path, const char *marker)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	int n = 0, hit = 0;

	while (f && fgets(buf, sizeof(buf), f) && !hit)
		if (++n, strstr(buf, marker))
			hit = n;
	if (f)
		fclose(f);
	return hit;
}

/* gt_tailgcc_rt as runtime code linked into the program. */
static int covers_rt(uintptr_t pc)
{
	return pc >= gt_tailgcc_fn(1) && pc < gt_tailgcc_fn(1) + 16;
}

/* The frame a GCC tail call left out, at the line of its jump: to a
 * function of the program, and to runtime code linked into it (the
 * operation made there, callee_pc 0). */
static void tail_call_gcc(void)
{
	uintptr_t ra = gt_tailgcc_main(5, 0), ra_rt = gt_tailgcc_main(5, 1);
	struct gt_symbolizer *s;
	struct gt_symbol sym[4];
	int n;

	CHECK(gt_modmap__init() == 0);
	s = gt_symbolizer__new();
	CHECK(s);
	n = gt_symbolizer__tail_calls(s, ra - 1, gt_tailgcc_fn(0) + 1, sym, 4);
	CHECK_EQ_U(n, 1);
	CHECK(sym[0].function && !strcmp(sym[0].function, "gt_tailgcc_relay"));
	CHECK(sym[0].kind == GT_SYM_TAIL);
	CHECK(sym[0].file && strstr(sym[0].file, "tail_gcc.c"));
	CHECK_EQ_U(sym[0].line, line_in(GT_TAIL_GCC_SRC, "GCC_TAIL_JUMP"));
	gt_unwind__set_elide_hook(covers_rt);
	n = gt_symbolizer__tail_calls(s, ra_rt - 1, 0, sym, 4);
	CHECK_EQ_U(n, 1);
	CHECK(sym[0].function && !strcmp(sym[0].function, "gt_tailgcc_relay_rt"));
	CHECK(sym[0].kind == GT_SYM_TAIL);
	CHECK_EQ_U(sym[0].line, line_in(GT_TAIL_GCC_SRC, "GCC_RT_JUMP"));
	gt_symbolizer__delete(s);
}
#else
static void tail_call_gcc(void)
{
	fprintf(stderr, "no gcc: skipped\n");
}
#endif

static void vdso_module(void)
{
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	struct gt_symbolizer *s;
	struct gt_symbol sym;
	void *h;
	uintptr_t fn;

	if (!vdso)
		return; /* no vdso here: nothing to name */
	/* The dynamic loader lists the vdso under its soname. */
	h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	CHECK(h);
	fn = (uintptr_t)dlsym(h, "__vdso_clock_gettime");
	CHECK(fn);
	s = gt_symbolizer__new();
	CHECK(s);
	gt_symbolizer__lookup(s, fn, &sym);
	/* One name in every process: no pid in it. */
	CHECK(sym.module && !strcmp(sym.module, "[vdso]"));
	gt_symbolizer__delete(s);
}

TEST_MAIN({ "readable names", readable_names }, { "a frame without inlining", frame_and_chain },
	  { "inline chains", inline_chain },
	  { "tail calls (GCC)", tail_call_gcc }, { "the vdso", vdso_module })
