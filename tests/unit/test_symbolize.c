/* SPDX-License-Identifier: MIT */
/* The symbolizer on this very program: readable names, the vdso's module
 * name, and a real frame without inline information. */
#include <dlfcn.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "core/modmap.h"
#include "core/symbolize.h"
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
	gt_modmap__fini();
}

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
	  { "the vdso", vdso_module })
