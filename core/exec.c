/* SPDX-License-Identifier: MIT */
/*
 * A program that ends by exec'ing another leaves no exit for the tool to
 * write its output at. When the library is preloaded (`gputool run`), these
 * exec functions come before libc's: they write the output (gt_tool__stop,
 * which a failed exec leaves stopped), then call libc's. Loaded by a
 * runtime (OMP_TOOL_LIBRARIES, ...) the library does not come first, and
 * an exec goes by unseen (docs/REPORT.md says so).
 *
 * Only the process the tool measures writes: never a vfork child, which
 * shares its parent's memory (gt_tool__before_exec checks the pid).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "core/tool.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_ARGS 4096

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

extern char **environ;

/* The profile is written; then the next definition of @name, or NULL with
 * errno ENOSYS. */
static void *before_exec(const char *name)
{
	void *real = dlsym(RTLD_NEXT, name);

	gt_tool__before_exec();
	if (!real)
		errno = ENOSYS;
	return real;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[]);
int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = (execve_fn)before_exec("execve");

	return real ? real(path, argv, envp) : -1;
}

EXPORT int execv(const char *path, char *const argv[]);
int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]);
int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn real = (execvpe_fn)before_exec("execvpe");

	return real ? real(file, argv, envp) : -1;
}

EXPORT int execvp(const char *file, char *const argv[]);
int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]);
int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn real = (fexecve_fn)before_exec("fexecve");

	return real ? real(fd, argv, envp) : -1;
}

/* The variadic forms' arguments as an argv (first, then up to the NULL);
 * 0, or -1 with E2BIG past MAX_ARGS. */
static int collect(const char *first, va_list *ap, char **argv)
{
	int n = 0;

	argv[n++] = (char *)first;
	while (argv[n - 1]) {
		if (n == MAX_ARGS) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = va_arg(*ap, char *);
	}
	return 0;
}

/* execl and execlp: the list as an argv, then @call with the environment. */
#define EXEC_LIST(first, arg, call)                              \
	do {                                                     \
		char *argv[MAX_ARGS];                            \
		va_list ap;                                      \
		int err;                                         \
                                                                 \
		va_start(ap, arg);                               \
		err = collect(arg, &ap, argv);                   \
		va_end(ap);                                      \
		return err ? -1 : call(first, argv, environ);    \
	} while (0)

EXPORT int execl(const char *path, const char *arg, ...);
int execl(const char *path, const char *arg, ...)
{
	EXEC_LIST(path, arg, execve);
}

EXPORT int execlp(const char *file, const char *arg, ...);
int execlp(const char *file, const char *arg, ...)
{
	EXEC_LIST(file, arg, execvpe);
}

EXPORT int execle(const char *path, const char *arg, ...);
int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_ARGS];
	char *const *envp = NULL;
	va_list ap;
	int err;

	va_start(ap, arg);
	err = collect(arg, &ap, argv);
	if (!err)
		envp = va_arg(ap, char *const *);
	va_end(ap);
	return err ? -1 : execve(path, argv, envp);
}
