/* SPDX-License-Identifier: MIT */
/*
 * The unwinder on real stacks: user frames (this program) call a runtime
 * (libomp-gtshim.so) that calls the tool (libgtprobe.so). Contexts must end
 * at the user's call site, contain no tool or runtime frame, and repeat
 * through the memo, which must notice a changed caller.
 */
#include <string.h>

#include "tests/unit/test.h"
#include "tests/unit/unwind_probe.h"

/* Loops are not unrolled: each unrolled copy would be a call site of its own. */
static volatile int sink;

__attribute__((noinline)) static void site_one(void)
{
	rt_call(probe_context, 0);
	sink++;
}

__attribute__((noinline)) static void site_two(void)
{
	rt_call(probe_context, 0);
	sink++;
}

__attribute__((noinline)) static void caller_a(void)
{
	site_one();
	sink++;
}

__attribute__((noinline)) static void caller_b(void)
{
	site_one();
	sink++;
}

__attribute__((noinline)) static void recurse(int n)
{
	if (n == 0)
		site_two();
	else
		recurse(n - 1);
	sink++;
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
	char a[4096], b[4096];
	void *na, *nb;

	probe_init(1);
	/* Alternate callers of the same site from one place each. */
	_Pragma("clang loop unroll(disable)")
	for (int i = 0; i < 20; i++) {
		caller_a();
		if (i == 0)
			na = probe_last();
		CHECK(probe_last() == na);
		caller_b();
		if (i == 0)
			nb = probe_last();
		CHECK(probe_last() == nb);
	}
	CHECK(na != nb);
	probe_path(na, a, sizeof(a));
	probe_path(nb, b, sizeof(b));
	CHECK(strstr(a, "caller_a/site_one"));
	CHECK(strstr(b, "caller_b/site_one"));
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

TEST_MAIN({ "fast path agrees", fast_path_agrees },
	  { "elides tool and runtime", elides_tool_and_runtime },
	  { "memo hits a repeated site", memo_hits_repeated_site },
	  { "memo notices another caller", memo_notices_other_caller },
	  { "memo matches a cold unwind", memo_matches_cold_unwind })
