/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_FORTRAN_NAMES_H
#define GT_CORE_FORTRAN_NAMES_H

#include <stddef.h>

/*
 * Fortran symbol names read as the program's author wrote them, from the
 * compilers' documented schemes. Pure string work: what needs DWARF (the
 * main program's name, whether a unit is Fortran) is the symbolizer's
 * (core/symbolize.c), which passes it in.
 *
 * flang (LLVM; flang/docs/BijectiveInternalNameUniquing.md): `_Q` then
 * scopes from the outermost, each an upper-case tag and a lower-case name:
 *   _QMphysicsPshared_step       physics::shared_step   (module procedure)
 *   _QPsolve                     solve                  (external procedure)
 *   _QMphysicsFalphaPinner       physics::alpha::inner  (internal procedure)
 *   _QMmodSsubPf                 mod:sub::f             (submodule, as Fortran writes it)
 *   _QFPinner                    PROGRAM::inner, or inner (the main program's)
 *   _QQmain                      PROGRAM, or "main program"
 *   _QCwork / _QC                /work/ / // (common blocks)
 *   _QMmodEx, _QMmodECpi         mod::x, mod::pi        (variables, constants)
 *   _QMmodTt, _QTtK4KN6          mod::t, t[kind 4,-6]   (derived types)
 *   _QFsubB2Ex                   sub::x                 (a BLOCK's variable)
 * flang's outlined OpenMP parallel bodies, `<name>..omp_par[.N]`, read
 * `<readable name> [omp parallel body]`: the OpenMP stitching already hangs
 * them under `<omp parallel>`, so the procedure's name is what tells a user
 * where the body is. Other compiler-internal names (`_QQcl...`, dispatch
 * tables `D`, type descriptors `Y`, `X` combinations) are no user's name:
 * they are left as they are.
 *
 * gfortran: `__<module>_MOD_<proc>` is `module::proc`; `MAIN__`, its main
 * program, is PROGRAM or "main program". gfortran's external procedures
 * are `<proc>_` (flang's too, for gfortran's ABI), which many C functions
 * also look like: they are read as Fortran only in a unit DWARF says is
 * Fortran (gt_fortran__external), never by this function. A suffix another pass added (`._omp_fn.0`, `.cold`)
 * follows as `[clone <suffix>]`, as the C++ demangler writes it.
 *
 * No readable name has parentheses, so nothing takes a Fortran name for a
 * C++ one with a parameter list (core/text.c gt_text__args).
 */

/*
 * The readable form of name into out[cap], NUL-terminated, with program
 * (the main program's name; NULL when unknown) where the main program is
 * meant. Returns its length, or 0 when name follows none of the schemes
 * above or out is too small.
 */
size_t gt_fortran__demangle(const char *name, const char *program, char *out, size_t cap);

/* 1 when name's readable form has the main program's name in it: the main
 * program's symbol (`_QQmain`, `MAIN__`), a body outlined from it, and
 * flang's procedures internal to it (`_QFP...`). */
int gt_fortran__wants_program(const char *name);

/*
 * An external procedure `<proc>_` (gfortran's, and flang's, which names
 * them as gfortran does) in a Fortran unit: `<proc>` into out[cap], with a
 * suffix as gt_fortran__demangle writes it (`<proc>_..omp_par` is `<proc>
 * [omp parallel body]`); its length, or 0 when name is not of that form (no
 * underscore before the suffix, a C runtime's `_x_`, f2c's `x__`).
 */
size_t gt_fortran__external(const char *name, char *out, size_t cap);

#endif
