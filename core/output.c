/* SPDX-License-Identifier: MIT */
#include "core/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/modmap.h"
#include "core/symbolize.h"
#include "core/thread.h"

static const char *const rank_vars[] = {
	"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK",
	"PALS_RANKID", "MPI_RANKID",
};

/* The job's number of ranks, as launchers tell every rank. */
static const char *const size_vars[] = {
	"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PALS_SIZE",
};

static const char *const job_vars[] = {
	"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "OMPI_MCA_ess_base_jobid",
	"PMIX_NAMESPACE",
};

/*
 * Processes of MPI and batch launchers, by executable name (symbolic links
 * resolved: Debian's mpirun and mpiexec are OpenMPI's orterun). They inherit
 * the environment that measures the ranks (a singleton's MPI_Init starts
 * orted; `gputool run -- mpirun ...` preloads the library into mpirun), but
 * their CPU time is not the job's. docs/REPORT.md lists the same names.
 */
static const char *const launchers[] = {
	"orted", "orterun", "prted", "prterun", "prte", "mpirun", "mpiexec", "mpiexec.hydra", "hydra_pmi_proxy",
	"mpirun_rsh", "mpispawn", "srun", "slurmstepd", "flux-shell", "aprun", "jsrun",
};

/* The executable's file name (links resolved) in buf; NULL if unknown. */
static const char *self_exe(char *buf, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);
	const char *base;

	if (len <= 0)
		return NULL;
	buf[len] = 0;
	base = strrchr(buf, '/');
	return base ? base + 1 : buf;
}

const char *gt_output__launcher(void)
{
	static char exe[4096];
	const char *base = self_exe(exe, sizeof(exe));

	for (size_t i = 0; base && i < sizeof(launchers) / sizeof(*launchers); i++)
		if (!strcmp(base, launchers[i]))
			return base;
	return NULL;
}

/* The first of vars that holds a number in [min, 2^30); -1 if none. */
static int env_number(const char *const *vars, size_t n, long min)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		r = strtol(v, &end, 10);
		if (!*end && r >= min && r < 1 << 30)
			return (int)r;
	}
	return -1;
}

int gt_output__rank(void)
{
	int r = env_number(rank_vars, sizeof(rank_vars) / sizeof(*rank_vars), 0);

	return r < 0 ? 0 : r;
}

const char *gt_output__job_id(void)
{
	for (size_t i = 0; i < sizeof(job_vars) / sizeof(*job_vars); i++) {
		const char *job = getenv(job_vars[i]);

		if (job && *job)
			return job;
	}
	return NULL;
}

int gt_output__job_size(void)
{
	int n = env_number(size_vars, sizeof(size_vars) / sizeof(*size_vars), 1);

	return n < 0 ? 0 : n;
}

/* Keeps [A-Za-z0-9._-]; anything else becomes '_'. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			*s = '_';
}

int gt_output__mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	/* There already, it must be a directory (not a file of the name). */
	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static char start_cwd[PATH_MAX];

void gt_output__remember_cwd(void)
{
	if (!getcwd(start_cwd, sizeof(start_cwd)))
		start_cwd[0] = 0;
}

/* The directory is ours, or shared the safe way (sticky, like /tmp, for a
 * directory of ours inside it): 0, else -EPERM after one line. */
static int dir__check(const char *dir)
{
	char q[GT_LOG_VALUE];
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid()) {
		gt_err("output", "%s belongs to another user: no files written there (set GPUTOOL_OUTPUT)",
		       gt_log__escape(dir, q, sizeof(q)));
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		gt_err("output", "others may write %s: no files written there (set GPUTOOL_OUTPUT)",
		       gt_log__escape(dir, q, sizeof(q)));
		return -EPERM;
	}
	return 0;
}

int gt_output__init(struct gt_output *o, const char *configured_dir)
{
	char exe[4096];
	const char *job = NULL;
	char jobbuf[128];
	const char *base;
	int err;

	memset(o, 0, sizeof(*o));
	base = self_exe(exe, sizeof(exe));
	/* A longer name is cut: it only names files. */
	snprintf(o->exe, sizeof(o->exe), "%.*s", (int)sizeof(o->exe) - 1, base ? base : "app");
	sanitize(o->exe);
	o->rank = gt_output__rank();
	job = gt_output__job_id();
	if (job) {
		snprintf(jobbuf, sizeof(jobbuf), "%s", job);
		sanitize(jobbuf);
	} else {
		snprintf(jobbuf, sizeof(jobbuf), "%d", (int)getpid());
	}
	{
		char name[PATH_MAX];
		int n;

		if (configured_dir && *configured_dir)
			n = snprintf(name, sizeof(name), "%s", configured_dir);
		else
			n = snprintf(name, sizeof(name), "gputool-%s-%s", o->exe, jobbuf);
		/* Relative to where the program started, wherever it is now. */
		if (n >= 0 && (size_t)n < sizeof(name) && name[0] != '/' && start_cwd[0])
			n = snprintf(o->dir, sizeof(o->dir), "%s/%s", start_cwd, name);
		else if (n >= 0 && (size_t)n < sizeof(name))
			n = snprintf(o->dir, sizeof(o->dir), "%s", name);
		if (n < 0 || (size_t)n >= sizeof(o->dir)) {
			gt_err("output", "the output directory's name is too long");
			return -ENAMETOOLONG;
		}
	}
	err = gt_output__mkdir_p(o->dir);
	if (err) {
		char q[GT_LOG_VALUE];

		gt_err("output", "cannot create %s: %s", gt_log__escape(o->dir, q, sizeof(q)), strerror(-err));
		return err;
	}
	err = dir__check(o->dir);
	if (err)
		return err;
	o->stem_len = (size_t)snprintf(o->stem, sizeof(o->stem), "%s/%s-%d-%d", o->dir, o->exe, o->rank,
				       (int)getpid());
	if (o->stem_len >= sizeof(o->stem) - 16) {
		char q[GT_LOG_VALUE];

		gt_err("output", "file names under %s are too long", gt_log__escape(o->dir, q, sizeof(q)));
		return -ENAMETOOLONG;
	}
	return 0;
}

#define CLAIM_TRIES 1000
#define TEMP_TRIES 100

int gt_output__open(struct gt_output *o, const char *ext, struct gt_output_file *of)
{
	static atomic_uint serial;
	const char *base = o->stem + strlen(o->dir) + 1;
	int fd = -1;

	of->f = NULL;
	of->tmp[0] = 0;
	snprintf(of->ext, sizeof(of->ext), "%s", ext);
	/* Written by hand, not mkostemps(): that one creates mode 0600 whatever
	 * the umask, and the published files keep 0644 & ~umask. */
	for (int i = 0; i < TEMP_TRIES && fd < 0; i++) {
		struct timespec ts;
		/* Relaxed: only makes names differ between calls. */
		unsigned r = atomic_fetch_add_explicit(&serial, 1, memory_order_relaxed);

		clock_gettime(CLOCK_REALTIME, &ts);
		r = r * 2654435761u ^ (unsigned)ts.tv_nsec;
		if ((size_t)snprintf(of->tmp, sizeof(of->tmp), "%s/.%.*s%s.%08x.part", o->dir,
				     (int)(o->stem_len - (size_t)(base - o->stem)), base, ext, r) >= sizeof(of->tmp))
			return -ENAMETOOLONG;
		/* O_EXCL: never through a link, never an existing file. */
		fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		of->tmp[0] = 0;
		return -errno;
	}
	of->f = fdopen(fd, "w");
	if (!of->f) {
		int err = -errno;

		close(fd);
		unlink(of->tmp);
		of->tmp[0] = 0;
		return err;
	}
	return 0;
}

int gt_output__finish(struct gt_output_file *of)
{
	int err = 0;

	if (!of->f)
		return -EBADF;
	if (fflush(of->f) || ferror(of->f))
		err = errno ? -errno : -EIO;
	/* Durable before it has its name: after a power loss the name holds
	 * the whole file or is not there. */
	if (!err && fsync(fileno(of->f)))
		err = -errno;
	if (fclose(of->f) && !err)
		err = -errno;
	of->f = NULL;
	if (err)
		gt_output__discard(of);
	return err;
}

/* tmp takes the name final, which must not exist: 0 or a negative errno. */
static int publish(const char *tmp, const char *final)
{
	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE))
		return 0;
	/* A file system without RENAME_NOREPLACE: link() fails on an existing
	 * name (a link included) just the same. */
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return -errno;
	if (link(tmp, final))
		return -errno;
	unlink(tmp);
	return 0;
}

int gt_output__publish(struct gt_output *o, struct gt_output_file *of, char *path, size_t n)
{
	char final[sizeof(o->stem) + 32];
	int err = -EEXIST;

	if (!of->tmp[0] || of->f)
		return -EBADF;
	if (!strcmp(of->ext, ".gtprof") && !o->claimed) {
		/* Claim the stem: the first name whose profile is free. */
		for (int k = 0; k < CLAIM_TRIES && err == -EEXIST; k++) {
			o->stem[o->stem_len] = 0;
			if (k)
				snprintf(o->stem + o->stem_len, sizeof(o->stem) - o->stem_len, "-%d", k);
			snprintf(final, sizeof(final), "%s%s", o->stem, of->ext);
			err = publish(of->tmp, final);
		}
		o->claimed = !err;
	} else if (o->claimed) {
		snprintf(final, sizeof(final), "%s%s", o->stem, of->ext);
		err = publish(of->tmp, final);
	} else {
		err = -ENOENT; /* no profile: the files beside it have no name */
	}
	if (err)
		gt_output__discard(of);
	else if (path)
		snprintf(path, n, "%s", final);
	of->tmp[0] = 0;
	return err;
}

void gt_output__discard(struct gt_output_file *of)
{
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	if (of->tmp[0])
		unlink(of->tmp);
	of->tmp[0] = 0;
}

/*
 * Merging the threads' trees: a node of the profile is identified by its
 * parent and its (kind, name, file, line, module) — frames of one source
 * line of one function merge, whatever the exact instruction. Unknown
 * functions keep their offset so that distinct addresses stay distinct.
 */
struct merge_key {
	uint32_t parent, kind, name, file, line, module;
	uint64_t offset;
};

#define MOD_TIMES 16 /* modules whose symbolization time is told apart */

struct merge {
	struct gt_profile *p;
	struct gt_symbolizer *sym;
	uint32_t thread;
	struct merge_key *keys;
	uint32_t *ids;
	uint64_t cap, used;
	/* pc -> its frames' keys, so a pc shared by threads is looked up once:
	 * the first key's index in chain[], the number of keys << 32, and 1 << 40
	 * when the real frame is a runtime's (gt_symbol.runtime) */
	struct gt_hmap pcs;
	struct merge_key *chain;
	uint32_t n_chain, cap_chain;
	/* Where symbolization spends its time, by module (GPUTOOL_VERBOSE=3). */
	struct mod_time {
		const char *module;
		uint64_t ns, pcs;
	} times[MOD_TIMES];
	uint32_t n_times;
};

/* Frames one pc stands for at most: the real one and the calls inlined
 * into it (deeper inlining keeps the innermost calls). */
#define MAX_INLINE 32
_Static_assert(MAX_INLINE < 256, "a chain's length fits the 8 bits the pc cache keeps");
/* Frames a chain of tail calls left out, at most. */
#define MAX_TAIL 4

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t key_hash(const struct merge_key *k)
{
	uint64_t h = 0;

	h = mix(h, k->parent);
	h = mix(h, k->kind);
	h = mix(h, k->name);
	h = mix(h, k->file);
	h = mix(h, k->line);
	h = mix(h, k->module);
	h = mix(h, k->offset);
	return h * 0xff51afd7ed558ccdull;
}

static int key_eq(const struct merge_key *a, const struct merge_key *b)
{
	return a->parent == b->parent && a->kind == b->kind && a->name == b->name &&
	       a->file == b->file && a->line == b->line && a->module == b->module &&
	       a->offset == b->offset;
}

static int merge__grow(struct merge *m)
{
	uint64_t cap = m->cap ? m->cap * 2 : 4096;
	struct merge_key *keys = calloc(cap, sizeof(*keys));
	uint32_t *ids = malloc(cap * sizeof(*ids));

	if (!keys || !ids) {
		free(keys);
		free(ids);
		return -ENOMEM;
	}
	memset(ids, 0xff, cap * sizeof(*ids));
	for (uint64_t i = 0; i < m->cap; i++) {
		uint64_t h;

		if (m->ids[i] == GT_NONE)
			continue;
		for (h = key_hash(&m->keys[i]) & (cap - 1); ids[h] != GT_NONE; h = (h + 1) & (cap - 1))
			;
		keys[h] = m->keys[i];
		ids[h] = m->ids[i];
	}
	free(m->keys);
	free(m->ids);
	m->keys = keys;
	m->ids = ids;
	m->cap = cap;
	return 0;
}

static uint32_t merge__node(struct merge *m, const struct merge_key *k)
{
	struct gt_prof_node n;
	uint64_t h;

	if ((m->used + 1) * 2 > m->cap && merge__grow(m))
		return GT_NONE;
	for (h = key_hash(k) & (m->cap - 1); m->ids[h] != GT_NONE; h = (h + 1) & (m->cap - 1))
		if (key_eq(&m->keys[h], k))
			return m->ids[h];
	n.parent = k->parent;
	n.kind = k->kind;
	n.name = k->name;
	n.file = k->file;
	n.line = k->line;
	n.module = k->module;
	n.offset = k->offset;
	m->keys[h] = *k;
	m->ids[h] = gt_profile__node(m->p, &n);
	m->used++;
	return m->ids[h];
}

static const enum gt_prof_node_kind kind_of_symbol[] = {
	[GT_SYM_FRAME] = GT_PNODE_FRAME,
	[GT_SYM_INLINE] = GT_PNODE_INLINE,
	[GT_SYM_TAIL] = GT_PNODE_TAIL,
};

static void merge__key_of(struct merge *m, const struct gt_symbol *sym, struct merge_key *k)
{
	k->kind = kind_of_symbol[sym->kind];
	k->name = gt_profile__string(m->p, sym->function);
	k->file = gt_profile__string(m->p, sym->file);
	k->line = (uint32_t)sym->line;
	k->module = sym->module ? gt_profile__module(m->p, sym->module) : GT_NONE;
	/* Merge by source line when known; keep the address otherwise. */
	k->offset = (k->name != GT_NONE && k->file != GT_NONE) ? 0 : sym->offset;
	if (sym->linkage && k->name != GT_NONE)
		gt_profile__set_linkage(m->p, k->name, gt_profile__string(m->p, sym->linkage));
}

/* Counts ns of symbolization against module (the last slot takes the rest). */
static void merge__time(struct merge *m, const char *module, uint64_t ns)
{
	uint32_t k = 0;

	while (k < m->n_times && m->times[k].module != module && k + 1 < MOD_TIMES)
		k++;
	if (k == m->n_times) {
		m->times[k].module = module;
		m->n_times++;
	}
	m->times[k].ns += ns;
	m->times[k].pcs++;
}

static int by_time(const void *a, const void *b)
{
	const struct mod_time *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/*
 * The keys of the frames a pc stands for, outermost first (the real frame,
 * then the calls inlined into it), in m->chain from index *first; returns
 * how many (0 when out of memory).
 */
static uint32_t merge__frame_keys(struct merge *m, uintptr_t pc, uint32_t *first, int *runtime)
{
	struct gt_symbol sym[MAX_INLINE];
	const uint64_t *hit = gt_hmap__get(&m->pcs, pc);
	uint64_t t0;
	int n;

	if (hit) {
		*first = (uint32_t)*hit;
		*runtime = (int)(*hit >> 40 & 1);
		return (uint32_t)(*hit >> 32 & 0xff);
	}
	t0 = gt_clock__now();
	n = gt_symbolizer__chain(m->sym, pc, sym, MAX_INLINE);
	merge__time(m, n > 0 ? sym[0].module : NULL, gt_clock__now() - t0);
	if (m->n_chain + (uint32_t)n > m->cap_chain) {
		uint32_t cap = m->cap_chain ? m->cap_chain * 2 : 1024;
		struct merge_key *grown;

		while (cap < m->n_chain + (uint32_t)n)
			cap *= 2;
		grown = realloc(m->chain, cap * sizeof(*grown));
		if (!grown)
			return 0;
		m->chain = grown;
		m->cap_chain = cap;
	}
	*first = m->n_chain;
	*runtime = sym[0].runtime;
	for (int i = 0; i < n; i++)
		merge__key_of(m, &sym[i], &m->chain[m->n_chain++]);
	/* Out of memory: looked up again next time. */
	gt_hmap__put(&m->pcs, pc, *first | (uint64_t)n << 32 | (uint64_t)(*runtime != 0) << 40);
	return (uint32_t)n;
}

/* A module's class by its file name (core/modmap.h); *base its file name. */
static enum gt_module_class module_class(struct merge *m, uint32_t module, const char **base)
{
	const char *path = gt_profile__str(m->p, m->p->modules[module]);

	*base = path ? strrchr(path, '/') : NULL;
	*base = *base ? *base + 1 : path;
	return *base ? gt_modmap__classify(*base) : GT_MOD_USER;
}

static int is_tool_node(struct merge *m, uint32_t i)
{
	const char *name;

	if (i == GT_NONE || i >= m->p->n_nodes || m->p->nodes[i].kind != GT_PNODE_NAME)
		return 0;
	name = gt_profile__str(m->p, m->p->nodes[i].name);
	return name && !strncmp(name, GT_PNODE_TOOL_PREFIX, strlen(GT_PNODE_TOOL_PREFIX));
}

/*
 * A frame of a measurement library (the tool's, CUPTI's, libnvperf_host's)
 * that reached the tree (a library the unwinder did not know yet when it
 * was sampled): its time is the measurement's, so it goes under a node
 * "<tool: LIBRARY>" below the frame that called it, with everything that
 * it called, not to that frame as the program's work.
 */
static uint32_t merge__tool(struct merge *m, uint32_t parent, const char *base)
{
	char text[256];
	struct merge_key k = { .kind = GT_PNODE_NAME, .file = GT_NONE, .module = GT_NONE };

	if (is_tool_node(m, parent))
		return parent;
	snprintf(text, sizeof(text), GT_PNODE_TOOL_PREFIX "%s>", base);
	k.name = gt_profile__string(m->p, text);
	k.parent = parent;
	return merge__node(m, &k);
}

/* The frames tail calls left out between a call at caller_pc and the frame
 * of callee_pc, added under parent; returns the node to hang callee under. */
static uint32_t merge__tail_calls(struct merge *m, uintptr_t caller_pc, uintptr_t callee_pc, uint32_t parent)
{
	struct gt_symbol sym[MAX_TAIL];
	int n = gt_symbolizer__tail_calls(m->sym, caller_pc, callee_pc, sym, MAX_TAIL);

	for (int i = 0; i < n && parent != GT_NONE; i++) {
		struct merge_key k;

		merge__key_of(m, &sym[i], &k);
		k.parent = parent;
		parent = merge__node(m, &k);
	}
	return parent;
}

static void clear__visit(struct gt_cct_node *n, void *arg)
{
	(void)arg;
	n->aux = 0;
}

/* Marks (aux = 1) the nodes that have a value in their subtree. */
static void mark__visit(struct gt_cct_node *n, void *arg)
{
	struct gt_metric_cell *c;

	(void)arg;
	for (c = n->metrics; c && !c->value; c = c->next)
		;
	if (!c)
		return;
	for (; n && !n->aux; n = n->parent)
		n->aux = 1;
}

static void merge__visit(struct gt_cct_node *n, void *arg)
{
	struct merge *m = arg;
	struct merge_key k = { 0 };
	uint32_t parent;

	/* Nodes with nothing measured below them are left out. */
	if (!n->aux && n->kind != GT_NODE_ROOT)
		return;
	parent = n->parent ? n->parent->aux : 0;
	switch (n->kind) {
	case GT_NODE_ROOT:
		n->aux = 0;
		goto out_values;
	case GT_NODE_FRAME: {
		enum gt_module_class cls = GT_MOD_USER;
		const char *base = NULL;
		int runtime = 0;
		uint32_t first, n_keys = merge__frame_keys(m, (uintptr_t)n->key, &first, &runtime);

		if (!n_keys) {
			n->aux = parent;
			goto out_values;
		}
		/* A runtime loaded after its frames were sampled was not known
		 * to the unwinder then, nor a runtime's function compiled into
		 * the program that only its backend knows: such frames go now,
		 * their children and values to the nearest frame kept above.
		 * A measurement library's, and all below one, go to its node. */
		if (m->chain[first].module != GT_NONE)
			cls = module_class(m, m->chain[first].module, &base);
		if (is_tool_node(m, parent) || cls == GT_MOD_TOOL) {
			parent = merge__tool(m, parent, base ? base : "?");
			n->aux = parent == GT_NONE ? 0 : parent;
			goto out_values;
		}
		if (runtime || cls == GT_MOD_RUNTIME) {
			n->aux = parent;
			goto out_values;
		}
		if (n->parent->kind == GT_NODE_FRAME)
			parent = merge__tail_calls(m, (uintptr_t)n->parent->key, (uintptr_t)n->key, parent);
		for (uint32_t i = 0; i < n_keys && parent != GT_NONE; i++) {
			k = m->chain[first + i];
			k.parent = parent;
			parent = merge__node(m, &k);
		}
		n->aux = parent == GT_NONE ? 0 : parent;
		goto out_values;
	}
	case GT_NODE_PLACEHOLDER:
		/* Made in a runtime called from the frame above: a function that
		 * ended in a jump to the runtime has no frame of its own. */
		if (n->parent->kind == GT_NODE_FRAME)
			parent = merge__tail_calls(m, (uintptr_t)n->parent->key, 0, parent);
		k.kind = GT_PNODE_PLACEHOLDER;
		k.name = gt_profile__string(m->p, n->key < GT_PH__COUNT ? gt_placeholder_names[n->key]
									: "<unknown>");
		k.file = k.module = GT_NONE;
		break;
	default:
		k.kind = GT_PNODE_NAME;
		k.name = gt_profile__string(m->p, (const char *)(uintptr_t)n->key);
		k.file = k.module = GT_NONE;
		break;
	}
	k.parent = parent;
	n->aux = merge__node(m, &k);
	if (n->aux == GT_NONE)
		n->aux = 0;
out_values:
	for (struct gt_metric_cell *c = n->metrics; c; c = c->next)
		if (c->value)
			gt_profile__value(m->p, n->aux, m->thread, c->metric, c->value);
}

static const char *thread_kind_name(enum gt_thread_kind k)
{
	switch (k) {
	case GT_THREAD_INITIAL:
		return "initial";
	case GT_THREAD_WORKER:
		return "worker";
	default:
		return "other";
	}
}

int gt_output__build(struct gt_profile *p)
{
	struct merge m = { .p = p };
	struct gt_prof_node root = { .parent = GT_NONE,
				     .kind = GT_PNODE_ROOT,
				     .name = GT_NONE,
				     .file = GT_NONE,
				     .module = GT_NONE };
	uint32_t n = gt_thread__count();
	uint64_t t0, t1, t2;

	for (int i = 0; i < GT_M__COUNT; i++)
		gt_profile__metric(p, gt_metric_descs[i].name, gt_metric_descs[i].unit,
				   gt_metric_descs[i].desc);
	gt_profile__node(p, &root);
	t0 = gt_clock__now();
	m.sym = gt_symbolizer__new();
	t1 = gt_clock__now();
	for (uint32_t i = 0; i < n; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (!t)
			continue;
		m.thread = gt_profile__thread(p, t->index, (uint32_t)t->tid, thread_kind_name(t->kind));
		gt_cct__walk(t->cct.root, clear__visit, NULL);
		gt_cct__walk(t->cct.root, mark__visit, NULL);
		gt_cct__walk(t->cct.root, merge__visit, &m);
	}
	t2 = gt_clock__now();
	/* (The module names belong to the symbolizer.) */
	qsort(m.times, m.n_times, sizeof(*m.times), by_time);
	for (uint32_t k = 0; k < m.n_times && k < 5; k++)
		gt_debug("symbols", "%.1f ms for %llu addresses in %s", (double)m.times[k].ns / 1e6,
			 (unsigned long long)m.times[k].pcs, m.times[k].module ? m.times[k].module : "(unknown)");
	gt_symbolizer__delete(m.sym);
	gt_debug("symbols", "modules read in %.1f ms, tree merged in %.1f ms, closed in %.1f ms",
		 (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)(gt_clock__now() - t2) / 1e6);
	free(m.keys);
	free(m.ids);
	gt_hmap__fini(&m.pcs);
	free(m.chain);
	return 0;
}
