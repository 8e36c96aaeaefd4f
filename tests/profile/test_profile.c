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
#include <time.h>
#include <unistd.h>

#include "core/metrics.h"
#include "core/profile.h"
#include "report/report.h"
#include "tests/profile/profile-test.h"

/* The value of a meta key of @p, NULL when there is none. */
static const char *meta_of(const struct gt_profile *p, const char *key)
{
	for (uint32_t i = 0; i < p->n_meta; i++) {
		const char *k = gt_profile__str(p, p->meta[i].key);

		if (k && key && !strcmp(k, key))
			return gt_profile__str(p, p->meta[i].value);
	}
	return NULL;
}

void test_build(void)
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
	CHECK(streq(meta_of(&p, "pid"), "2"));
	CHECK(meta_of(&p, "host") == NULL && meta_of(&p, "rank") == NULL);
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
}

void test_totals(void)
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
}

void test_roundtrip(void)
{
	struct gt_profile p, q, r;
	char *data = NULL, *again = NULL, why[256];
	size_t len = 0, len2 = 0;

	CHECK(build_sample(&p) == 0);
	CHECK(to_memory(&p, &data, &len) == 0);
	CHECK(len > 16 && !memcmp(data, GT_PROFILE_MAGIC, 8));
	CHECK(from_memory(&q, data, len, why, sizeof(why)) == 0);
	CHECK(same_profile(&p, &q) == 0);
	CHECK(streq(meta_of(&q, "host"), "node1"));
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
}

void test_write_rejects_broken(void)
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
	CHECK(gt_report__write_profile(&p, NULL, stdout, 5) == -EINVAL);
	gt_profile__fini(&p);
}

void test_truncated(void)
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
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Random byte changes, first as they come (the checksum catches them), then
 * with the checksum recomputed, so that the section parsers see them. 4000
 * rounds (about 3 s), or as many as 15 s allow past the first 400: a
 * sanitizer build on a busy machine is ten times slower or more, and the
 * timeout is 60 s. */
void test_flips(void)
{
	struct gt_profile p, q;
	char *data = NULL, why[256];
	uint8_t *copy;
	size_t len = 0;
	unsigned accepted = 0, rounds = 4000, round;
	double deadline = now_s() + 15.0;

	CHECK(build_sample(&p) == 0);
	CHECK(to_memory(&p, &data, &len) == 0);
	copy = malloc(len);
	CHECK(copy);
	for (round = 0; round < rounds; round++) {
		int fix = round % 4 != 0, err;

		if (round >= 400 && now_s() > deadline)
			break;
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
			exit(1);
		}
		gt_profile__fini(&q);
	}
	printf("%u of %u changed files read back\n", accepted, round);
	free(copy);
	free(data);
	gt_profile__fini(&p);
}

/* ---- hand-made files ---- */

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
void test_classes_and_linkage(void)
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
}

static const struct test_case cases[] = {
	TEST_CASE(test_build),	   TEST_CASE(test_totals),	  TEST_CASE(test_roundtrip),
	TEST_CASE(test_write_rejects_broken), TEST_CASE(test_truncated), TEST_CASE(test_flips),
	TEST_CASE(test_hostile),   TEST_CASE(test_report),	  TEST_CASE(test_report_sparse),
	TEST_CASE(test_classes_and_linkage),
};

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "emit-binary"))
		return emit_binary(argv[2]);
	return test__main(cases, (int)(sizeof(cases) / sizeof(cases[0])), argc, argv);
}
