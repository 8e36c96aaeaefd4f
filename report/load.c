/* SPDX-License-Identifier: MIT */
/*
 * Reading a run: the profiles a path names, read one at a time and merged
 * into one run (merge.c). With a team of several processes (gputool-mpi),
 * rank 0 lists the profiles, every rank merges its share (balanced by file
 * size; reading and merging overlap in two threads), and the partial runs are reduced pairwise up a binomial tree into
 * rank 0's: log2(size) steps, each rank sending once.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/report.h"

#define PROFILE_SUFFIX ".gtprof"
#define PROGRESS_AFTER_NS 1000000000ull /* merges quicker than this stay quiet */
#define PROGRESS_EVERY_NS 250000000ull  /* on a terminal */
#define PROGRESS_LINE_NS 10000000000ull /* in a log */

struct entry {
	char *name;
	uint64_t size;
};

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

static int profile_entry(const struct dirent *d)
{
	return has_suffix(d->d_name, PROFILE_SUFFIX);
}

static void entries__free(struct entry *e, uint32_t n)
{
	for (uint32_t i = 0; e && i < n; i++)
		free(e[i].name);
	free(e);
}

#define RUNS_LISTED 10

/*
 * PATH holds no profile: when folders in it do (PATH holds run
 * directories, `gputool report .` where `gputool run` left them), name
 * them, newest first, and say how to open one; nothing otherwise.
 */
static void say_runs_below(const char *path)
{
	struct dirent **ents = NULL;
	struct { char *name; struct timespec t; } runs[RUNS_LISTED];
	int n = scandir(path, &ents, NULL, alphasort), n_runs = 0, more = 0;

	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		struct dirent **in = NULL;
		struct stat st;
		char *sub = NULL;
		int k = 0;

		if (d[0] != '.' && asprintf(&sub, "%s/%s", path, d) >= 0 && !stat(sub, &st) && S_ISDIR(st.st_mode) &&
		    (k = scandir(sub, &in, profile_entry, NULL)) > 0) {
			int at = n_runs;

			for (int j = 0; j < k; j++)
				free(in[j]);
			/* Newest first: insertion into the kept RUNS_LISTED. */
			while (at > 0 && (runs[at - 1].t.tv_sec < st.st_mtim.tv_sec ||
					  (runs[at - 1].t.tv_sec == st.st_mtim.tv_sec &&
					   runs[at - 1].t.tv_nsec < st.st_mtim.tv_nsec)))
				at--;
			if (at < RUNS_LISTED) {
				if (n_runs == RUNS_LISTED) {
					free(runs[RUNS_LISTED - 1].name);
					n_runs--;
					more++;
				}
				memmove(runs + at + 1, runs + at, (size_t)(n_runs - at) * sizeof(runs[0]));
				runs[at].name = sub;
				runs[at].t = st.st_mtim;
				n_runs++;
				sub = NULL;
			} else {
				more++;
			}
		}
		free(in);
		free(sub);
		free(ents[i]);
	}
	free(ents);
	if (!n_runs)
		return;
	fprintf(stderr, "%s holds the run director%s below (newest first); report one, e.g. `gputool report %s`:\n",
		path, n_runs + more > 1 ? "ies" : "y", runs[0].name);
	for (int i = 0; i < n_runs; i++) {
		fprintf(stderr, "  %s\n", runs[i].name);
		free(runs[i].name);
	}
	if (more)
		fprintf(stderr, "  (and %d more)\n", more);
}

/* The profiles path names: itself, or the *.gtprof files in it by name.
 * 0, or 1 after printing why not. */
static int list_profiles(const char *path, struct entry **out, uint32_t *count)
{
	struct dirent **ents = NULL;
	struct entry *e;
	struct stat st;
	int n;

	if (stat(path, &st)) {
		fprintf(stderr, "gputool: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->name = strdup(path))) {
			free(e);
			fprintf(stderr, "gputool: out of memory\n");
			return 1;
		}
		e->size = (uint64_t)st.st_size;
		*out = e;
		*count = 1;
		return 0;
	}
	n = scandir(path, &ents, profile_entry, alphasort);
	if (n < 0) {
		fprintf(stderr, "gputool: cannot list %s: %s\n", path, strerror(errno));
		return 1;
	}
	e = calloc(n ? (size_t)n : 1, sizeof(*e));
	for (int i = 0; i < n; i++) {
		if (e && asprintf(&e[i].name, "%s/%s", path, ents[i]->d_name) < 0) {
			e[i].name = NULL;
			entries__free(e, (uint32_t)i);
			e = NULL;
		}
		if (e && !stat(e[i].name, &st))
			e[i].size = (uint64_t)st.st_size;
		free(ents[i]);
	}
	free(ents);
	if (!e) {
		fprintf(stderr, "gputool: out of memory\n");
		return 1;
	}
	if (!n) {
		free(e);
		fprintf(stderr, "gputool: no *%s files in %s\n", PROFILE_SUFFIX, path);
		say_runs_below(path);
		return 1;
	}
	*out = e;
	*count = (uint32_t)n;
	return 0;
}

/* ---- the list, from rank 0 to all ---- */

static int list__encode(const struct entry *e, uint32_t n, char **buf, size_t *len)
{
	size_t total = 8;
	char *b, *p;

	for (uint32_t i = 0; i < n; i++)
		total += 16 + strlen(e[i].name);
	b = malloc(total);
	if (!b)
		return -ENOMEM;
	p = b;
	memcpy(p, &(uint64_t){ n }, 8);
	p += 8;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t l = strlen(e[i].name);

		memcpy(p, &e[i].size, 8);
		memcpy(p + 8, &l, 8);
		memcpy(p + 16, e[i].name, l);
		p += 16 + l;
	}
	*buf = b;
	*len = total;
	return 0;
}

static int list__decode(const char *b, size_t len, struct entry **out, uint32_t *count)
{
	uint64_t n, at = 8;
	struct entry *e;

	if (len < 8)
		return -EINVAL;
	memcpy(&n, b, 8);
	if (n > (len - 8) / 16)
		return -EINVAL;
	e = calloc(n ? (size_t)n : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t l;

		if (len - at < 16)
			goto out_bad;
		memcpy(&e[i].size, b + at, 8);
		memcpy(&l, b + at + 8, 8);
		at += 16;
		if (l > len - at || !(e[i].name = strndup(b + at, (size_t)l)))
			goto out_bad;
		at += l;
	}
	*out = e;
	*count = (uint32_t)n;
	return 0;
out_bad:
	entries__free(e, (uint32_t)n);
	return -EINVAL;
}

/* ---- progress ---- */

struct progress {
	uint64_t start, last;
	int tty, shown;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress__tick(struct progress *pg, uint32_t done, uint32_t total, const char *what)
{
	uint64_t t = now_ns();

	if (t - pg->start < PROGRESS_AFTER_NS)
		return;
	if (pg->shown && t - pg->last < (pg->tty ? PROGRESS_EVERY_NS : PROGRESS_LINE_NS) && done < total)
		return;
	fprintf(stderr, "%sgputool: %s %" PRIu32 " of %" PRIu32 " profiles (%.0f%%), %.1f s%s", pg->tty ? "\r" : "",
		what, done, total, total ? 100.0 * done / total : 100.0, (double)(t - pg->start) / 1e9,
		pg->tty ? "\033[K" : "\n");
	fflush(stderr);
	pg->shown = 1;
	pg->last = t;
}

static void progress__end(struct progress *pg)
{
	if (pg->shown && pg->tty)
		fputc('\n', stderr);
}

/* ---- reading ---- */

/* Reads one profile; 0, or 1 after printing why it cannot be read. */
static int read_one(const char *file, struct gt_profile *p)
{
	char why[256];
	FILE *f = gt_open_regular(file);
	int err;

	if (!f) {
		gt_profile__init(p);
		fprintf(stderr, "gputool: cannot open %s: %s\n", file,
			errno == EINVAL ? "not a regular file" : strerror(errno));
		return 1;
	}
	err = gt_profile__read(p, f, why, sizeof(why));
	fclose(f);
	if (err == -EINVAL) {
		fprintf(stderr, "gputool: %s is not a valid profile: %s (left out)\n", file, why);
		return 1;
	}
	if (err) {
		fprintf(stderr, "gputool: cannot read %s: %s (left out)\n", file, why[0] ? why : strerror(-err));
		return 1;
	}
	if (!p->n_nodes) {
		fprintf(stderr, "gputool: %s holds no calling-context tree (left out)\n", file);
		gt_profile__fini(p);
		return 1;
	}
	return 0;
}

struct share {
	uint64_t load;
	uint32_t idx;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;

	if ((*x)->size != (*y)->size)
		return (*x)->size > (*y)->size ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

/*
 * Which member reads which profile: the largest first, each to the least
 * loaded member (ties to the lowest rank). Every member computes the same
 * assignment from the same list.
 */
static int assign(const struct entry *e, uint32_t n, int size, int *owner)
{
	const struct entry **order = malloc((n ? n : 1) * sizeof(*order));
	uint64_t *load = calloc((size_t)size, sizeof(*load));

	if (!order || !load) {
		free(order);
		free(load);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = &e[i];
	qsort(order, n, sizeof(*order), by_size_desc);
	for (uint32_t i = 0; i < n; i++) {
		int best = 0;

		for (int k = 1; k < size; k++)
			if (load[k] < load[best])
				best = k;
		owner[order[i] - e] = best;
		load[best] += order[i]->size + 1;
	}
	free(order);
	free(load);
	return 0;
}

/*
 * Reading and merging overlap: a reader thread parses the next profiles
 * while this thread merges the last one. The queue between them holds at
 * most QUEUE profiles, so memory stays bounded by a few profiles whatever
 * the size of the run. The reader is the only producer, this thread the
 * only consumer; the mutex orders every access to the queue, and a
 * profile belongs to whichever side last took it out of the queue.
 */
#define QUEUE 4

struct loaded {
	struct gt_profile p;
	uint32_t idx;
	int failed;
};

struct reader {
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	struct loaded q[QUEUE];
	uint32_t head, count; /* q[head] is the oldest */
	int stop;             /* the consumer has given up */
	const struct gt_run *r;
	const int *owner;
	int rank;
	uint32_t n;
};

static void *reader__main(void *arg)
{
	struct reader *rd = arg;

	for (uint32_t i = 0; i < rd->n; i++) {
		struct loaded l = { .idx = i };

		if (rd->owner[i] != rd->rank)
			continue;
		/* procs[i].file is written before the thread starts and only read after. */
		l.failed = read_one(rd->r->procs[i].file, &l.p);
		pthread_mutex_lock(&rd->mu);
		while (rd->count == QUEUE && !rd->stop)
			pthread_cond_wait(&rd->room, &rd->mu);
		if (rd->stop) {
			pthread_mutex_unlock(&rd->mu);
			if (!l.failed)
				gt_profile__fini(&l.p);
			break;
		}
		rd->q[(rd->head + rd->count) % QUEUE] = l;
		rd->count++;
		pthread_cond_signal(&rd->more);
		pthread_mutex_unlock(&rd->mu);
	}
	return NULL;
}

/* The next profile in file order, from the reader. */
static struct loaded reader__next(struct reader *rd)
{
	struct loaded l;

	pthread_mutex_lock(&rd->mu);
	while (!rd->count)
		pthread_cond_wait(&rd->more, &rd->mu);
	l = rd->q[rd->head];
	rd->head = (rd->head + 1) % QUEUE;
	rd->count--;
	pthread_cond_signal(&rd->room);
	pthread_mutex_unlock(&rd->mu);
	return l;
}

static void reader__stop(struct reader *rd)
{
	pthread_mutex_lock(&rd->mu);
	rd->stop = 1;
	while (rd->count) {
		struct loaded *l = &rd->q[rd->head];

		if (!l->failed)
			gt_profile__fini(&l->p);
		rd->head = (rd->head + 1) % QUEUE;
		rd->count--;
	}
	pthread_cond_signal(&rd->room);
	pthread_mutex_unlock(&rd->mu);
}

/* Merges this member's share; 0, 1 (a profile left out), or -ENOMEM. */
static int merge_share(struct gt_team *team, uint32_t n, const int *owner, struct gt_run *r)
{
	struct progress pg = { .start = now_ns(), .tty = isatty(2) };
	struct reader rd = { .r = r, .owner = owner, .rank = team->rank, .n = n };
	uint32_t mine = 0, done = 0;
	pthread_t thread;
	int status = 0, threaded;

	for (uint32_t i = 0; i < n; i++)
		mine += owner[i] == team->rank;
	pthread_mutex_init(&rd.mu, NULL);
	pthread_cond_init(&rd.more, NULL);
	pthread_cond_init(&rd.room, NULL);
	threaded = !pthread_create(&thread, NULL, reader__main, &rd);
	for (uint32_t i = 0; i < n; i++) {
		struct loaded l;
		int err;

		if (owner[i] != team->rank)
			continue;
		if (threaded) {
			l = reader__next(&rd);
		} else {
			l.idx = i;
			l.failed = read_one(r->procs[i].file, &l.p);
		}
		if (l.failed) {
			r->procs[l.idx].state = GT_PROC_FAILED;
			r->n_failed++;
			status = 1;
		} else {
			err = gt_run__add(r, l.idx, &l.p);
			gt_profile__fini(&l.p);
			if (err) {
				fprintf(stderr, "gputool: out of memory merging %s\n", r->procs[l.idx].file);
				status = -ENOMEM;
				break;
			}
		}
		done++;
		if (team->rank == 0)
			progress__tick(&pg, done, mine, team->size > 1 ? "merged (this rank's share)" : "merged");
	}
	if (threaded) {
		reader__stop(&rd);
		pthread_join(thread, NULL);
	}
	pthread_cond_destroy(&rd.more);
	pthread_cond_destroy(&rd.room);
	pthread_mutex_destroy(&rd.mu);
	if (team->rank == 0)
		progress__end(&pg);
	return status;
}

/* Pairwise reduction into rank 0. Returns 0, or -1 when a part of the run
 * was lost on the way (the rest is still merged). */
static int reduce(struct gt_team *team, struct gt_run *r)
{
	int lost = 0;

	for (int step = 1; step < team->size; step <<= 1) {
		if (team->rank & step) {
			char *buf = NULL;
			size_t len = 0;

			if (!r->procs || gt_run__encode(r, &buf, &len)) {
				fprintf(stderr, "gputool: rank %d: out of memory sending its part of the run\n",
					team->rank);
				buf = NULL;
				len = 0;
			}
			if (team->send(team, team->rank - step, buf, len))
				lost = 1;
			free(buf);
			return lost ? -1 : 0;
		}
		if (team->rank + step < team->size) {
			struct gt_run part;
			char *buf = NULL;
			size_t len = 0;

			if (team->recv(team, team->rank + step, &buf, &len) || !len) {
				free(buf);
				lost = 1;
				continue;
			}
			if (gt_run__decode(&part, buf, len) || gt_run__absorb(r, &part)) {
				fprintf(stderr, "gputool: cannot merge the part of the run from rank %d\n",
					team->rank + step);
				lost = 1;
			}
			gt_run__fini(&part);
			free(buf);
		}
	}
	return lost ? -1 : 0;
}

int gt_load__run(struct gt_team *team, const char *path, struct gt_run *r)
{
	struct entry *e = NULL;
	uint32_t n = 0;
	int *owner = NULL, status = 0, err;
	char *buf = NULL;
	size_t len = 0;

	memset(r, 0, sizeof(*r));
	if (team->size > 1) {
		if (team->rank == 0) {
			if (list_profiles(path, &e, &n) || list__encode(e, n, &buf, &len)) {
				buf = NULL;
				len = 0;
			}
		}
		if (team->bcast(team, &buf, &len)) {
			fprintf(stderr, "gputool: rank %d: could not receive the list of profiles\n", team->rank);
			free(buf);
			entries__free(e, n);
			return 1;
		}
		if (!len) { /* rank 0 has said why */
			free(buf);
			entries__free(e, n);
			return 1;
		}
		if (team->rank != 0 && list__decode(buf, len, &e, &n)) {
			free(buf);
			return 1;
		}
		free(buf);
	} else if (list_profiles(path, &e, &n)) {
		return 1;
	}
	owner = calloc(n ? n : 1, sizeof(*owner));
	if (!owner || assign(e, n, team->size, owner) || gt_run__init(r, n)) {
		fprintf(stderr, "gputool: out of memory\n");
		free(owner);
		entries__free(e, n);
		return 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		r->procs[i].file = e[i].name;
		e[i].name = NULL;
	}
	err = merge_share(team, n, owner, r);
	if (err < 0) {
		gt_run__fini(r);
		status = 1;
		/* The others still expect this rank's part: an empty run, or
		 * nothing (reduce sends an empty message for a run without
		 * processes). */
		if (gt_run__init(r, n))
			memset(r, 0, sizeof(*r));
	} else if (err) {
		status = 1;
	}
	if (team->size > 1 && reduce(team, r)) {
		if (team->rank == 0)
			fprintf(stderr, "gputool: parts of the run were lost while merging across ranks\n");
		status = 1;
	}
	if (team->rank == 0 && r->n_failed)
		status = 1;
	if (team->rank == 0 && r->procs && gt_run__canonicalize(r)) {
		fprintf(stderr, "gputool: out of memory\n");
		gt_run__fini(r);
		status = 1;
	}
	free(owner);
	entries__free(e, n);
	return status;
}
