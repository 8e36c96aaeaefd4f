/* SPDX-License-Identifier: MIT */
/*
 * `gputool report PATH`: options, then one of two things. A profile file
 * given alone in JSON is shown as it is (the JSON of docs/PROFILE.md).
 * Everything else is a run, a single profile's text too (so that a file and
 * its directory read alike): every profile PATH names is merged (load.c),
 * derived (derive.c) and written in the chosen format.
 *
 * Exit status: 0 on success, 1 when a profile cannot be read (the rest is
 * still reported) or the output cannot be written, 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "report/sections.h"

#define MAX_TOP 1000000u
#define MIN_WIDTH 60u   /* the fixed columns of the widest table, and some context */
#define MAX_WIDTH 10000u

enum format {
	FORMAT_TEXT, FORMAT_JSON, FORMAT_FOLDED, FORMAT_CHROME, FORMAT_HTML,
	FORMAT_SPEEDSCOPE, FORMAT_HATCHET, FORMAT_PPROF, FORMAT__COUNT
};

static const char *const format_names[] = {
	[FORMAT_TEXT] = "text", [FORMAT_JSON] = "json", [FORMAT_FOLDED] = "folded",
	[FORMAT_CHROME] = "chrome", [FORMAT_HTML] = "html", [FORMAT_SPEEDSCOPE] = "speedscope",
	[FORMAT_HATCHET] = "hatchet", [FORMAT_PPROF] = "pprof",
};

#define FORMAT_LIST "text, json, folded, chrome, html, speedscope, hatchet or pprof"

static const char *const view_names[] = {
	[GT_VIEW_TOP_DOWN] = "top-down", [GT_VIEW_BOTTOM_UP] = "bottom-up", [GT_VIEW_FLAT] = "flat",
};

struct report_opts {
	const char *path, *output, *metric;
	enum format format;
	enum gt_view view;
	unsigned top;
	unsigned width;  /* 0: the terminal's when the text goes to one, else GT_PATHS_WIDTH */
	int signatures;  /* C++ parameter lists in full */
	int force; /* merge profiles that look like more than one run */
};

static int pick(const char *v, const char *const *names, int n)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(v, names[k]))
			return k;
	return -1;
}

enum { OPT_FORMAT = 256, OPT_VIEW, OPT_METRIC, OPT_TOP, OPT_FORCE, OPT_WIDTH, OPT_SIGNATURES };

static const struct option report_options[] = {
	{ "format", required_argument, NULL, OPT_FORMAT }, { "view", required_argument, NULL, OPT_VIEW },
	{ "metric", required_argument, NULL, OPT_METRIC }, { "top", required_argument, NULL, OPT_TOP },
	{ "width", required_argument, NULL, OPT_WIDTH }, { "signatures", no_argument, NULL, OPT_SIGNATURES },
	{ "force", no_argument, NULL, OPT_FORCE },	   { "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },		   { NULL, 0, NULL, 0 },
};

/* The usage error of getopt_long's '?' or ':' for argv's option at optind. */
static int option_error(int c, char **argv)
{
	const char *a = argv[optind - 1];

	if (c == ':') {
		if (optopt == 'o' || !strcmp(a, "-o"))
			return gt_usage_error("report", "-o needs a file name");
		switch (optopt) {
		case OPT_FORMAT: return gt_usage_error("report", "--format needs a value: " FORMAT_LIST);
		case OPT_VIEW: return gt_usage_error("report", "--view needs a value: top-down, bottom-up or flat");
		case OPT_METRIC:
			return gt_usage_error("report", "--metric needs a metric name, e.g. CPUTIME, GKER or GPUOP");
		case OPT_TOP: return gt_usage_error("report", "--top needs a number");
		case OPT_WIDTH: return gt_usage_error("report", "--width needs a number of columns");
		default: return gt_usage_error("report", "%s needs a value", a);
		}
	}
	if (optopt && optopt < 256 && a[0] == '-' && a[1] != '-')
		return gt_usage_error("report", "unknown option '-%c' for report", optopt);
	return gt_usage_error("report", "unknown option '%s' for report", a);
}

/* glibc's getopt_long: options and the PATH in any order, long options
 * as --name V or --name=V (or an unambiguous prefix), -- ends options. */
static int parse(int argc, char **argv, struct report_opts *o)
{
	int c, k;

	memset(o, 0, sizeof(*o));
	o->top = GT_REPORT_TOP;
	optind = 0; /* glibc: start over (the command may parse twice) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", report_options, NULL)) != -1) {
		const char *v = optarg;

		switch (c) {
		case OPT_FORMAT:
			if ((k = pick(v, format_names, FORMAT__COUNT)) < 0)
				return gt_usage_error("report", "unknown format '%s' (" FORMAT_LIST ")", v);
			o->format = (enum format)k;
			break;
		case OPT_VIEW:
			if ((k = pick(v, view_names, 3)) < 0)
				return gt_usage_error("report", "unknown view '%s' (top-down, bottom-up or flat)", v);
			o->view = (enum gt_view)k;
			break;
		case OPT_METRIC:
			if (!*v)
				return gt_usage_error("report", "--metric needs a metric name, e.g. CPUTIME, GKER or GPUOP");
			o->metric = v;
			break;
		case OPT_TOP: {
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno || n < 1 || n > MAX_TOP)
				return gt_usage_error("report", "--top takes a whole number from 1 to %u, not '%s'", MAX_TOP, v);
			o->top = (unsigned)n;
			break;
		}
		case OPT_WIDTH: {
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno || n < MIN_WIDTH || n > MAX_WIDTH)
				return gt_usage_error("report", "--width takes a number of columns from %u to %u, not '%s'",
						      MIN_WIDTH, MAX_WIDTH, v);
			o->width = (unsigned)n;
			break;
		}
		case OPT_SIGNATURES: o->signatures = 1; break;
		case OPT_FORCE: o->force = 1; break;
		case 'o':
			if (!*v)
				return gt_usage_error("report", "-o needs a file name");
			o->output = v;
			break;
		case 'h': return GT_HELP_ASKED;
		default: return option_error(c, argv);
		}
	}
	for (; optind < argc; optind++) {
		if (o->path)
			return gt_usage_error("report", "report takes one PATH (got '%s' and '%s')", o->path, argv[optind]);
		o->path = argv[optind];
	}
	if (!o->path)
		return gt_usage_error("report", "report needs a PATH: a measurement directory or a .gtprof file");
	return 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * The input the -o file out is, by device and inode (so through a link, a
 * hard link or another path too): path itself, or for a directory any
 * profile or trace in it. Writes its name into which; 1 if one is, else 0.
 */
static int output_is_input(const char *out, const char *path, char *which, size_t n)
{
	struct stat o, in, e;
	struct dirent *d;
	DIR *dir;
	int found = 0;

	if (stat(out, &o) || stat(path, &in))
		return 0; /* no such file yet: not an input */
	if (same_file(&o, &in)) {
		snprintf(which, n, "%s", path);
		return 1;
	}
	if (!S_ISDIR(in.st_mode)) {
		size_t len = strlen(path);
		char trace[PATH_MAX];

		/* A profile's trace beside it (--format chrome reads it). */
		if (len > 7 && !strcmp(path + len - 7, ".gtprof") &&
		    (size_t)snprintf(trace, sizeof(trace), "%.*s.gttrace", (int)(len - 7), path) < sizeof(trace) &&
		    !stat(trace, &e) && same_file(&o, &e)) {
			snprintf(which, n, "%s", trace);
			return 1;
		}
		return 0;
	}
	dir = opendir(path);
	while (dir && !found && (d = readdir(dir))) {
		size_t len = strlen(d->d_name);
		char name[PATH_MAX];

		if (!(len > 7 && !strcmp(d->d_name + len - 7, ".gtprof")) &&
		    !(len > 8 && !strcmp(d->d_name + len - 8, ".gttrace")))
			continue;
		if ((size_t)snprintf(name, sizeof(name), "%s/%s", path, d->d_name) >= sizeof(name) || stat(name, &e))
			continue;
		if (same_file(&o, &e)) {
			snprintf(which, n, "%s", name);
			found = 1;
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

/*
 * The -o file is written under a temporary name beside it (tmp, PATH_MAX
 * bytes: .<name>.XXXXXX, created with O_EXCL, so never through a link) and
 * takes its name only once the whole report is written (finish_output): a
 * report that fails leaves no file, and a file of that name from before is
 * kept until the new one replaces it in one step.
 * A link at path is refused (ELOOP), as an open with O_NOFOLLOW would: the
 * rename would not write through it, but would replace a link the user
 * may have planted on purpose, or one planted to have the report clobber
 * it. A device or FIFO (/dev/null) is written in place (tmp ""): renaming
 * over it would replace the device node itself.
 */
static FILE *open_output(const char *path, char *tmp)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0, fd;
	struct stat st;
	mode_t mask;
	FILE *f;

	tmp[0] = 0;
	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return NULL;
	}
	if (!lstat(path, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISBLK(st.st_mode))) {
		fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f && fd >= 0)
			close(fd);
		return f;
	}
	if ((size_t)snprintf(tmp, PATH_MAX, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* The mode open(..., 0644) would have given. */
	mask = umask(022);
	umask(mask);
	if (fchmod(fd, 0644 & ~mask) || !(f = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		unlink(tmp);
		errno = e;
		return NULL;
	}
	return f;
}

/* Names the written -o file (ok), or removes it: 0, or 1 after one line.
 * One written in place (tmp "") stays as it is. */
static int finish_output(const char *tmp, const char *path, int ok)
{
	if (!tmp[0])
		return 0; /* written in place */
	if (!ok) {
		unlink(tmp);
		return 0;
	}
	if (rename(tmp, path)) {
		fprintf(stderr, "gputool: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return 1;
	}
	return 0;
}

static int write_run(const struct report_opts *o, const struct gt_run *r, FILE *out)
{
	struct gt_out_opts oo = { .view = o->view, .top = o->top, .path = o->path, .width = o->width,
				  .signatures = o->signatures, .metric_given = o->metric != NULL };
	struct winsize ws;

	/* A terminal's width when the text goes to one (wider than the least
	 * we take), else what a file or pipe gets. */
	if (!oo.width && isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col >= MIN_WIDTH)
		oo.width = ws.ws_col < MAX_WIDTH ? ws.ws_col : MAX_WIDTH;
	struct gt_analysis a;
	char why[512] = "";
	int err;

	if (o->format == FORMAT_CHROME)
		return gt_chrome__write(out, o->path, r);
	err = gt_analysis__init(&a, r, o->metric, why, sizeof(why));
	if (err) {
		fprintf(stderr, "gputool: %s\n", why);
		return err == -ENOENT ? GT_EXIT_USAGE : 1;
	}
	switch (o->format) {
	case FORMAT_JSON: err = gt_json__write(out, &a, &oo, 0); break;
	case FORMAT_FOLDED: err = gt_folded__write(out, &a); break;
	case FORMAT_SPEEDSCOPE: err = gt_speedscope__write(out, &a, &oo); break;
	case FORMAT_HATCHET: err = gt_hatchet__write(out, &a); break;
	case FORMAT_PPROF: err = gt_pprof__write(out, &a, &oo); break;
	case FORMAT_HTML: err = gt_html__write(out, &a, &oo); break;
	default: err = gt_text__write(out, &a, &oo); break;
	}
	gt_analysis__fini(&a);
	if (err) {
		fprintf(stderr, "gputool: cannot write the report: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

static int close_output(FILE *out, const char *name)
{
	int status = 0;

	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "gputool: cannot write %s: %s\n", name ? name : "the output", strerror(errno));
		status = 1;
	}
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "gputool: cannot write %s: %s\n", name, strerror(errno));
		status = 1;
	}
	return status;
}

void gt_report__tune_malloc(void)
{
	/* Profiles are read one after the other into blocks of similar sizes:
	 * keep freed memory for the next one instead of returning it to the
	 * kernel, which would zero it again on the next page fault. */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

int gt_report__main(int argc, char **argv, struct gt_team *team)
{
	struct report_opts o;
	struct gt_run r;
	FILE *out = stdout;
	char tmp[PATH_MAX];
	int status, st, failed;

	status = parse(argc, argv, &o);
	if (status)
		return status;
	if (o.output && !strcmp(o.output, "-"))
		o.output = NULL;
	if (o.format == FORMAT_PPROF && !o.output && isatty(STDOUT_FILENO))
		return gt_usage_error("report", "--format pprof writes gzipped bytes: name a file with -o FILE");
	if (o.output) {
		char which[PATH_MAX];

		/* Every rank sees the same files: all stop, one says why. */
		if (output_is_input(o.output, o.path, which, sizeof(which))) {
			if (team->rank == 0)
				fprintf(stderr, "gputool: -o %s is %s, which the report reads: nothing written\n",
					o.output, which);
			return GT_EXIT_USAGE;
		}
	}
	status = gt_load__run(team, o.path, &r);
	if (team->rank != 0) {
		gt_run__fini(&r);
		return status;
	}
	if (!r.procs || !r.n_merged) {
		if (r.procs && r.n_procs)
			fprintf(stderr, "gputool: no profile in %s could be read\n", o.path);
		gt_run__fini(&r);
		return 1;
	}
	if (!o.force) {
		char why[512];

		st = gt_run__check_one(&r, why, sizeof(why));
		if (st == -EEXIST) {
			fprintf(stderr,
				"gputool: %s holds profiles of more than one run: %s\n"
				"(report each run's directory, or pass --force to merge them anyway)\n",
				o.path, why);
			gt_run__fini(&r);
			return GT_EXIT_USAGE;
		}
	}
	if (o.output && !(out = open_output(o.output, tmp))) {
		fprintf(stderr, "gputool: cannot write %s: %s\n", o.output, strerror(errno));
		gt_run__fini(&r);
		return 1;
	}
	/* A profile left out still gives a report (status 1 from the load). */
	failed = write_run(&o, &r, out);
	if (failed)
		status = failed;
	st = close_output(out, o.output);
	if (st && !status)
		status = st;
	if (o.output && (st = finish_output(tmp, o.output, !failed && !st)))
		status = st;
	gt_run__fini(&r);
	return status;
}
