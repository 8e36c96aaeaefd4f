/*
 * Unit tests of core/profile.h (the model, the binary file) and of the text
 * report of one profile (report/report.h).
 *
 * `test_profile` runs every test, each in a child process; `test_profile
 * NAME` runs one in place (for a debugger). `test_profile emit-binary FILE`
 * writes the sample profile as a profile file, for the scripts next to
 * this file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "report/report.h"

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			return 1;                                                            \
		}                                                                            \
	} while (0)

#define MS 1000000ull /* ns */

static const char weird_name[] = "kernel<\"weird\">\\\n\x01\xff\xc3\xa9";

/* ---- the sample profile ---- */

enum {
	N_ROOT, N_MAIN, N_RUN_A, N_PAR_A, N_COMPUTE, N_IBAR_A, N_PAR_NESTED, N_INNER, N_BAR_NESTED,
	N_RUN_B, N_PAR_B, N_ANON, N_WEIRD, N_LONG, N__COUNT
};

static uint32_t frame(struct gt_profile *p, uint32_t parent, const char *fn, const char *file, uint32_t line,
		      uint32_t module, uint64_t offset)
{
	struct gt_prof_node n = {
		.parent = parent, .kind = GT_PNODE_FRAME, .name = gt_profile__string(p, fn),
		.file = gt_profile__string(p, file), .line = line, .module = module, .offset = offset,
	};

	return gt_profile__node(p, &n);
}

static uint32_t named(struct gt_profile *p, uint32_t parent, uint32_t kind, const char *name)
{
	struct gt_prof_node n = {
		.parent = parent, .kind = kind, .name = gt_profile__string(p, name),
		.file = GT_NONE, .module = GT_NONE,
	};

	return gt_profile__node(p, &n);
}

static int add(struct gt_profile *p, uint32_t node, uint32_t thread, const char *metric, uint64_t v)
{
	return gt_profile__value(p, node, thread, gt_profile__find_metric(p, metric), v);
}

/*
 * main > run_a > <omp parallel> > compute > <omp parallel> > inner
 *                                         > <omp barrier>
 *                              > <omp implicit barrier>
 *      > run_b > <omp parallel> > (a frame without a name, in libomp)
 *              > a NAME node with a hostile name, a frame with a long name
 * on three threads, with one value added twice.
 */
static int build_sample(struct gt_profile *p)
{
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				     .file = GT_NONE, .module = GT_NONE };
	char long_name[201];
	uint32_t app, omp, ids[N__COUNT];
	int err = 0;

	gt_profile__init(p);
	gt_profile__set_meta(p, "exe", "/usr/bin/app");
	gt_profile__set_meta(p, "cmdline", "app -n 4");
	gt_profile__set_meta(p, "pid", "4242");
	gt_profile__set_meta(p, "rank", "0");
	gt_profile__set_meta(p, "host", "node1");
	gt_profile__set_meta(p, "start_ns", "1000");
	gt_profile__set_meta(p, "end_ns", "2000001000");
	gt_profile__set_meta(p, "wall_ns", "2000000000");
	gt_profile__set_meta(p, "sample_hz", "200");
	gt_profile__set_meta(p, "tool_samples", "5");
	gt_profile__set_meta(p, "dropped_samples", "3");
	gt_profile__set_meta(p, "tool_version", "0.1.0");
	for (int m = 0; m < GT_M__COUNT; m++)
		CHECK(gt_profile__metric(p, gt_metric_descs[m].name, gt_metric_descs[m].unit,
					 gt_metric_descs[m].desc) == (uint32_t)m);
	CHECK(gt_profile__thread(p, 0, 100, "initial") == 0);
	CHECK(gt_profile__thread(p, 1, 101, "worker") == 1);
	CHECK(gt_profile__thread(p, 2, 102, "worker") == 2);
	app = gt_profile__module(p, "/usr/bin/app");
	omp = gt_profile__module(p, "/usr/lib/libomp.so");
	CHECK(app == 0 && omp == 1);

	memset(long_name, 'x', 200);
	memcpy(long_name, "very_long_", 10);
	memcpy(long_name + 191, "_name_end", 9);
	long_name[200] = '\0';
	ids[N_ROOT] = gt_profile__node(p, &root);
	ids[N_MAIN] = frame(p, ids[N_ROOT], "main", "/src/app.c", 50, app, 0x1000);
	ids[N_RUN_A] = frame(p, ids[N_MAIN], "run_a", "/src/app.c", 30, app, 0x1100);
	ids[N_PAR_A] = named(p, ids[N_RUN_A], GT_PNODE_PLACEHOLDER, "<omp parallel>");
	ids[N_COMPUTE] = frame(p, ids[N_PAR_A], "compute", "/src/app.c", 12, app, 0x1200);
	ids[N_IBAR_A] = named(p, ids[N_PAR_A], GT_PNODE_PLACEHOLDER, "<omp implicit barrier>");
	ids[N_PAR_NESTED] = named(p, ids[N_COMPUTE], GT_PNODE_PLACEHOLDER, "<omp parallel>");
	ids[N_INNER] = frame(p, ids[N_PAR_NESTED], "inner", "/src/app.c", 20, app, 0x1300);
	ids[N_BAR_NESTED] = named(p, ids[N_PAR_NESTED], GT_PNODE_PLACEHOLDER, "<omp barrier>");
	ids[N_RUN_B] = frame(p, ids[N_MAIN], "run_b", "/src/app.c", 40, app, 0x1400);
	ids[N_PAR_B] = named(p, ids[N_RUN_B], GT_PNODE_PLACEHOLDER, "<omp parallel>");
	ids[N_ANON] = frame(p, ids[N_PAR_B], NULL, NULL, 0, omp, 0xabc);
	ids[N_WEIRD] = named(p, ids[N_RUN_B], GT_PNODE_NAME, weird_name);
	ids[N_LONG] = frame(p, ids[N_RUN_B], long_name, "/src/long.c", 7, app, 0x1500);
	for (int i = 0; i < N__COUNT; i++)
		CHECK(ids[i] == (uint32_t)i);

	err |= add(p, N_COMPUTE, 0, "CPUTIME", 500 * MS);
	err |= add(p, N_COMPUTE, 1, "CPUTIME", 400 * MS);
	err |= add(p, N_COMPUTE, 2, "CPUTIME", 300 * MS);
	err |= add(p, N_COMPUTE, 0, "CPUTIME", 100 * MS); /* the same cell again: adds up */
	err |= add(p, N_INNER, 0, "CPUTIME", 100 * MS);
	err |= add(p, N_ANON, 0, "CPUTIME", 50 * MS);
	err |= add(p, N_ANON, 1, "CPUTIME", 50 * MS);
	err |= add(p, N_RUN_A, 0, "CPUTIME", 10 * MS);
	err |= add(p, N_LONG, 0, "CPUTIME", 30 * MS);
	err |= add(p, N_COMPUTE, 0, "SAMPLES", 120);
	err |= add(p, N_COMPUTE, 1, "SAMPLES", 80);
	err |= add(p, N_COMPUTE, 2, "SAMPLES", 60);
	err |= add(p, N_INNER, 0, "SAMPLES", 20);
	err |= add(p, N_ANON, 0, "SAMPLES", 10);
	err |= add(p, N_ANON, 1, "SAMPLES", 10);
	err |= add(p, N_RUN_A, 0, "SAMPLES", 2);
	err |= add(p, N_LONG, 0, "SAMPLES", 6);
	err |= add(p, N_PAR_A, 0, "OMP_PAR_TIME", 1500 * MS);
	err |= add(p, N_PAR_NESTED, 0, "OMP_PAR_TIME", 200 * MS);
	err |= add(p, N_PAR_B, 0, "OMP_PAR_TIME", 300 * MS);
	err |= add(p, N_PAR_A, 0, "OMP_PAR_COUNT", 4);
	err |= add(p, N_PAR_NESTED, 0, "OMP_PAR_COUNT", 8);
	err |= add(p, N_PAR_B, 0, "OMP_PAR_COUNT", 2);
	err |= add(p, N_PAR_A, 0, "OMP_PAR_THREADS", 12);
	err |= add(p, N_PAR_NESTED, 0, "OMP_PAR_THREADS", 16);
	err |= add(p, N_PAR_B, 0, "OMP_PAR_THREADS", 6);
	err |= add(p, N_PAR_A, 0, "OMP_WORK", 1200 * MS);
	err |= add(p, N_PAR_A, 1, "OMP_WORK", 1100 * MS);
	err |= add(p, N_PAR_A, 2, "OMP_WORK", 1000 * MS);
	err |= add(p, N_PAR_NESTED, 0, "OMP_WORK", 150 * MS);
	err |= add(p, N_PAR_B, 0, "OMP_WORK", 250 * MS);
	err |= add(p, N_PAR_B, 1, "OMP_WORK", 200 * MS);
	err |= add(p, N_PAR_B, 2, "OMP_WORK", 200 * MS);
	err |= add(p, N_IBAR_A, 0, "OMP_WAIT", 300 * MS);
	err |= add(p, N_IBAR_A, 1, "OMP_WAIT", 400 * MS);
	err |= add(p, N_IBAR_A, 2, "OMP_WAIT", 500 * MS);
	err |= add(p, N_BAR_NESTED, 0, "OMP_WAIT", 50 * MS);
	err |= add(p, N_IBAR_A, 0, "OMP_WAIT_COUNT", 4);
	err |= add(p, N_IBAR_A, 1, "OMP_WAIT_COUNT", 4);
	err |= add(p, N_IBAR_A, 2, "OMP_WAIT_COUNT", 4);
	err |= add(p, N_BAR_NESTED, 0, "OMP_WAIT_COUNT", 8);
	err |= add(p, N_WEIRD, 2, "OMP_EXPLICIT_TASKS", UINT64_MAX); /* printed exactly */
	CHECK(err == 0);
	return 0;
}

/* ---- helpers ---- */

static int to_memory(const struct gt_profile *p, char **data, size_t *len)
{
	FILE *f = open_memstream(data, len);
	int err;

	if (!f)
		return -errno;
	err = gt_profile__write(p, f);
	fclose(f);
	return err;
}

static int from_memory(struct gt_profile *p, const void *data, size_t len, char *why, size_t whylen)
{
	/* fmemopen refuses a zero-length buffer; /dev/null reads as empty. */
	FILE *f = len ? fmemopen((void *)data, len, "rb") : fopen("/dev/null", "rb");
	int err;

	if (!f)
		return -errno;
	err = gt_profile__read(p, f, why, whylen);
	fclose(f);
	return err;
}

static int streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int value_cmp(const void *a, const void *b)
{
	const struct gt_prof_value *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The cells of p, sorted and merged, as the writer stores them. */
static struct gt_prof_value *cells(const struct gt_profile *p, uint64_t *n)
{
	struct gt_prof_value *v = malloc((p->n_values + 1) * sizeof(*v));
	uint64_t k = 0;

	memcpy(v, p->values, p->n_values * sizeof(*v));
	qsort(v, p->n_values, sizeof(*v), value_cmp);
	for (uint64_t i = 0; i < p->n_values; i++) {
		if (k && !value_cmp(&v[k - 1], &v[i]))
			v[k - 1].value += v[i].value;
		else
			v[k++] = v[i];
	}
	*n = k;
	return v;
}

/* Whether a and b hold the same profile, field by field. */
static int same_profile(const struct gt_profile *a, const struct gt_profile *b)
{
	struct gt_prof_value *va, *vb;
	uint64_t na, nb;
	int same;

	CHECK(a->n_strings == b->n_strings);
	for (uint32_t i = 0; i < a->n_strings; i++)
		CHECK(!strcmp(a->strings[i], b->strings[i]));
	CHECK(a->n_modules == b->n_modules);
	for (uint32_t i = 0; i < a->n_modules; i++)
		CHECK(a->modules[i] == b->modules[i]);
	CHECK(a->n_metrics == b->n_metrics);
	for (uint32_t i = 0; i < a->n_metrics; i++) {
		CHECK(a->metrics[i].name == b->metrics[i].name);
		CHECK(a->metrics[i].unit == b->metrics[i].unit);
		CHECK(a->metrics[i].desc == b->metrics[i].desc);
	}
	CHECK(a->n_threads == b->n_threads);
	for (uint32_t i = 0; i < a->n_threads; i++) {
		CHECK(a->threads[i].id == b->threads[i].id);
		CHECK(a->threads[i].tid == b->threads[i].tid);
		CHECK(a->threads[i].kind == b->threads[i].kind);
	}
	CHECK(a->n_meta == b->n_meta);
	for (uint32_t i = 0; i < a->n_meta; i++) {
		CHECK(a->meta[i].key == b->meta[i].key);
		CHECK(a->meta[i].value == b->meta[i].value);
	}
	CHECK(a->n_nodes == b->n_nodes);
	for (uint32_t i = 0; i < a->n_nodes; i++) {
		const struct gt_prof_node *x = &a->nodes[i], *y = &b->nodes[i];

		CHECK(x->parent == y->parent && x->kind == y->kind && x->name == y->name);
		CHECK(x->file == y->file && x->line == y->line && x->module == y->module);
		CHECK(x->offset == y->offset);
	}
	va = cells(a, &na);
	vb = cells(b, &nb);
	same = na == nb;
	for (uint64_t i = 0; same && i < na; i++)
		same = !value_cmp(&va[i], &vb[i]) && va[i].value == vb[i].value;
	free(va);
	free(vb);
	CHECK(same);
	return 0;
}

static uint32_t crc32_of(const uint8_t *d, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= d[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return c ^ 0xffffffffu;
}

/* A file ends with END: tag, length 4, CRC of all before the tag. */
static void fix_crc(uint8_t *d, size_t len)
{
	uint32_t crc = crc32_of(d, len - 16);

	for (int i = 0; i < 4; i++)
		d[len - 4 + i] = (uint8_t)(crc >> (8 * i));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Whatever the reader accepts, everything downstream must handle. */
static int exercise(const struct gt_profile *p)
{
	FILE *null = fopen("/dev/null", "w");
	struct gt_profile q;
	char *data = NULL, why[256];
	size_t len = 0;
	int err;

	CHECK(null);
	CHECK(gt_report__write_text(p, null, 5) == 0);
	fclose(null);
	CHECK(to_memory(p, &data, &len) == 0);
	err = from_memory(&q, data, len, why, sizeof(why));
	free(data);
	if (err)
		fprintf(stderr, "re-read failed: %s\n", why);
	CHECK(err == 0);
	gt_profile__fini(&q);
	return 0;
}

/* ---- tests ---- */

static int test_build(void)
{
	struct gt_profile p;
	struct gt_prof_node n = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				  .file = GT_NONE, .module = GT_NONE };
	uint32_t a, b;

	gt_profile__init(&p);
	a = gt_profile__string(&p, "alpha");
	b = gt_profile__string(&p, "beta");
	CHECK(a != GT_NONE && b != GT_NONE && a != b);
	CHECK(gt_profile__string(&p, "alpha") == a);
	CHECK(gt_profile__string(&p, NULL) == GT_NONE);
	CHECK(!strcmp(gt_profile__str(&p, b), "beta"));
	CHECK(gt_profile__str(&p, GT_NONE) == NULL && gt_profile__str(&p, 99) == NULL);
	/* Enough strings to make the table grow several times. */
	for (int i = 0; i < 5000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "s%d", i);
		CHECK(gt_profile__string(&p, s) == (uint32_t)(i + 2));
	}
	for (int i = 0; i < 5000; i += 97) {
		char s[32];

		snprintf(s, sizeof(s), "s%d", i);
		CHECK(gt_profile__string(&p, s) == (uint32_t)(i + 2));
	}
	CHECK(gt_profile__module(&p, "/lib/a.so") == 0);
	CHECK(gt_profile__module(&p, "/lib/b.so") == 1);
	CHECK(gt_profile__module(&p, "/lib/a.so") == 0);
	CHECK(gt_profile__metric(&p, "CPUTIME", "ns", "cpu") == 0);
	CHECK(gt_profile__metric(&p, "OMP_WAIT", "ns", NULL) == 1);
	CHECK(gt_profile__metric(&p, "CPUTIME", "s", "other") == 0);
	CHECK(gt_profile__find_metric(&p, "OMP_WAIT") == 1);
	CHECK(gt_profile__find_metric(&p, "GKER") == GT_NONE);
	gt_profile__set_meta(&p, "pid", "1");
	gt_profile__set_meta(&p, "pid", "2");
	gt_profile__set_meta(&p, "host", NULL);
	CHECK(p.n_meta == 2);
	CHECK(streq(gt_profile__get_meta(&p, "pid"), "2"));
	CHECK(gt_profile__get_meta(&p, "host") == NULL && gt_profile__get_meta(&p, "rank") == NULL);
	CHECK(gt_profile__thread(&p, 7, 1234, "initial") == 0);

	/* Node invariants. */
	n.kind = GT_PNODE_FRAME;
	CHECK(gt_profile__node(&p, &n) == GT_NONE); /* node 0 must be the root */
	n.kind = GT_PNODE_ROOT;
	CHECK(gt_profile__node(&p, &n) == 0);
	CHECK(gt_profile__node(&p, &n) == GT_NONE); /* a second root */
	n.kind = GT_PNODE_FRAME;
	n.parent = 1;
	CHECK(gt_profile__node(&p, &n) == GT_NONE); /* parent not earlier */
	n.parent = 0;
	n.name = 123456;
	CHECK(gt_profile__node(&p, &n) == GT_NONE); /* string out of range */
	n.name = a;
	n.module = 2;
	CHECK(gt_profile__node(&p, &n) == GT_NONE); /* module out of range */
	n.module = 1;
	CHECK(gt_profile__node(&p, &n) == 1);

	CHECK(gt_profile__value(&p, 1, 0, 0, 5) == 0);
	CHECK(gt_profile__value(&p, 1, 0, 0, 0) == 0);
	CHECK(p.n_values == 1); /* zeros are not stored */
	CHECK(gt_profile__value(&p, 2, 0, 0, 5) == -EINVAL);
	CHECK(gt_profile__value(&p, 1, 1, 0, 5) == -EINVAL);
	CHECK(gt_profile__value(&p, 1, 0, 2, 5) == -EINVAL);
	gt_profile__fini(&p);
	CHECK(p.n_strings == 0 && p.strings == NULL && p.string_index == NULL);
	gt_profile__fini(&p); /* twice is harmless */
	return 0;
}

static int test_totals(void)
{
	struct gt_profile p;
	uint64_t excl[N__COUNT], incl[N__COUNT];

	CHECK(build_sample(&p) == 0);
	CHECK(gt_profile__metric_totals(&p, GT_M_CPUTIME, excl, incl) == 0);
	CHECK(excl[N_COMPUTE] == 1300 * MS);
	CHECK(incl[N_COMPUTE] == 1400 * MS);
	CHECK(incl[N_PAR_A] == 1400 * MS);
	CHECK(incl[N_RUN_A] == 1410 * MS);
	CHECK(incl[N_ROOT] == 1540 * MS);
	CHECK(excl[N_ROOT] == 0);
	CHECK(gt_profile__metric_totals(&p, GT_M_OMP_EXPLICIT_TASKS, NULL, incl) == 0);
	CHECK(incl[N_ROOT] == UINT64_MAX);
	CHECK(gt_profile__metric_totals(&p, p.n_metrics, excl, incl) == -EINVAL);
	gt_profile__fini(&p);
	return 0;
}

static int test_roundtrip(void)
{
	struct gt_profile p, q, r;
	char *data = NULL, *again = NULL, why[256];
	size_t len = 0, len2 = 0;

	CHECK(build_sample(&p) == 0);
	CHECK(to_memory(&p, &data, &len) == 0);
	CHECK(len > 16 && !memcmp(data, GT_PROFILE_MAGIC, 8));
	CHECK(from_memory(&q, data, len, why, sizeof(why)) == 0);
	CHECK(same_profile(&p, &q) == 0);
	CHECK(streq(gt_profile__get_meta(&q, "host"), "node1"));
	CHECK(streq(gt_profile__str(&q, q.nodes[N_WEIRD].name), weird_name));
	CHECK(q.nodes[0].parent == GT_NONE);
	for (uint64_t i = 1; i < q.n_values; i++)
		CHECK(q.values[i - 1].node <= q.values[i].node);
	/* Interning keeps working on a profile that was read. */
	CHECK(gt_profile__string(&q, "main") == p.nodes[N_MAIN].name);
	CHECK(gt_profile__module(&q, "/usr/lib/libomp.so") == 1);
	/* Writing what was read gives the same bytes. */
	CHECK(to_memory(&q, &again, &len2) == 0);
	CHECK(len2 == len && !memcmp(data, again, len));
	CHECK(from_memory(&r, again, len2, why, sizeof(why)) == 0);
	CHECK(same_profile(&q, &r) == 0);
	free(again);
	free(data);
	gt_profile__fini(&r);
	gt_profile__fini(&q);
	gt_profile__fini(&p);

	/* An empty profile is a valid file too. */
	gt_profile__init(&p);
	CHECK(to_memory(&p, &data, &len) == 0);
	CHECK(from_memory(&q, data, len, why, sizeof(why)) == 0);
	CHECK(q.n_nodes == 0 && q.n_strings == 0);
	CHECK(exercise(&q) == 0);
	free(data);
	gt_profile__fini(&q);
	return 0;
}

static int test_write_rejects_broken(void)
{
	struct gt_profile p;
	char *data = NULL;
	size_t len = 0;

	CHECK(build_sample(&p) == 0);
	p.nodes[3].parent = 7; /* edited behind the API: would not read back */
	CHECK(to_memory(&p, &data, &len) == -EINVAL);
	CHECK(len == 0);
	free(data);
	data = NULL;
	CHECK(gt_report__write_text(&p, stdout, 5) == -EINVAL);
	gt_profile__fini(&p);
	return 0;
}

static int test_truncated(void)
{
	struct gt_profile p, q;
	char *data = NULL, why[256];
	size_t len = 0;

	CHECK(build_sample(&p) == 0);
	CHECK(to_memory(&p, &data, &len) == 0);
	for (size_t n = 0; n < len; n++) {
		why[0] = '\0';
		CHECK(from_memory(&q, data, n, why, sizeof(why)) == -EINVAL);
		CHECK(why[0] && !strchr(why, '\n'));
		CHECK(q.n_nodes == 0 && q.nodes == NULL && q.strings == NULL);
	}
	CHECK(from_memory(&q, data, len, why, sizeof(why)) == 0);
	gt_profile__fini(&q);
	free(data);
	gt_profile__fini(&p);
	return 0;
}

/* Random byte changes, first as they come (the checksum catches them), then
 * with the checksum recomputed, so that the section parsers see them. */
static int test_flips(void)
{
	struct gt_profile p, q;
	char *data = NULL, why[256];
	uint8_t *copy;
	size_t len = 0;
	unsigned accepted = 0, rounds = 4000;

	CHECK(build_sample(&p) == 0);
	CHECK(to_memory(&p, &data, &len) == 0);
	copy = malloc(len);
	CHECK(copy);
	for (unsigned round = 0; round < rounds; round++) {
		int fix = round % 4 != 0, err;
		unsigned flips = 1 + (unsigned)(rng() % 3);

		memcpy(copy, data, len);
		for (unsigned k = 0; k < flips; k++) {
			size_t at = (size_t)(rng() % len);
			uint64_t how = rng();

			switch (how % 4) {
			case 0: copy[at] ^= (uint8_t)(1u << ((how >> 8) % 8)); break;
			case 1: copy[at] = 0xff; break;
			case 2: copy[at] = 0x80; break;
			default: copy[at] = (uint8_t)(how >> 16);
			}
		}
		if (fix)
			fix_crc(copy, len);
		why[0] = '\0';
		err = from_memory(&q, copy, len, why, sizeof(why));
		if (err) {
			CHECK(err == -EINVAL);
			CHECK(why[0]);
			CHECK(!fix || memcmp(copy, data, len) || !"rejected an intact file");
			continue;
		}
		CHECK(fix || !memcmp(copy, data, len) || !"checksum missed a change");
		accepted++;
		if (exercise(&q)) {
			fprintf(stderr, "round %u\n", round);
			return 1;
		}
		gt_profile__fini(&q);
	}
	printf("%u of %u changed files read back\n", accepted, rounds);
	free(copy);
	free(data);
	gt_profile__fini(&p);
	return 0;
}

/* ---- hand-made files ---- */

struct fb {
	uint8_t d[1 << 12];
	size_t n, sec;
};

static void fb__bytes(struct fb *b, const void *s, size_t n)
{
	memcpy(b->d + b->n, s, n);
	b->n += n;
}

static void fb__le(struct fb *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		b->d[b->n++] = (uint8_t)(v >> (8 * i));
}

static void fb__uv(struct fb *b, uint64_t v)
{
	do {
		b->d[b->n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void fb__header(struct fb *b, uint32_t version)
{
	b->n = 0;
	fb__bytes(b, GT_PROFILE_MAGIC, 8);
	fb__le(b, version, 4);
	fb__le(b, 0, 4);
}

static void fb__begin(struct fb *b, uint32_t tag)
{
	b->sec = b->n;
	fb__le(b, tag, 4);
	fb__le(b, 0, 8);
}

static void fb__end(struct fb *b)
{
	uint64_t len = b->n - b->sec - 12;

	for (int i = 0; i < 8; i++)
		b->d[b->sec + 4 + i] = (uint8_t)(len >> (8 * i));
}

static void fb__finish(struct fb *b)
{
	uint32_t crc = crc32_of(b->d, b->n);

	fb__le(b, 0, 4);
	fb__le(b, 4, 8);
	fb__le(b, crc, 4);
}

/* STRINGS {"a","b"} and a root node. */
static void fb__base(struct fb *b)
{
	fb__header(b, GT_PROFILE_VERSION);
	fb__begin(b, 1);
	fb__uv(b, 2);
	fb__uv(b, 1);
	fb__bytes(b, "a", 1);
	fb__uv(b, 1);
	fb__bytes(b, "b", 1);
	fb__end(b);
}

static void fb__root(struct fb *b)
{
	for (int i = 0; i < 7; i++)
		fb__uv(b, 0);
}

static int expect(const struct fb *b, const char *want)
{
	struct gt_profile q;
	char why[256] = "";
	int err = from_memory(&q, b->d, b->n, why, sizeof(why));

	if (!want) {
		if (err)
			fprintf(stderr, "unexpected error: %s\n", why);
		CHECK(err == 0);
		gt_profile__fini(&q);
		return 0;
	}
	if (err != -EINVAL || !strstr(why, want))
		fprintf(stderr, "expected \"%s\", got %d \"%s\"\n", want, err, why);
	CHECK(err == -EINVAL && strstr(why, want));
	CHECK(q.n_strings == 0 && q.n_nodes == 0 && q.string_index == NULL);
	return 0;
}

static int test_hostile(void)
{
	struct fb b;

	fb__base(&b);
	fb__finish(&b);
	CHECK(expect(&b, NULL) == 0);

	fb__header(&b, GT_PROFILE_VERSION + 1);
	fb__finish(&b);
	CHECK(expect(&b, "newer") == 0);
	fb__header(&b, 0);
	fb__finish(&b);
	CHECK(expect(&b, "version 0") == 0);
	fb__header(&b, 1);
	b.d[0] = 'X';
	fb__finish(&b);
	CHECK(expect(&b, "bad magic") == 0);
	b.n = 10;
	memcpy(b.d, GT_PROFILE_MAGIC, 8);
	CHECK(expect(&b, "header") == 0);

	/* Counts far beyond the section. */
	fb__header(&b, 1);
	fb__begin(&b, 1);
	fb__uv(&b, 1ull << 40);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "count") == 0);
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 4000000000ull);
	fb__root(&b);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "count") == 0);

	/* A section longer than the file. */
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__root(&b);
	fb__end(&b);
	b.d[b.sec + 4] = 200;
	CHECK(expect(&b, "truncated file") == 0);

	/* No END. */
	fb__base(&b);
	CHECK(expect(&b, "no END") == 0);

	/* A checksum that does not match. */
	fb__base(&b);
	fb__finish(&b);
	b.d[30] ^= 1; /* the "a" of STRINGS */
	CHECK(expect(&b, "checksum") == 0);

	/* Bytes after END. */
	fb__base(&b);
	fb__finish(&b);
	fb__le(&b, 0, 3);
	CHECK(expect(&b, "after the END") == 0);

	/* A later format's section is skipped; so are bytes a later revision
	 * appends to a known section. */
	fb__base(&b);
	fb__begin(&b, 99);
	fb__bytes(&b, "\xff\xff\xff\xff", 4);
	fb__end(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__root(&b);
	fb__bytes(&b, "\x01\x02\x03", 3);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, NULL) == 0);

	/* The same section twice. */
	fb__base(&b);
	fb__begin(&b, 1);
	fb__uv(&b, 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "duplicate STRINGS") == 0);

	/* An 11-byte number. */
	fb__base(&b);
	fb__begin(&b, 5);
	fb__bytes(&b, "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x00", 14);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "too large") == 0);

	/* A NUL inside a string. */
	fb__header(&b, 1);
	fb__begin(&b, 1);
	fb__uv(&b, 1);
	fb__uv(&b, 3);
	fb__bytes(&b, "a\0b", 3);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "NUL") == 0);

	/* A string index past the table. */
	fb__base(&b);
	fb__begin(&b, 2);
	fb__uv(&b, 1);
	fb__uv(&b, 0);
	fb__uv(&b, 3); /* value: string 2 of 2 */
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "out of range") == 0);

	/* Node 0 must be the root; others need an earlier parent and no
	 * second root. */
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__uv(&b, 0);
	fb__uv(&b, 1); /* kind frame */
	for (int i = 0; i < 5; i++)
		fb__uv(&b, 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "not the root") == 0);
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 2);
	fb__root(&b);
	fb__uv(&b, 2); /* node 1, parent 1 - 2 */
	for (int i = 0; i < 6; i++)
		fb__uv(&b, i == 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "no earlier parent") == 0);
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 2);
	fb__root(&b);
	fb__uv(&b, 1);
	fb__uv(&b, 0); /* kind root */
	for (int i = 0; i < 5; i++)
		fb__uv(&b, 0);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "second root") == 0);

	/* A group of no values. */
	fb__base(&b);
	fb__begin(&b, 6);
	fb__uv(&b, 1);
	fb__root(&b);
	fb__end(&b);
	fb__begin(&b, 7);
	fb__bytes(&b, "\x01\x00\x00\x00\x00\x00", 6);
	fb__end(&b);
	fb__finish(&b);
	CHECK(expect(&b, "empty group") == 0);

	/* Values for a node, metric or thread that does not exist. */
	for (int which = 0; which < 3; which++) {
		fb__base(&b);
		fb__begin(&b, 4); /* METRICS: one */
		fb__uv(&b, 1);
		fb__uv(&b, 0);
		fb__uv(&b, 0);
		fb__uv(&b, 0);
		fb__end(&b);
		fb__begin(&b, 5); /* THREADS: one */
		fb__uv(&b, 1);
		fb__uv(&b, 0);
		fb__uv(&b, 1);
		fb__uv(&b, 0);
		fb__end(&b);
		fb__begin(&b, 6);
		fb__uv(&b, 1);
		fb__root(&b);
		fb__end(&b);
		fb__begin(&b, 7);
		fb__uv(&b, 1);         /* one group */
		fb__uv(&b, which == 0); /* node */
		fb__uv(&b, 1);         /* one value */
		fb__uv(&b, which == 1); /* metric */
		fb__uv(&b, which == 2); /* thread */
		fb__uv(&b, 5);
		fb__end(&b);
		fb__finish(&b);
		CHECK(expect(&b, which == 0 ? "node 1" : which == 1 ? "metric 1" : "thread 1") == 0);
	}
	return 0;
}

static int contains(const char *text, const char *s)
{
	if (strstr(text, s))
		return 1;
	fprintf(stderr, "report lacks \"%s\"\n", s);
	return 0;
}

static int test_report(void)
{
	struct gt_profile p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *a, *b, *c;

	CHECK(f);
	CHECK(build_sample(&p) == 0);
	CHECK(gt_report__write_text(&p, f, 20) == 0);
	fclose(f);
	fputs(text, stdout);
	/* Header. */
	CHECK(contains(text, "/usr/bin/app"));
	CHECK(contains(text, "processes    1 (rank 0, pid 4242) on host node1"));
	CHECK(contains(text, "2.000 s"));
	CHECK(contains(text, "threads      3"));
	CHECK(contains(text, "200 Hz per thread, 313 samples, 1.6% of them in gputool itself"));
	CHECK(contains(text, "dropped      3 samples"));
	/* Parallel regions: run_a's first (most time), then run_b's, then the
	 * nested one; waits of the nested region stay out of its parent's. */
	CHECK(contains(text, "OpenMP parallel regions (3 of 3"));
	CHECK(contains(text, "1          4   1.500   75.0%      3.0   3.300   1.200   26.7%  1.400\n"));
	CHECK(contains(text, "2          2   0.300   15.0%      3.0   0.650   0.000    0.0%  0.100\n"));
	CHECK(contains(text, "3          8   0.200   10.0%      2.0   0.150   0.050   25.0%  0.100\n"));
	a = strstr(text, "\n     main (app.c:50) > run_a (app.c:30)\n");
	b = strstr(text, "\n     main (app.c:50) > run_b (app.c:40)\n");
	/* (The load imbalance section above names that context too.) */
	c = b ? strstr(b, "main (app.c:50) > run_a (app.c:30) > <omp parallel> > compute (app.c:12)\n") : NULL;
	CHECK(a && b && c && a < b && b < c);
	/* CPU by context and by function. */
	CHECK(contains(text, "CPU time by calling context (5 of 5 contexts; total 1.540 s)"));
	CHECK(contains(text, "1.300  84.4%  compute (app.c:12) < <omp parallel> < run_a (app.c:30) < main (app.c:50)"));
	CHECK(contains(text, "libomp.so+0xabc < <omp parallel> < run_b (app.c:40) < main (app.c:50)"));
	CHECK(contains(text, "by function (5 of 5)"));
	CHECK(contains(text, "<unknown> [libomp.so]"));
	CHECK(contains(text, "  very_long_xxxxxxxxxxxxxxxxxxx…xxxxxxxxxxxxxxxxxxxxx_name_end\n"));
	CHECK(contains(text, "_name_end (long.c:7) < … < main (app.c:50)\n"));
	/* Waits. */
	CHECK(contains(text, "Waits (2 of 2 places; total 1.250 s over all threads)"));
	CHECK(contains(text, "1.200  96.0%     12  100000.0        3  <omp implicit barrier> < <omp parallel> < run_a"));
	CHECK(contains(text, "0.050   4.0%      8    6250.0        1  <omp barrier> < <omp parallel> < compute"));
	/* The tree: the anonymous frame is over 1 %, the weird name is not. */
	CHECK(contains(text, "Top-down view (CPUTIME, in s;"));
	CHECK(contains(text, "  100.0%      1.540      0.000  main (app.c:50)\n"));
	CHECK(contains(text, "   91.6%      1.410      0.010    run_a (app.c:30)\n"));
	CHECK(contains(text, "    6.5%      0.100      0.100        libomp.so+0xabc\n"));
	CHECK(!strstr(text, "weird"));
	for (const char *s = text; *s; s++)
		CHECK((unsigned char)*s >= 0x20 || *s == '\n');
	free(text);
	gt_profile__fini(&p);
	return 0;
}

/* Sections without data are left out; the header alone is a report. */
static int test_report_sparse(void)
{
	struct gt_profile p;
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				     .file = GT_NONE, .module = GT_NONE };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	gt_profile__init(&p);
	f = open_memstream(&text, &len);
	CHECK(gt_report__write_text(&p, f, 0) == 0);
	fclose(f);
	CHECK(contains(text, "gputool report\n"));
	CHECK(contains(text, "Nothing was measured for CPUTIME."));
	CHECK(!strstr(text, "OpenMP") && !strstr(text, "CPU time by") && !strstr(text, "Waits"));
	free(text);

	CHECK(gt_profile__node(&p, &root) == 0);
	CHECK(frame(&p, 0, "solo", "s.c", 3, GT_NONE, 0) == 1);
	CHECK(gt_profile__thread(&p, 0, 1, "initial") == 0);
	CHECK(gt_profile__metric(&p, "CPUTIME", "ns", NULL) == 0);
	CHECK(gt_profile__value(&p, 1, 0, 0, 7 * MS) == 0);
	f = open_memstream(&text, &len);
	CHECK(gt_report__write_text(&p, f, 0) == 0);
	fclose(f);
	CHECK(contains(text, "0.007  100.0%  solo (s.c:3)"));
	CHECK(!strstr(text, "OpenMP") && !strstr(text, "Waits") && !strstr(text, "wall time"));
	free(text);
	gt_profile__fini(&p);
	return 0;
}

static int emit_binary(const char *file)
{
	struct gt_profile p;
	FILE *f = fopen(file, "wb");
	int err;

	CHECK(f);
	CHECK(build_sample(&p) == 0);
	err = gt_profile__write(&p, f);
	gt_profile__fini(&p);
	CHECK(fclose(f) == 0);
	return err != 0;
}

/* A metric's class and a function's symbol go through the file: a metric
 * this version does not know keeps the class its writer gave it. */
static int test_classes_and_linkage(void)
{
	struct gt_profile p, q;
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE,
				     .file = GT_NONE, .module = GT_NONE };
	uint32_t gker, newer, cpu, name;
	char *data = NULL, why[256];
	size_t len = 0;

	gt_profile__init(&p);
	CHECK(gt_profile__node(&p, &root) == 0);
	gker = gt_profile__metric(&p, "GKER", "ns", NULL);
	newer = gt_profile__metric(&p, "GFUTURE", "ns", NULL);
	cpu = gt_profile__metric(&p, "CPUTIME", "ns", NULL);
	CHECK(p.metrics[gker].cls == GT_MC_DEVICE && p.metrics[cpu].cls == GT_MC_CPU);
	CHECK(p.metrics[newer].cls == GT_MC_UNKNOWN);
	gt_profile__set_metric_class(&p, newer, GT_MC_DEVICE);
	/* Out of range: ignored. */
	gt_profile__set_metric_class(&p, newer, GT_MC__COUNT);
	gt_profile__set_metric_class(&p, 99, GT_MC_COUNT);
	name = gt_profile__string(&p, "physics::Solver<double>::step(int)");
	CHECK(gt_profile__set_linkage(&p, name, gt_profile__string(&p, "_ZN7physics6SolverIdE4stepEi")) == 0);
	CHECK(gt_profile__set_linkage(&p, 1000, name) == -EINVAL);
	CHECK(to_memory(&p, &data, &len) == 0);
	CHECK(from_memory(&q, data, len, why, sizeof(why)) == 0);
	CHECK(q.metrics[gker].cls == GT_MC_DEVICE && q.metrics[newer].cls == GT_MC_DEVICE);
	CHECK(q.metrics[cpu].cls == GT_MC_CPU);
	CHECK(streq(gt_profile__str(&q, gt_profile__linkage(&q, name)), "_ZN7physics6SolverIdE4stepEi"));
	CHECK(gt_profile__linkage(&q, gker) == GT_NONE);
	free(data);
	gt_profile__fini(&q);
	gt_profile__fini(&p);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
#define T(fn) { #fn, fn }
	T(test_build),     T(test_totals),  T(test_roundtrip), T(test_write_rejects_broken),
	T(test_truncated), T(test_flips),   T(test_hostile),   T(test_report),
	T(test_report_sparse), T(test_classes_and_linkage),
#undef T
};

static int run_forked(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	size_t count = sizeof(tests) / sizeof(tests[0]);
	int failed = 0;

	if (argc > 1) {
		if (!strcmp(argv[1], "emit-binary") && argc > 2)
			return emit_binary(argv[2]);
		for (size_t i = 0; i < count; i++)
			if (strcmp(argv[1], tests[i].name) == 0)
				return tests[i].fn();
		fprintf(stderr, "no test named %s\n", argv[1]);
		return 2;
	}
	for (size_t i = 0; i < count; i++) {
		int rc = run_forked(tests[i].fn);

		printf("%s %s\n", rc == 0 ? "ok  " : "FAIL", tests[i].name);
		failed += rc != 0;
	}
	printf("%d of %zu failed\n", failed, count);
	return failed != 0;
}
