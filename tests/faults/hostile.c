/* SPDX-License-Identifier: MIT */
/*
 * A program that does what real programs do to a tool. Each mode first runs
 * an OpenMP team in work() for about 0.1 s of the initial thread's CPU time
 * (so that there is something to profile), then:
 *
 *   exit N            exit(N)
 *   return N          returns N from main
 *   _exit N           _exit(N): no exit handlers run
 *   thread-exit N     a second thread calls exit(N) while main waits
 *   close-stderr F    closes fd 2, opens F (it gets fd 2), writes "data\n" to it
 *   threads N C       N threads, C at a time (256 KiB stacks), each runs a
 *                     one-thread team; prints "threads N"
 *   deep N            a team at the bottom of N nested calls
 *   atexit-omp        an exit handler runs a team; prints "atexit ran"
 *   fork              a child runs a team and exits 0; prints "child 0"
 *   system            system("true"); prints "system 0"
 *   own-segv          its own SIGSEGV handler recovers from a fault (siglongjmp);
 *                     prints "recovered"
 *   own-prof          its own ITIMER_PROF (SIGPROF) handler ticks while it
 *                     works; prints "prof ticks" when it saw some
 *   nofile            lowers RLIMIT_NOFILE to what is open now
 *   big-stdout        writes 4 MiB to stdout, then a line with its sum
 *   raise-exit        raise(SIGTERM), then returns 0 from main
 *   term-in-exit      returns 0 from main; a thread sends SIGTERM once the
 *                     tool's output directory ($GPUTOOL_OUTPUT) has a file
 *   buffered N        N bytes of text on stdout, left in stdio's buffer for
 *                     exit to flush (N under BUFSIZ when stdout is a file)
 *   wide N            a team under each of 2^N calling contexts (a large
 *                     profile, a long write at exit); says "exiting" on
 *                     stderr as main returns 0
 *
 * Prints "done" last (modes that return normally).
 */
#include <dirent.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noinline)) static double burn(double x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 0.999 + 1.0;
	return x;
}

/* About `s` seconds of the calling thread's CPU time in OpenMP teams. */
__attribute__((noinline)) static void work(double s)
{
	double t0 = cpu_s();

	while (cpu_s() - t0 < s) {
		double x = 0;

#pragma omp parallel for reduction(+ : x)
		for (int i = 0; i < 8; i++)
			x += burn(i);
		sink += x;
	}
}

/* A team under each of 2^depth distinct calling contexts: at every level
 * the call goes through one of two call sites. */
__attribute__((noinline)) static void wide(int depth, unsigned path);

__attribute__((noinline)) static void wide_left(int depth, unsigned path)
{
	wide(depth, path << 1);
	sink += 1;
}

__attribute__((noinline)) static void wide_right(int depth, unsigned path)
{
	wide(depth, path << 1 | 1);
	sink += 2;
}

__attribute__((noinline)) static void wide(int depth, unsigned path)
{
	if (depth == 0) {
#pragma omp parallel
		sink += (double)path;
		return;
	}
	wide_left(depth - 1, path);
	wide_right(depth - 1, path);
}

/* Sends SIGTERM once the directory $GPUTOOL_OUTPUT has an entry: the tool
 * has begun to write its output at the program's exit. */
static void *term_when_written(void *arg)
{
	const char *dir = arg;
	struct timespec tick = { 0, 100000 };

	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;
		int any = 0;

		while (d && (e = readdir(d)))
			any |= e->d_name[0] != '.';
		if (d)
			closedir(d);
		if (any)
			break;
		nanosleep(&tick, NULL);
	}
	kill(getpid(), SIGTERM);
	return NULL;
}

static void *exit_from_thread(void *arg)
{
	exit((int)(intptr_t)arg);
}

static void *one_team(void *arg)
{
	double x = 0;

	(void)arg;
#pragma omp parallel num_threads(1) reduction(+ : x)
	x += burn(1);
	sink += x;
	return NULL;
}

static int many_threads(int n, int at_once)
{
	pthread_t *th = calloc((size_t)at_once, sizeof(*th));
	pthread_attr_t attr;

	if (!th)
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int done = 0; done < n; done += at_once) {
		int k = n - done < at_once ? n - done : at_once;

		for (int i = 0; i < k; i++)
			if (pthread_create(&th[i], &attr, one_team, NULL)) {
				fprintf(stderr, "pthread_create failed after %d threads\n", done + i);
				return 1;
			}
		for (int i = 0; i < k; i++)
			pthread_join(th[i], NULL);
	}
	printf("threads %d\n", n);
	free(th);
	return 0;
}

__attribute__((noinline)) static int deep(int n)
{
	if (n > 0)
		return deep(n - 1) + 1;
	work(0.02);
	return 0;
}

static void team_at_exit(void)
{
	work(0.01);
	puts("atexit ran");
}

static sigjmp_buf recover;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(recover, 1);
}

static volatile sig_atomic_t prof_ticks;

static void on_prof(int sig)
{
	(void)sig;
	prof_ticks++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;

	if (!strcmp(mode, "own-prof")) {
		struct itimerval it = { { 0, 5000 }, { 0, 5000 } };

		signal(SIGPROF, on_prof);
		setitimer(ITIMER_PROF, &it, NULL);
	}
	work(0.1);
	if (!strcmp(mode, "exit")) {
		exit(n);
	} else if (!strcmp(mode, "return")) {
		return n;
	} else if (!strcmp(mode, "_exit")) {
		_exit(n);
	} else if (!strcmp(mode, "thread-exit")) {
		pthread_t th;

		pthread_create(&th, NULL, exit_from_thread, (void *)(intptr_t)n);
		pthread_join(th, NULL);
	} else if (!strcmp(mode, "close-stderr") && argc > 2) {
		static const char data[] = "data\n";
		int fd;

		close(2);
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd != 2)
			return 3;
		if (write(fd, data, sizeof(data) - 1) != (ssize_t)sizeof(data) - 1)
			return 4;
		work(0.02);
	} else if (!strcmp(mode, "threads")) {
		if (many_threads(n, argc > 3 ? atoi(argv[3]) : 1))
			return 1;
	} else if (!strcmp(mode, "deep")) {
		deep(n);
	} else if (!strcmp(mode, "atexit-omp")) {
		atexit(team_at_exit);
	} else if (!strcmp(mode, "fork")) {
		int status = -1;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			work(0.05);
			exit(0);
		}
		waitpid(pid, &status, 0);
		printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (!strcmp(mode, "system")) {
		int status = system("true");

		printf("system %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (!strcmp(mode, "own-segv")) {
		struct sigaction sa = { .sa_handler = on_segv };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		if (!sigsetjmp(recover, 1))
			*(volatile int *)(uintptr_t)(sink < 0 ? 1 : 0) = 1;
		puts("recovered");
		work(0.02);
	} else if (!strcmp(mode, "own-prof")) {
		work(0.1);
		if (prof_ticks > 0)
			puts("prof ticks");
	} else if (!strcmp(mode, "nofile")) {
		struct rlimit rl;
		int fd = dup(0);

		/* Everything open now stays usable; nothing more can be opened. */
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = (rlim_t)(fd >= 0 ? fd : 3);
		if (fd >= 0)
			close(fd);
		setrlimit(RLIMIT_NOFILE, &rl);
		work(0.02);
	} else if (!strcmp(mode, "raise-exit")) {
		/* The signal's default action would end the program here; under
		 * the tool it goes on to exit while the profile is written. */
		raise(SIGTERM);
		return 0;
	} else if (!strcmp(mode, "term-in-exit") && getenv("GPUTOOL_OUTPUT")) {
		pthread_t th;

		if (pthread_create(&th, NULL, term_when_written, getenv("GPUTOOL_OUTPUT")))
			return 1;
		return 0;
	} else if (!strcmp(mode, "buffered")) {
		for (int i = 0; i < n; i++)
			putchar(i % 64 == 63 ? '\n' : 'a' + i % 26);
	} else if (!strcmp(mode, "wide")) {
		wide(n, 0);
		fputs("exiting\n", stderr);
		return 0;
	} else if (!strcmp(mode, "big-stdout")) {
		static char buf[4096];
		unsigned long sum = 0;

		for (int i = 0; i < 1024; i++) {
			for (size_t j = 0; j < sizeof(buf); j++)
				buf[j] = (char)('a' + (i + (int)j) % 26);
			for (size_t j = 0; j < sizeof(buf); j++)
				sum += (unsigned char)buf[j];
			fwrite(buf, 1, sizeof(buf), stdout);
		}
		printf("\nsum %lu\n", sum);
	}
	puts("done");
	return 0;
}
