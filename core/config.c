/* SPDX-License-Identifier: MIT */
#include "core/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

#include "core/log.h"

extern char **environ;

struct gt_config gt_config;

static int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_str(const char *s, const char **out)
{
	*out = s;
	return 0;
}

#define PARSE_UINT(s, min, max, out) parse_uint(s, min, max, out)
#define PARSE_BOOL(s, min, max, out) parse_bool(s, out)
#define PARSE_STR(s, min, max, out) parse_str(s, out)
#define PARSE_PATH(s, min, max, out) parse_str(s, out)
#define RANGE_UINT(min, max) " (a whole number from " #min " to " #max ")"
#define RANGE_BOOL(min, max) " (0 or 1)"
#define RANGE_STR(min, max) ""
#define RANGE_PATH(min, max) ""
#define DEFAULT_UINT(def) (uint64_t)(def)
#define DEFAULT_BOOL(def) (def)
#define DEFAULT_STR(def) NULL
#define DEFAULT_PATH(def) NULL
#define IS_PATH_UINT 0
#define IS_PATH_BOOL 0
#define IS_PATH_STR 0
#define IS_PATH_PATH 1

static const char *env_value(char **envp, const char *name)
{
	size_t len = strlen(name);

	for (char **e = envp; *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static int is_known(const char *entry)
{
	static const char *const names[] = {
#define X(field, name, kind, def, min, max, help) name,
		GT_CONFIG_VARS(X)
#undef X
	};
	size_t len = strcspn(entry, "=");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(entry, names[i], len))
			return 1;
	return 0;
}

int gt_config__load(char **envp)
{
	/* The environment is the invoking user's, the program's privileges
	 * are not: no file it names is written, read or run. */
	int problems = 0, secure = getauxval(AT_SECURE) != 0;
	char q[GT_LOG_VALUE];
	const char *v;

	if (!envp)
		envp = environ;
#define X(field, name, kind, def, min, max, help)                                       \
	gt_config.field = DEFAULT_##kind(def);                                         \
	v = env_value(envp, name);                                                     \
	if (v && IS_PATH_##kind && secure)                                             \
		v = NULL;                                                              \
	if (v && PARSE_##kind(v, min, max, &gt_config.field)) {                        \
		gt_log__printf("gputool: %s='%s' is not valid%s; using the default\n", \
			name, gt_log__escape(v, q, sizeof(q)), RANGE_##kind(min, max));\
		gt_config.field = DEFAULT_##kind(def);                                 \
		problems++;                                                            \
	}
	GT_CONFIG_VARS(X)
#undef X

	for (char **e = envp; *e; e++) {
		char name[GT_LOG_VALUE];

		if (strncmp(*e, "GPUTOOL_", 8) || is_known(*e))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
		gt_log__printf("gputool: unknown variable %s ignored (`gputool help env` lists them)\n",
			gt_log__escape(name, q, sizeof(q)));
		problems++;
	}
	return problems;
}

void gt_config__describe(void *file)
{
#define X(field, name, kind, def, min, max, help) \
	fprintf(file, "  %-22s %s%s\n", name, help, RANGE_##kind(min, max));
	GT_CONFIG_VARS(X)
#undef X
}
