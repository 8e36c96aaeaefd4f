/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
			gt_log__printf("gputool: cannot open log file %s; logging to stderr\n", dest);
		}
	}
}

void gt_log__printf(const char *fmt, ...)
{
	FILE *f = gt_log__stderr();
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fflush(f);
}

void gt_log__fini(void)
{
	if (log_file)
		fclose(log_file);
	log_file = NULL;
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
		fprintf(log_file, "%s\n", line);
		fflush(log_file);
	} else {
		gt_log__printf("%s\n", line);
	}
}
