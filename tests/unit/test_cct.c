/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "core/arena.h"
#include "core/cct.h"
#include "core/thread.h"
#include "core/unwind.h"

#include "tests/unit/cct-test.h"
#include "tests/unit/test.h"

static struct gt_arena arena;
static struct gt_cct cct;

static void setup(void)
{
	gt_arena__init(&arena);
	gt_cct__init(&cct, &arena);
	CHECK(cct.root != NULL);
}

static void insert_finds_existing(void)
{
	uintptr_t p1[] = { 0x1000, 0x2000, 0x3000 };
	uintptr_t p2[] = { 0x1000, 0x2000, 0x4000 };
	struct gt_cct_node *a, *b, *c;

	setup();
	a = cct_test__path(&cct, cct.root, p1, 3, 0);
	b = cct_test__path(&cct, cct.root, p2, 3, 0);
	c = cct_test__path(&cct, cct.root, p1, 3, 0);
	CHECK(a && b && a != b);
	CHECK(a == c);
	CHECK(a->parent == b->parent);
	CHECK_EQ_U(a->depth, 3);
	/* root + 0x1000 + 0x2000 + two leaves */
	CHECK_EQ_U(cct.nodes, 5);
}

static void kinds_are_distinct(void)
{
	struct gt_cct_node *f, *p;

	setup();
	f = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 1, 0);
	p = gt_cct__child(&cct, cct.root, GT_NODE_PLACEHOLDER, 1, 0);
	CHECK(f != p);
	CHECK(gt_cct__placeholder(&cct, cct.root, 1) == p);
}

static void metrics_sparse_and_summed(void)
{
	struct gt_cct_node *n;

	setup();
	n = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 42, 0);
	CHECK(n->metrics == NULL);
	CHECK_EQ_U(gt_cct__get(n, GT_M_CPUTIME), 0);
	gt_cct__add(&cct, n, GT_M_CPUTIME, 5, 0);
	gt_cct__add(&cct, n, GT_M_CPUTIME, 7, 0);
	gt_cct__add(&cct, n, GT_M_OMP_WAIT, 3, 1);
	CHECK_EQ_U(gt_cct__get(n, GT_M_CPUTIME), 12);
	CHECK_EQ_U(gt_cct__get(n, GT_M_OMP_WAIT), 3);
	CHECK_EQ_U(gt_cct__get(n, GT_M_OMP_WORK), 0);
	/* Two cells, no more. */
	CHECK(n->metrics && n->metrics->next && !n->metrics->next->next);
}

/* Batches of every size up to 20, on a node whose
 * cached cells other nodes evict between rounds: the same sums as single
 * adds, one cell per metric. */
static void batch_sizes_and_evictions(void)
{
	enum gt_metric m[20];
	uint64_t v[20];

	for (unsigned i = 0; i < 20; i++)
		m[i] = (enum gt_metric)i;
	for (unsigned n = 1; n <= 20; n++) {
		struct gt_cct_node *a, *b;
		unsigned ca = 0, cb = 0;

		setup();
		a = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 1, 0);
		b = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 2, 0);
		for (int round = 0; round < 4; round++) {
			for (unsigned i = 0; i < n; i++)
				v[i] = (i + (unsigned)round) % 3; /* zeros among them */
			CHECK(gt_cct__add_n(&cct, a, m, v, n, 0) == 0);
			for (unsigned i = 0; i < n; i++)
				if (v[i])
					gt_cct__add(&cct, b, m[i], v[i], 0);
			for (uint64_t x = 0; x < 300; x++) /* other cells take the cache's slots */
				gt_cct__add(&cct, gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 100 + x, 0), m[x % n], 1, 0);
		}
		for (unsigned i = 0; i < n; i++)
			CHECK_EQ_U(gt_cct__get(a, m[i]), gt_cct__get(b, m[i]));
		for (struct gt_metric_cell *c = a->metrics; c; c = c->next)
			ca++;
		for (struct gt_metric_cell *c = b->metrics; c; c = c->next)
			cb++;
		CHECK_EQ_U(ca, cb);
	}
}

static void batch_add_equals_single_adds(void)
{
	const enum gt_metric m[] = { GT_M_CPUTIME, GT_M_OMP_WAIT, GT_M_OMP_WORK, GT_M_SAMPLES };
	struct gt_cct_node *a, *b;

	setup();
	a = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 1, 0);
	b = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 2, 0);
	gt_cct__add(&cct, a, GT_M_OMP_WAIT, 5, 0);
	gt_cct__add(&cct, b, GT_M_OMP_WAIT, 5, 0);
	for (int round = 0; round < 3; round++) {
		const uint64_t v[] = { 10, 0, 7, (uint64_t)round + 1 };

		CHECK(gt_cct__add_n(&cct, a, m, v, 4, 0) == 0);
		for (unsigned i = 0; i < 4; i++)
			if (v[i])
				gt_cct__add(&cct, b, m[i], v[i], 0);
	}
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ_U(gt_cct__get(a, m[i]), gt_cct__get(b, m[i]));
	CHECK_EQ_U(gt_cct__get(a, GT_M_CPUTIME), 30);
	CHECK_EQ_U(gt_cct__get(a, GT_M_OMP_WAIT), 5);
	CHECK_EQ_U(gt_cct__get(a, GT_M_SAMPLES), 6);
	/* Four cells: OMP_WAIT's from before (the batch's zeros add none),
	 * and one each for CPUTIME, OMP_WORK and SAMPLES. */
	{
		int cells = 0;

		for (struct gt_metric_cell *c = a->metrics; c; c = c->next)
			cells++;
		CHECK_EQ_U(cells, 4);
	}
}

static void count_visit(struct gt_cct_node *n, void *arg)
{
	(void)n;
	(*(int *)arg)++;
}

static void walk_visits_all(void)
{
	int visits = 0;

	setup();
	for (uintptr_t i = 1; i <= 50; i++) {
		uintptr_t path[] = { i % 5, i % 7, i };

		cct_test__path(&cct, cct.root, path, 3, 0);
	}
	gt_cct__walk(cct.root, count_visit, &visits);
	CHECK_EQ_U(visits, cct.nodes);
}

static void signal_alloc_uses_spare_only(void)
{
	int made = 0;

	setup();
	/* Exhaust far more than one chunk from "signal context": the first
	 * chunk and the spare serve, then allocation fails cleanly. */
	for (uintptr_t i = 1; i < 100000; i++)
		if (gt_cct__child(&cct, cct.root, GT_NODE_FRAME, i, 1))
			made++;
	CHECK(made > 1000);
	CHECK(made < 99999);
	CHECK(cct.alloc_failures > 0);
	/* Normal context refills. */
	gt_arena__refill(&arena);
	CHECK(gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 1000000, 1) != NULL);
}

static void import_copies_path(void)
{
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_arena other_arena;
	struct gt_cct other;
	uintptr_t path[] = { 0x10, 0x20 };
	struct gt_cct_node *foreign, *own, *own2, *foreign_b, *own_b;

	CHECK(t);
	gt_arena__init(&other_arena);
	gt_cct__init(&other, &other_arena);
	foreign = cct_test__path(&other, other.root, path, 2, 0);
	foreign = gt_cct__placeholder(&other, foreign, GT_PH_OMP_PARALLEL);
	own = gt_thread__import(t, foreign);
	CHECK(own != foreign);
	CHECK(own->kind == GT_NODE_PLACEHOLDER && own->key == GT_PH_OMP_PARALLEL);
	CHECK(own->parent->key == 0x20 && own->parent->parent->key == 0x10);
	CHECK(own->parent->parent->parent == t->cct.root);
	/* Each tree knows its own nodes, and only those. */
	CHECK(gt_cct__owns(&t->cct, own) && !gt_cct__owns(&t->cct, foreign));
	CHECK(gt_cct__owns(&other, foreign) && !gt_cct__owns(&other, own));
	CHECK(other.id != t->cct.id);
	own2 = gt_thread__import(t, foreign);
	CHECK(own == own2);
	/* A node of the thread's own tree imports to itself. */
	CHECK(gt_thread__import(t, own) == own);
	/* Two nodes in turn, as a thread running a taskloop's chunks imports
	 * the construct's and each chunk's <omp task>: the remembered answers
	 * stay each node's own, own nodes among them. */
	foreign_b = gt_cct__placeholder(&other, foreign->parent, GT_PH_OMP_TASK);
	own_b = gt_thread__import(t, foreign_b);
	CHECK(own_b != own && own_b->key == GT_PH_OMP_TASK && own_b->parent == own->parent);
	for (int i = 0; i < 3; i++) {
		CHECK(gt_thread__import(t, foreign) == own);
		CHECK(gt_thread__import(t, foreign_b) == own_b);
		CHECK(gt_thread__import(t, own) == own);
	}
}

/* Nodes imported in the same order again and again, more of them than
 * the two remembered answers: each is answered by the one that followed
 * the previous answer last time. An order that changes is still answered
 * right, through the map. */
static void import_predicts_next(void)
{
	enum { N = 5 };
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	struct gt_arena other_arena;
	struct gt_cct other;
	struct gt_cct_node *foreign[N], *own[N], *d_own;
	uint64_t p0 = 0;

	CHECK(t);
	gt_arena__init(&other_arena);
	gt_cct__init(&other, &other_arena);
	for (int i = 0; i < N; i++) {
		uintptr_t path[] = { 0x100, 0x200 + (uintptr_t)i };

		foreign[i] = gt_cct__placeholder(&other, cct_test__path(&other, other.root, path, 2, 0),
						 GT_PH_OMP_PARALLEL);
	}
	for (int pass = 0; pass < 4; pass++) {
		if (pass == 2)
			p0 = gt_thread__imports_predicted(t);
		for (int i = 0; i < N; i++) {
			struct gt_cct_node *o = gt_thread__import(t, foreign[i]);

			if (pass == 0)
				own[i] = o;
			CHECK(o == own[i]);
		}
	}
	/* Linked by the first two passes, every import of the next two. */
	CHECK_EQ_U(gt_thread__imports_predicted(t) - p0, 2 * N);
	for (int i = 0; i < N; i++)
		CHECK(own[i]->parent->key == 0x200 + (uintptr_t)i && gt_cct__owns(&t->cct, own[i]));
	/* 0 1 2, then 0 D 2: after 0 the prediction is the other one. */
	d_own = gt_thread__import(t, foreign[3]);
	for (int pass = 0; pass < 6; pass++) {
		CHECK(gt_thread__import(t, foreign[0]) == own[0]);
		CHECK(gt_thread__import(t, foreign[pass % 2 ? 3 : 1]) == (pass % 2 ? d_own : own[1]));
		CHECK(gt_thread__import(t, foreign[2]) == own[2]);
	}
}

/* Debug builds stop a write into another thread's tree at once, where it
 * happens, instead of leaving a corrupt child list behind. */
static void foreign_write_is_caught(void)
{
#ifdef NDEBUG
	printf("  assertions are off in this build: nothing to check\n");
#else
	struct gt_arena a1, a2;
	struct gt_cct c1, c2;
	int status = 0;
	pid_t pid;

	gt_arena__init(&a1);
	gt_arena__init(&a2);
	gt_cct__init(&c1, &a1);
	gt_cct__init(&c2, &a2);
	/* Own writes are fine. */
	CHECK(gt_cct__child(&c1, c1.root, GT_NODE_FRAME, 1, 0));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* The death is expected: keep its message out of the log. */
		freopen("/dev/null", "w", stderr);
		gt_cct__child(&c1, c2.root, GT_NODE_FRAME, 2, 0);
		_exit(0);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
#endif
}

/* An ended thread's arena gives back its spare chunk and unused pages;
 * what was allocated stays where it was, and allocation still works. */
static void trim_keeps_nodes(void)
{
	struct gt_cct_node *nodes[700];
	size_t before;

	/* Past the first chunk, into the second. */
	setup();
	for (uintptr_t i = 0; i < 700; i++)
		CHECK((nodes[i] = gt_cct__child(&cct, cct.root, GT_NODE_FRAME, i + 1, 0)) != NULL);
	CHECK(arena.spare != NULL);
	before = arena.bytes;
	gt_arena__trim(&arena);
	CHECK(arena.spare == NULL);
	CHECK(arena.bytes < before);
	CHECK(arena.bytes >= 700 * sizeof(struct gt_cct_node));
	for (uintptr_t i = 0; i < 700; i++)
		CHECK(nodes[i]->key == i + 1 && nodes[i]->parent == cct.root);
	/* Signal context finds nothing spare; normal context maps anew. */
	for (uintptr_t i = 0; i < 1000 && gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 10000 + i, 1); i++)
		;
	CHECK(gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 1000000, 0) != NULL);
	CHECK(gt_cct__child(&cct, cct.root, GT_NODE_FRAME, 5, 0) == nodes[4]);
}

static int hook_calls;
static struct gt_thread *hook_saw;

static void count_hook(struct gt_thread *t)
{
	hook_calls++;
	hook_saw = t;
	/* Hooks run before the thread is marked exited. */
	CHECK(atomic_load(&t->exited) == 0);
}

struct ending {
	struct gt_thread *t;
	int pin;
};

static void *thread_ends(void *arg)
{
	struct ending *e = arg;
	struct gt_thread *t = gt_thread__self(GT_THREAD_OTHER);

	CHECK(t && t->memo);
	CHECK(gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, 42 + (uint64_t)e->pin, 0) != NULL);
	if (e->pin)
		gt_thread__pin(t);
	e->t = t;
	return NULL; /* no explicit exit: the key's destructor ends it */
}

static struct gt_thread *run_ending(int pin)
{
	struct ending e = { NULL, pin };
	pthread_t th;

	CHECK(pthread_create(&th, NULL, thread_ends, &e) == 0);
	pthread_join(th, NULL);
	CHECK(e.t != NULL);
	return e.t;
}

/* A thread no runtime reported the end of: its end runs every hook once,
 * gives back its caches and marks its tree final; its tree stays. Pinned,
 * its record stays its own and gives back its unused memory too. */
static void thread_end_by_destructor(void)
{
	struct gt_thread *t;
	struct gt_unwind_stats st;

	CHECK(gt_thread__on_exit(count_hook) == 0);
	CHECK(gt_thread__on_exit(count_hook) == 0); /* once only */
	t = run_ending(1);
	CHECK(hook_calls == 1 && hook_saw == t);
	CHECK(atomic_load(&t->exited) == 1);
	CHECK(t->imports == NULL && t->arena.spare == NULL);
	gt_unwind__stats(t, &st); /* the statistics outlive the table */
	CHECK(t->cct.root->children && t->cct.root->children->key == 43);
	/* Later calls do nothing. */
	gt_thread__exit(t);
	CHECK(hook_calls == 1);
	/* Not handed on. */
	CHECK(run_ending(0) != t);
	CHECK(gt_thread__reused() == 0);
}

/* The next thread takes an ended thread's record over, tree and all; a
 * thread OpenMP reported does not. */
static void record_handed_on(void)
{
	struct gt_thread *t = run_ending(0), *next;

	CHECK(atomic_load(&t->lives) == 1);
	next = run_ending(0);
	CHECK(next == t);
	CHECK(atomic_load(&t->lives) == 2 && gt_thread__reused() == 1);
	CHECK(atomic_load(&t->exited) == 1);
	/* One node: the second thread found the first one's. */
	CHECK(t->cct.root->children && t->cct.root->children->key == 42);
	CHECK(gt_thread__count() == 1);
	/* The calling thread, of another kind, is not given a pooled record. */
	CHECK(gt_thread__self(GT_THREAD_INITIAL) != t);
	CHECK(gt_thread__count() == 2);
}

TEST_MAIN({ "insert finds existing", insert_finds_existing },
	  { "trim keeps nodes", trim_keeps_nodes },
	  { "a thread's end, through the key destructor", thread_end_by_destructor },
	  { "an ended thread's record handed on", record_handed_on },
	  { "kinds are distinct", kinds_are_distinct },
	  { "metrics sparse and summed", metrics_sparse_and_summed },
	  { "batch add equals single adds", batch_add_equals_single_adds },
	  { "batches of every size, their cells evicted", batch_sizes_and_evictions },
	  { "walk visits all", walk_visits_all },
	  { "signal allocation uses the spare only", signal_alloc_uses_spare_only },
	  { "import copies path", import_copies_path },
	  { "import predicts the next import", import_predicts_next },
	  { "a write into another tree is caught", foreign_write_is_caught })
