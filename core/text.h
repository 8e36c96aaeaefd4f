/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_TEXT_H
#define GT_CORE_TEXT_H

/*
 * Text for people and scripts, shared by the report the library writes at
 * exit and the `gputool` command: growable strings, display widths, how a
 * profile node reads, JSON strings.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/profile.h"


struct gt_sb {
	char *s;
	size_t len, cap;
	int oom;
};

void gt_sb__addn(struct gt_sb *b, const char *s, size_t n);
void gt_sb__add(struct gt_sb *b, const char *s);
__attribute__((format(printf, 2, 3))) void gt_sb__addf(struct gt_sb *b, const char *fmt, ...);
/* Control characters become '?': names come from files. */
void gt_sb__add_clean(struct gt_sb *b, const char *s);
void gt_sb__add_fit(struct gt_sb *b, const char *s, size_t width);
size_t gt_cols(const char *s);
const char *gt_base_name(const char *path);

enum {
	GT_LABEL_SHORT_FILE = 1, /* base name of the file */
	GT_LABEL_NO_LINE = 2,    /* the function, not the line */
	GT_LABEL_NAME_ONLY = 4,  /* the function (or module+offset) alone, no file */
	GT_LABEL_ELIDE_ARGS = 8, /* a C++ parameter list reads "(…)" */
};

/* How node i reads: "func (file.c:12)", "<omp parallel>", "lib.so+0x12";
 * the root reads "<program>". A frame with a file but no line reads
 * "func (file.c, line ?)"; one in the program (not a shared library) with
 * no file at all "func (line ?)", since "[module]" would read as a module
 * the user never wrote; one in a shared library "func [libc.so.6]". The one
 * builder of node labels: report/paths.h joins them into contexts. */
void gt_label(struct gt_sb *b, const struct gt_profile *t, uint32_t i, int flags);

/* Whether the load module at path is a shared library ("libm.so.6",
 * "[vdso]"), not a program. */
int gt_text__is_library(const char *path);
/* Where a C++ name's parameter list starts and ends: [*open, *close] are
 * the parentheses of the last top-level list ("f(int, int) const" gives
 * the outer pair), 0 when it has none. */
int gt_text__args(const char *name, size_t *open, size_t *close);

/* JSON string (or null); bytes that are not UTF-8 become U+FFFD. With
 * html_safe, '<', '>' and '&' are escaped too, for embedding in a page. */
void gt_json__str(FILE *f, const char *s, int html_safe);

#endif
