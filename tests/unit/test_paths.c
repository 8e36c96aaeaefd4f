/* SPDX-License-Identifier: MIT */
/* report/paths.c: contexts that keep what tells rows apart, within a width. */
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"
#include "core/text.h"
#include "report/paths.h"
#include "test.h"

static uint32_t frame(struct gt_profile *p, uint32_t parent, const char *name, const char *file, uint32_t line,
		      const char *mod)
{
	struct gt_prof_node n = { .parent = parent, .kind = GT_PNODE_FRAME, .name = gt_profile__string(p, name),
				  .file = gt_profile__string(p, file), .line = line,
				  .module = mod ? gt_profile__module(p, mod) : GT_NONE };

	return gt_profile__node(p, &n);
}

static uint32_t mark(struct gt_profile *p, uint32_t parent, uint32_t kind, const char *name)
{
	struct gt_prof_node n = { .parent = parent, .kind = kind, .name = gt_profile__string(p, name),
				  .file = GT_NONE, .module = GT_NONE };

	return gt_profile__node(p, &n);
}

static uint32_t root(struct gt_profile *p)
{
	struct gt_prof_node n = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE, .file = GT_NONE,
				  .module = GT_NONE };

	gt_profile__init(p);
	return gt_profile__node(p, &n);
}

#define APP "/work/app"
#define LONG "CalcHourglassControlForElems(Domain&, double*, double*, double*, double*, double*, double)"

/* main > a|b > X > leaf: the rows differ only in the middle; cut short,
 * each keeps its a or b and its leaf. */
static void test_middle(void)
{
	struct gt_profile p;
	uint32_t r = root(&p), m = frame(&p, r, "main", "app.c", 90, APP), nodes[2];
	uint32_t a = frame(&p, m, "caller_a(int, double*)", "app.c", 70, APP);
	uint32_t b = frame(&p, m, "caller_b(int, double*)", "app.c", 80, APP);
	uint32_t xa = frame(&p, a, LONG, "app.c", 40, APP), xb = frame(&p, b, LONG, "app.c", 40, APP);
	const struct gt_paths_opts o = { .width = 80, .label_flags = GT_LABEL_ELIDE_ARGS };
	char *out[2];

	nodes[0] = frame(&p, xa, "leaf(double*)", "app.c", 12, APP);
	nodes[1] = frame(&p, xb, "leaf(double*)", "app.c", 12, APP);
	CHECK(!gt_paths__build(&p, nodes, 2, &o, out));
	CHECK(strcmp(out[0], out[1]));
	CHECK(strstr(out[0], "caller_a(…) (app.c:70)"));
	CHECK(strstr(out[1], "caller_b(…) (app.c:80)"));
	CHECK(strstr(out[0], "leaf(…) (app.c:12)"));
	CHECK(gt_cols(out[0]) <= 80 && gt_cols(out[1]) <= 80);
	/* A row alone, narrower: the innermost user frame, no caller. */
	{
		const struct gt_paths_opts n = { .width = 40, .label_flags = GT_LABEL_ELIDE_ARGS };
		char *one = gt_paths__one(&p, nodes[0], &n);

		CHECK(one && gt_cols(one) <= 40 && strstr(one, "leaf(…) (app.c:12)"));
		free(one);
	}
	gt_paths__free(out, 2);
	gt_profile__fini(&p);
}

/* An OpenCL launch through a header: the kernel's name and the user's line
 * stay, the header frames give way. */
static void test_kernel(void)
{
	struct gt_profile p;
	uint32_t r = root(&p), m = frame(&p, r, "main", "main.cpp", 300, APP);
	uint32_t u = frame(&p, m, "OCLStream<double>::triad()", "OCLStream.cpp", 215, APP);
	uint32_t h1 = frame(&p, u, "cl::KernelFunctor<cl::Buffer, cl::Buffer>::operator()(cl::EnqueueArgs const&, cl::Buffer, cl::Buffer)", "/usr/include/CL/cl2.hpp", 9000, APP);
	uint32_t h2 = frame(&p, h1, "cl::CommandQueue::enqueueNDRangeKernel(cl::Kernel const&, cl::NDRange const&, cl::NDRange const&, cl::NDRange const&, std::vector<cl::Event> const*, cl::Event*) const", "/usr/include/CL/cl2.hpp", 8464, APP);
	uint32_t ph = mark(&p, h2, GT_PNODE_PLACEHOLDER, "<gpu kernel>");
	uint32_t k = mark(&p, ph, GT_PNODE_NAME, "triad");
	const struct gt_paths_opts o = { .width = 80, .label_flags = GT_LABEL_ELIDE_ARGS };
	char *s = gt_paths__one(&p, k, &o);

	CHECK(s && gt_cols(s) <= 80);
	CHECK(strstr(s, "OCLStream.cpp:215"));
	CHECK(strstr(s, "<gpu kernel> > triad"));
	free(s);
	gt_profile__fini(&p);
}

/* Under MPI: a shortened row ends at the user's frame or the library's
 * entry, not in __sched_yield. */
static void test_runtime_leaf(void)
{
	struct gt_profile p;
	uint32_t r = root(&p), m = frame(&p, r, "main", "lulesh.cc", 2800, APP);
	uint32_t u = frame(&p, m, "CommRecv(Domain&, int, int, int, int, int, bool, bool)", "lulesh-comm.cc", 455, APP);
	uint32_t w = frame(&p, u, "PMPI_Waitall", NULL, 0, "/usr/lib/libmpi.so.40");
	uint32_t i1 = frame(&p, w, "ompi_request_default_wait_all", NULL, 0, "/usr/lib/libopen-pal.so.40");
	uint32_t y = frame(&p, i1, "__sched_yield", NULL, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	const struct gt_paths_opts o = { .width = 70, .label_flags = GT_LABEL_ELIDE_ARGS };
	char *s = gt_paths__one(&p, y, &o);
	size_t len = s ? strlen(s) : 0;

	CHECK(s && gt_cols(s) <= 70);
	CHECK(strstr(s, "CommRecv(…) (lulesh-comm.cc:455)"));
	CHECK(len < 13 || strcmp(s + len - 13, "__sched_yield"));
	CHECK(len < 24 || !strstr(s, "__sched_yield [libc.so.6]") || strstr(s, "PMPI_Waitall"));
	free(s);
	gt_profile__fini(&p);
}

/* Two nodes with the same labels all the way are told by number. */
static void test_identical(void)
{
	struct gt_profile p;
	uint32_t r = root(&p), m = frame(&p, r, "main", "app.c", 9, APP), nodes[3];
	const struct gt_paths_opts o = { .width = 60 };
	char *out[3];

	nodes[0] = frame(&p, m, "f", "app.c", 3, APP);
	nodes[1] = gt_profile__node(&p, &(struct gt_prof_node){ .parent = m, .kind = GT_PNODE_FRAME,
		.name = p.nodes[nodes[0]].name, .file = p.nodes[nodes[0]].file, .line = 3,
		.module = p.nodes[nodes[0]].module, .offset = 2 });
	nodes[2] = nodes[0]; /* the same node again reads the same */
	CHECK(nodes[0] != nodes[1]);
	CHECK(!gt_paths__build(&p, nodes, 3, &o, out));
	CHECK(!strcmp(out[0], "main (app.c:9) > f (app.c:3) (1 of 2 contexts)"));
	CHECK(!strcmp(out[1], "main (app.c:9) > f (app.c:3) (2 of 2 contexts)"));
	CHECK(!strcmp(out[2], out[0]));
	gt_paths__free(out, 3);
	gt_profile__fini(&p);
}

/* Two groups of identical contexts whose labels differ only in their
 * middle: numbered and so narrowed, both groups' rows are cut to the same
 * text; the numbers must still tell every row apart. */
static void test_groups_cut_alike(void)
{
	struct gt_profile p;
	uint32_t r = root(&p), m = frame(&p, r, "main", "app.c", 9, APP), nodes[4];
	const struct gt_paths_opts o = { .width = 80 };
	const char *names[2] = { "alpha_first_common_prefix_X_common_suffix_tail_longer",
				 "alpha_first_common_prefix_Y_common_suffix_tail_longer" };
	char *out[4];

	for (int g = 0; g < 2; g++) {
		nodes[2 * g] = frame(&p, m, names[g], "app.c", 3, APP);
		nodes[2 * g + 1] = gt_profile__node(&p, &(struct gt_prof_node){ .parent = m, .kind = GT_PNODE_FRAME,
			.name = p.nodes[nodes[2 * g]].name, .file = p.nodes[nodes[2 * g]].file, .line = 3,
			.module = p.nodes[nodes[2 * g]].module, .offset = 2 });
	}
	CHECK(!gt_paths__build(&p, nodes, 4, &o, out));
	for (int i = 0; i < 4; i++) {
		CHECK(gt_cols(out[i]) <= 80);
		for (int j = i + 1; j < 4; j++)
			CHECK(strcmp(out[i], out[j]));
	}
	gt_paths__free(out, 4);
	gt_profile__fini(&p);
}

/* Labels: parameter lists elided, line 0 and no file. */
static void test_labels(void)
{
	struct gt_profile p;
	uint32_t r = root(&p);
	uint32_t a = frame(&p, r, "CalcFBHourglassForceForElems(Domain&, double*, double*)", "lulesh.cc", 0, APP);
	uint32_t b = frame(&p, a, "main::{lambda(int)#1}::operator()(int) const", "x.cc", 5, APP);
	uint32_t c = frame(&p, b, ".omp_outlined.", NULL, 0, "/work/omp-stream");
	uint32_t d = frame(&p, c, "memcpy", NULL, 0, "/lib/libc.so.6");
	struct gt_sb s = { 0 };

	gt_label(&s, &p, a, GT_LABEL_SHORT_FILE | GT_LABEL_ELIDE_ARGS);
	CHECK(s.s && !strcmp(s.s, "CalcFBHourglassForceForElems(…) (lulesh.cc, line ?)"));
	s.len = 0;
	gt_label(&s, &p, b, GT_LABEL_SHORT_FILE | GT_LABEL_ELIDE_ARGS);
	CHECK(!strcmp(s.s, "main::{lambda(int)#1}::operator()(…) const (x.cc:5)"));
	s.len = 0;
	gt_label(&s, &p, a, GT_LABEL_SHORT_FILE);
	CHECK(!strcmp(s.s, "CalcFBHourglassForceForElems(Domain&, double*, double*) (lulesh.cc, line ?)"));
	s.len = 0;
	gt_label(&s, &p, c, 0);
	CHECK(!strcmp(s.s, ".omp_outlined. (line ?)"));
	/* A function template's return type is not its name; a conversion
	 * operator's type is. */
	s.len = 0;
	gt_label(&s, &p, frame(&p, r, "miniFE::TypeTraits<double>::magnitude_type miniFE::dot<miniFE::Vector<double, int> >"
				     "(miniFE::Vector<double, int> const&)", "cg_solve.hpp", 173, APP),
		 GT_LABEL_SHORT_FILE | GT_LABEL_ELIDE_ARGS);
	CHECK(!strcmp(s.s, "miniFE::dot<miniFE::Vector<double, int> >(…) (cg_solve.hpp:173)"));
	s.len = 0;
	gt_label(&s, &p, frame(&p, r, "Fraction::operator double() const", "f.cc", 3, APP),
		 GT_LABEL_SHORT_FILE | GT_LABEL_ELIDE_ARGS);
	CHECK(!strcmp(s.s, "Fraction::operator double() const (f.cc:3)"));
	s.len = 0;
	gt_label(&s, &p, frame(&p, r, "void (anonymous namespace)::run<int>(int, std::pair<int, int>)", "r.cc", 9, APP),
		 GT_LABEL_SHORT_FILE | GT_LABEL_ELIDE_ARGS);
	CHECK(!strcmp(s.s, "(anonymous namespace)::run<int>(…) (r.cc:9)"));
	s.len = 0;
	gt_label(&s, &p, d, 0);
	CHECK(!strcmp(s.s, "memcpy [libc.so.6]"));
	free(s.s);
	gt_profile__fini(&p);
}

/* A region the program named (an MPI call) keeps the frame that opened it,
 * a function in a header of the program's own, however short the row. */
static void test_region_opener(void)
{
	struct gt_profile p;
	uint32_t r = root(&p), m = frame(&p, r, "main", "main.cpp", 178, APP);
	uint32_t d = frame(&p, m, "driver(Box&, Parameters&)", "driver.hpp", 288, APP);
	uint32_t cg = frame(&p, d, "cg_solve(Matrix&, Vector&)", "cg_solve.hpp", 158, APP);
	uint32_t dot = frame(&p, cg, "dot(Vector const&, Vector const&)", "Vector_functions.hpp", 540, APP);
	uint32_t node = mark(&p, dot, GT_PNODE_NAME, "<mpi MPI_Allreduce>");
	const struct gt_paths_opts o = { .width = 90, .leaf_first = 1, .label_flags = GT_LABEL_ELIDE_ARGS };
	char *out[1];

	CHECK(!gt_paths__build(&p, &node, 1, &o, out));
	CHECK(strstr(out[0], "<mpi MPI_Allreduce> < dot(…) (Vector_functions.hpp:540)"));
	CHECK(gt_cols(out[0]) <= 90);
	gt_paths__free(out, 1);
	gt_profile__fini(&p);
}

TEST_MAIN(TEST_CASE(test_middle), TEST_CASE(test_region_opener), TEST_CASE(test_kernel), TEST_CASE(test_runtime_leaf), TEST_CASE(test_identical),
	  TEST_CASE(test_groups_cut_alike),
	  TEST_CASE(test_labels))
