/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static FILE *log_file;
static int log_verbosity = GT_LOG_WARN;

void gt_log__init(const char *dest, int verbosity)
{
	log_verbosity = verbosity;
	if (dest && *dest && strcmp(dest, "stderr") != 0) {
		/* Appended to, never through a link (another user's planted
		 * link would have the program write where they choose). */
		int fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);

		log_file = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!log_file) {
			if (fd >= 0)
				close(fd);
			fprintf(stderr, "gputool: cannot open log file %s; logging to stderr\n", dest);
		}
	}
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
	fprintf(log_file ? log_file : stderr, "%s\n", line);
	if (log_file)
		fflush(log_file);
}
