/* SPDX-License-Identifier: MIT */
/*
 * One run, one directory: which run `gputool run` starts, and its claim on
 * the output directory.
 *
 * A run is everything one `gputool run` starts: the program and every
 * process under it (a shell's commands, make's recipes, a job script's
 * programs, helpers), and, in an MPI job, every rank of the job. Its id goes
 * into the environment (GPUTOOL_RUN), which all of them inherit, and from
 * there into every profile (meta key "run"), so that `gputool report` tells
 * runs apart by it rather than by guessing from ranks and parents.
 *
 * The claim is the file DIR/.gputool-run: the run's id on its first line,
 * its owner (host, pid and the pid's start time) on the second. It appears
 * whole or not at all (written aside, then link()ed into place, which fails
 * when the name exists), so of two runs that start together exactly one
 * gets the directory, and a rank of the owner's job always reads a complete
 * id. A claim whose owner is gone and that left no profile (a run that
 * measured nothing, one killed early) is taken over, under a lock file so
 * that two takers cannot both succeed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include "analysis/analysis.h"
#include "core/output.h"

#define EXIT_OWN_FAILURE 125
#define RUN_MARK ".gputool-run"
#define MARK_LEN 512

__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
	va_list ap;

	fputs("gputool: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_OWN_FAILURE;
}

static void clean(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-' || *s == ':'))
			*s = '_';
}

/* A process's start time in clock ticks after boot (/proc/PID/stat's 22nd
 * field): with the pid, it names one process, which a reused pid does not. */
static unsigned long long start_ticks(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* After the command's name, which may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &t) != 1)
		return 0;
	return t;
}

int gt_claim__run_id(char *buf, size_t len)
{
	const char *inherited = getenv("GPUTOOL_RUN"), *job = gt_output__job_id(), *step = getenv("SLURM_STEP_ID");
	char host[256] = "";
	struct timespec ts;

	if (inherited && *inherited) {
		snprintf(buf, len, "%s", inherited);
		return 0;
	}
	if (job && *job) {
		/* One Slurm allocation runs many steps, each a job of its own. */
		if (getenv("SLURM_JOB_ID") && !strcmp(job, getenv("SLURM_JOB_ID")) && step && *step)
			snprintf(buf, len, "job:%s.%s", job, step);
		else
			snprintf(buf, len, "job:%s", job);
		clean(buf);
		return 0;
	}
	/* Ranks of a launcher that names no job could not agree on an id. */
	if (gt_output__job_size() > 1)
		return -1;
	gethostname(host, sizeof(host) - 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, len, "%s:%ld:%lld.%09ld", host, (long)getpid(), (long long)ts.tv_sec, ts.tv_nsec);
	clean(buf);
	return 0;
}

/* Profiles (*.gtprof) in @dir; 0 when it cannot be read. */
static unsigned count_profiles(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		n += len > 7 && !strcmp(e->d_name + len - 7, ".gtprof");
	}
	closedir(d);
	return n;
}

/* Creates @path holding @text, whole or not at all: 0, -EEXIST when the
 * name is taken, else a negative errno. */
static int create_whole(const char *path, const char *text)
{
	char tmp[PATH_MAX + 64];
	size_t len = strlen(text);
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && link(tmp, path))
		err = -errno;
	unlink(tmp);
	if (err != -EPERM && err != -EOPNOTSUPP && err != -ENOSYS)
		return err;
	/* A file system without hard links: created, then written (a reader
	 * may see it empty for that moment, and reads again). */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
	close(fd);
	return err;
}

/* The claim's text, or "" when there is none (-ENOENT). */
static int read_mark(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	/* Empty only for the moment a file system without hard links takes
	 * to write it (create_whole): read again, for a second at most. */
	for (int i = 0; i < 100; i++) {
		struct timespec ms10 = { 0, 10000000 };

		n = pread(fd, buf, len - 1, 0);
		if (n != 0)
			break;
		nanosleep(&ms10, NULL);
	}
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return 0;
}

struct mark {
	char id[MARK_LEN];
	char host[256];
	long pid;
	unsigned long long start;
};

static void parse_mark(const char *text, struct mark *m)
{
	size_t n = strcspn(text, "\n");

	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%.*s", (int)n, text);
	/* A claim of an earlier version holds the id alone: no owner known. */
	if (text[n] == '\n' && sscanf(text + n + 1, "%255s %ld %llu", m->host, &m->pid, &m->start) != 3)
		m->pid = 0;
}

/* Whether the claim's owner may still be running: on this host, its pid with
 * its start time; on another host, or named by an earlier version's claim,
 * it cannot be told, and it is taken as running unless it was an earlier
 * version's (which said nothing of it, and was taken over when it left no
 * profile). */
static int owner_running(const struct mark *m)
{
	char host[256] = "";

	if (!m->pid)
		return 0;
	gethostname(host, sizeof(host) - 1);
	if (strcmp(host, m->host))
		return 1;
	return start_ticks(m->pid) == m->start;
}

/* Waits up to 2 s for @path to go: 0 when it has. */
static int wait_gone(const char *path)
{
	struct timespec ms10 = { 0, 10000000 };

	for (int i = 0; i < 200; i++) {
		if (access(path, F_OK) && errno == ENOENT)
			return 0;
		nanosleep(&ms10, NULL);
	}
	return -1;
}

static int refuse_profiles(const char *dir, unsigned n)
{
	return refuse("%s already holds the profiles of another run (%u .gtprof file%s); choose another directory "
		      "with -o, or pass --force to add this run's profiles to them",
		      dir, n, n == 1 ? "" : "s");
}

int gt_claim__dir(const char *dir, const char *run, int force)
{
	char path[PATH_MAX + 32], lock[PATH_MAX + 32], host[256] = "";
	char text[MARK_LEN + 300], seen[sizeof(text)], now[sizeof(text)];
	struct mark m;
	unsigned n;
	int err;

	if (force)
		return 0;
	if (!run) {
		/* An MPI job without a job id: its ranks cannot be told from
		 * another run's, so only a single process is checked. */
		if (gt_output__job_size() > 1)
			return 0;
		n = count_profiles(dir);
		return n ? refuse_profiles(dir, n) : 0;
	}
	gethostname(host, sizeof(host) - 1);
	clean(host);
	snprintf(text, sizeof(text), "%s\n%s %ld %llu\n", run, host, (long)getpid(), start_ticks(getpid()));
	snprintf(path, sizeof(path), "%s/" RUN_MARK, dir);
	snprintf(lock, sizeof(lock), "%s/" RUN_MARK ".lock", dir);
	/* A few rounds: each one that does not decide lost a race to a claim
	 * that the next round reads. */
	for (int round = 0; round < 4; round++) {
		err = create_whole(path, text);
		if (!err) {
			/* Ours now: profiles already there are another run's,
			 * of a version that wrote no claim or of the bare library. */
			if ((n = count_profiles(dir))) {
				unlink(path);
				return refuse_profiles(dir, n);
			}
			return 0;
		}
		if (err != -EEXIST)
			return refuse("cannot claim %s for this run: %s", dir, strerror(-err));
		if (read_mark(path, seen, sizeof(seen)) == -ENOENT)
			continue;
		parse_mark(seen, &m);
		/* Another process of this run: a rank of the same job, or a
		 * gputool run that a process of the run started. */
		if (!strcmp(m.id, run))
			return 0;
		if ((n = count_profiles(dir)))
			return refuse_profiles(dir, n);
		if (owner_running(&m))
			return refuse("%s is taken by another run, still going (pid %ld on %s); choose another directory "
				      "with -o, or pass --force to write there anyway",
				      dir, m.pid, m.host);
		/* Its owner is gone and wrote nothing here: take it over. The
		 * lock keeps a second taker from removing the claim this one
		 * makes; a plain claim racing with the take-over is one more
		 * round. */
		err = create_whole(lock, text);
		if (err == -EEXIST) {
			/* Another taker: a rank of this job (whose claim the
			 * next round reads) or another run. A lock left by a
			 * taker that died stays: said. */
			if (!wait_gone(lock))
				continue;
			return refuse("%s is being taken over by another run (or %s was left behind: remove it)", dir,
				      lock);
		}
		if (err)
			return refuse("cannot claim %s for this run: %s", dir, strerror(-err));
		if (!read_mark(path, now, sizeof(now)) && !strcmp(now, seen))
			unlink(path);
		err = create_whole(path, text);
		unlink(lock);
		if (!err)
			return 0;
		if (err != -EEXIST)
			return refuse("cannot claim %s for this run: %s", dir, strerror(-err));
	}
	return refuse("%s: too many runs claim it at once; choose another directory with -o", dir);
}
