/* SPDX-License-Identifier: MIT */
/*
 * GPU PC sampling, the placing half: at settle, after the monitor's
 * finalizer, every entry pcsamp.c took goes into the trees. Each kernel
 * function's samples go to the kernel's launch contexts in every thread's
 * tree, shared in proportion to the GPU time each context measured
 * (continuous mode does not say which launch a sample came from). With
 * the cubin's structure (gpu/sass/, from nvdisasm) they go down the
 * kernel's GPU calling contexts, loops and inlined call sites to their
 * lines, and their dependency stalls to the lines that caused them;
 * without it, to nodes "file:line" right under the kernel's node.
 *
 * Under gt_pcs's lock; the trees are final then, read and written here only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/profile.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/pcsamp-internal.h"
#include "gpu/sass/sass.h"

/* Contexts of one vertex shared on the stack; more take the heap. */
#define MAX_CONTEXTS_PER_SHARE 64

static const enum gt_metric class_metric[PC__N] = {
#define X(A, id, cls, desc) [PR_##id] = GT_M_GPS_##id,
	GT_GPU_STALL_REASONS(X, _)
#undef X
	[PC_MEMORY] = GT_M_GPC_MEMORY,	 [PC_EXEC] = GT_M_GPC_EXEC,
	[PC_CONTROL] = GT_M_GPC_CONTROL, [PC_SYNC] = GT_M_GPC_SYNC,
	[PC_ISSUED] = GT_M_GPC_ISSUED,	 [PC_NOT_SELECTED] = GT_M_GPC_NOT_SELECTED,
	[PC_OTHER] = GT_M_GPC_OTHER,	 [PC_LATENCY] = GT_M_GPC_LATENCY,
	[PI_INST] = GT_M_GSC_INST,	 [PI_THREAD_INST] = GT_M_GSC_THREAD_INST,
};

/* The metric of each instruction class's issued samples. */
static const enum gt_metric issue_metric[GT_SASS__CLASSES] = {
#define X(A, id, name, desc) GT_M_GPI_##id,
	GT_GPU_INSN_CLASSES(X, _)
#undef X
};



/* A launch context of a kernel: its node in a thread's tree, its GPU time. */
struct target {
	struct gt_thread *t;
	struct gt_cct_node *node;
	uint64_t weight;
};

struct targets {
	struct gt_hmap by_function; /* interned kernel name -> list index + 1 */
	struct target **list;
	uint32_t *n;
	uint32_t n_lists;
};

static void targets__collect(struct targets *ts, struct gt_thread *t, struct gt_cct_node *n)
{
	for (struct gt_cct_node *c = n->children; c; c = c->sibling) {
		if (c->kind == GT_NODE_NAME && n->kind == GT_NODE_PLACEHOLDER && n->key == GT_PH_GPU_KERNEL) {
			const uint64_t *v = gt_hmap__get(&ts->by_function, c->key);
			uint64_t w = gt_cct__get(c, GT_M_GKER);

			if (v && w) {
				uint32_t i = (uint32_t)*v - 1;
				struct target *grown = realloc(ts->list[i], (ts->n[i] + 1) * sizeof(*grown));

				if (grown) {
					grown[ts->n[i]++] = (struct target){ t, c, w };
					ts->list[i] = grown;
				}
			}
		}
		targets__collect(ts, t, c);
	}
}

/* @v shared over the targets by weight; the remainders to the largest
 * fractional parts, so that the shares add up to @v exactly. */
static void share(const struct target *tg, uint32_t n, uint64_t total_w, uint64_t v, uint64_t *out)
{
	uint64_t given = 0;

	for (uint32_t i = 0; i < n; i++) {
		out[i] = (uint64_t)((unsigned __int128)v * tg[i].weight / total_w);
		given += out[i];
	}
	while (given < v) {
		uint32_t best = 0;
		unsigned __int128 best_rem = 0;

		for (uint32_t i = 0; i < n; i++) {
			unsigned __int128 rem = (unsigned __int128)v * tg[i].weight - (unsigned __int128)out[i] * total_w;

			if (rem > best_rem) {
				best_rem = rem;
				best = i;
			}
		}
		out[best]++;
		given++;
	}
}

/* @v shared by the weights @w (n of them, summing to @total); the
 * remainders to the largest fractional parts: the parts add up to @v. */
static void share_d(const double *w, uint32_t n, double total, uint64_t v, uint64_t *out)
{
	uint64_t given = 0;

	for (uint32_t i = 0; i < n; i++) {
		out[i] = total > 0 ? (uint64_t)((double)v * w[i] / total) : 0;
		given += out[i];
	}
	while (given > v) { /* rounding up by the floating point */
		for (uint32_t i = 0; i < n && given > v; i++)
			if (out[i]) {
				out[i]--;
				given--;
			}
	}
	while (given < v) {
		uint32_t best = 0;
		double best_rem = -1;

		for (uint32_t i = 0; i < n; i++) {
			double rem = (double)v * w[i] / total - (double)out[i];

			if (rem > best_rem) {
				best_rem = rem;
				best = i;
			}
		}
		out[best]++;
		given++;
	}
}

/* The names of the nodes between a kernel's node and an instruction's
 * line: a GPU calling context's call sites and callees, loops, the line. */
#define MAX_PATH 256

struct path {
	const char *name[MAX_PATH];
	uint32_t n;
};

static void path__add(struct path *p, const char *name)
{
	if (name && p->n < MAX_PATH)
		p->name[p->n++] = name;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static const char *sass_line(const struct gt_sass *s, uint32_t i, const char *fallback)
{
	const struct gt_sass_insn *in = &s->insns[i];
	char text[512];

	if (in->file == GT_SASS_NONE || !in->line)
		return fallback;
	snprintf(text, sizeof(text), "%s:%u", base_name(s->files[in->file]), in->line);
	return gt_cupti_pcsamp__intern(text);
}

/* "loop at file:line" for each loop around instruction @i, outermost first. */
static void path__loops(struct path *p, const struct gt_sass *s, uint32_t i)
{
	uint32_t chain[64], n = 0;
	char text[512];

	for (uint32_t l = s->insns[i].loop; l != GT_SASS_NONE && n < 64; l = s->loops[l].parent)
		chain[n++] = l;
	while (n--) {
		uint32_t h = s->loops[chain[n]].header;
		const struct gt_sass_insn *in = &s->insns[h];

		if (in->file != GT_SASS_NONE && in->line)
			snprintf(text, sizeof(text), GT_GPU_NODE_LOOP "%s:%u", base_name(s->files[in->file]), in->line);
		else
			snprintf(text, sizeof(text), GT_GPU_NODE_LOOP "0x%x", in->offset);
		path__add(p, gt_cupti_pcsamp__intern(text));
	}
}

/* "inlined at file:line" for each call site instruction @i's code was
 * inlined at, outermost first. */
static void path__inlined(struct path *p, const struct gt_sass *s, uint32_t i)
{
	uint32_t chain[GT_SASS_MAX_INLINE], n = 0;
	char text[512];

	for (uint32_t k = s->insns[i].inl; k != GT_SASS_NONE && n < GT_SASS_MAX_INLINE; k = s->inlines[k].parent)
		chain[n++] = k;
	while (n--) {
		const struct gt_sass_inline *in = &s->inlines[chain[n]];

		snprintf(text, sizeof(text), GT_GPU_NODE_INLINED "%s:%u", base_name(s->files[in->file]), in->line);
		path__add(p, gt_cupti_pcsamp__intern(text));
	}
}

/* Instruction @i placed in a context running function @fn: the callee of
 * a cycle's other function first, then its loops, the call sites its code
 * was inlined at, and its line. */
static void path__insn(struct path *p, const struct gt_sass *s, uint32_t i, uint32_t fn, const char *fallback)
{
	if (s->insns[i].function != fn)
		path__add(p, gt_cupti__kernel_name(s->functions[s->insns[i].function].callee));
	path__loops(p, s, i);
	path__inlined(p, s, i);
	path__add(p, sass_line(s, i, fallback));
}

/* Under the line of a call that stays in its own vertex of the call graph
 * (a function calling itself, or a cycle of them), whose callee therefore
 * gets no context of its own: "NAME [recursive call]", which says so (a
 * recursive function cannot be inlined). @i: global index. */
static void path__recursion(struct path *p, const struct gt_sass *s, const struct gt_sass_gcct *g, uint32_t first,
			    uint32_t i)
{
	const struct gt_sass_insn *in = &s->insns[i];
	char text[512];
	uint32_t callee;

	if (!(in->flags & GT_SASS_F_CALL) || in->target == GT_SASS_NONE || in->target >= s->n_functions)
		return;
	callee = s->functions[in->target].first;
	if (callee < first || callee - first >= g->n_insns || g->vertex[callee - first] != g->vertex[i - first])
		return;
	snprintf(text, sizeof(text), "%s" GT_GPU_NODE_RECURSIVE, gt_cupti__kernel_name(s->functions[in->target].callee));
	path__add(p, gt_cupti_pcsamp__intern(text));
}

/* The names from the kernel down to context @c (excluded: its instructions).
 * A callee whose sites the samples could not tell apart is named so. */
static void path__context(struct path *p, const struct gt_sass *s, const struct gt_sass_gcct *g, uint32_t c)
{
	uint32_t chain[MAX_PATH], n = 0;
	char text[512];

	for (; c != GT_SASS_NONE && g->contexts[c].parent != GT_SASS_NONE && n < MAX_PATH; c = g->contexts[c].parent)
		chain[n++] = c;
	while (n--) {
		const struct gt_sass_context *x = &g->contexts[chain[n]];
		const char *name = gt_cupti__kernel_name(s->functions[x->function].callee);

		if (x->call != GT_SASS_NONE)
			path__insn(p, s, x->call, g->contexts[x->parent].function, NULL);
		if (x->undetermined && name) {
			snprintf(text, sizeof(text), "%s" GT_GPU_NODE_SPLIT, name);
			name = gt_cupti_pcsamp__intern(text);
		}
		path__add(p, name);
	}
}

/* Each class's samples of @e, in @part[k], at @path under every launch
 * context of its kernel, shared by their GPU time. */
/* Counts at @path under every launch context of its kernel, shared by
 * their GPU time: @part[k] as metric @metric[k], k < @nk. A sample's counts
 * (@metric is class_metric) also add GPC_SAMPLES for the classes and, for
 * issued samples, the issuing instruction's class @cls (GPI_*). */
static void place(const uint64_t *part, int nk, const enum gt_metric *metric, const struct path *path, int cls,
		  const struct target *tg, uint32_t n)
{
	uint64_t total_w = 0, *each = calloc(n, sizeof(*each));
	int samples = metric == class_metric;

	for (uint32_t i = 0; i < n; i++)
		total_w += tg[i].weight;
	for (int k = 0; each && k < nk; k++) {
		if (!part[k])
			continue;
		share(tg, n, total_w, part[k], each);
		for (uint32_t i = 0; i < n; i++) {
			struct gt_cct *cct = &tg[i].t->cct;
			struct gt_cct_node *node = tg[i].node;

			if (!each[i])
				continue;
			for (uint32_t d = 0; node && d < path->n; d++)
				node = gt_cct__child(cct, node, GT_NODE_NAME, (uint64_t)(uintptr_t)path->name[d], 0);
			if (!node)
				continue;
			gt_cct__add(cct, node, metric[k], each[i], 0);
			if (samples && k < PC_LATENCY)
				gt_cct__add(cct, node, GT_M_GPC_SAMPLES, each[i], 0);
			if (samples && k == PC_ISSUED && cls >= 0)
				gt_cct__add(cct, node, issue_metric[cls], each[i], 0);
		}
	}
	free(each);
}

/* Without the kernel's structure: its lines right under the kernel. */
static void entry__place_flat(const struct pc_entry *e, const struct target *tg, uint32_t n)
{
	struct path p = { .n = 0 };

	path__add(&p, e->line);
	place(e->n, PC__N, class_metric, &p, -1, tg, n);
}

/* ---- the kernels' structure (nvdisasm) -------------------------------------- */

void gt_cupti_pcsamp__disassembly(uint64_t crc, const char *text, size_t len)
{
	pthread_mutex_lock(&gt_pcs.lock);
	for (uint32_t i = 0; i < gt_pcs.n_cubins; i++) {
		struct pc_cubin *c = &gt_pcs.cubins[i];

		if (c->crc != crc || c->sass_text)
			continue;
		if ((c->sass_text = malloc(len + 1))) {
			memcpy(c->sass_text, text, len);
			c->sass_text[len] = 0;
			c->sass_len = len;
		}
	}
	pthread_mutex_unlock(&gt_pcs.lock);
}

/* Whether a kernel of cubin @arg has samples: its section is read. */
static int kernel__sampled(const char *name, size_t n, void *arg)
{
	uint64_t crc = *(const uint64_t *)arg;

	for (uint32_t k = 0; k < gt_pcs.n_e; k++) {
		const struct pc_entry *e = &gt_pcs.e[k];

		if (e->crc == crc && e->symbol && !strncmp(e->symbol, name, n) && !e->symbol[n])
			return 1;
	}
	return 0;
}

/* A module from this size on, not disassembled whole by the program's
 * exit, has its kernels with samples disassembled alone: nvdisasm took
 * 1.8 s for XSBench's module of 2.9 MB, 0.5 s for its lookup kernel. A
 * smaller one is waited for: 0.5 s at most. */
#define PART_MIN_BYTES (1u << 20)

/* The disassembly of @c's kernels that have samples (and of its functions
 * that are not kernels): 0, or a negative errno. */
static int names__add(const char ***names, size_t *n, const char *name)
{
	const char **grown;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return 0;
	if (!(grown = realloc(*names, (*n + 1) * sizeof(*grown))))
		return -ENOMEM;
	*names = grown;
	grown[(*n)++] = name;
	return 0;
}

/* Its own lock, taken last: kernel names are made under gt_pcs.lock too
 * (gt_cupti_pcsamp__entry). */
static pthread_mutex_t launched_lock = PTHREAD_MUTEX_INITIALIZER;

void gt_cupti_pcsamp__launched(const char *symbol)
{
	char **grown, *copy;

	pthread_mutex_lock(&launched_lock);
	for (uint32_t i = 0; i < gt_pcs.n_launched; i++)
		if (!strcmp(gt_pcs.launched[i], symbol))
			goto out;
	if (!(copy = strdup(symbol)))
		goto out;
	if (!(grown = realloc(gt_pcs.launched, (gt_pcs.n_launched + 1) * sizeof(*grown)))) {
		free(copy);
		goto out;
	}
	gt_pcs.launched = grown;
	grown[gt_pcs.n_launched++] = copy;
out:
	pthread_mutex_unlock(&launched_lock);
}

/* The disassembly of @c's kernels that have samples or were launched (the
 * same from run to run, where the sampled ones are not: a short kernel has
 * samples in one run and none in the next), and of its functions that are
 * not kernels: 0, or a negative errno. */
static int cubin__sampled_part(struct pc_cubin *c)
{
	const char **names = NULL;
	size_t n = 0;
	int err = 0;

	for (uint32_t k = 0; k < gt_pcs.n_e && !err; k++)
		if (gt_pcs.e[k].crc == c->crc && gt_pcs.e[k].symbol)
			err = names__add(&names, &n, gt_pcs.e[k].symbol);
	pthread_mutex_lock(&launched_lock);
	for (uint32_t k = 0; k < gt_pcs.n_launched && !err; k++)
		err = names__add(&names, &n, gt_pcs.launched[k]);
	pthread_mutex_unlock(&launched_lock);
	if (!err)
		err = n ? gt_sass__disassemble(gt_config.nvdisasm, c->bytes, c->size, names, n, &c->sass_text,
					       &c->sass_len)
			: -ENOENT;
	free(names);
	return err;
}

/* Each cubin that has samples is disassembled and read, of its kernels
 * those that have samples; each sample's instruction found in it. */
void gt_cupti_pcsamp__structure(void)
{
	static int said;

	if (gt_pcs.structured)
		return;
	gt_pcs.structured = 1;
	for (uint32_t i = 0; i < gt_pcs.n_cubins; i++) {
		struct pc_cubin *c = &gt_pcs.cubins[i];
		int used = 0, err = 0;
		uint64_t t0 = gt_clock__now();

		for (uint32_t k = 0; k < gt_pcs.n_e && !used; k++)
			used = gt_pcs.e[k].crc == c->crc;
		if (!used)
			continue;
		if (!c->sass_text && c->size <= 16) /* not a module: a test's stand-in */
			continue;
		/* Begun when the module loaded; if not done and the module is
		 * large, its kernels with samples alone, now (kept apart for the
		 * next run); else all. */
		if (!c->sass_text) {
			int part = c->size >= PART_MIN_BYTES;

			err = gt_cupti_pcsamp__bg_take(c->crc, !part, &c->sass_text, &c->sass_len);
			if (part && (err == -EINPROGRESS || err == -ENOENT) && !cubin__sampled_part(c))
				err = 0;
			else if (err == -EINPROGRESS)
				err = gt_cupti_pcsamp__bg_take(c->crc, 1, &c->sass_text, &c->sass_len);
			else if (err == -ENOENT)
				err = gt_sass__disassemble(gt_config.nvdisasm, c->bytes, c->size, NULL, 0, &c->sass_text,
							   &c->sass_len);
		}
		if (err == -ECANCELED)
			continue; /* GPUTOOL_NVDISASM=0: as asked */
		if (err || !c->sass_text) {
			if (!said++)
				gt_warn("cupti", "GPU samples by source line only, without GPU calling contexts, loops or "
						 "instruction classes: %s (set GPUTOOL_NVDISASM to CUDA's nvdisasm)",
					err == -ENOENT	      ? "nvdisasm not found"
					: err == -ETIMEDOUT ? "nvdisasm took too long"
							      : "nvdisasm failed");
			continue;
		}
		if (gt_cupti_recording)
			gt_cupti_record__sass(c->crc, c->sass_text, c->sass_len);
		c->sass = gt_sass__parse(c->sass_text, c->sass_len, kernel__sampled, &c->crc);
		gt_info("cupti", "cubin %016llx: %u functions, %u instructions, %u loops (%.1f ms)",
			(unsigned long long)c->crc, c->sass ? c->sass->n_functions : 0, c->sass ? c->sass->n_insns : 0,
			c->sass ? c->sass->n_loops : 0, (double)(gt_clock__now() - t0) / 1e6);
	}
	for (uint32_t k = 0; k < gt_pcs.n_e; k++) {
		struct pc_entry *e = &gt_pcs.e[k];

		for (uint32_t i = 0; i < gt_pcs.n_cubins; i++) {
			if (gt_pcs.cubins[i].crc != e->crc || !gt_pcs.cubins[i].sass)
				continue;
			e->insn = gt_sass__find(gt_pcs.cubins[i].sass, e->symbol, e->pc);
			if (e->insn != GT_SASS_NONE)
				e->cubin = i;
			break;
		}
	}
}

static int by_place(const void *a, const void *b)
{
	const struct pc_entry *x = &gt_pcs.e[*(const uint32_t *)a], *y = &gt_pcs.e[*(const uint32_t *)b];

	if (x->cubin != y->cubin)
		return x->cubin < y->cubin ? -1 : 1;
	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

/* @vals[0..nv) shared over the contexts @cs[0..nc) of one vertex by their
 * factors (@v_sum: their sum): @part[j * nv + c]. @w: scratch for nc. */
static int share_contexts(const struct gt_sass_gcct *g, const uint32_t *cs, uint32_t nc, double v_sum,
			  const uint64_t *vals, int nv, double *w, uint64_t *part)
{
	uint64_t one[MAX_CONTEXTS_PER_SHARE], *to = nc <= MAX_CONTEXTS_PER_SHARE ? one : malloc(nc * sizeof(*to));

	if (!to)
		return -ENOMEM;
	for (uint32_t j = 0; j < nc; j++)
		w[j] = g->contexts[cs[j]].factor;
	for (int c = 0; c < nv; c++) {
		share_d(w, nc, v_sum, vals[c], to);
		for (uint32_t j = 0; j < nc; j++)
			part[(size_t)j * (size_t)nv + (size_t)c] = to[j];
	}
	if (to != one)
		free(to);
	return 0;
}

/* The instruction blamer over one section's entries: the dependency stalls
 * (long and short scoreboard, wait) moved to the instructions that produce
 * what the waiting ones read, as GPB_* at the producers' lines, in each
 * of their GPU calling contexts; the part that unrolling could overlap as
 * GPO_UNROLL; the issued samples of the long-latency arithmetic idioms'
 * instructions as GPO_IDIOM_ISSUED. */
#define BLAME_COLS (GT_SASS__BLAMES + 2)

static int blame__place(const struct gt_sass *s, uint32_t sec, const uint32_t *idx, uint32_t n,
			const struct gt_sass_gcct *g, const uint32_t *by_v, const uint32_t *v_start,
			const double *v_sum, double *w, uint64_t *part, const struct target *tg, uint32_t nt)
{
	static const enum gt_metric metric[BLAME_COLS] = {
#define X(A, id, desc) GT_M_GPB_##id,
		GT_GPU_BLAME_KINDS(X, _)
#undef X
		GT_M_GPO_UNROLL,
		GT_M_GPO_IDIOM_ISSUED,
	};
	const struct gt_sass_section *S = &s->sections[sec];
	uint32_t ns = S->end - S->first;
	uint64_t *stalls = calloc((size_t)ns * GT_SASS__WAITS, sizeof(*stalls)), *issued = calloc(ns, sizeof(*issued));
	double *blame = malloc((size_t)ns * GT_SASS__BLAMES * sizeof(*blame)), *inloop = malloc(ns * sizeof(*inloop));
	uint8_t *idiom = malloc(ns ? ns : 1);
	double cum = 0, cum_loop = 0;
	uint64_t emitted = 0, emitted_loop = 0;
	char text[32];
	int err = -ENOMEM;

	if (!stalls || !issued || !blame || !inloop || !idiom)
		goto out;
	for (uint32_t k = 0; k < n; k++) {
		const struct pc_entry *e = &gt_pcs.e[idx[k]];
		uint64_t *st = &stalls[(size_t)(e->insn - S->first) * GT_SASS__WAITS];

		st[GT_SASS_WAIT_LONG] += e->n[PR_LONG_SCOREBOARD];
		st[GT_SASS_WAIT_SHORT] += e->n[PR_SHORT_SCOREBOARD];
		st[GT_SASS_WAIT_FIXED] += e->n[PR_WAIT];
		issued[e->insn - S->first] += e->n[PC_ISSUED];
	}
	if ((err = gt_sass__blame(s, sec, stalls, issued, blame, inloop, idiom)))
		goto out;
	for (uint32_t i = 0; i < ns; i++) {
		uint64_t counts[BLAME_COLS];
		uint32_t v = g->vertex[i], nc = v_start[v + 1] - v_start[v];
		int any = 0;

		/* Whole samples, rounded so that the sums stay exact. */
		for (int b = 0; b < GT_SASS__BLAMES; b++) {
			cum += blame[(size_t)i * GT_SASS__BLAMES + (size_t)b];
			counts[b] = (uint64_t)(cum + 0.5) - emitted;
			emitted += counts[b];
			any |= counts[b] != 0;
		}
		cum_loop += inloop[i];
		counts[GT_SASS__BLAMES] = (uint64_t)(cum_loop + 0.5) - emitted_loop;
		emitted_loop += counts[GT_SASS__BLAMES];
		any |= counts[GT_SASS__BLAMES] != 0;
		counts[GT_SASS__BLAMES + 1] = idiom[i] ? issued[i] : 0;
		any |= counts[GT_SASS__BLAMES + 1] != 0;
		if (!any || !nc)
			continue;
		err = share_contexts(g, &by_v[v_start[v]], nc, v_sum[v], counts, BLAME_COLS, w, part);
		if (err)
			goto out;
		snprintf(text, sizeof(text), GT_GPU_NODE_PC "%x", s->insns[S->first + i].offset);
		for (uint32_t j = 0; j < nc; j++) {
			uint32_t c = by_v[v_start[v] + j];
			struct path p = { .n = 0 };

			path__context(&p, s, g, c);
			path__insn(&p, s, S->first + i, g->contexts[c].function, gt_cupti_pcsamp__intern(text));
			path__recursion(&p, s, g, S->first, S->first + i);
			place(&part[(size_t)j * BLAME_COLS], BLAME_COLS, metric, &p, -1, tg, nt);
		}
	}
	err = 0;
out:
	free(stalls);
	free(issued);
	free(blame);
	free(inloop);
	free(idiom);
	return err;
}

/* One section's entries (@idx[0..n), same cubin, same section) through its
 * GPU calling contexts. Returns 0, or -ENOMEM (then nothing is placed). */
static int section__place(const uint32_t *idx, uint32_t n, const struct target *tg, uint32_t nt)
{
	const struct gt_sass *s = gt_pcs.cubins[gt_pcs.e[idx[0]].cubin].sass;
	uint32_t sec = s->functions[s->insns[gt_pcs.e[idx[0]].insn].function].section;
	const struct gt_sass_section *S = &s->sections[sec];
	uint32_t ns = S->end - S->first, *by_v = NULL, *v_start = NULL;
	uint64_t *weight = calloc(2 * (size_t)ns, sizeof(*weight)), *issued = weight + ns, *part = NULL, counts = 0;
	double *v_sum = NULL, *w = NULL;
	struct gt_sass_gcct g;
	int err = -ENOMEM;

	if (!weight)
		return err;
	for (uint32_t k = 0; k < n; k++) {
		/* Samples, or (a counting run) executions: how often each
		 * instruction ran, for the calls' shares. */
		for (int c = 0; c < PC_LATENCY; c++)
			weight[gt_pcs.e[idx[k]].insn - S->first] += gt_pcs.e[idx[k]].n[c];
		weight[gt_pcs.e[idx[k]].insn - S->first] += gt_pcs.e[idx[k]].n[PI_INST];
		counts += gt_pcs.e[idx[k]].n[PI_INST];
		issued[gt_pcs.e[idx[k]].insn - S->first] += gt_pcs.e[idx[k]].n[PC_ISSUED];
	}
	/* Counted executions are exact: any count of the calls splits. */
	if (gt_sass__gcct(s, sec, weight, issued, counts ? 1 : GT_SASS_MIN_SPLIT_SAMPLES, &g)) {
		free(weight);
		return err;
	}
	/* The contexts of each vertex, and the sums of their factors. */
	if (!(v_start = calloc(g.n_vertices + 1, sizeof(*v_start))) || !(by_v = malloc(g.n_contexts * sizeof(*by_v))) ||
	    !(v_sum = calloc(g.n_vertices, sizeof(*v_sum))) || !(w = malloc(g.n_contexts * sizeof(*w))) ||
	    !(part = malloc((size_t)g.n_contexts * ((int)PC__N > (int)BLAME_COLS ? (int)PC__N : (int)BLAME_COLS) *
			    sizeof(*part))))
		goto out;
	for (uint32_t c = 0; c < g.n_contexts; c++) {
		v_start[g.contexts[c].vertex + 1]++;
		v_sum[g.contexts[c].vertex] += g.contexts[c].factor;
	}
	for (uint32_t v = 0; v < g.n_vertices; v++)
		v_start[v + 1] += v_start[v];
	{
		uint32_t *fill = calloc(g.n_vertices, sizeof(*fill));

		if (!fill)
			goto out;
		for (uint32_t c = 0; c < g.n_contexts; c++)
			by_v[v_start[g.contexts[c].vertex] + fill[g.contexts[c].vertex]++] = c;
		free(fill);
	}
	for (uint32_t k = 0; k < n; k++) {
		const struct pc_entry *e = &gt_pcs.e[idx[k]];
		uint32_t v = g.vertex[e->insn - S->first], nc = v_start[v + 1] - v_start[v];
		const uint32_t *cs = &by_v[v_start[v]];

		if (!nc) { /* no context reaches it: its line under the kernel */
			entry__place_flat(e, tg, nt);
			continue;
		}
		if (share_contexts(&g, cs, nc, v_sum[v], e->n, PC__N, w, part))
			goto out;
		for (uint32_t j = 0; j < nc; j++) {
			const uint64_t *pj = &part[(size_t)j * PC__N];
			struct path p = { .n = 0 };
			int any = 0;

			for (int c = 0; c < PC__N; c++)
				any |= pj[c] != 0;
			if (!any)
				continue;
			path__context(&p, s, &g, cs[j]);
			path__insn(&p, s, e->insn, g.contexts[cs[j]].function, e->line);
			path__recursion(&p, s, &g, S->first, e->insn);
			place(pj, PC__N, class_metric, &p, (int)s->insns[e->insn].cls, tg, nt);
		}
	}
	if (blame__place(s, sec, idx, n, &g, by_v, v_start, v_sum, w, part, tg, nt))
		goto out;
	err = 0;
out:
	free(weight);
	free(part);
	free(v_sum);
	free(w);
	free(by_v);
	free(v_start);
	gt_sass__gcct_fini(&g);
	return err;
}

static void fact_u64(const char *key, uint64_t v)
{
	char buf[32];

	if (!v)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	gt_tool__set_fact(key, buf);
}

static void facts(void)
{
	const struct gt_cupti_device *d = &gt_cupti_devices[gt_pcs.device];
	uint64_t total = 0;
	char buf[448];

	/* What the report derives issue and active rates with (docs/CUDA.md). */
	fact_u64("pc_period_cycles", gt_pcs.period_cycles);
	if (atomic_load_explicit(&d->ready, memory_order_acquire)) {
		uint64_t khz, readings;

		/* The SM clock measured while the device was busy, else its
		 * nominal clock (docs/CUDA.md). */
		if (!gt_cupti_smclock__mean_khz(&khz, &readings)) {
			fact_u64("pc_sm_clock_khz", khz);
			snprintf(buf, sizeof(buf), "measured: the mean of %llu readings while busy; nominal %d MHz",
				 (unsigned long long)readings, d->clock_khz / 1000);
		} else {
			fact_u64("pc_sm_clock_khz", (uint64_t)d->clock_khz);
			snprintf(buf, sizeof(buf), "nominal");
		}
		gt_tool__set_fact("pc_sm_clock", buf);
		fact_u64("pc_sm_count", (uint64_t)d->sm_count);
		/* Four warp schedulers per SM since Volta (compute capability 7). */
		fact_u64("pc_schedulers", d->cc_major >= 7 ? 4 : 0);
	}
	/* Counted from the PCs: CUPTI's own total covers one GetData call. */
	for (uint32_t i = 0; i < gt_pcs.n_e; i++)
		for (int k = 0; k < PC_LATENCY; k++)
			total += gt_pcs.e[i].n[k];
	if (gt_pcs.n_ctx) {
		char period[96], loading[96];

		/* How the period was chosen and how modules loaded: what the
		 * samples' number and the kernels' first launches rest on. */
		if (!gt_pcs.period_cycles)
			period[0] = 0;
		else if (gt_config.pc_sampling >= 5 || !gt_pcs.exponent)
			snprintf(period, sizeof(period), "; a sample every %llu cycles per SM%s",
				 (unsigned long long)gt_pcs.period_cycles, gt_pcs.exponent ? "" : " (CUPTI's)");
		else
			snprintf(period, sizeof(period), "; a sample every %llu cycles per SM (at most %.3g million a second)",
				 (unsigned long long)gt_pcs.period_cycles, (double)gt_config.pc_rate / 1e6);
		snprintf(loading, sizeof(loading), "%s",
			 gt_pcs.loading == PC_LOADING_EAGER ? (gt_pcs.eager_asked ? "; modules loaded eagerly for PC sampling"
										  : "; modules loaded eagerly")
			 : gt_pcs.loading == PC_LOADING_LAZY ? "; modules loaded lazily (first launches include CUPTI's work)"
							     : "");
		snprintf(buf, sizeof(buf), "%llu samples, %llu dropped%s; %u instructions; %llu samples of kernels "
			 "without measured launches%s%s",
			 (unsigned long long)total, (unsigned long long)gt_pcs.dropped,
			 gt_pcs.buffer_full ? " (the hardware buffer filled: later samples lost)" : "", gt_pcs.n_e,
			 (unsigned long long)gt_pcs.unplaced, period, loading);
		gt_tool__set_fact("pc_sampling", buf);
		/* CUPTI keeps the run's samples in its buffer to the end and
		 * takes none once it is full: the kernels that ran after have
		 * none. The report says how much the samples cover and the
		 * period that keeps them all (report/advice.c). */
		if (gt_pcs.buffer_full) {
			gt_tool__set_fact("pc_buffer_full", "1");
			gt_warn("cupti", "PC sampling's hardware buffer filled: kernels that ran after it have no "
					 "samples (the report's \"GPU kernels by PC samples\" says the period that keeps "
					 "them)");
		}
	}
	if (gt_pcs.counted) {
		uint64_t inst = 0, threads = 0;

		for (uint32_t i = 0; i < gt_pcs.n_e; i++) {
			inst += gt_pcs.e[i].n[PI_INST];
			threads += gt_pcs.e[i].n[PI_THREAD_INST];
		}
		snprintf(buf, sizeof(buf), "%llu warp and %llu thread instructions counted, at %llu instructions",
			 (unsigned long long)inst, (unsigned long long)threads, (unsigned long long)gt_pcs.counted);
		gt_tool__set_fact("sass_counts", buf);
	}
}

void gt_cupti_pcsamp__settle(void)
{
	struct targets ts = { 0 };
	uint32_t nt = gt_thread__count(), *order = NULL, n_order = 0;

	pthread_mutex_lock(&gt_pcs.lock);
	if (!gt_pcs.n_e) {
		if (gt_pcs.n_ctx || gt_pcs.counted)
			facts();
		goto out;
	}
	ts.list = calloc(gt_pcs.n_e, sizeof(*ts.list));
	ts.n = calloc(gt_pcs.n_e, sizeof(*ts.n));
	order = malloc(gt_pcs.n_e * sizeof(*order));
	if (!ts.list || !ts.n || !order)
		goto out;
	for (uint32_t i = 0; i < gt_pcs.n_e; i++) {
		uint64_t key = (uintptr_t)gt_pcs.e[i].function;

		if (!gt_hmap__get(&ts.by_function, key) && !gt_hmap__put(&ts.by_function, key, ts.n_lists + 1))
			ts.n_lists++;
	}
	/* The trees are final (after the finalizer): read and written here only. */
	for (uint32_t i = 0; i < nt; i++) {
		struct gt_thread *t = gt_thread__at(i);

		if (t && t->cct.root)
			targets__collect(&ts, t, t->cct.root);
	}
	gt_cupti_pcsamp__structure();
	for (uint32_t i = 0; i < gt_pcs.n_e; i++) {
		const struct pc_entry *e = &gt_pcs.e[i];
		const uint64_t *v = gt_hmap__get(&ts.by_function, (uintptr_t)e->function);
		uint32_t li = v ? (uint32_t)*v - 1 : 0;

		if (!v || !ts.n[li]) {
			for (int k = 0; k < PC_LATENCY; k++)
				gt_pcs.unplaced += e->n[k];
			continue;
		}
		if (e->insn != GT_SASS_NONE)
			order[n_order++] = i;
		else
			entry__place_flat(e, ts.list[li], ts.n[li]);
	}
	/* With the structure: a section (a kernel and its callees) at a time. */
	if (n_order)
		qsort(order, n_order, sizeof(*order), by_place);
	for (uint32_t a = 0, b; a < n_order; a = b) {
		const struct pc_entry *e = &gt_pcs.e[order[a]];
		const struct gt_sass *s = gt_pcs.cubins[e->cubin].sass;
		uint32_t sec = s->functions[s->insns[e->insn].function].section;
		uint32_t li = (uint32_t)*gt_hmap__get(&ts.by_function, (uintptr_t)e->function) - 1;

		for (b = a + 1; b < n_order; b++) {
			const struct pc_entry *x = &gt_pcs.e[order[b]];

			if (x->cubin != e->cubin || s->functions[s->insns[x->insn].function].section != sec)
				break;
		}
		if (section__place(&order[a], b - a, ts.list[li], ts.n[li]))
			for (uint32_t k = a; k < b; k++)
				entry__place_flat(&gt_pcs.e[order[k]], ts.list[li], ts.n[li]);
	}
	facts();
out:
	for (uint32_t i = 0; ts.list && i < ts.n_lists; i++)
		free(ts.list[i]);
	free(ts.list);
	free(ts.n);
	free(order);
	gt_hmap__fini(&ts.by_function);
	/* The nodes name their paths by interned texts: the structure goes. */
	for (uint32_t i = 0; i < gt_pcs.n_cubins; i++) {
		gt_sass__delete(gt_pcs.cubins[i].sass);
		free(gt_pcs.cubins[i].sass_text);
		gt_pcs.cubins[i].sass = NULL;
		gt_pcs.cubins[i].sass_text = NULL;
	}
	gt_pcs.off = 1;
	pthread_mutex_unlock(&gt_pcs.lock);
}
