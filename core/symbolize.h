/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_SYMBOLIZE_H
#define GT_CORE_SYMBOLIZE_H

#include <stdint.h>

/*
 * Names, files and lines for addresses of this process, from the ELF symbol
 * tables and DWARF line tables (elfutils libdw). Built once, at the end:
 * never on a measurement path.
 */
struct gt_symbolizer;

struct gt_symbol {
	const char *module;   /* path of the load module, or NULL */
	uint64_t offset;      /* pc - module load address */
	const char *function; /* NULL if unknown; owned by the symbolizer */
	const char *file;     /* NULL if no line information */
	int line;
};

struct gt_symbolizer *gt_symbolizer__new(void);
void gt_symbolizer__delete(struct gt_symbolizer *s);
/* Always fills out; returns 0 if a function name was found. */
int gt_symbolizer__lookup(struct gt_symbolizer *s, uintptr_t pc, struct gt_symbol *out);

#endif
