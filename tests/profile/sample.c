/* SPDX-License-Identifier: MIT */
/* The sample profile and the helpers the profile tests share. */
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
#include "tests/profile/profile-test.h"

const char weird_name[] = "kernel<\"weird\">\\\n\x01\xff\xc3\xa9";

/* ---- the sample profile ---- */


uint32_t frame(struct gt_profile *p, uint32_t parent, const char *fn, const char *file, uint32_t line,
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
int build_sample(struct gt_profile *p)
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

int to_memory(const struct gt_profile *p, char **data, size_t *len)
{
	FILE *f = open_memstream(data, len);
	int err;

	if (!f)
		return -errno;
	err = gt_profile__write(p, f);
	fclose(f);
	return err;
}

int from_memory(struct gt_profile *p, const void *data, size_t len, char *why, size_t whylen)
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

int streq(const char *a, const char *b)
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
int same_profile(const struct gt_profile *a, const struct gt_profile *b)
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

uint32_t crc32_of(const uint8_t *d, size_t n)
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
void fix_crc(uint8_t *d, size_t len)
{
	uint32_t crc = crc32_of(d, len - 16);

	for (int i = 0; i < 4; i++)
		d[len - 4 + i] = (uint8_t)(crc >> (8 * i));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Whatever the reader accepts, everything downstream must handle. */
int exercise(const struct gt_profile *p)
{
	FILE *null = fopen("/dev/null", "w");
	struct gt_profile q;
	char *data = NULL, why[256];
	size_t len = 0;
	int err;

	CHECK(null);
	CHECK(gt_report__write_profile(p, NULL, null, 5) == 0);
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
