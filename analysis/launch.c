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
 * application makes). ACC_PROFLIB, CUDA_INJECTION64_PATH,
 * NVTX_INJECTION64_PATH and KOKKOS_TOOLS_LIBS name a single library (Kokkos
 * loads only the first of its list): one that is not gputool's is left
 * alone and that layer is not measured, with a note saying so.
 *
 * The library also goes into LD_PRELOAD, first (after a sanitizer runtime,
 * which must stay first), with GPUTOOL_PRELOAD=1: it then starts at load
 * and samples the program's CPU time from process start, not from the
 * first call into a runtime, and a program that loads no runtime at all is
 * measured too. Every variable names the library by the one resolved path,
 * so a runtime's later dlopen of it finds the preloaded instance: one tool
 * per process. A user's GPUTOOL_PRELOAD is kept, and 0 leaves the library
 * out of LD_PRELOAD (the runtimes load it, as without gputool run).
 *
 * LLVM's libomptarget connects itself to the OpenMP runtime's OMPT through
 * dlopen("libomp.so"): the development name, which distributions ship only in
 * LLVM's own directory (Debian: /usr/lib/llvm-19/lib). Programs find libomp
 * there through their RUNPATH, which does not serve another library's
 * dlopen, so without help no target callback ever fires. For a program that
 * loads libomptarget, gputool asks the dynamic loader which libomp the
 * program loads and puts first on LD_LIBRARY_PATH a directory holding only a
 * libomp.so that links to that very file: libomptarget's dlopen then finds
 * the library already loaded, never a second copy, and nothing else the
 * program loads changes.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "core/output.h"

#define EXIT_OWN_FAILURE 125 /* like env(1): gputool itself failed */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127
#define LIB_NAME "libgputool.so"

/* A sanitizer build of the library needs the sanitizer's runtime in the
 * program it is loaded into (see can_preload). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED_LIB 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED_LIB 1
#endif
#endif

enum { B_OMP = 1, B_ACC = 2, B_CUDA = 4, B_OPENCL = 8, B_NVTX = 16, B_KOKKOS = 32, B_ALL = 63 };

static const struct {
	const char *name;
	int bit;
} backends[] = {
	{ "omp", B_OMP }, { "acc", B_ACC }, { "cuda", B_CUDA }, { "opencl", B_OPENCL }, { "nvtx", B_NVTX },
	{ "kokkos", B_KOKKOS },
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

/* Whether list (entries separated by any of seps) names lib, by path. */
static int list_has(const char *list, const char *seps, const char *lib)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, seps);
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
	if (list_has(old, ":", lib))
		return 0;
	if (asprintf(&v, "%s:%s", first ? lib : old, first ? old : lib) < 0)
		return -1;
	rc = setenv(name, v, 1);
	free(v);
	if (list_has(old, ":", LIB_NAME))
		note("%s names %s without a directory, which the runtime looks for on the library path only; "
		     "gputool adds %s",
		     name, LIB_NAME, lib);
	else if (first)
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
	if (!strcmp(old, LIB_NAME)) {
		note("%s names %s without a directory, which the runtime looks for on the library path only; "
		     "gputool sets %s",
		     name, LIB_NAME, lib);
		return setenv(name, lib, 1);
	}
	if (!same_file(old, lib))
		note("%s is set to %s; leaving it, so %s is not measured (unset it to let gputool measure)", name, old,
		     what);
	return 0;
}

/*
 * Kokkos Tools: KOKKOS_TOOLS_LIBS, unless the user names a tool there or in
 * the older KOKKOS_PROFILE_LIBRARY. Kokkos loads only the first library of
 * a ';'-separated list (a tool may chain to the rest), so gputool neither
 * goes first (the user's tool would not run) nor last (gputool would not):
 * the user's choice stands. Kokkos aborts when the two variables differ, so
 * with KOKKOS_PROFILE_LIBRARY set, KOKKOS_TOOLS_LIBS stays unset.
 */
static int set_kokkos(const char *lib)
{
	const char *old = getenv("KOKKOS_PROFILE_LIBRARY");

	if (old && *old && !getenv("KOKKOS_TOOLS_LIBS")) {
		if (!same_file(old, lib))
			note("KOKKOS_PROFILE_LIBRARY is set to %s; leaving it, so Kokkos kernels are not measured "
			     "by label (unset it to let gputool measure)",
			     old);
		return 0;
	}
	return set_single("KOKKOS_TOOLS_LIBS", lib, "Kokkos");
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-'))
			*s = '_';
}

/* The program's file, as exec will find it (out = prog when it has a '/'). */
static void program_path(const char *prog, char *out, size_t len)
{
	snprintf(out, len, "%s", prog);
	if (strchr(prog, '/'))
		return;
	{
		const char *path = getenv("PATH");

		for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
			size_t n = strcspn(p, ":");
			char found[PATH_MAX];

			snprintf(found, sizeof(found), "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
			if (!access(found, X_OK)) {
				snprintf(out, len, "%s", found);
				return;
			}
			p += n;
			if (*p)
				p++;
		}
	}
}

/* The program's file name, as exec will find it, symbolic links resolved. */
static void program_name(const char *prog, char *out, size_t len)
{
	char found[PATH_MAX], real[PATH_MAX];
	const char *use = found;

	program_path(prog, found, sizeof(found));
	if (realpath(found, real))
		use = real;
	snprintf(out, len, "%s", gt_base_name(use));
	sanitize(out);
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

/* The ELF interpreter (PT_INTERP) of path, in out; -1 when path is not a
 * dynamically linked ELF file of this machine's class. */
static int elf_interp(const char *path, char *out, size_t len)
{
	ElfW(Ehdr) eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_phentsize != sizeof(ElfW(Phdr)))
		goto out_close;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		ElfW(Phdr) ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_INTERP)
			continue;
		if (!ph.p_filesz || ph.p_filesz >= len ||
		    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			break;
		out[ph.p_filesz] = '\0';
		rc = out[0] == '/' ? 0 : -1;
		break;
	}
out_close:
	close(fd);
	return rc;
}

/* The dynamic loader's own list of what prog loads (`ld.so --list`, as ldd
 * does): RUNPATH, RPATH, $ORIGIN, LD_LIBRARY_PATH, LD_PRELOAD, the loader's
 * cache and the libraries' own dependencies resolved exactly as they will be
 * when prog runs. The program itself does not run. With verify, the loader
 * also binds every symbol, as `ldd -r` does, and what it cannot resolve or
 * load comes in the text too. A malloc'd text, or NULL. */
static char *loader_list(const char *interp, const char *prog, int verify)
{
	size_t len = 0, cap = 1 << 16;
	char *buf, sink[4096];
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC))
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (dup2(fds[1], STDOUT_FILENO) < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    dup2(verify ? fds[1] : null, STDERR_FILENO) < 0)
			_exit(127);
		/* This process has one thread: setenv after fork is safe. The
		 * loader's --list does not relocate; its trace mode, as `ldd -r`
		 * drives it, does. */
		if (verify) {
			if (setenv("LD_TRACE_LOADED_OBJECTS", "1", 1) || setenv("LD_BIND_NOW", "1", 1) ||
			    setenv("LD_WARN", "1", 1))
				_exit(127);
			execl(interp, interp, prog, (char *)NULL);
			_exit(127);
		}
		execl(interp, interp, "--list", prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	buf = malloc(cap);
	/* Read to the end, so that the loader never blocks on a full pipe. */
	while ((n = read(fds[0], buf && len + 1 < cap ? buf + len : sink,
			 buf && len + 1 < cap ? cap - 1 - len : sizeof(sink))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (buf && len + 1 < cap)
			len += (size_t)n;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!buf || !WIFEXITED(status) || WEXITSTATUS(status)) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* In the loader's list, the file that the library whose name starts with
 * prefix resolved to: "\tlibomp.so.5 => /usr/lib/llvm-19/lib/libomp.so.5
 * (0x7f...)". 0 when found. */
static int listed(const char *list, const char *prefix, char *out, size_t len)
{
	size_t np = strlen(prefix);

	for (const char *l = list; *l;) {
		const char *end = strchr(l, '\n'), *p = l, *arrow, *addr;

		if (!end)
			end = l + strlen(l);
		while (p < end && (*p == '\t' || *p == ' '))
			p++;
		arrow = memmem(p, (size_t)(end - p), " => ", 4);
		if (arrow && (size_t)(end - p) > np && !strncmp(p, prefix, np) && (p[np] == '.' || p[np] == ' ')) {
			arrow += 4;
			addr = end;
			while (addr > arrow && strncmp(addr, " (0x", 4))
				addr--;
			if (addr > arrow && *arrow == '/' && (size_t)(addr - arrow) < len) {
				memcpy(out, arrow, (size_t)(addr - arrow));
				out[addr - arrow] = '\0';
				return 0;
			}
		}
		l = *end ? end + 1 : end;
	}
	return -1;
}

/*
 * For a program that loads libomptarget: a directory under the output
 * directory, named after the libomp the program loads, holding only
 * libomp.so -> that file, goes first on LD_LIBRARY_PATH (the user's entries
 * follow). The ranks of a job share the directory: each creates it or finds
 * it, with the same link, already there. Returns 0, or -1 with why in err.
 */
static int offload_libomp(const char *prog, const char *outdir, char *err, size_t err_len)
{
	char path[PATH_MAX], interp[PATH_MAX], lib[PATH_MAX], real[PATH_MAX], out_real[PATH_MAX];
	char dir[PATH_MAX + 32], link[PATH_MAX + 48], seen[PATH_MAX];
	const char *old = getenv("LD_LIBRARY_PATH");
	char *list, *v;
	uint32_t h = 2166136261u; /* FNV-1a */
	ssize_t n;
	int rc;

	program_path(prog, path, sizeof(path));
	if (elf_interp(path, interp, sizeof(interp)) || !(list = loader_list(interp, path, 0)))
		return 0;
	rc = listed(list, "libomptarget.so", lib, sizeof(lib)) || listed(list, "libomp.so", lib, sizeof(lib));
	free(list);
	if (rc)
		return 0;
	if (!realpath(lib, real) || !realpath(outdir, out_real)) {
		snprintf(err, err_len, "cannot resolve %s: %s", lib, strerror(errno));
		return -1;
	}
	for (const char *c = real; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(dir, sizeof(dir), "%s/.libomp-%08x", out_real, (unsigned)h);
	snprintf(link, sizeof(link), "%s/libomp.so", dir);
	if ((mkdir(dir, 0755) && errno != EEXIST) || (symlink(real, link) && errno != EEXIST)) {
		snprintf(err, err_len, "cannot create %s: %s", link, strerror(errno));
		return -1;
	}
	n = readlink(link, seen, sizeof(seen) - 1);
	if (n < 0 || (seen[n] = '\0', strcmp(seen, real))) {
		snprintf(err, err_len, "%s does not link to %s", link, real);
		return -1;
	}
	if (old && *old ? asprintf(&v, "%s:%s", dir, old) < 0 : !(v = strdup(dir))) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	rc = setenv("LD_LIBRARY_PATH", v, 1);
	free(v);
	if (rc) {
		snprintf(err, err_len, "cannot set LD_LIBRARY_PATH: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The sanitizer runtimes, by the part of their file name after "lib" or
 * "libclang_rt.": each refuses to start unless it comes first in the
 * initial library list. entry: n characters of a list. */
static int sanitizer_runtime(const char *entry, size_t n)
{
	static const char *const names[] = { "asan", "hwasan", "lsan", "msan", "tsan", "ubsan" };
	const char *base = entry, *end = entry + n;
	size_t len;

	for (const char *c = entry; c < end; c++)
		if (*c == '/')
			base = c + 1;
	if ((size_t)(end - base) > 12 && !strncmp(base, "libclang_rt.", 12))
		base += 12;
	else if ((size_t)(end - base) > 3 && !strncmp(base, "lib", 3))
		base += 3;
	else
		return 0;
	for (len = 0; base + len < end && base[len] >= 'a' && base[len] <= 'z'; len++)
		;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strlen(names[i]) == len && !strncmp(base, names[i], len))
			return 1;
	return 0;
}

#ifdef SANITIZED_LIB
/*
 * A sanitizer build of the library leaves the sanitizer's symbols to the
 * program: one built with the sanitizer, or run with its runtime preloaded.
 * Preloaded into any other (a shell, env), the library would stop it at
 * load, so it is preloaded only where the loader, asked with the
 * LD_PRELOAD just set, loads it and binds every symbol it needs. Elsewhere
 * the runtimes load it when the program calls them, as before.
 */
static int can_preload(const char *prog, const char *lib)
{
	char path[PATH_MAX], interp[PATH_MAX];
	char *list;
	int ok = 0;

	program_path(prog, path, sizeof(path));
	if (elf_interp(path, interp, sizeof(interp)) || !(list = loader_list(interp, path, 1)))
		return 0;
	if (strstr(list, lib)) {
		ok = 1;
		for (const char *l = list; *l;) {
			size_t n = strcspn(l, "\n");

			if (memmem(l, n, lib, strlen(lib)) &&
			    (memmem(l, n, "undefined symbol", 16) || memmem(l, n, "cannot be preloaded", 19)))
				ok = 0;
			l += n;
			if (*l)
				l++;
		}
	}
	free(list);
	return ok;
}
#else
static int can_preload(const char *prog, const char *lib)
{
	(void)prog;
	(void)lib;
	return 1;
}
#endif

/*
 * LD_PRELOAD: lib first, after the sanitizer runtimes that lead the user's
 * list; the user's entries kept, in their order. Then GPUTOOL_PRELOAD=1,
 * unless the user set it: 0 of theirs keeps the library out of LD_PRELOAD.
 */
static int preload(const char *prog, const char *lib)
{
	const char *old = getenv("LD_PRELOAD"), *mine = getenv("GPUTOOL_PRELOAD"), *head_end, *tail;
	static const char *const off[] = { "0", "no", "off", "false" };
	char *v;
	int rc;

	for (size_t k = 0; mine && k < sizeof(off) / sizeof(*off); k++)
		if (!strcasecmp(mine, off[k]))
			return 0;
	if (!old || !*old) {
		if (setenv("LD_PRELOAD", lib, 1))
			return -1;
	} else if (!list_has(old, ": ", lib)) {
		/* The sanitizer runtimes that lead the list: [old, head_end). */
		head_end = tail = old;
		for (;;) {
			const char *p = tail + strspn(tail, ": ");
			size_t n = strcspn(p, ": ");

			if (!n || !sanitizer_runtime(p, n))
				break;
			head_end = p + n;
			tail = head_end;
		}
		tail += strspn(tail, ": ");
		if (asprintf(&v, "%.*s%s%s%s%s", (int)(head_end - old), old, head_end > old ? ":" : "", lib,
			     *tail ? ":" : "", tail) < 0)
			return -1;
		rc = setenv("LD_PRELOAD", v, 1);
		free(v);
		if (rc)
			return -1;
	}
	if (!can_preload(prog, lib))
		return old && *old ? setenv("LD_PRELOAD", old, 1) : unsetenv("LD_PRELOAD");
	return mine && *mine ? 0 : setenv("GPUTOOL_PRELOAD", "1", 1);
}

enum { OPT_TRACE = 256, OPT_FORCE, OPT_PCS, OPT_COUNTS, OPT_HZ, OPT_SAMPLE, OPT_BACKENDS };

static const struct option run_options[] = {
	{ "output", required_argument, NULL, 'o' },	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "force", no_argument, NULL, OPT_FORCE },	{ "pc-sampling", optional_argument, NULL, OPT_PCS },
	{ "sass-counts", no_argument, NULL, OPT_COUNTS },
	{ "sample-hz", required_argument, NULL, OPT_HZ }, { "sample", required_argument, NULL, OPT_SAMPLE },
	{ "backends", required_argument, NULL, OPT_BACKENDS }, { "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int gt_launch__main(int argc, char **argv)
{
	const char *out = NULL, *hz = NULL, *pcs = NULL, *what = NULL;
	int trace = 0, force = 0, counts = 0, which = B_ALL, i, c;
	char lib[PATH_MAX], dir[2 * PATH_MAX + 300], run[512];

	quiet = gt_output__rank() != 0;
	optind = 0; /* glibc: start over */
	opterr = 0;
	/* '+': options end at the program, whose own options follow it. */
	while ((c = getopt_long(argc, argv, "+:o:h", run_options, NULL)) != -1) {
		const char *v = optarg;
		char *end;
		unsigned long n;

		switch (c) {
		case 'o': out = v; break;
		case OPT_TRACE: trace = 1; break;
		case OPT_COUNTS: counts = 1; break;
		case OPT_FORCE: force = 1; break;
		case OPT_PCS:
			pcs = v ? v : "1";
			errno = 0;
			n = strtoul(pcs, &end, 10);
			if (*pcs < '0' || *pcs > '9' || *end || errno || (n != 1 && (n < 5 || n > 31)))
				return gt_usage_error("run", "--pc-sampling takes a period from 5 to 31 (a sample every "
						      "2^N cycles), or nothing for CUPTI's default");
			break;
		case OPT_HZ:
			hz = v;
			errno = 0;
			if ((n = strtoul(hz, &end, 10), *hz < '0' || *hz > '9' || *end || errno || n > 10000))
				return gt_usage_error("run", "--sample-hz takes a whole number from 0 to 10000");
			break;
		case OPT_SAMPLE:
			what = v;
			if (strcmp(what, "cpu") && strcmp(what, "wall") && strcmp(what, "cpu,wall") && strcmp(what, "wall,cpu"))
				return gt_usage_error("run", "--sample takes cpu, wall or cpu,wall");
			break;
		case OPT_BACKENDS:
			if (parse_backends(v, &which))
				return gt_usage_error("run", "--backends takes a list of omp, acc, cuda, opencl, nvtx and kokkos, e.g. omp,cuda");
			break;
		case 'h': return GT_HELP_ASKED;
		case ':':
			if (optopt == 'o')
				return gt_usage_error("run", "%s needs a directory", argv[optind - 1]);
			return gt_usage_error("run", "%s needs a value", argv[optind - 1]);
		default: return gt_usage_error("run", "unknown option '%s' for run", argv[optind - 1]);
		}
	}
	i = optind;
	if (i >= argc)
		return gt_usage_error("run", "run needs a program: gputool run [OPTIONS] -- PROGRAM [ARGS...]");
	if (find_library(lib, sizeof(lib)))
		return fail("cannot find %s next to the gputool command or in its lib directory", LIB_NAME);

	if (out) {
		snprintf(dir, sizeof(dir), "%s", out);
	} else if (getenv("GPUTOOL_OUTPUT") && *getenv("GPUTOOL_OUTPUT")) {
		snprintf(dir, sizeof(dir), "%s", getenv("GPUTOOL_OUTPUT"));
	} else {
		char exe[256], job[128] = "";

		program_name(argv[i], exe, sizeof(exe));
		if (gt_output__job_id())
			snprintf(job, sizeof(job), "%s", gt_output__job_id());
		if (!job[0])
			snprintf(job, sizeof(job), "%d", (int)getpid());
		sanitize(job);
		snprintf(dir, sizeof(dir), "gputool-%s-%s", exe, job);
	}
	/* Absolute: every process of the run writes there, whatever directory
	 * it starts in (a shell's `cd`, make -C) or moves to before the tool
	 * starts in it (loaded late, by a runtime). */
	if (dir[0] != '/') {
		char cwd[PATH_MAX], rel[sizeof(dir)];

		if (!getcwd(cwd, sizeof(cwd)))
			return fail("cannot tell the current directory: %s", strerror(errno));
		snprintf(rel, sizeof(rel), "%s", dir);
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", strcmp(cwd, "/") ? cwd : "", rel) >= sizeof(dir))
			return fail("the output directory's name is too long");
	}
	{
		struct stat st;
		int made = stat(dir, &st) && errno == ENOENT;
		int has_run = !gt_claim__run_id(run, sizeof(run)), err = gt_output__mkdir_p(dir);

		if (err)
			return fail("cannot create the output directory %s: %s", dir, strerror(-err));
		if ((err = gt_claim__dir(dir, has_run ? run : NULL, force)))
			return err;
		if (has_run && setenv("GPUTOOL_RUN", run, 1))
			return fail("cannot set the environment: %s", strerror(errno));
		/* Only a directory this run made may be removed when the
		 * program measured nothing (core/tool.c): one the user made
		 * stays, with the run's mark. */
		if (made ? setenv("GPUTOOL_OUTPUT_MADE", dir, 1) : unsetenv("GPUTOOL_OUTPUT_MADE"))
			return fail("cannot set the environment: %s", strerror(errno));
	}
	if (setenv("GPUTOOL_OUTPUT", dir, 1) || (hz && setenv("GPUTOOL_SAMPLE_HZ", hz, 1)))
		return fail("cannot set the environment: %s", strerror(errno));
	if (what && setenv("GPUTOOL_SAMPLE", what, 1))
		return fail("cannot set the environment: %s", strerror(errno));
	if (pcs && setenv("GPUTOOL_PC_SAMPLING", pcs, 1))
		return fail("cannot set the environment: %s", strerror(errno));
	if (counts && setenv("GPUTOOL_SASS_COUNTS", "1", 1))
		return fail("cannot set the environment: %s", strerror(errno));
	if (trace && setenv("GPUTOOL_TRACE", "1", 1))
		return fail("cannot set the environment: %s", strerror(errno));
	if (((which & B_OMP) && join_list("OMP_TOOL_LIBRARIES", lib, 1)) ||
	    ((which & B_OPENCL) && join_list("OPENCL_LAYERS", lib, 0)) ||
	    ((which & B_ACC) && set_single("ACC_PROFLIB", lib, "OpenACC")) ||
	    ((which & B_CUDA) && set_single("CUDA_INJECTION64_PATH", lib, "CUDA")) ||
	    ((which & B_NVTX) && set_single("NVTX_INJECTION64_PATH", lib, "NVTX")) ||
	    ((which & B_KOKKOS) && set_kokkos(lib)))
		return fail("cannot set the environment: %s", strerror(errno));
	if (which & B_OMP) {
		char why[PATH_MAX + 128];

		if (offload_libomp(argv[i], dir, why, sizeof(why)))
			note("OpenMP target regions will not be measured: %s", why);
	}
	if (preload(argv[i], lib))
		return fail("cannot set the environment: %s", strerror(errno));

	execvp(argv[i], argv + i);
	fprintf(stderr, "gputool: cannot run %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
