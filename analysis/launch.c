/* SPDX-License-Identifier: MIT */
/*
 * `gputool run [OPTIONS] [--] PROGRAM [ARGS...]`: points every runtime's
 * tool interface at libgputool.so, sets the output directory and the
 * measurement settings, and executes PROGRAM in its place. Being replaced
 * by the program (exec, no fork) is what makes `mpirun -np N gputool run --
 * ./app` work and gives the caller the program's own exit status and
 * signals.
 *
 * A user's own settings keep working: OMP_TOOL_LIBRARIES and OPENCL_LAYERS
 * are lists, so gputool joins them (first in OMP_TOOL_LIBRARIES, since the
 * OpenMP runtime starts the first tool that accepts; last in OPENCL_LAYERS,
 * the layer nearest the application, so that it sees the calls the
 * application makes). ACC_PROFLIB and CUDA_INJECTION64_PATH name a single
 * library: one that is not gputool's is left alone and that backend is not
 * measured, with a note saying so.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis-internal.h"
#include "core/output.h"

#define EXIT_USAGE 2
#define EXIT_OWN_FAILURE 125 /* like env(1): gputool itself failed */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127
#define LIB_NAME "libgputool.so"

enum { B_OMP = 1, B_ACC = 2, B_CUDA = 4, B_OPENCL = 8, B_ALL = 15 };

static const struct {
	const char *name;
	int bit;
} backends[] = { { "omp", B_OMP }, { "acc", B_ACC }, { "cuda", B_CUDA }, { "opencl", B_OPENCL } };

/* The launcher's job id variables, as the library reads them (core/output.c):
 * every rank of a job sees the same value. */
static const char *const job_vars[] = {
	"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
};

static const char *const size_vars[] = {
	"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PALS_SIZE",
};

/* Notes go out once per job, from rank 0. */
static int quiet;

__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fputs("gputool: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void vsay(const char *fmt, va_list ap)
{
	fputs("gputool: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* gputool itself failed: EXIT_OWN_FAILURE. */
__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	return EXIT_OWN_FAILURE;
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

int gt_launch__job_size(void)
{
	for (size_t i = 0; i < sizeof(size_vars) / sizeof(*size_vars); i++) {
		const char *v = getenv(size_vars[i]);
		char *end;
		long n;

		if (!v || !*v)
			continue;
		n = strtol(v, &end, 10);
		if (!*end && n > 0 && n < 1 << 30)
			return (int)n;
	}
	return 0;
}

/* The directory of this executable, resolved. */
static int self_dir(char *buf, size_t len)
{
	char *slash;

	if (!realpath("/proc/self/exe", buf) || strlen(buf) >= len)
		return -1;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* libgputool.so: next to this executable (a build tree), or in the lib
 * directory beside its bin directory (an installation). */
static int find_library(char *out, size_t len)
{
	static const char *const where[] = { "", "/../lib", "/../lib64", "/../lib/x86_64-linux-gnu",
					     "/../lib/aarch64-linux-gnu" };
	char dir[PATH_MAX], path[PATH_MAX + 64];

	if (self_dir(dir, sizeof(dir)))
		return -1;
	for (size_t i = 0; i < sizeof(where) / sizeof(*where); i++) {
		snprintf(path, sizeof(path), "%s%s/%s", dir, where[i], LIB_NAME);
		if (!access(path, R_OK) && realpath(path, out) && strlen(out) < len)
			return 0;
	}
	return -1;
}

/* Whether list (entries separated by sep) names lib, by path. */
static int list_has(const char *list, char sep, const char *lib)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, (char[]){ sep, 0 });
		char entry[PATH_MAX], real[PATH_MAX];

		if (n && n < sizeof(entry)) {
			memcpy(entry, p, n);
			entry[n] = '\0';
			if (!strcmp(entry, lib) || (realpath(entry, real) && !strcmp(real, lib)))
				return 1;
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int same_file(const char *a, const char *b)
{
	char real[PATH_MAX];

	return !strcmp(a, b) || (realpath(a, real) && !strcmp(real, b));
}

/* Joins lib into the list variable name: first or last. */
static int join_list(const char *name, const char *lib, int first)
{
	const char *old = getenv(name);
	char *v;
	int rc;

	if (!old || !*old)
		return setenv(name, lib, 1);
	if (list_has(old, ':', lib))
		return 0;
	if (asprintf(&v, "%s:%s", first ? lib : old, first ? old : lib) < 0)
		return -1;
	rc = setenv(name, v, 1);
	free(v);
	if (first)
		note("%s already names %s; gputool goes first (the runtime starts the first tool that accepts, so "
		     "that one runs only when gputool is off)",
		     name, old);
	return rc;
}

/* Sets the single-library variable name, unless it names another library. */
static int set_single(const char *name, const char *lib, const char *what)
{
	const char *old = getenv(name);

	if (!old || !*old)
		return setenv(name, lib, 1);
	if (!same_file(old, lib))
		note("%s is set to %s; leaving it, so %s is not measured (unset it to let gputool measure)", name, old,
		     what);
	return 0;
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-'))
			*s = '_';
}

/* The program's file name, as exec will find it, symbolic links resolved. */
static void program_name(const char *prog, char *out, size_t len)
{
	char found[PATH_MAX], real[PATH_MAX];
	const char *use = prog;

	if (!strchr(prog, '/')) {
		const char *path = getenv("PATH");

		for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
			size_t n = strcspn(p, ":");

			snprintf(found, sizeof(found), "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
			if (!access(found, X_OK)) {
				use = found;
				break;
			}
			p += n;
			if (*p)
				p++;
		}
	}
	if (realpath(use, real))
		use = real;
	snprintf(out, len, "%s", gt_base_name(use));
	sanitize(out);
}

static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int parse_backends(const char *v, int *out)
{
	int bits = 0;

	while (*v) {
		size_t n = strcspn(v, ",");
		int ok = 0;

		for (size_t i = 0; i < sizeof(backends) / sizeof(*backends); i++) {
			if (strlen(backends[i].name) == n && !strncmp(v, backends[i].name, n)) {
				bits |= backends[i].bit;
				ok = 1;
			}
		}
		if (!ok)
			return -1;
		v += n;
		if (*v)
			v++;
	}
	*out = bits;
	return bits ? 0 : -1;
}

int gt_launch__main(int argc, char **argv)
{
	const char *out = NULL, *hz = NULL;
	int trace = 0, which = B_ALL, i;
	char lib[PATH_MAX], dir[PATH_MAX + 300];

	quiet = gt_output__rank() != 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				return usage_error("%s needs a directory", a);
			out = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (!strcmp(a, "--trace")) {
			trace = 1;
		} else if (!strcmp(a, "--sample-hz") || !strncmp(a, "--sample-hz=", 12)) {
			char *end;
			unsigned long n;

			hz = a[11] == '=' ? a + 12 : (++i < argc ? argv[i] : NULL);
			errno = 0;
			if (!hz || (n = strtoul(hz, &end, 10), *hz < '0' || *hz > '9' || *end || errno || n > 10000))
				return usage_error("--sample-hz takes a whole number from 0 to 10000");
		} else if (!strcmp(a, "--backends") || !strncmp(a, "--backends=", 11)) {
			const char *v = a[10] == '=' ? a + 11 : (++i < argc ? argv[i] : NULL);

			if (!v || parse_backends(v, &which))
				return usage_error("--backends takes a list of omp, acc, cuda and opencl, e.g. omp,cuda");
		} else {
			return usage_error("unknown option '%s' for run (`gputool help run` shows the usage)", a);
		}
	}
	if (i >= argc)
		return usage_error("run needs a program: gputool run [OPTIONS] -- PROGRAM [ARGS...]");
	if (find_library(lib, sizeof(lib)))
		return fail("cannot find %s next to the gputool command or in its lib directory", LIB_NAME);

	if (out) {
		snprintf(dir, sizeof(dir), "%s", out);
	} else if (getenv("GPUTOOL_OUTPUT") && *getenv("GPUTOOL_OUTPUT")) {
		snprintf(dir, sizeof(dir), "%s", getenv("GPUTOOL_OUTPUT"));
	} else {
		char exe[256], job[128] = "";

		program_name(argv[i], exe, sizeof(exe));
		for (size_t k = 0; k < sizeof(job_vars) / sizeof(*job_vars) && !job[0]; k++)
			if (getenv(job_vars[k]) && *getenv(job_vars[k]))
				snprintf(job, sizeof(job), "%s", getenv(job_vars[k]));
		if (!job[0])
			snprintf(job, sizeof(job), "%d", (int)getpid());
		sanitize(job);
		snprintf(dir, sizeof(dir), "gputool-%s-%s", exe, job);
	}
	{
		int err = mkdir_p(dir);

		if (err)
			return fail("cannot create the output directory %s: %s", dir, strerror(-err));
	}
	if (setenv("GPUTOOL_OUTPUT", dir, 1) || (hz && setenv("GPUTOOL_SAMPLE_HZ", hz, 1)))
		return fail("cannot set the environment: %s", strerror(errno));
	if (trace && setenv("GPUTOOL_TRACE", "1", 1))
		return fail("cannot set the environment: %s", strerror(errno));
	if (((which & B_OMP) && join_list("OMP_TOOL_LIBRARIES", lib, 1)) ||
	    ((which & B_OPENCL) && join_list("OPENCL_LAYERS", lib, 0)) ||
	    ((which & B_ACC) && set_single("ACC_PROFLIB", lib, "OpenACC")) ||
	    ((which & B_CUDA) && set_single("CUDA_INJECTION64_PATH", lib, "CUDA")))
		return fail("cannot set the environment: %s", strerror(errno));

	execvp(argv[i], argv + i);
	fprintf(stderr, "gputool: cannot run %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
