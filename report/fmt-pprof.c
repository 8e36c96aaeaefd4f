/* SPDX-License-Identifier: MIT */
/*
 * pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * gzipped, as `go tool pprof` reads it: one sample type per metric with a
 * value (its name and unit: nanoseconds, bytes or count), one sample per
 * context with an exclusive value holding every metric's value there, a
 * location per context (its function and line; the module's offset when
 * it has one) and a function per function name and file. Placeholders
 * ("<omp parallel>", "<gpu kernel>") and names under them (kernels) are
 * functions of their own, so pprof's views show them in the stack.
 *
 * The protobuf wire format is written here (varints and length-delimited
 * fields only, repeated numbers packed): no protobuf library is among the
 * dependencies, and the writer needs six field helpers' worth of it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/bytes.h"
#include "core/hmap.h"
#include "report/report.h"

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_DURATION_NANOS = 10,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
	MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void pb_uv(struct gt_bytes *b, unsigned field, uint64_t v)
{
	gt_bytes__uv(b, (uint64_t)field << 3 | WIRE_VARINT);
	gt_bytes__uv(b, v);
}

static void pb_len(struct gt_bytes *b, unsigned field, const void *p, size_t n)
{
	gt_bytes__uv(b, (uint64_t)field << 3 | WIRE_LEN);
	gt_bytes__uv(b, n);
	if (n)
		gt_bytes__put(b, p, n);
}

/* The message in m as field of b; m is emptied for the next one. */
static void pb_msg(struct gt_bytes *b, unsigned field, struct gt_bytes *m)
{
	pb_len(b, field, m->d, m->len);
	b->oom |= m->oom;
	m->len = 0;
}

/* int64 fields: our values are unsigned and may saturate. */
static uint64_t i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : v;
}

struct pp {
	const struct gt_analysis *a;
	struct gt_bytes out, msg, sub;
	uint32_t *sidx;     /* profile string -> string_table index; 0: not yet */
	uint32_t n_strings; /* in string_table */
	struct gt_hmap funcs; /* (name, file) -> function id */
	uint32_t n_funcs;
};

static void put_string(struct pp *p, const char *s)
{
	pb_len(&p->out, PROFILE_STRING_TABLE, s, strlen(s));
	p->n_strings++;
}

/* The string_table index of profile string s ("" for none). */
static uint64_t str_of(struct pp *p, uint32_t s)
{
	const char *v = gt_profile__str(p->a->t, s);

	if (!v)
		return 0;
	if (!p->sidx[s]) {
		p->sidx[s] = p->n_strings;
		put_string(p, v);
	}
	return p->sidx[s];
}

/* The string_table index of a string of our own (not shared). */
static uint64_t new_str(struct pp *p, const char *s)
{
	put_string(p, s);
	return p->n_strings - 1;
}

/* The function of node i: one per (name, file) for named frames and
 * placeholders; one per node for frames without a name. 0 on ENOMEM. */
static uint64_t func_of(struct pp *p, uint32_t i)
{
	const struct gt_profile *t = p->a->t;
	const struct gt_prof_node *n = &t->nodes[i];
	uint64_t key = 0, *have, name, sys;
	struct gt_sb b = { 0 };

	if (n->name != GT_NONE && n->kind != GT_PNODE_ROOT) {
		key = (uint64_t)(n->name + 1u) << 32 | (uint32_t)(n->file + 1u);
		key ^= (uint64_t)gt_pnode__is_frame(n->kind) << 63; /* a frame and a placeholder of one name differ */
		have = gt_hmap__get(&p->funcs, key);
		if (have)
			return *have;
	}
	gt_label(&b, t, i, GT_LABEL_NAME_ONLY);
	if (b.oom || !b.s) {
		free(b.s);
		return 0;
	}
	name = n->kind == GT_PNODE_PLACEHOLDER || n->kind == GT_PNODE_NAME || n->name == GT_NONE ||
			       n->kind == GT_PNODE_ROOT
		       ? new_str(p, b.s)
		       : str_of(p, n->name);
	free(b.s);
	/* pprof rewrites a name equal to its system name as if demangled
	 * ("<omp parallel>" would lose its <...>, a C++ name its template
	 * arguments): the system name is the symbol's, when it has one. */
	sys = 0;
	if (gt_pnode__is_frame(n->kind) && gt_profile__linkage(t, n->name) != GT_NONE)
		sys = str_of(p, gt_profile__linkage(t, n->name));
	pb_uv(&p->sub, FUNCTION_ID, ++p->n_funcs);
	pb_uv(&p->sub, FUNCTION_NAME, name);
	if (sys)
		pb_uv(&p->sub, FUNCTION_SYSTEM_NAME, sys);
	if (gt_pnode__is_frame(n->kind))
		pb_uv(&p->sub, FUNCTION_FILENAME, str_of(p, n->file));
	pb_msg(&p->out, PROFILE_FUNCTION, &p->sub);
	if (key && gt_hmap__put(&p->funcs, key, p->n_funcs))
		return 0;
	return p->n_funcs;
}

static int gzip_out(FILE *f, const struct gt_bytes *b)
{
	unsigned char buf[1 << 16];
	z_stream z = { 0 };
	int st;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = b->d;
	z.avail_in = (uInt)b->len; /* profiles stay far below 4 GiB */
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		st = deflate(&z, Z_FINISH);
		if (st == Z_STREAM_ERROR)
			break;
		fwrite(buf, 1, sizeof(buf) - z.avail_out, f);
	} while (st != Z_STREAM_END);
	deflateEnd(&z);
	return st == Z_STREAM_END ? 0 : -EIO;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The module of the program's executable (the first process's that names
 * one), or GT_NONE. pprof takes the first mapping for the program: it
 * names the profile after it (`File:` in its views), so that one goes
 * first, not whichever library the merge met first (libc, libomp).
 */
static uint32_t main_module(const struct gt_run *r)
{
	const struct gt_profile *t = &r->t;
	const char *exe = NULL;

	for (uint32_t i = 0; i < r->n_procs && !exe; i++)
		exe = r->procs[i].exe;
	if (!exe || !*exe)
		return GT_NONE;
	exe = base_name(exe);
	for (uint32_t m = 0; m < t->n_modules; m++) {
		const char *name = gt_profile__str(t, t->modules[m]);

		if (name && !strcmp(base_name(name), exe))
			return m;
	}
	return GT_NONE;
}

int gt_pprof__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o)
{
	const struct gt_run *r = a->run;
	const struct gt_profile *t = a->t;
	struct pp p = { .a = a };
	uint64_t wall = 0, dflt = 0;
	uint32_t main_mod;
	struct gt_used u;
	int err;

	err = gt_used__init(&u, r, 1);
	if (err)
		return err;
	err = -ENOMEM;
	p.sidx = calloc(t->n_strings ? t->n_strings : 1, sizeof(*p.sidx));
	if (!p.sidx)
		goto out;
	put_string(&p, ""); /* string_table[0] is always "" */
	for (uint32_t k = 0; k < u.n; k++) {
		const struct gt_prof_metric *m = &t->metrics[u.metric[k]];
		const char *unit = gt_profile__str(t, m->unit);
		uint64_t name = str_of(&p, m->name);

		pb_uv(&p.sub, VALUE_TYPE_TYPE, name);
		pb_uv(&p.sub, VALUE_TYPE_UNIT,
		      new_str(&p, unit && !strcmp(unit, "ns") ? "nanoseconds" : unit ? unit : "count"));
		pb_msg(&p.out, PROFILE_SAMPLE_TYPE, &p.sub);
		if (u.metric[k] == a->metric)
			dflt = name;
	}
	main_mod = main_module(r);
	for (uint32_t k = 0; k < t->n_modules; k++) {
		/* The program's own first, then the others in their order. */
		uint32_t m = main_mod == GT_NONE ? k : k == 0 ? main_mod : k <= main_mod ? k - 1 : k;

		pb_uv(&p.sub, MAPPING_ID, m + 1);
		pb_uv(&p.sub, MAPPING_FILENAME, str_of(&p, t->modules[m]));
		pb_uv(&p.sub, MAPPING_HAS_FUNCTIONS, 1);
		pb_uv(&p.sub, MAPPING_HAS_FILENAMES, 1);
		pb_uv(&p.sub, MAPPING_HAS_LINE_NUMBERS, 1);
		pb_msg(&p.out, PROFILE_MAPPING, &p.sub);
	}
	/* A location per kept context, id = node + 1. */
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		const struct gt_prof_node *n = &t->nodes[i];
		uint64_t fn;

		if (!u.keep[i])
			continue;
		fn = func_of(&p, i);
		if (!fn)
			goto out;
		pb_uv(&p.msg, LOCATION_ID, (uint64_t)i + 1);
		if (n->module != GT_NONE && n->module < t->n_modules) {
			pb_uv(&p.msg, LOCATION_MAPPING_ID, (uint64_t)n->module + 1);
			pb_uv(&p.msg, LOCATION_ADDRESS, n->offset);
		}
		pb_uv(&p.sub, LINE_FUNCTION_ID, fn);
		if (gt_pnode__is_frame(n->kind) && n->line)
			pb_uv(&p.sub, LINE_LINE, n->line);
		pb_msg(&p.msg, LOCATION_LINE, &p.sub);
		pb_msg(&p.out, PROFILE_LOCATION, &p.msg);
	}
	/* A sample per context with a value: its stack, innermost first (the
	 * root only for the root's own value), and every metric's value. */
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		int any = 0;

		for (uint32_t k = 0; k < u.n && !any; k++)
			any = gt_run__excl(r, i, u.metric[k]) != 0;
		if (!any)
			continue;
		gt_bytes__uv(&p.sub, (uint64_t)i + 1);
		for (uint32_t v = t->nodes[i].parent; i && v != 0 && v != GT_NONE; v = t->nodes[v].parent)
			gt_bytes__uv(&p.sub, (uint64_t)v + 1);
		pb_msg(&p.msg, SAMPLE_LOCATION_ID, &p.sub);
		for (uint32_t k = 0; k < u.n; k++)
			gt_bytes__uv(&p.sub, i64(gt_run__excl(r, i, u.metric[k])));
		pb_msg(&p.msg, SAMPLE_VALUE, &p.sub);
		pb_msg(&p.out, PROFILE_SAMPLE, &p.msg);
	}
	for (uint32_t k = 0; k < r->n_procs; k++)
		if (r->procs[k].state == GT_PROC_MERGED && r->procs[k].wall_ns > wall)
			wall = r->procs[k].wall_ns;
	if (wall)
		pb_uv(&p.out, PROFILE_DURATION_NANOS, i64(wall));
	{
		struct gt_sb c = { 0 };

		gt_sb__addf(&c, "gputool report of %s: %" PRIu32 " process(es), %" PRIu64 " thread(s)",
			    o->path ? o->path : "a run", r->n_merged, r->n_threads);
		if (c.oom || !c.s) {
			free(c.s);
			goto out;
		}
		pb_uv(&p.out, PROFILE_COMMENT, new_str(&p, c.s));
		free(c.s);
	}
	pb_uv(&p.out, PROFILE_DEFAULT_SAMPLE_TYPE, dflt);
	if (p.out.oom || p.msg.oom || p.sub.oom)
		goto out;
	err = gzip_out(f, &p.out);
	if (!err)
		err = ferror(f) || fflush(f) ? -EIO : 0;
out:
	free(p.out.d);
	free(p.msg.d);
	free(p.sub.d);
	free(p.sidx);
	gt_hmap__fini(&p.funcs);
	gt_used__fini(&u);
	return err;
}
