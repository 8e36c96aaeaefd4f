/* SPDX-License-Identifier: MIT */
/*
 * The gputool command: reads what libgputool.so measured.
 *
 * Exit status: 0 on success, 1 when a profile cannot be read or the output
 * cannot be written, 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "core/profile.h"
#include "core/report.h"

#ifndef GT_VERSION
#define GT_VERSION "unknown"
#endif

#define EXIT_USAGE 2
#define PROFILE_SUFFIX ".gtprof"
#define MAX_TOP 1000000u

struct command {
	const char *name;
	const char *args;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command's name */
};

static int cmd_report(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{ "report", "PATH [--format text|json] [-o FILE] [--top N]",
	  "print the profile PATH (a .gtprof file), or each profile in the measurement directory PATH",
	  cmd_report },
	/* The launcher's "run PROGRAM [ARGS...]" belongs here, before help. */
	{ "help", "[env]", "show this help, or the GPUTOOL_* environment variables", cmd_help },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: gputool COMMAND [ARGS]\n       gputool --version\n\ncommands:\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %s %s\n      %s\n", commands[i].name, commands[i].args, commands[i].summary);
	fputs("\nreport options:\n"
	      "  --format text|json  text (default): the per-region report; json: the whole\n"
	      "                      profile (docs/PROFILE.md); a directory with several\n"
	      "                      profiles gives a JSON array of them\n"
	      "  -o, --output FILE   write to FILE instead of standard output\n"
	      "  --top N             rows per section of the text report (default 20)\n",
	      f);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gputool: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(`gputool help` shows the usage)\n", stderr);
	return EXIT_USAGE;
}

/* ---- report ---- */

enum format { FORMAT_TEXT, FORMAT_JSON };

struct report_opts {
	const char *path;
	const char *output;
	enum format format;
	unsigned top;
};

/* The value of option name at argv[*i] ("--name V" or "--name=V"); NULL and
 * *bad set when the value is missing. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *matched, int *bad)
{
	size_t len = strlen(name);
	const char *a = argv[*i];

	*matched = 0;
	if (strncmp(a, name, len))
		return NULL;
	if (a[len] == '=') {
		*matched = 1;
		return a + len + 1;
	}
	if (a[len])
		return NULL;
	*matched = 1;
	if (*i + 1 >= argc) {
		*bad = 1;
		return NULL;
	}
	return argv[++*i];
}

static int parse_report_args(int argc, char **argv, struct report_opts *o)
{
	int only_paths = 0;

	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int matched, bad = 0;

		if (!only_paths && !strcmp(a, "--")) {
			only_paths = 1;
			continue;
		}
		if (only_paths || a[0] != '-' || !a[1]) {
			if (o->path)
				return usage_error("report takes one PATH (got '%s' and '%s')", o->path, a);
			o->path = a;
			continue;
		}
		if ((v = option_value(argc, argv, &i, "--format", &matched, &bad)) || matched) {
			if (bad)
				return usage_error("--format needs a value: text or json");
			if (!strcmp(v, "text"))
				o->format = FORMAT_TEXT;
			else if (!strcmp(v, "json"))
				o->format = FORMAT_JSON;
			else
				return usage_error("unknown format '%s' (text or json)", v);
			continue;
		}
		if ((v = option_value(argc, argv, &i, "--top", &matched, &bad)) || matched) {
			char *end;
			unsigned long n;

			if (bad)
				return usage_error("--top needs a number");
			errno = 0;
			n = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno || n < 1 || n > MAX_TOP)
				return usage_error("--top takes a whole number from 1 to %u, not '%s'", MAX_TOP, v);
			o->top = (unsigned)n;
			continue;
		}
		if (!strcmp(a, "-o") && i + 1 < argc) {
			o->output = argv[++i];
			continue;
		}
		if (!strncmp(a, "-o", 2) && a[2]) {
			o->output = a + 2;
			continue;
		}
		if ((v = option_value(argc, argv, &i, "--output", &matched, &bad)) || matched) {
			if (bad)
				return usage_error("--output needs a file name");
			o->output = v;
			continue;
		}
		if (!strcmp(a, "-o"))
			return usage_error("-o needs a file name");
		return usage_error("unknown option '%s' for report", a);
	}
	if (!o->path)
		return usage_error("report needs a PATH: a .gtprof file or a measurement directory");
	return 0;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

static int profile_entry(const struct dirent *d)
{
	return has_suffix(d->d_name, PROFILE_SUFFIX);
}

/* The profiles PATH names: itself, or the *.gtprof files in it, sorted by
 * name. Returns 0, or 1 after printing why not. */
static int list_profiles(const char *path, char ***out, int *count)
{
	struct dirent **ents = NULL;
	struct stat st;
	char **names;
	int n;

	if (stat(path, &st)) {
		fprintf(stderr, "gputool: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		names = malloc(sizeof(*names));
		if (!names || !(names[0] = strdup(path))) {
			free(names);
			fprintf(stderr, "gputool: out of memory\n");
			return 1;
		}
		*out = names;
		*count = 1;
		return 0;
	}
	n = scandir(path, &ents, profile_entry, alphasort);
	if (n < 0) {
		fprintf(stderr, "gputool: cannot list %s: %s\n", path, strerror(errno));
		return 1;
	}
	names = calloc(n ? (size_t)n : 1, sizeof(*names));
	for (int i = 0; i < n; i++) {
		if (names && asprintf(&names[i], "%s/%s", path, ents[i]->d_name) < 0)
			names[i] = NULL;
		if (names && !names[i]) {
			for (int k = 0; k < i; k++)
				free(names[k]);
			free(names);
			names = NULL;
		}
		free(ents[i]);
	}
	free(ents);
	if (!names) {
		fprintf(stderr, "gputool: out of memory\n");
		return 1;
	}
	if (!n) {
		free(names);
		fprintf(stderr, "gputool: no *%s files in %s\n", PROFILE_SUFFIX, path);
		return 1;
	}
	*out = names;
	*count = n;
	return 0;
}

/* Reads one profile; 0, or 1 after printing why it cannot be read. */
static int load(const char *file, struct gt_profile *p)
{
	char why[256];
	FILE *f = fopen(file, "rb");
	int err;

	if (!f) {
		fprintf(stderr, "gputool: cannot open %s: %s\n", file, strerror(errno));
		return 1;
	}
	err = gt_profile__read(p, f, why, sizeof(why));
	fclose(f);
	if (err == -EINVAL) {
		fprintf(stderr, "gputool: %s is not a valid profile: %s\n", file, why);
		return 1;
	}
	if (err) {
		fprintf(stderr, "gputool: cannot read %s: %s\n", file, why[0] ? why : strerror(-err));
		return 1;
	}
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	char **files = NULL;
	int n = 0, status, written = 0;
	FILE *out = stdout;

	status = parse_report_args(argc, argv, &o);
	if (status)
		return status;
	if (list_profiles(o.path, &files, &n))
		return 1;
	if (o.output && strcmp(o.output, "-")) {
		out = fopen(o.output, "w");
		if (!out) {
			fprintf(stderr, "gputool: cannot write %s: %s\n", o.output, strerror(errno));
			status = 1;
			goto out_free_files;
		}
	}
	/* Merging the processes of a run (ranks, or several processes) into
	 * one profile is not available yet: each is reported on its own. */
	if (n > 1 && o.format == FORMAT_TEXT)
		fprintf(out, "%d profiles in %s; each is reported separately (merging across processes is not "
			     "available yet)\n",
			n, o.path);
	else if (n > 1)
		fprintf(stderr, "gputool: %d profiles in %s, written as a JSON array (merging across processes is "
				"not available yet)\n",
			n, o.path);
	if (n > 1 && o.format == FORMAT_JSON)
		fputs("[\n", out);
	for (int i = 0; i < n; i++) {
		struct gt_profile p;
		int err;

		if (load(files[i], &p)) {
			status = 1;
			continue;
		}
		if (o.format == FORMAT_JSON) {
			if (written)
				fputs(",\n", out);
			err = gt_profile__write_json(&p, out);
		} else {
			if (n > 1)
				fprintf(out, "\n==> %s <==\n", files[i]);
			err = gt_report__write_text(&p, out, o.top);
		}
		gt_profile__fini(&p);
		if (err) {
			fprintf(stderr, "gputool: cannot report %s: %s\n", files[i], strerror(-err));
			status = 1;
			if (err == -EIO)
				break;
			continue;
		}
		written++;
	}
	if (n > 1 && o.format == FORMAT_JSON)
		fputs("]\n", out);
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "gputool: cannot write %s: %s\n", out == stdout ? "the output" : o.output,
			strerror(errno));
		status = 1;
	}
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "gputool: cannot write %s: %s\n", o.output, strerror(errno));
		status = 1;
	}
out_free_files:
	for (int i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return status;
}

/* ---- help ---- */

static int cmd_help(int argc, char **argv)
{
	if (argc > 2)
		return usage_error("help takes at most one topic");
	if (argc == 2 && !strcmp(argv[1], "env")) {
		fputs("gputool reads these environment variables when libgputool.so is loaded:\n", stdout);
		gt_config__describe(stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "report"))
		return usage_error("no help on '%s' (topics: env, report)", argv[1]);
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gputool %s (profile format %u)\n", GT_VERSION, GT_PROFILE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv + 1);
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
