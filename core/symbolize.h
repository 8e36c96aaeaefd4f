/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_SYMBOLIZE_H
#define GT_CORE_SYMBOLIZE_H

#include <stdint.h>

/*
 * Names, files and lines for addresses of this process, from the ELF symbol
 * tables and DWARF (elfutils libdw). Built once, at the end: never on a
 * measurement path.
 *
 * The modules are those of the load-module history (core/modmap.h): every
 * module the process had mapped while it was measured, those closed since
 * (dlclose) included, each at the address it had.
 *
 * One address can stand for several frames: code inlined into a function is
 * a chain of calls that were never made (gt_symbolizer__chain), and a
 * function that ended in a tail call left no frame of its own
 * (gt_symbolizer__tail_calls).
 */
struct gt_symbolizer;

enum gt_symbol_kind {
	GT_SYM_FRAME = 0,  /* a real frame: the function the address is in */
	GT_SYM_INLINE = 1, /* a function inlined into the frame before it */
	GT_SYM_TAIL = 2,   /* a frame left out by a tail call, rebuilt from call-site DWARF */
};

struct gt_symbol {
	const char *module;   /* path of the load module, or NULL */
	uint64_t offset;      /* pc - module load address */
	const char *function; /* readable (demangled) name; NULL if unknown */
	const char *linkage;  /* the symbol's own (mangled) name when it differs, else NULL */
	const char *file;     /* NULL if no line information */
	int line;
	enum gt_symbol_kind kind;
	int runtime; /* chain: a real frame that the backend's runtime test claims by name */
};

/* Strings returned are owned by the symbolizer and live until it is deleted. */
struct gt_symbolizer *gt_symbolizer__new(void);
void gt_symbolizer__delete(struct gt_symbolizer *s);
/* The real frame of pc only; always fills out; returns 0 if a function name
 * was found. For an inlined pc the function is the one the code was inlined
 * into, the line the innermost one (as the line table says). */
int gt_symbolizer__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out);
/*
 * The frames pc stands for, outermost first: the real frame, then each
 * inlined call to the innermost one; every frame's line is where it is at pc
 * (a caller's is the inlined call's line). Returns how many were written
 * (1 <= n <= max); with no inline information, one, as lookup.
 */
int gt_symbolizer__chain(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out, int max);
/*
 * The frames a tail call removed between a call at caller_pc (the call
 * instruction; a return address - 1) and the frame of the function the
 * callee_pc is in, outermost first: when the call site calls another
 * function than callee's, and call-site debug information names one path
 * of tail calls from that function to callee's. callee_pc 0 stands for a
 * function of another module (the runtime an operation's placeholder was
 * made in). 0 when none, or when the path is not unique.
 */
int gt_symbolizer__tail_calls(struct gt_symbolizer *s, uintptr_t caller_pc, uintptr_t callee_pc,
			      struct gt_symbol *out, int max);
/*
 * A device backend's test for code of its runtime that compilers inline into
 * the program (nvcc's launch stubs, the inline functions of the runtime's
 * headers), by the inlined function's readable name and the file it is
 * defined in (either may be NULL). An inlined call it claims ends the chain:
 * the frame that made it keeps the line of that call, as for a call into a
 * runtime library. Each backend adds its own (up to 4; one added twice is
 * kept once), before exit; read by the symbolizer at exit.
 */
void gt_symbolizer__set_runtime_inline(int (*is_runtime)(const char *function, const char *file));

/* name with C++ (Itanium ABI) names demangled and a symbol version
 * (`@@GLIBC_2.17`) dropped; the result is owned by the symbolizer. */
const char *gt_symbolizer__readable(struct gt_symbolizer *s, const char *name);

#endif
