/* SPDX-License-Identifier: MIT */
/*
 * Merging per-thread trees into one profile: the same path on two threads is
 * one profile node with a value per thread; placeholders and names merge by
 * name; frames merge by function and source line.
 */
#include <pthread.h>
#include <string.h>

#include "core/output.h"
#include "core/profile.h"
#include "core/thread.h"
#include "tests/unit/cct-test.h"
#include "tests/unit/test.h"

__attribute__((noinline)) static void site_a(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) static void site_b(void)
{
	__asm__ volatile("");
}

/* Each thread builds: root / site_a / <omp parallel> (+ value) and
 * root / site_b (+ value), and a NAME node under the placeholder. */
static void *fill(void *arg)
{
	uint64_t v = (uint64_t)(uintptr_t)arg;
	struct gt_thread *t = gt_thread__self(v == 1 ? GT_THREAD_INITIAL : GT_THREAD_WORKER);
	uintptr_t pa = (uintptr_t)&site_a + 1, pb = (uintptr_t)&site_b + 1;
	struct gt_cct_node *a, *b, *ph, *name;

	a = cct_test__path(&t->cct, t->cct.root, &pa, 1, 0);
	b = cct_test__path(&t->cct, t->cct.root, &pb, 1, 0);
	ph = gt_cct__placeholder(&t->cct, a, GT_PH_OMP_PARALLEL);
	name = gt_cct__child(&t->cct, ph, GT_NODE_NAME, (uint64_t)(uintptr_t) "kernel_x", 0);
	gt_cct__add(&t->cct, ph, GT_M_OMP_PAR_COUNT, v, 0);
	gt_cct__add(&t->cct, b, GT_M_CPUTIME, 100 * v, 0);
	gt_cct__add(&t->cct, name, GT_M_OMP_WORK, 7, 0);
	return NULL;
}

static uint32_t find(const struct gt_profile *p, uint32_t parent, const char *name)
{
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		const char *n = gt_profile__str(p, p->nodes[i].name);

		if (p->nodes[i].parent == parent && n && !strcmp(n, name))
			return i;
	}
	return GT_NONE;
}

static uint64_t value(const struct gt_profile *p, uint32_t node, uint32_t thread, const char *metric)
{
	uint32_t m = gt_profile__find_metric(p, metric);
	uint64_t sum = 0;

	for (uint64_t i = 0; i < p->n_values; i++)
		if (p->values[i].node == node && p->values[i].metric == m &&
		    (thread == GT_NONE || p->values[i].thread == thread))
			sum += p->values[i].value;
	return sum;
}

static void merges_threads(void)
{
	struct gt_profile p;
	pthread_t th;
	uint32_t a, b, ph, name;

	fill((void *)1);
	pthread_create(&th, NULL, fill, (void *)2);
	pthread_join(th, NULL);
	gt_profile__init(&p);
	CHECK(gt_output__build(&p) == 0);
	CHECK_EQ_U(p.n_threads, 2);
	/* root, site_a, site_b, <omp parallel>, kernel_x */
	CHECK_EQ_U(p.n_nodes, 5);
	a = find(&p, 0, "site_a");
	b = find(&p, 0, "site_b");
	CHECK(a != GT_NONE && b != GT_NONE);
	CHECK(p.nodes[a].file != GT_NONE && p.nodes[a].line > 0);
	CHECK(strstr(gt_profile__str(&p, p.nodes[a].file), "test_output.c"));
	ph = find(&p, a, "<omp parallel>");
	CHECK(ph != GT_NONE && p.nodes[ph].kind == GT_PNODE_PLACEHOLDER);
	name = find(&p, ph, "kernel_x");
	CHECK(name != GT_NONE && p.nodes[name].kind == GT_PNODE_NAME);
	CHECK_EQ_U(value(&p, ph, 0, "OMP_PAR_COUNT"), 1);
	CHECK_EQ_U(value(&p, ph, 1, "OMP_PAR_COUNT"), 2);
	CHECK_EQ_U(value(&p, b, GT_NONE, "CPUTIME"), 300);
	CHECK_EQ_U(value(&p, name, GT_NONE, "OMP_WORK"), 14);
	gt_profile__fini(&p);
}

void gt_shim_burn(uint64_t ns);

/* A measurement library's frame in the tree (one the unwinder did not know
 * yet when it was sampled), with a frame of the program under it: both go
 * to a "<tool: LIBRARY>" node under the program's frame that called it,
 * not to that frame as the program's work. */
static void tool_library_frames(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	uintptr_t pcs[3] = { (uintptr_t)&site_a + 1, (uintptr_t)&gt_shim_burn + 1, (uintptr_t)&site_b + 1 };
	struct gt_cct_node *shim, *below;
	struct gt_profile p;
	uint32_t a, tool;

	shim = cct_test__path(&t->cct, t->cct.root, pcs, 2, 0);
	below = cct_test__path(&t->cct, t->cct.root, pcs, 3, 0);
	gt_cct__add(&t->cct, shim, GT_M_CPUTIME, 100, 0);
	gt_cct__add(&t->cct, below, GT_M_CPUTIME, 20, 0);
	gt_profile__init(&p);
	CHECK(gt_output__build(&p) == 0);
	a = find(&p, 0, "site_a");
	CHECK(a != GT_NONE);
	tool = find(&p, a, GT_PNODE_TOOL_PREFIX "libnvperf_host-gtshim.so>");
	CHECK(tool != GT_NONE && p.nodes[tool].kind == GT_PNODE_NAME);
	CHECK_EQ_U(value(&p, tool, GT_NONE, "CPUTIME"), 120);
	CHECK_EQ_U(value(&p, a, GT_NONE, "CPUTIME"), 0);
	/* root, site_a, the tool's node */
	CHECK_EQ_U(p.n_nodes, 3);
	gt_profile__fini(&p);
}

static void rank_from_launcher(void)
{
	setenv("PMI_RANK", "5", 1);
	CHECK_EQ_U(gt_output__rank(), 5);
	setenv("OMPI_COMM_WORLD_RANK", "3", 1);
	CHECK_EQ_U(gt_output__rank(), 3);
	setenv("OMPI_COMM_WORLD_RANK", "x", 1);
	CHECK_EQ_U(gt_output__rank(), 5);
}

static void output_names(void)
{
	struct gt_output o;
	char dir[] = "/tmp/gputool-test-outXXXXXX";

	CHECK(mkdtemp(dir));
	setenv("SLURM_PROCID", "7", 1);
	CHECK(gt_output__init(&o, dir) == 0);
	CHECK_EQ_U(o.rank, 7);
	CHECK(strstr(o.stem, "test_output-7-"));
	unsetenv("SLURM_PROCID");
	setenv("SLURM_JOB_ID", "1234", 1);
	CHECK(gt_output__init(&o, NULL) == 0);
	CHECK(!strcmp(o.dir, "gputool-test_output-1234"));
	rmdir(o.dir);
	rmdir(dir);
}

TEST_MAIN({ "merges threads", merges_threads }, { "a measurement library's frames", tool_library_frames },
	  { "rank from launcher", rank_from_launcher },
	  { "output names", output_names })
