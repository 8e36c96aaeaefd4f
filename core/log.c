/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/wsig.h"

/*
 * Lines are written with write(2) from the caller's stack, never through
 * stdio: a FILE and its buffer would come from the program's heap, at the
 * tool's start and at its first line, wherever the program's heap then is
 * (core/mem.h says why that matters).
 */
static int log_fd = -1;
static int log_verbosity = GT_LOG_WARN;
/*
 * The program's stderr as it was when the tool started, on a descriptor of
 * the tool's own: a program that closes fd 2 and opens a data file there
 * must not find the tool's lines in it. -1 when fd 2 was not open.
 */
static int err_fd = -1;
static int err_taken;
/* A stream on err_fd, made on first demand (the report at exit). */
static FILE *err_file;

static int log__err_fd(void)
{
	if (err_taken)
		return err_fd;
	err_taken = 1;
	/* High, so that a program's dup2() onto small numbers misses it. */
	err_fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
	if (err_fd < 0)
		err_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	return err_fd;
}

FILE *gt_log__stderr(void)
{
	if (!err_file && log__err_fd() >= 0) {
		err_file = fdopen(err_fd, "a");
		if (err_file)
			setvbuf(err_file, NULL, _IOLBF, 0);
	}
	return err_file;
}

/* All of d[0..n) to fd, as one write when the kernel takes it whole (lines
 * of different threads then never interleave), with SIGPIPE and SIGXFSZ
 * held off: a stderr nobody reads any more is no reason for the program to
 * die. */
static void log__write(int fd, const char *d, size_t n)
{
	struct gt_wsig w;

	if (fd < 0)
		return;
	if (err_file && fd == err_fd)
		fflush(err_file);
	gt_wsig__block(&w);
	while (n) {
		ssize_t k = write(fd, d, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		d += k;
		n -= (size_t)k;
	}
	gt_wsig__restore(&w);
}

/* fmt formatted into buf, or into a block of the tool's heap when longer;
 * written to fd; prefix (may be NULL) first, a newline last when nl. */
static void log__vwrite(int fd, const char *prefix, int nl, const char *fmt, va_list ap)
{
	char buf[1024], *d = buf;
	size_t pre = prefix ? strlen(prefix) : 0, room = sizeof(buf) - pre - 1;
	va_list again;
	int n;

	va_copy(again, ap);
	memcpy(buf, prefix ? prefix : "", pre);
	n = vsnprintf(buf + pre, room, fmt, ap);
	if (n >= 0 && (size_t)n >= room) {
		d = malloc(pre + (size_t)n + 2);
		if (d) {
			memcpy(d, buf, pre);
			vsnprintf(d + pre, (size_t)n + 1, fmt, again);
		}
	}
	va_end(again);
	if (n < 0 || !d)
		return;
	if (nl)
		d[pre + (size_t)n++] = '\n';
	log__write(fd, d, pre + (size_t)n);
	if (d != buf)
		free(d);
}

void gt_log__init(const char *dest, int verbosity)
{
	log_verbosity = verbosity;
	log__err_fd();
	if (dest && *dest && strcmp(dest, "stderr") != 0) {
		/* Appended to, never through a link (another user's planted
		 * link would have the program write where they choose). */
		log_fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (log_fd < 0) {
			char q[GT_LOG_VALUE];

			gt_log__printf("gputool: cannot open log file %s; logging to stderr\n",
				       gt_log__escape(dest, q, sizeof(q)));
		}
	}
}

void gt_log__printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log__vwrite(log__err_fd(), NULL, 0, fmt, ap);
	va_end(ap);
}

void gt_log__fini(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

/* The escaped form of c into e (4 bytes at most); its length. */
static size_t escape_char(unsigned char c, char *e)
{
	static const char hex[] = "0123456789abcdef";

	if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
		e[0] = '\\';
		e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '\\';
		return 2;
	}
	if (c < 0x20 || c == 0x7f) {
		e[0] = '\\';
		e[1] = 'x';
		e[2] = hex[c >> 4];
		e[3] = hex[c & 15];
		return 4;
	}
	e[0] = (char)c;
	return 1;
}

const char *gt_log__escape(const char *s, char *buf, size_t n)
{
	size_t at = 0, whole = 0;
	char e[4];

	if (!n)
		return buf;
	for (const char *p = s; p && *p; p++)
		whole += escape_char((unsigned char)*p, e);
	for (; s && *s; s++) {
		size_t k = escape_char((unsigned char)*s, e);

		/* Cut: room kept for "..." after the last whole escape. */
		if (whole >= n && at + k + 3 >= n) {
			if (at + 3 < n) {
				memcpy(buf + at, "...", 3);
				at += 3;
			}
			break;
		}
		memcpy(buf + at, e, k);
		at += k;
	}
	buf[at] = 0;
	return buf;
}

int gt_log__enabled(enum gt_log_level level)
{
	return (int)level <= log_verbosity;
}

void gt_log(enum gt_log_level level, const char *subsys, const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	if (!gt_log__enabled(level))
		return;
	snprintf(prefix, sizeof(prefix), "gputool[%s]: ", subsys);
	va_start(ap, fmt);
	log__vwrite(log_fd >= 0 ? log_fd : log__err_fd(), prefix, 1, fmt, ap);
	va_end(ap);
}
