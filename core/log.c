/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/wsig.h"

static FILE *log_file;
static int log_verbosity = GT_LOG_WARN;
/*
 * The program's stderr as it was when the tool started, on a descriptor of
 * the tool's own: a program that closes fd 2 and opens a data file there
 * must not find the tool's lines in it. NULL when fd 2 was not open.
 */
static FILE *err_file;
static int err_taken;

FILE *gt_log__stderr(void)
{
	int fd;

	if (err_taken)
		return err_file;
	err_taken = 1;
	/* High, so that a program's dup2() onto small numbers misses it. */
	fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
	if (fd < 0)
		fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return NULL;
	err_file = fdopen(fd, "a");
	if (!err_file) {
		close(fd);
		return NULL;
	}
	setvbuf(err_file, NULL, _IOLBF, 0);
	return err_file;
}

void gt_log__init(const char *dest, int verbosity)
{
	log_verbosity = verbosity;
	gt_log__stderr();
	if (dest && *dest && strcmp(dest, "stderr") != 0) {
		/* Appended to, never through a link (another user's planted
		 * link would have the program write where they choose). */
		int fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);

		log_file = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!log_file) {
			if (fd >= 0)
				close(fd);
			char q[GT_LOG_VALUE];

			gt_log__printf("gputool: cannot open log file %s; logging to stderr\n",
				       gt_log__escape(dest, q, sizeof(q)));
		}
	}
}

void gt_log__printf(const char *fmt, ...)
{
	FILE *f = gt_log__stderr();
	struct gt_wsig w;
	va_list ap;

	if (!f)
		return;
	/* A stderr nobody reads any more is no reason for the program to die. */
	gt_wsig__block(&w);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fflush(f);
	gt_wsig__restore(&w);
}

void gt_log__fini(void)
{
	if (log_file)
		fclose(log_file);
	log_file = NULL;
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
	char line[1024];
	va_list ap;
	int n;

	if (!gt_log__enabled(level))
		return;
	n = snprintf(line, sizeof(line), "gputool[%s]: ", subsys);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line so that lines of different threads never interleave. */
	if (log_file) {
		struct gt_wsig w;

		gt_wsig__block(&w);
		fprintf(log_file, "%s\n", line);
		fflush(log_file);
		gt_wsig__restore(&w);
	} else {
		gt_log__printf("%s\n", line);
	}
}
