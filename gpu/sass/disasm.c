/* SPDX-License-Identifier: MIT */
/*
 * Running NVIDIA's disassembler on a cubin. At the measured program's exit
 * (PC sampling only): the cubin goes to a temporary file, nvdisasm reads
 * it, its output comes back through a pipe. The child gets the program's
 * environment without the variables that would load this library into it.
 * What it writes is kept for the next run (gpu/sass/cache.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "gpu/sass/sass.h"

/* A cubin of a large application takes nvdisasm seconds; past this, the
 * program's exit waits no longer (the samples stay by source line). */
#define TIME_LIMIT_NS (120ull * 1000000000ull)

extern char **environ;

/* Bumped by gt_sass__cancel: runs begun before end at once. Relaxed: a
 * run sees the bump within its next poll tick, which is all it needs. */
static atomic_uint generation;

void gt_sass__cancel(void)
{
	atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}

/* Read by the dynamic loader or by runtimes looking for tools. */
static const char *const unset[] = { "LD_PRELOAD=", "OMP_TOOL_LIBRARIES=", "CUDA_INJECTION64_PATH=",
				     "ACC_PROFLIB=", "OPENCL_LAYERS=", "OMP_TOOL=" };

static char **child_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	if (!(env = malloc((n + 1) * sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int keep = 1;

		for (size_t u = 0; u < sizeof(unset) / sizeof(unset[0]) && keep; u++)
			keep = strncmp(environ[i], unset[u], strlen(unset[u])) != 0;
		if (keep)
			env[k++] = environ[i];
	}
	env[k] = NULL;
	return env;
}

/* The program to run: @v, the toolkit's, or "nvdisasm" for a search of
 * PATH (then *@search is 1). */
static const char *program(const char *v, char *buf, size_t size, int *search)
{
	const char *home = getenv("CUDA_HOME");

	*search = 0;
	if (v && *v)
		return v;
	if (home && *home) {
		snprintf(buf, size, "%s/bin/nvdisasm", home);
		if (!access(buf, X_OK))
			return buf;
	}
	if (!access("/usr/local/cuda/bin/nvdisasm", X_OK))
		return "/usr/local/cuda/bin/nvdisasm";
	*search = 1;
	return "nvdisasm";
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* st_other of a kernel's symbol in a CUDA ELF (nvdisasm: STO_CUDA_ENTRY). */
#define GT_STO_CUDA_ENTRY 0x10

/* Calls @fn(index, name, st_other, @arg) for each function symbol of
 * @cubin, in symbol-table order, until it returns nonzero (then that). */
static int each_function(const void *cubin, size_t size, int (*fn)(size_t, const char *, unsigned, void *),
			 void *arg)
{
	Elf_Scn *scn = NULL;
	int ret = 0;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_memory((char *)(uintptr_t)cubin, size)))
		return -ENOENT;
	while (!ret && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; !ret && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    (name = elf_strptr(e, sh.sh_link, sym.st_name)))
				ret = fn(i, name, sym.st_other, arg);
		}
	}
	elf_end(e);
	return ret;
}

struct fun_list {
	const char *const *kernels;
	size_t n, at, named;
	char *buf;
	size_t len;
};

static int fun_list__add(size_t i, const char *name, unsigned other, void *arg)
{
	struct fun_list *l = arg;
	int want = 0;

	for (size_t k = 0; k < l->n && !want; k++)
		want = !strcmp(l->kernels[k], name);
	l->named += (size_t)want;
	if (!want && (other & GT_STO_CUDA_ENTRY))
		return 0;
	if ((size_t)snprintf(l->buf + l->at, l->len - l->at, "%s%zu", l->at ? "," : "", i) >= l->len - l->at)
		return -ENOENT;
	l->at += strlen(l->buf + l->at);
	return 0;
}

/*
 * nvdisasm's -fun list for @kernels in @cubin: the symbol indices of the
 * kernels named and of every function that is not a kernel, comma
 * separated, into @buf. 0, or -ENOENT when none of @kernels is there (or
 * the list does not fit).
 */
static int function_list(const void *cubin, size_t size, const char *const *kernels, size_t n, char *buf, size_t len)
{
	struct fun_list l = { .kernels = kernels, .n = n, .buf = buf, .len = len };

	buf[0] = 0;
	if (each_function(cubin, size, fun_list__add, &l))
		return -ENOENT;
	return l.named ? 0 : -ENOENT;
}

struct present {
	const char **names;
	size_t n, kept;
};

static int present__check(size_t i, const char *name, unsigned other, void *arg)
{
	struct present *p = arg;

	(void)i;
	(void)other;
	for (size_t k = p->kept; k < p->n; k++) {
		const char *hit = p->names[k];

		if (strcmp(hit, name))
			continue;
		p->names[k] = p->names[p->kept];
		p->names[p->kept++] = hit;
		break;
	}
	return p->kept == p->n;
}

/* Of @names (@n), those that are symbols of @cubin, moved to the front of
 * @names: their number. */
static size_t present(const void *cubin, size_t size, const char **names, size_t n)
{
	struct present p = { .names = names, .n = n };

	each_function(cubin, size, present__check, &p);
	return p.kept;
}

/* The cache's name for a module's kernels disassembled alone. */
#define PART "-fun"

/* Whether @text has the section of each of @names. */
static int part__has(const char *text, const char **names, size_t n)
{
	char pat[2048];

	for (size_t i = 0; i < n; i++) {
		if ((size_t)snprintf(pat, sizeof(pat), ".section\t.text.%s,", names[i]) >= sizeof(pat) || !strstr(text, pat))
			return 0;
	}
	return 1;
}

/* @names and the names of the sections of @text (a part kept before, which
 * it cuts into strings; NULL: none) in *@all (malloc()ed), *@n. */
static int part__names(char *text, const char **names, size_t n, const char ***all, size_t *n_all)
{
	static const char sec[] = ".section\t.text.";
	size_t cap = n + 16, k = 0;
	const char **v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[k++] = names[i];
	for (char *p = text; p && (p = strstr(p, sec));) {
		char *name = p + sizeof(sec) - 1, *end = strchr(name, ',');

		if (!end)
			break;
		*end = 0;
		p = end + 1;
		if (k == cap) {
			const char **grown = realloc(v, (cap *= 2) * sizeof(*v));

			if (!grown) {
				free(v);
				return -ENOMEM;
			}
			v = grown;
		}
		v[k++] = name;
	}
	*all = v;
	*n_all = k;
	return 0;
}

int gt_sass__disassemble(const char *want, const void *cubin, size_t size, const char *const *kernels,
			 size_t n_kernels, char **text, size_t *len)
{
	char fun[4096];
	unsigned gen;
	char path[] = "/tmp/gputool-cubin-XXXXXX", prog_buf[4096];
	const char *tmp = getenv("TMPDIR"), *prog;
	char tmpl[4096];
	char *argv[8], **env = NULL, *buf = NULL;
	size_t n = 0, cap = 0;
	posix_spawn_file_actions_t fa;
	int fd, pipefd[2] = { -1, -1 }, search, status = 0, err = -ENOMEM;
	pid_t pid;

	*text = NULL;
	*len = 0;
	gen = atomic_load_explicit(&generation, memory_order_relaxed);
	prog = program(want, prog_buf, sizeof(prog_buf), &search);
	if (!strcmp(prog, "0") || !strcmp(prog, "off"))
		return -ECANCELED;
	if (n_kernels) {
		/* Kept as one part per module: the kernels asked for differ from
		 * run to run (one run samples a short kernel, the next not),
		 * so a part that lacks one is replaced by one of them all. */
		const char **asked = malloc(n_kernels * sizeof(*asked)), **all = NULL;
		char *copy = NULL;
		size_t n_asked, n_all = 0;

		if (!asked)
			return -ENOMEM;
		memcpy(asked, kernels, n_kernels * sizeof(*asked));
		n_asked = present(cubin, size, asked, n_kernels);
		err = n_asked ? 0 : -ENOENT;
		if (!err && !gt_sass_cache__get(prog, cubin, size, PART, text, len)) {
			if (part__has(*text, asked, n_asked)) {
				free(asked);
				return 0;
			}
			copy = *text;
			*text = NULL;
			*len = 0;
		}
		if (!err)
			err = part__names(copy, asked, n_asked, &all, &n_all);
		if (!err)
			err = function_list(cubin, size, all, n_all, fun, sizeof(fun));
		free(all);
		free(copy);
		free(asked);
		if (err)
			return err;
	} else if (!gt_sass_cache__get(prog, cubin, size, NULL, text, len)) {
		return 0;
	}
	if (tmp && *tmp && snprintf(tmpl, sizeof(tmpl), "%s/gputool-cubin-XXXXXX", tmp) < (int)sizeof(tmpl))
		fd = mkostemp(tmpl, O_CLOEXEC);
	else
		fd = -1;
	if (fd < 0) {
		strcpy(tmpl, path);
		fd = mkostemp(tmpl, O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	err = write_all(fd, cubin, size);
	close(fd);
	if (err)
		goto out_unlink;
	err = -ENOMEM;
	if (!(env = child_env()))
		goto out_unlink;
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		goto out_unlink;
	}
	argv[0] = (char *)(uintptr_t)prog;
	argv[1] = (char *)"-c";
	argv[2] = (char *)"-g";
	argv[3] = (char *)"-gi"; /* where code was inlined */
	if (n_kernels) {
		argv[4] = (char *)"-fun";
		argv[5] = fun;
		argv[6] = tmpl;
		argv[7] = NULL;
	} else {
		argv[4] = tmpl;
		argv[5] = NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = -(search ? posix_spawnp : posix_spawn)(&pid, prog, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (err)
		goto out_close;
	for (uint64_t deadline = gt_clock__now() + TIME_LIMIT_NS;;) {
		struct pollfd pf = { .fd = pipefd[0], .events = POLLIN };
		uint64_t now = gt_clock__now();
		ssize_t r;
		int ready;

		if (now >= deadline || atomic_load_explicit(&generation, memory_order_relaxed) != gen) {
			kill(pid, SIGKILL);
			err = now >= deadline ? -ETIMEDOUT : -ECANCELED;
			break;
		}
		/* Ticks of at most 50 ms: a cancel is seen soon. */
		ready = poll(&pf, 1, (int)((deadline - now) / 1000000 + 1 < 50 ? (deadline - now) / 1000000 + 1 : 50));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0)
			continue;
		if (n + 65536 > cap) {
			char *grown = realloc(buf, cap = cap ? cap * 2 : 1 << 20);

			if (!grown) {
				err = -ENOMEM;
				break;
			}
			buf = grown;
		}
		r = read(pipefd[0], buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(pipefd[0]);
	pipefd[0] = -1;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		/* Reaped already (SIGCHLD ignored by the program): the
		 * output decides. */
		status = n ? 0 : 1 << 8;
		break;
	}
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO;
	if (!err) {
		buf[n] = 0;
		*text = buf;
		*len = n;
		buf = NULL;
		gt_sass_cache__put(prog, cubin, size, n_kernels ? PART : NULL, *text, *len);
	}
out_close:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
out_unlink:
	unlink(tmpl);
	free(env);
	free(buf);
	return err;
}

int gt_sass__cached(const char *want, const void *cubin, size_t size)
{
	char prog_buf[4096];
	const char *prog;
	int search;

	prog = program(want, prog_buf, sizeof(prog_buf), &search);
	if (!strcmp(prog, "0") || !strcmp(prog, "off"))
		return 0;
	return gt_sass_cache__has(prog, cubin, size, NULL) ? 2 : gt_sass_cache__has(prog, cubin, size, PART) ? 1 : 0;
}
