/* SPDX-License-Identifier: MIT */
#include "core/text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void gt_sb__addn(struct gt_sb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (n + 1 > b->cap - b->len) {
		size_t c = b->cap ? b->cap : 64;
		char *q;

		while (c - b->len < n + 1) {
			if (c > SIZE_MAX / 2) {
				b->oom = 1;
				return;
			}
			c *= 2;
		}
		q = realloc(b->s, c);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->s = q;
		b->cap = c;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void gt_sb__add(struct gt_sb *b, const char *s)
{
	gt_sb__addn(b, s, strlen(s));
}

void gt_sb__addf(struct gt_sb *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		gt_sb__addn(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void gt_sb__add_clean(struct gt_sb *b, const char *s)
{
	gt_sb__addn(b, "", 0);
	for (const char *c = s; *c;) {
		size_t n = 0;

		while (c[n] && (unsigned char)c[n] >= 0x20 && c[n] != 0x7f)
			n++;
		gt_sb__addn(b, c, n);
		c += n;
		if (*c) {
			gt_sb__add(b, "?");
			c++;
		}
	}
}

size_t gt_cols(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Byte length of the first k columns of s. */
static size_t cols_prefix(const char *s, size_t k)
{
	size_t i = 0, w = 0;

	while (s[i]) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && w++ == k)
			break;
		i++;
	}
	return i;
}

/* Byte offset where the last k columns of s start. */
static size_t cols_suffix(const char *s, size_t k)
{
	size_t i = strlen(s), w = 0;

	while (i > 0 && w < k) {
		i--;
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	}
	return i;
}

void gt_sb__add_fit(struct gt_sb *b, const char *s, size_t width)
{
	size_t w = gt_cols(s), head, tail;

	if (w <= width || width < 3) {
		gt_sb__add(b, s);
		return;
	}
	head = (width - 1) / 2;
	tail = width - 1 - head;
	gt_sb__addn(b, s, cols_prefix(s, head));
	gt_sb__add(b, "…");
	gt_sb__add(b, s + cols_suffix(s, tail));
}

const char *gt_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

int gt_text__is_library(const char *path)
{
	const char *b = gt_base_name(path), *so = strstr(b, ".so");

	return b[0] == '[' || (so && (so[3] == 0 || so[3] == '.'));
}

int gt_text__args(const char *name, size_t *open, size_t *close)
{
	size_t end = strlen(name), depth = 0;

	/* The last ')' that closes a list: trailing qualifiers (" const",
	 * " &&", " [clone .cold]") may follow it. */
	while (end > 0 && name[end - 1] != ')')
		end--;
	if (!end)
		return 0;
	*close = end - 1;
	for (size_t i = end; i-- > 0;) {
		if (name[i] == ')') {
			depth++;
		} else if (name[i] == '(' && !--depth) {
			/* "operator()" is the name, not a list. */
			if (i == 0)
				return 0;
			*open = i;
			return 1;
		}
	}
	return 0;
}

/*
 * Where the qualified name of a function whose parameter list opens at
 * @open begins: after its return type, which demangled function templates
 * carry ("miniFE::TypeTraits<double>::magnitude_type miniFE::dot<...>(...)"),
 * the last space outside brackets before the list; 0 when there is none.
 * A conversion operator's type ("operator int") is its name.
 */
static size_t name_start(const char *name, size_t open)
{
	size_t start = 0;
	int depth = 0;

	for (size_t i = 0; i < open; i++) {
		char c = name[i];

		if (c == '<' || c == '(' || c == '[')
			depth++;
		else if ((c == '>' || c == ')' || c == ']') && depth > 0)
			depth--;
		else if (c == ' ' && !depth && (i < 8 || strncmp(name + i - 8, "operator", 8)))
			start = i + 1;
	}
	return start;
}

/* name with its parameter list read as "(…)" and without a template's
 * return type when asked, and it has a non-empty list. */
static void add_name(struct gt_sb *b, const char *name, int flags)
{
	size_t open, close, start;

	if (!(flags & GT_LABEL_ELIDE_ARGS) || !gt_text__args(name, &open, &close) || close == open + 1) {
		gt_sb__add_clean(b, name);
		return;
	}
	start = name_start(name, open);
	{
		struct gt_sb head = { 0 };

		gt_sb__addn(&head, name + start, open + 1 - start);
		gt_sb__add_clean(b, head.s ? head.s : "");
		free(head.s);
	}
	gt_sb__add(b, "…");
	gt_sb__add_clean(b, name + close);
}

void gt_label(struct gt_sb *b, const struct gt_profile *t, uint32_t i, int flags)
{
	const struct gt_prof_node *n = &t->nodes[i];
	const char *name = gt_profile__str(t, n->name);
	const char *file = gt_profile__str(t, n->file);
	const char *mod = n->module == GT_NONE ? NULL : gt_profile__str(t, t->modules[n->module]);

	switch (n->kind) {
	case GT_PNODE_ROOT:
		gt_sb__add(b, "<program>");
		return;
	case GT_PNODE_FRAME:
	case GT_PNODE_INLINE:
	case GT_PNODE_TAIL:
		if (name) {
			add_name(b, name, flags);
		} else if (mod) {
			gt_sb__add_clean(b, gt_base_name(mod));
			gt_sb__addf(b, "+0x%" PRIx64, n->offset);
		} else {
			gt_sb__addf(b, "0x%" PRIx64, n->offset);
		}
		gt_sb__add(b, gt_pnode__marker(n->kind));
		if (flags & GT_LABEL_NAME_ONLY)
			return;
		if (file) {
			gt_sb__add(b, " (");
			gt_sb__add_clean(b, flags & GT_LABEL_SHORT_FILE ? gt_base_name(file) : file);
			if (!(flags & GT_LABEL_NO_LINE))
			{
				if (n->line)
					gt_sb__addf(b, ":%" PRIu32, n->line);
				else
					gt_sb__add(b, ", line ?");
			}
			gt_sb__add(b, ")");
		} else if (name && mod && gt_text__is_library(mod)) {
			gt_sb__add(b, mod[0] == '[' ? " " : " [");
			gt_sb__add_clean(b, gt_base_name(mod)); /* [libc.so.6], [vdso] */
			gt_sb__add(b, mod[0] == '[' ? "" : "]");
		} else if (name && mod && !(flags & GT_LABEL_NO_LINE)) {
			gt_sb__add(b, " (line ?)");
		}
		return;
	default:
		gt_sb__add_clean(b, name ? name : "<unnamed>");
	}
}

/* Length of the valid UTF-8 sequence at s (up to end), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, const unsigned char *end)
{
	size_t n = (size_t)(end - s), len;
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

void gt_json__str(FILE *f, const char *s, int html_safe)
{
	const unsigned char *c, *end;

	if (!s) {
		fputs("null", f);
		return;
	}
	end = (const unsigned char *)s + strlen(s);
	putc('"', f);
	for (c = (const unsigned char *)s; c < end;) {
		const unsigned char *run = c;
		size_t n;

		/* Printable ASCII that needs no escape goes out in one write. */
		while (c < end && *c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\' &&
		       !(html_safe && (*c == '<' || *c == '>' || *c == '&')))
			c++;
		if (c > run)
			fwrite(run, 1, (size_t)(c - run), f);
		if (c == end)
			break;
		if (*c < 0x80) {
			switch (*c) {
			case '"': fputs("\\\"", f); break;
			case '\\': fputs("\\\\", f); break;
			case '\n': fputs("\\n", f); break;
			case '\r': fputs("\\r", f); break;
			case '\t': fputs("\\t", f); break;
			case '<':
			case '>':
			case '&':
				if (html_safe)
					fprintf(f, "\\u%04x", *c);
				else
					putc(*c, f);
				break;
			default:
				if (*c < 0x20 || *c == 0x7f)
					fprintf(f, "\\u%04x", *c);
				else
					putc(*c, f);
			}
			c++;
		} else if ((n = utf8_len(c, end))) {
			/* U+2028 and U+2029 end lines in older JavaScript. */
			if (n == 3 && c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9))
				fprintf(f, "\\u202%c", c[2] == 0xa8 ? '8' : '9');
			else
				fwrite(c, 1, n, f);
			c += n;
		} else {
			fputs("\\ufffd", f);
			c++;
		}
	}
	putc('"', f);
}
