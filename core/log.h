/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_LOG_H
#define GT_CORE_LOG_H

/*
 * One logging function for the whole tool. Quiet by default: level WARN and
 * above go to stderr, or to the file named by GPUTOOL_LOG. GPUTOOL_VERBOSE
 * raises the level. Never call from a signal handler.
 */

#include <stdio.h>

enum gt_log_level {
	GT_LOG_ERROR = 0,
	GT_LOG_WARN = 1,
	GT_LOG_INFO = 2,
	GT_LOG_DEBUG = 3,
};

void gt_log__init(const char *dest, int verbosity);
void gt_log__fini(void);
/* The program's stderr as it was at the tool's start, on a descriptor of
 * the tool's own (NULL if none was open): what the tool prints goes there. */
FILE *gt_log__stderr(void);
/* printf to that stream; nothing if there is none. */
void gt_log__printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int gt_log__enabled(enum gt_log_level level);
/*
 * s as it may appear in a log line: a control character (newline, tab,
 * escape, DEL, ...) becomes \n, \t, \r or \xNN and a backslash \\, so
 * that a value from the environment or a file name can never start a line
 * of its own nor drive a terminal. Written into buf (n bytes, cut at an
 * escape's boundary, "..." when cut); returns buf. Every value the tool
 * echoes from outside goes through this.
 */
const char *gt_log__escape(const char *s, char *buf, size_t n);
/* Room for an escaped value in one log line. */
#define GT_LOG_VALUE 512
void gt_log(enum gt_log_level level, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define gt_err(subsys, ...) gt_log(GT_LOG_ERROR, subsys, __VA_ARGS__)
#define gt_warn(subsys, ...) gt_log(GT_LOG_WARN, subsys, __VA_ARGS__)
#define gt_info(subsys, ...) gt_log(GT_LOG_INFO, subsys, __VA_ARGS__)
#define gt_debug(subsys, ...) gt_log(GT_LOG_DEBUG, subsys, __VA_ARGS__)

#endif
