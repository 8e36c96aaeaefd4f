/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_TEST_H
#define GT_TESTS_TEST_H

/*
 * The C tests' harness: each test case runs in a forked child, so a crash
 * fails that case only, and the parent reports every case; `PROGRAM NAME`
 * runs the one case NAME in place (ctest entries of one case, debuggers).
 * A failed CHECK ends the process with status 1, from a case or from any
 * helper it calls.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

#define CHECK_EQ_U(a, b)                                                                \
	do {                                                                            \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
		if (a_ != b_) {                                                         \
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, \
				__LINE__, #a, a_, #b, b_);                              \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

struct test_case {
	const char *name;
	void (*fn)(void);
};

static inline int test__run(const struct test_case *cases, int n)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		int status = 0;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			cases[i].fn();
			exit(0);
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok   %s\n", cases[i].name);
		} else {
			printf("FAIL %s\n", cases[i].name);
			failed++;
		}
	}
	printf("%d of %d passed\n", n - failed, n);
	return failed ? 1 : 0;
}

/* The case named argv[1] in place, or every case forked. Exit status: 0
 * when all passed, 1 when one failed, 2 for an unknown name. */
static inline int test__main(const struct test_case *cases, int n, int argc, char **argv)
{
	if (argc < 2)
		return test__run(cases, n);
	for (int i = 0; i < n; i++) {
		if (!strcmp(argv[1], cases[i].name)) {
			cases[i].fn();
			printf("ok   %s\n", cases[i].name);
			return 0;
		}
	}
	fprintf(stderr, "no test named %s\n", argv[1]);
	return 2;
}

#define TEST_CASE(fn) { #fn, fn }

#define TEST_MAIN(...)                                                                  \
	int main(int argc, char **argv)                                                 \
	{                                                                               \
		static const struct test_case cases[] = { __VA_ARGS__ };                \
		return test__main(cases, (int)(sizeof(cases) / sizeof(cases[0])), argc, argv); \
	}

/* An executable script at @path, its text from @fmt (a program the code
 * under test runs: a stand-in for nvdisasm, ...). */
__attribute__((format(printf, 2, 3))) static inline void test__script(const char *path, const char *fmt, ...)
{
	FILE *f = fopen(path, "w");
	va_list ap;

	if (!f || chmod(path, 0755)) {
		fprintf(stderr, "cannot write the script %s\n", path);
		exit(1);
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f)) {
		fprintf(stderr, "cannot write the script %s\n", path);
		exit(1);
	}
}

#endif
