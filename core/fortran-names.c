/* SPDX-License-Identifier: MIT */
#include "core/fortran-names.h"

#include <string.h>

#define MAIN_PROGRAM "main program"

/* A bounded writer: once something does not fit, ok stays 0 and the result
 * is refused, never cut. */
struct fw {
	char *out;
	size_t cap, len;
	int ok;
};

static void fw__addn(struct fw *w, const char *s, size_t n)
{
	if (!w->ok || w->len + n + 1 > w->cap) {
		w->ok = 0;
		return;
	}
	memcpy(w->out + w->len, s, n);
	w->len += n;
	w->out[w->len] = 0;
}

static void fw__add(struct fw *w, const char *s)
{
	fw__addn(w, s, strlen(s));
}

static int is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The end of a flang name part: the next tag (an upper-case letter), the
 * suffix another pass added ('.'), or the end. Fortran names are lower-cased
 * by the compiler, which is what leaves the upper-case letters to tags. */
static const char *part_end(const char *p, const char *end)
{
	while (p < end && !is_upper(*p))
		p++;
	return p;
}

/* A separator before the next scope, none before the first. */
static void fw__scope(struct fw *w, const char *sep)
{
	if (w->len)
		fw__add(w, sep);
}

/* Kind parameters of a derived type, `K4KN6`, as "[kind 4,-6]". */
static const char *kinds(struct fw *w, const char *p, const char *end)
{
	int first = 1;

	while (p < end && *p == 'K') {
		const char *q = p + 1;
		int neg = q < end && *q == 'N';

		q += neg;
		if (q == end || !is_digit(*q))
			break;
		fw__add(w, first ? "[kind " : ",");
		if (neg)
			fw__add(w, "-");
		p = q;
		while (p < end && is_digit(*p))
			p++;
		fw__addn(w, q, (size_t)(p - q));
		first = 0;
	}
	if (!first)
		fw__add(w, "]");
	return p;
}

/* flang's `_Q` names, name[0..end) (the suffix cut off already). */
static void flang(struct fw *w, const char *name, const char *end, const char *program)
{
	const char *p = name + 2;
	int last = 0; /* the tag that ends a name was seen: nothing may follow */

	if (end - p == 5 && !strncmp(p, "Qmain", 5)) {
		fw__add(w, program ? program : MAIN_PROGRAM);
		return;
	}
	if (p == end) {
		w->ok = 0;
		return;
	}
	while (p < end && w->ok) {
		char tag = *p++;
		const char *q;

		if (last) {
			w->ok = 0;
			return;
		}
		switch (tag) {
		case 'M': /* module */
		case 'F': /* a procedure as the host of what follows */
		case 'P': /* a procedure as itself */
		case 'E': /* a variable; EC a constant */
		case 'N': /* a namelist group */
		case 'T': /* a derived type */
			if (tag == 'E' && p < end && *p == 'C')
				p++;
			q = part_end(p, end);
			if (q == p) {
				/* `_QF` with no name: the main program hosts what
				 * follows; it has a name only when DWARF gave one. */
				if (tag != 'F') {
					w->ok = 0;
					return;
				}
				if (program) {
					fw__scope(w, "::");
					fw__add(w, program);
				}
				break;
			}
			fw__scope(w, "::");
			fw__addn(w, p, (size_t)(q - p));
			p = q;
			if (tag == 'T')
				p = kinds(w, p, end);
			last = tag != 'M' && tag != 'F';
			break;
		case 'S': /* a submodule: `module:submodule`, as Fortran writes it */
			q = part_end(p, end);
			if (q == p || !w->len) {
				w->ok = 0;
				return;
			}
			fw__add(w, ":");
			fw__addn(w, p, (size_t)(q - p));
			p = q;
			break;
		case 'B': /* a BLOCK construct's index: scopes only its variables */
			q = p;
			while (q < end && is_digit(*q))
				q++;
			if (q == p) {
				w->ok = 0;
				return;
			}
			p = q;
			break;
		case 'C': /* a common block; `_QC` the blank one */
			if (w->len) {
				w->ok = 0;
				return;
			}
			q = part_end(p, end);
			fw__add(w, "/");
			fw__addn(w, p, (size_t)(q - p));
			fw__add(w, "/");
			p = q;
			last = 1;
			break;
		default: /* Q, D, Y, X: compiler-internal */
			w->ok = 0;
			return;
		}
	}
	if (!w->len)
		w->ok = 0;
}

/* gfortran's `__<module>_MOD_<proc>`, name[0..end). */
static void gfortran_module(struct fw *w, const char *name, const char *end)
{
	const char *mod = name + 2, *sep = NULL;

	for (const char *p = mod; p + 5 <= end; p++)
		if (!strncmp(p, "_MOD_", 5)) {
			sep = p;
			break;
		}
	if (!sep || sep == mod || sep + 5 == end) {
		w->ok = 0;
		return;
	}
	fw__addn(w, mod, (size_t)(sep - mod));
	fw__add(w, "::");
	fw__addn(w, sep + 5, (size_t)(end - sep - 5));
}

int gt_fortran__wants_program(const char *name)
{
	size_t n = strcspn(name, ".");

	return (n == 7 && !strncmp(name, "_QQmain", 7)) || (n == 6 && !strncmp(name, "MAIN__", 6)) ||
	       (n > 3 && !strncmp(name, "_QF", 3) && is_upper(name[3]));
}

/* A suffix another pass added after the name, from its '.'. */
static void suffix_add(struct fw *w, const char *suffix)
{
	if (!*suffix)
		return;
	/* flang outlines a parallel region into `..omp_par`, the second one
	 * of a procedure into `..omp_par.1`, .... */
	if (!strncmp(suffix, "..omp_par", 9) && (!suffix[9] || suffix[9] == '.')) {
		fw__add(w, " [omp parallel body]");
		return;
	}
	fw__add(w, " [clone ");
	fw__add(w, suffix);
	fw__add(w, "]");
}

static size_t fw__end(struct fw *w)
{
	if (!w->ok) {
		if (w->cap)
			w->out[0] = 0;
		return 0;
	}
	return w->len;
}

size_t gt_fortran__demangle(const char *name, const char *program, char *out, size_t cap)
{
	struct fw w = { .out = out, .cap = cap, .ok = cap > 0 };
	const char *end;

	if (!name || !cap)
		return 0;
	out[0] = 0;
	/* A suffix starts at the first '.': no scheme puts one in a name. */
	end = name + strcspn(name, ".");
	if (end - name >= 2 && name[0] == '_' && name[1] == 'Q')
		flang(&w, name, end, program);
	else if (end - name == 6 && !strncmp(name, "MAIN__", 6))
		fw__add(&w, program ? program : MAIN_PROGRAM);
	else if (end - name > 2 && name[0] == '_' && name[1] == '_' && strstr(name, "_MOD_"))
		gfortran_module(&w, name, end);
	else
		return 0;
	suffix_add(&w, end);
	return fw__end(&w);
}

size_t gt_fortran__external(const char *name, char *out, size_t cap)
{
	struct fw w = { .out = out, .cap = cap, .ok = cap > 0 };
	size_t n = name ? strcspn(name, ".") : 0;

	/* `x_` with x a Fortran name: a letter first; `__x_` (and `_x_`) are
	 * C's reserved names, and `x__` is f2c's second underscore, which
	 * gfortran adds only when asked (-fsecond-underscore). flang names
	 * external procedures so too, for gfortran's ABI, and its outlined
	 * bodies `x_..omp_par`. */
	if (n < 2 || name[n - 1] != '_' || name[n - 2] == '_' || name[0] == '_' || is_digit(name[0]))
		return 0;
	fw__addn(&w, name, n - 1);
	suffix_add(&w, name + n);
	return fw__end(&w);
}
