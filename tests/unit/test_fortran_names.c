/* SPDX-License-Identifier: MIT */
/* core/fortran-names.c: flang's and gfortran's symbol names, as the
 * compilers' documented schemes write them, read back; names of other
 * schemes, and internal ones, left alone. */
#include <string.h>

#include "core/fortran-names.h"
#include "test.h"

static const char *dm(const char *name, const char *program)
{
	static char buf[256];

	return gt_fortran__demangle(name, program, buf, sizeof(buf)) ? buf : NULL;
}

static int is(const char *got, const char *want)
{
	if (got && !strcmp(got, want))
		return 1;
	fprintf(stderr, "got %s, expected %s\n", got ? got : "(none)", want);
	return 0;
}

static void flang_names(void)
{
	CHECK(is(dm("_QMphysicsPshared_step", NULL), "physics::shared_step"));
	CHECK(is(dm("_QPsolve", NULL), "solve"));
	CHECK(is(dm("_QMphysicsFalphaPinner", NULL), "physics::alpha::inner"));
	CHECK(is(dm("_QFsubPfun", NULL), "sub::fun"));
	CHECK(is(dm("_QMmodSs1modSs2modFsubPfun", NULL), "mod:s1mod:s2mod::sub::fun"));
	CHECK(is(dm("_QQmain", NULL), "main program"));
	CHECK(is(dm("_QQmain", "demo"), "demo"));
	/* The main program's internal procedure: under the program when its
	 * name is known. */
	CHECK(is(dm("_QFPinner", NULL), "inner"));
	CHECK(is(dm("_QFPinner", "demo"), "demo::inner"));
	/* Outlined OpenMP bodies: the procedure's name. */
	CHECK(is(dm("_QMphysicsPshared_step..omp_par", NULL), "physics::shared_step [omp parallel body]"));
	CHECK(is(dm("_QMphysicsPshared_step..omp_par.1", NULL), "physics::shared_step [omp parallel body]"));
	CHECK(is(dm("_QQmain..omp_par", "demo"), "demo [omp parallel body]"));
	CHECK(is(dm("_QPsolve.cold", NULL), "solve [clone .cold]"));
	/* Data: common blocks, variables, constants, types, a BLOCK's variable. */
	CHECK(is(dm("_QCwork", NULL), "/work/"));
	CHECK(is(dm("_QC", NULL), "//"));
	CHECK(is(dm("_QMmodEintvar", NULL), "mod::intvar"));
	CHECK(is(dm("_QMmodECpi", NULL), "mod::pi"));
	CHECK(is(dm("_QFsubEx", NULL), "sub::x"));
	CHECK(is(dm("_QFsubB2Ex", NULL), "sub::x"));
	CHECK(is(dm("_QMmymoduleTmytype", NULL), "mymodule::mytype"));
	CHECK(is(dm("_QTyourtypeK4KN6", NULL), "yourtype[kind 4,-6]"));
	CHECK(is(dm("_QFsubNtemps", NULL), "sub::temps"));
	/* Compiler-internal names, and what no scheme makes. */
	CHECK(!dm("_QQclX2F746D702F66742F742E66393000", NULL));
	CHECK(!dm("_QDTt", NULL));
	CHECK(!dm("_QMmodYt", NULL));
	CHECK(!dm("_Q", NULL));
	CHECK(!dm("_QM", NULL));
	CHECK(!dm("_QPaPb", NULL));
	CHECK(!dm("_QSsub", NULL));
	CHECK(!dm("_QB", NULL));
}

static void gfortran_names(void)
{
	CHECK(is(dm("__physics_MOD_shared_step", NULL), "physics::shared_step"));
	CHECK(is(dm("__my_mod_MOD_do_it", NULL), "my_mod::do_it"));
	CHECK(is(dm("MAIN__", NULL), "main program"));
	CHECK(is(dm("MAIN__", "sites"), "sites"));
	CHECK(is(dm("MAIN__._omp_fn.0", "sites"), "sites [clone ._omp_fn.0]"));
	CHECK(is(dm("__physics_MOD_step._omp_fn.1", NULL), "physics::step [clone ._omp_fn.1]"));
	CHECK(!dm("__physics_MOD_", NULL));
	CHECK(!dm("___MOD_x", NULL));
	CHECK(!dm("__libc_start_main", NULL));
	CHECK(!dm("MAIN_", NULL));
}

static void other_names(void)
{
	char buf[64];

	/* C and C++ names are none of Fortran's. */
	CHECK(!dm("main", NULL));
	CHECK(!dm("_ZN7physics4stepEv", NULL));
	CHECK(!dm("split.omp_outlined", NULL));
	CHECK(!dm("", NULL));
	/* gfortran's external procedures: `x_` read as `x` (the caller asks
	 * only in a Fortran unit); C's reserved and f2c's names are not. */
	CHECK(gt_fortran__external("ext_", buf, sizeof(buf)) == 3 && !strcmp(buf, "ext"));
	CHECK(gt_fortran__external("my_proc_", buf, sizeof(buf)) == 7 && !strcmp(buf, "my_proc"));
	CHECK(!gt_fortran__external("_start_", buf, sizeof(buf)));
	CHECK(!gt_fortran__external("x__", buf, sizeof(buf)));
	CHECK(!gt_fortran__external("_", buf, sizeof(buf)));
	CHECK(!gt_fortran__external("ext", buf, sizeof(buf)));
	/* flang names external procedures so too, and their outlined bodies. */
	CHECK(gt_fortran__external("conj_grad_..omp_par", buf, sizeof(buf)) &&
	      !strcmp(buf, "conj_grad [omp parallel body]"));
	CHECK(gt_fortran__external("f_._omp_fn.0", buf, sizeof(buf)) && !strcmp(buf, "f [clone ._omp_fn.0]"));
	CHECK(!gt_fortran__external("f._omp_fn.0", buf, sizeof(buf)));
	CHECK(!gt_fortran__external("._x_", buf, sizeof(buf)));
	CHECK(gt_fortran__wants_program("_QQmain") && gt_fortran__wants_program("MAIN__") &&
	      gt_fortran__wants_program("MAIN__._omp_fn.0") && gt_fortran__wants_program("_QFPinner") &&
	      gt_fortran__wants_program("_QQmain..omp_par"));
	CHECK(!gt_fortran__wants_program("_QFsubPfun") && !gt_fortran__wants_program("main") &&
	      !gt_fortran__wants_program("MAIN___x"));
}

static void bounded(void)
{
	char small[8];

	/* What does not fit is refused, never cut. */
	CHECK(!gt_fortran__demangle("_QMphysicsPshared_step", NULL, small, sizeof(small)));
	CHECK(small[0] == 0);
	CHECK(gt_fortran__demangle("_QPsolve", NULL, small, sizeof(small)) == 5);
	CHECK(!gt_fortran__demangle("_QPsolves", NULL, small, 6));
	CHECK(!gt_fortran__demangle("_QPsolve", NULL, small, 0));
	CHECK(!gt_fortran__external("abcdefghij_", small, sizeof(small)));
}

TEST_MAIN({ "flang", flang_names }, { "gfortran", gfortran_names }, { "other names", other_names },
	  { "bounded", bounded })
