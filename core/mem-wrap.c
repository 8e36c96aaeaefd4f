/* SPDX-License-Identifier: MIT */
/*
 * libgputool.so is linked with --wrap=malloc (and free, calloc, realloc,
 * the aligned allocators, strdup, strndup, asprintf, vasprintf): each call the
 * library's code makes to one of them arrives here and is served from the
 * tool's heap (core/mem.h), so the program's malloc never sees the tool. A
 * pointer the tool did not allocate (libc's asprintf inside a dependency,
 * realpath(), a demangler's string, scandir()) goes back to libc's free. Not
 * in the sanitizer builds, whose runtimes must see every block.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
void *__wrap_aligned_alloc(size_t align, size_t size);
void *__wrap_memalign(size_t align, size_t size);
int __wrap_posix_memalign(void **out, size_t align, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap);
int __wrap_asprintf(char **out, const char *fmt, ...);
void __real_free(void *p);

static void *nomem(void *p)
{
	if (!p)
		errno = ENOMEM;
	return p;
}

void *__wrap_malloc(size_t size)
{
	return nomem(gt_mem__alloc(size));
}

void *__wrap_calloc(size_t n, size_t size)
{
	return nomem(gt_mem__calloc(n, size));
}

void *__wrap_realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (!p || gt_mem__owns(p))
		return nomem(gt_mem__realloc(p, size));
	/* libc's block: moved into the tool's heap. */
	q = gt_mem__alloc(size);
	if (!q)
		return nomem(NULL);
	old = malloc_usable_size(p);
	memcpy(q, p, old < size ? old : size);
	__real_free(p);
	return q;
}

void __wrap_free(void *p)
{
	if (!gt_mem__free(p))
		__real_free(p);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	return nomem(gt_mem__aligned(align, size));
}

void *__wrap_memalign(size_t align, size_t size)
{
	return nomem(gt_mem__aligned(align, size));
}

int __wrap_posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = gt_mem__aligned(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

char *__wrap_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = gt_mem__alloc(len + 1);

	if (!d)
		return nomem(NULL);
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *__wrap_strdup(const char *s)
{
	return __wrap_strndup(s, (size_t)-1);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0) {
		*out = gt_mem__alloc((size_t)n + 1);
		if (*out)
			vsnprintf(*out, (size_t)n + 1, fmt, again);
		else
			n = -1;
	}
	va_end(again);
	return n;
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = __wrap_vasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}
