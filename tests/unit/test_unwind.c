/* SPDX-License-Identifier: MIT */
/*
 * The unwinder on real stacks: user frames (this program) call a runtime
 * (libomp-gtshim.so) that calls the tool (libgtprobe.so). Contexts must end
 * at the user's call site, contain no tool or runtime frame, and repeat
 * through the memo, which must notice a changed caller.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test.h"
#include "tests/unit/unwind_probe.h"

/* Loops are not unrolled: each unrolled copy would be a call site of its own. */
static volatile int sink;

/* A site where the runtime calls probe back, and a caller of a site: each a
 * function of its own, so that each is a call site of its own. */
#define SITE(name, probe)                                     \
	__attribute__((noinline)) static void name(void)      \
	{                                                     \
		rt_call(probe, 0);                            \
		sink++;                                       \
	}
#define CALLER(name, site)                                    \
	__attribute__((noinline)) static void name(void)      \
	{                                                     \
		site();                                       \
		sink++;                                       \
	}

SITE(site_one, probe_context)
SITE(site_two, probe_context)
CALLER(caller_a, site_one)
CALLER(caller_b, site_one)

/* A site the runtime calls back from through gt_unwind__memo_context, from
 * two callers. */
SITE(site_mc, probe_memo_context)
CALLER(caller_c, site_mc)
CALLER(caller_d, site_mc)

/* A site reached under stitched bases (a task's node), from two callers at
 * the same depth. */
SITE(site_st, probe_stitched)
CALLER(caller_e, site_st)
CALLER(caller_f, site_st)

/* One site whose lookups are copied and checked, from two callers at the
 * same depth (OpenMP's construct cache). */
SITE(site_cp, probe_copied)
CALLER(caller_g, site_cp)
CALLER(caller_h, site_cp)

__attribute__((noinline)) static void recurse(int n)
{
	if (n == 0)
		site_two();
	else
		recurse(n - 1);
	sink++;
}

/* Recursion that reaches the site at every depth on the way down: one
 * context per depth, each at its own stack position. */
__attribute__((noinline)) static void descend(int n)
{
	rt_call(probe_context, 0);
	if (n > 0)
		descend(n - 1);
	sink++;
}

__attribute__((noinline)) static void own_ra_site(void)
{
	rt_call_own_ra(probe_context, 0);
	sink++;
}

/* Regions opened where the runtime is called from two callers' one site,
 * and from many sites of one function at one depth. */
__attribute__((noinline)) static void region_site(void)
{
	rt_call(probe_region, 0);
	sink++;
}

__attribute__((noinline)) static void region_caller_a(void)
{
	region_site();
	sink++;
}

__attribute__((noinline)) static void region_caller_b(void)
{
	region_site();
	sink++;
}

#define REGION_SITES 12
/* REGION_SITES call sites of the runtime in one function, the node of
 * each into out[]. */
__attribute__((noinline)) static void region_sites(void **out)
{
#define S(k) rt_call(probe_region, 0), out[k] = probe_last()
	S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7), S(8), S(9), S(10), S(11);
#undef S
	sink++;
}

static uint64_t full_unwinds(void)
{
	uint64_t hits, misses, full;

	probe_stats(&hits, &misses, &full);
	return full;
}

static void path_of_last(char *buf, size_t len)
{
	probe_path(probe_last(), buf, len);
}

static void elides_tool_and_runtime(void)
{
	char path[4096];

	probe_init(1);
	caller_a();
	path_of_last(path, sizeof(path));
	printf("  context: %s\n", path);
	CHECK(!strcmp(path, "main/test__run/elides_tool_and_runtime/caller_a/site_one") ||
	      strstr(path, "elides_tool_and_runtime/caller_a/site_one"));
	CHECK(!strstr(path, "probe_"));
	CHECK(!strstr(path, "rt_"));
	CHECK(!strstr(path, "gt_"));
	/* libc's start routines are trimmed: main is the root frame. */
	CHECK(!strncmp(path, "main/", 5));
}

static void memo_hits_repeated_site(void)
{
	uint64_t hits, misses, full;
	void *first;

	probe_init(1);
	/* One call site for every call: the loop's. */
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i <= 100; i++) {
		caller_a();
		if (i == 0)
			first = probe_last();
		CHECK(probe_last() == first);
	}
	probe_stats(&hits, &misses, &full);
	printf("  hits %llu misses %llu full unwinds %llu\n", (unsigned long long)hits,
	       (unsigned long long)misses, (unsigned long long)full);
	CHECK_EQ_U(hits, 100);
	CHECK_EQ_U(full, 1);
}

static void memo_notices_other_caller(void)
{
	enum { N = 20 };
	char a[4096], b[4096];
	void *na[N], *nb[N];
	uint64_t full[N];

	probe_init(1);
	/* Alternate callers of the same site from one place each. Both
	 * contexts stay memoized side by side: after the first call of each,
	 * no unwind. (No branch in the loop: a peeled first iteration would
	 * be call sites of its own.) */
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i < N; i++) {
		caller_a();
		na[i] = probe_last();
		caller_b();
		nb[i] = probe_last();
		full[i] = full_unwinds();
	}
	for (int i = 1; i < N; i++)
		CHECK(na[i] == na[0] && nb[i] == nb[0]);
	CHECK(na[0] != nb[0]);
	CHECK_EQ_U(full[N - 1] - full[0], 0);
	probe_path(na[0], a, sizeof(a));
	probe_path(nb[0], b, sizeof(b));
	CHECK(strstr(a, "caller_a/site_one"));
	CHECK(strstr(b, "caller_b/site_one"));
}

static void memo_context_alternating_callers(void)
{
	enum { N = 20 };
	char c[4096], d[4096];
	void *nc[N], *nd[N], *na[N];
	uint64_t h0 = 0, h1, misses, full0 = 0, full1;

	probe_init(1);
	/* Three contexts in turn, two of them one site (the same return
	 * address at the same depth) from two callers, as a thread that
	 * creates a task, waits for it and creates the next one: the memo's
	 * recent entries answer each, and tell the two callers apart. */
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i < N; i++) {
		caller_c();
		nc[i] = probe_last();
		caller_d();
		nd[i] = probe_last();
		caller_a();
		na[i] = probe_last();
		if (i == 0)
			probe_stats(&h0, &misses, &full0);
	}
	probe_stats(&h1, &misses, &full1);
	for (int i = 1; i < N; i++)
		CHECK(nc[i] == nc[0] && nd[i] == nd[0] && na[i] == na[0]);
	CHECK(nc[0] != nd[0]);
	CHECK_EQ_U(full1 - full0, 0);
	CHECK_EQ_U(h1 - h0, (uint64_t)(N - 1) * 3);
	probe_path(nc[0], c, sizeof(c));
	probe_path(nd[0], d, sizeof(d));
	printf("  %s\n  %s\n", c, d);
	CHECK(strstr(c, "caller_c/site_mc"));
	CHECK(strstr(d, "caller_d/site_mc"));
}

static void memo_matches_cold_unwind(void)
{
	void *memo_nodes[8], *cold_nodes[8];

	/* The same call sequence with and without the memo gives the same
	 * nodes (the tree is the same tree: one thread, one process). */
	_Pragma("clang loop unroll(disable)")
	for (int pass = 0; pass < 3; pass++) {
		probe_init(pass < 2);
		_Pragma("clang loop unroll(disable)")
		for (int d = 0; d < 8; d++) {
			recurse(d);
			if (pass == 0)
				memo_nodes[d] = probe_last();
			else if (pass == 1)
				CHECK(probe_last() == memo_nodes[d]);
			else
				cold_nodes[d] = probe_last();
		}
	}
	_Pragma("clang loop unroll(disable)")
	for (int d = 0; d < 8; d++)
		CHECK(memo_nodes[d] == cold_nodes[d]);
	for (int d = 1; d < 8; d++)
		CHECK(cold_nodes[d] != cold_nodes[d - 1]);
}

/* More contexts than any fixed table would hold, deeper than any fixed
 * slot count: after one pass, every one of them is a hit. */
static void memo_holds_many_deep_contexts(void)
{
	enum { DEPTH = 200 }; /* below the default GPUTOOL_MAX_DEPTH (256) */
	uint64_t before = 0, cold = 0;

	probe_init(1);
	_Pragma("clang loop unroll(disable)")
	for (int pass = 0; pass < 4; pass++) {
		if (pass == 0)
			before = full_unwinds();
		if (pass == 1) {
			cold = full_unwinds() - before;
			before = full_unwinds();
		}
		descend(DEPTH);
	}
	printf("  %d contexts: %llu full unwinds in the first pass, %llu in 3 more\n", DEPTH + 1,
	       (unsigned long long)cold, (unsigned long long)(full_unwinds() - before));
	CHECK_EQ_U(cold, DEPTH + 1);
	CHECK_EQ_U(full_unwinds() - before, 0);
}

/* Contexts met in the same order again and again, more of them than the
 * memo's recent entries: each lookup is answered by the entry that followed
 * the previous answer last time. A prediction whose call path no longer
 * holds (the other caller of the same site, at the same depth) is passed
 * over, and the lookup still finds its own context. */
static void memo_predicts_next_lookup(void)
{
	enum { DEPTH = 40, N = 12 };
	void *na[N], *nb[N];
	uint64_t p0 = 0, p1 = 0, f0 = 0;
	char a[4096], b[4096];

	probe_init(1);
	_Pragma("clang loop unroll(disable)")
	for (int pass = 0; pass < 4; pass++) {
		if (pass == 1)
			f0 = full_unwinds();
		if (pass == 2)
			p0 = probe_predicted();
		descend(DEPTH);
	}
	p1 = probe_predicted();
	printf("  %d contexts in turn: %llu of the last 2 passes' lookups predicted\n", DEPTH + 1,
	       (unsigned long long)(p1 - p0));
	CHECK_EQ_U(full_unwinds() - f0, 0);
	/* The first pass made the entries (and may have grown the table,
	 * which drops the links); the second linked each to the next. */
	CHECK_EQ_U(p1 - p0, 2 * (DEPTH + 1));

	/* a, r, b, r, ...: after r the prediction is always the caller that
	 * came last time, the wrong one. */
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i < N; i++) {
		if (i == 2) {
			p0 = probe_predicted();
			f0 = full_unwinds();
		}
		_Pragma("clang loop unroll(disable)")
		for (int j = 0; j < 2; j++) {
			if (j)
				caller_b();
			else
				caller_a();
			(j ? nb : na)[i] = probe_last();
			recurse(0);
		}
	}
	p1 = probe_predicted();
	for (int i = 1; i < N; i++)
		CHECK(na[i] == na[0] && nb[i] == nb[0]);
	CHECK(na[0] != nb[0]);
	CHECK_EQ_U(full_unwinds() - f0, 0);
	CHECK_EQ_U(p1 - p0, 2 * (N - 2));
	probe_path(na[0], a, sizeof(a));
	probe_path(nb[0], b, sizeof(b));
	CHECK(strstr(a, "caller_a/site_one"));
	CHECK(strstr(b, "caller_b/site_one"));
}

static void memo_runtime_return_address(void)
{
	enum { N = 10 };
	char path[4096];
	void *n[N];
	uint64_t full[N];

	probe_init(1);
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i < N; i++) {
		own_ra_site();
		n[i] = probe_last();
		full[i] = full_unwinds();
	}
	for (int i = 1; i < N; i++)
		CHECK(n[i] == n[0]);
	probe_path(n[0], path, sizeof(path));
	printf("  context: %s\n", path);
	CHECK(strstr(path, "memo_runtime_return_address/own_ra_site") != NULL);
	CHECK(!strstr(path, "rt_"));
	CHECK_EQ_U(full[N - 1] - full[0], 0);
}

__attribute__((noinline)) static void ips_site(void)
{
	rt_call(probe_ips_context, 0);
	sink++;
}

static void fast_path_agrees(void)
{
	char a[4096], b[4096];

	probe_init(1);
	caller_a();
	probe_path(probe_last(), a, sizeof(a));
	ips_site();
	probe_path(probe_last(), b, sizeof(b));
	printf("  validated: %s\n  fast:      %s\n", a, b);
	CHECK(strstr(a, "fast_path_agrees/caller_a/site_one"));
	CHECK(strstr(b, "fast_path_agrees/ips_site"));
	CHECK(!strncmp(b, "main/", 5));
	CHECK(!strstr(b, "probe_") && !strstr(b, "rt_"));
}

/*
 * A region's opener is remembered (core/region.c): the same call path opens
 * at the same node without an unwind, another caller of the same site, and
 * another site of the same function, each at its own.
 */
static void region_openers_remembered(void)
{
	enum { N = 20 };
	void *na[N], *nb[N], *sites[N][REGION_SITES];
	uint64_t h0, m0, h1, m1;
	char a[4096], b[4096];

	probe_init(1);
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i < N; i++) {
		if (i == 1)
			probe_region_stats(&h0, &m0);
		region_caller_a();
		na[i] = probe_last();
		region_caller_b();
		nb[i] = probe_last();
		region_sites(sites[i]);
	}
	probe_region_stats(&h1, &m1);
	for (int i = 1; i < N; i++) {
		CHECK(na[i] == na[0] && nb[i] == nb[0]);
		for (int k = 0; k < REGION_SITES; k++)
			CHECK(sites[i][k] == sites[0][k]);
	}
	CHECK(na[0] != nb[0]);
	for (int k = 0; k < REGION_SITES; k++)
		for (int j = 0; j < k; j++)
			CHECK(sites[0][k] != sites[0][j]);
	/* After the first round, every open found its opener remembered. */
	CHECK_EQ_U(m1 - m0, 0);
	CHECK_EQ_U(h1 - h0, (uint64_t)(N - 1) * (2 + REGION_SITES));
	probe_path(na[0], a, sizeof(a));
	probe_path(nb[0], b, sizeof(b));
	CHECK(strstr(a, "region_caller_a/region_site/"));
	CHECK(strstr(b, "region_caller_b/region_site/"));
}

/* Contexts under many bases (a recursive task tree's levels and paths):
 * the first base's unwinds leave shapes, every other base's contexts are
 * made from them without an unwind, and they are the nodes a cold unwind
 * makes, each caller's own. The boundary is this frame's: the contexts
 * are the base, then this function and the callers below it. */
__attribute__((noinline)) static void stitched_all(void *out[][2], int nb)
{
	_Pragma("clang loop unroll(disable)")
	for (int b = 0; b < nb; b++) {
		probe_set_stitch(b + 1, __builtin_frame_address(0));
		caller_e();
		out[b][0] = probe_last();
		caller_f();
		out[b][1] = probe_last();
	}
}

static void memo_derives_other_bases(void)
{
	enum { B = 8 };
	void *nodes[2][B][2];
	char e[4096], f[4096];
	uint64_t full = 0, derived = 0;

	/* One call site for both passes: with the memo, then cold. */
	_Pragma("clang loop unroll(disable)")
	for (int pass = 0; pass < 2; pass++) {
		probe_init(pass == 0);
		full = full_unwinds() - full;
		derived = probe_derived() - derived;
		stitched_all(nodes[pass], B);
		full = full_unwinds() - full;
		derived = probe_derived() - derived;
		if (pass == 0) {
			printf("  %d bases x 2 callers: %llu full unwinds, %llu derived\n", B,
			       (unsigned long long)full, (unsigned long long)derived);
			CHECK_EQ_U(full, 2);
			CHECK_EQ_U(derived, 2 * (B - 1));
		}
	}
	for (int b = 0; b < B; b++) {
		CHECK(nodes[0][b][0] == nodes[1][b][0] && nodes[0][b][1] == nodes[1][b][1]);
		CHECK(nodes[0][b][0] != nodes[0][b][1]);
		for (int o = 0; o < b; o++)
			CHECK(nodes[0][b][0] != nodes[0][o][0]);
	}
	probe_path(nodes[0][B - 1][0], e, sizeof(e));
	probe_path(nodes[0][B - 1][1], f, sizeof(f));
	printf("  %s\n  %s\n", e, f);
	/* Under the base: the frames below the boundary only. */
	CHECK(!strcmp(e, "?/stitched_all/caller_e/site_st"));
	CHECK(!strcmp(f, "?/stitched_all/caller_f/site_st"));
}

static void copied_path_tells_callers(void)
{
	probe_init(1);
	probe_set_stitch(1, __builtin_frame_address(0));
	/* The first lookup unwinds; the second is the memo's, whose entry is
	 * copied. */
	probe_set_copy(1);
	caller_g();
	caller_g();
	CHECK(probe_copy_taken());
	probe_set_copy(0);
	caller_g();
	CHECK(probe_copy_holds());
	/* The same site and depth from another caller: the copy must not hold. */
	caller_h();
	CHECK(!probe_copy_holds());
	caller_g();
	CHECK(probe_copy_holds());
}

/* A sample taken in sample_inner, called from sample_outer through
 * sample_mid, under base (0: none) and, when cut, a boundary in
 * sample_outer's frame (as a task's exit frame lies in the runtime frame
 * that called its body). */
struct walk {
	int n;
	uintptr_t ip[64], sp[64];
	uintptr_t boundary;
};

__attribute__((noinline)) static void sample_inner(void)
{
	raise(SIGUSR2);
	sink++;
}

__attribute__((noinline)) static void sample_mid(void)
{
	sample_inner();
	sink++;
}

__attribute__((noinline)) static void sample_outer(int base, int cut, struct walk *w)
{
	/* Locals below the frame pointer: the callee's frame starts below it. */
	volatile char pad[64];

	pad[0] = 1;
	w->boundary = cut ? (uintptr_t)__builtin_frame_address(0) : 0;
	probe_set_stitch(base, (void *)w->boundary);
	sample_mid();
	w->n = probe_sample_frames(w->ip, w->sp, 64);
	sink += pad[0];
}

static void sample_walk_ends_where_frames_matter(void)
{
	struct walk all, own, cut;
	int k;

	probe_init(1);
	probe_arm_sample();
	sample_outer(0, 0, &all);
	sample_outer(1, 0, &own);
	sample_outer(1, 1, &cut);
	/* Without a base every frame: the signal's in libc, the three
	 * functions, the test's callers up to the thread's start. */
	CHECK(all.n >= 6);
	/* Under a base alone, up to the first frame that is neither libc's
	 * nor a runtime's: sample_inner's, past raise's frames in libc. */
	CHECK(own.n >= 2 && own.n < all.n);
	/* Under a boundary, on to the first frame whose stack pointer at
	 * its call is at or above it: sample_outer's caller, three further
	 * (select_frames cuts there, as an unwind from a callback does). */
	CHECK_EQ_U(cut.n, own.n + 3);
	for (k = 0; k < own.n; k++)
		CHECK(own.ip[k] == all.ip[k] && own.sp[k] == 0);
	/* The last is the test's own frame, at another call of
	 * sample_outer. */
	for (k = 0; k < cut.n; k++)
		CHECK((k == cut.n - 1 || cut.ip[k] == all.ip[k]) && cut.sp[k] != 0);
	CHECK(cut.sp[cut.n - 1] >= cut.boundary && cut.sp[cut.n - 2] < cut.boundary);
	for (k = 0; k < all.n; k++)
		CHECK(all.sp[k] == 0);
}

/* Sends SIGUSR2 to the thread in rt_spin until the probe took a sample
 * there, then lets it return. */
struct spin {
	pthread_t target;
	volatile int state;
};

static void *spin__kick(void *arg)
{
	struct spin *s = arg;
	int before;

	while (s->state != 1)
		usleep(100);
	before = probe_samples_taken();
	while (probe_samples_taken() == before) {
		pthread_kill(s->target, SIGUSR2);
		usleep(1000);
	}
	s->state = 2;
	return NULL;
}

/* One sample taken while the thread spins inside the runtime (rt_spin), under
 * the stitch of base (0: none): its frames in w. */
__attribute__((noinline)) static void sample_in_runtime(int base, struct walk *w)
{
	struct spin s = { .target = pthread_self() };
	pthread_t kicker;

	probe_set_stitch(base, NULL);
	CHECK(pthread_create(&kicker, NULL, spin__kick, &s) == 0);
	rt_spin(&s.state);
	pthread_join(kicker, NULL);
	w->n = probe_sample_frames(w->ip, w->sp, 64);
}

/* Under a node that takes no frames, a sample that interrupted the
 * runtime's own code is the node's without a walk: one frame, the
 * interrupted instruction, inside rt_spin. Without a base the same sample
 * is walked to the thread's start. */
static int in_rt_spin(uintptr_t ip)
{
	Dl_info di;

	return dladdr((void *)ip, &di) && di.dli_saddr == (void *)rt_spin;
}

static void sample_in_runtime_wait_not_walked(void)
{
	struct walk own, all;

	probe_init(1);
	probe_arm_sample();
	sample_in_runtime(1, &own);
	sample_in_runtime(0, &all);
	CHECK_EQ_U(own.n, 1);
	CHECK(in_rt_spin(own.ip[0]) && own.sp[0] == 0);
	CHECK(all.n >= 4);
	CHECK(in_rt_spin(all.ip[0]));
}

TEST_MAIN({ "fast path agrees", fast_path_agrees },
	  { "region openers remembered", region_openers_remembered },
	  { "elides tool and runtime", elides_tool_and_runtime },
	  { "memo hits a repeated site", memo_hits_repeated_site },
	  { "memo notices another caller", memo_notices_other_caller },
	  { "memo context: alternating callers", memo_context_alternating_callers },
	  { "memo matches a cold unwind", memo_matches_cold_unwind },
	  { "memo holds many deep contexts", memo_holds_many_deep_contexts },
	  { "memo predicts the next lookup", memo_predicts_next_lookup },
	  { "memo: return address inside the runtime", memo_runtime_return_address },
	  { "memo derives contexts under other bases", memo_derives_other_bases },
	  { "a copied memo path tells callers apart", copied_path_tells_callers },
	  { "a sample's walk ends where its frames stop mattering", sample_walk_ends_where_frames_matter },
	  { "a sample in a runtime's wait is not walked", sample_in_runtime_wait_not_walked })
