/* SPDX-License-Identifier: MIT */
/*
 * Writes the synthetic profiles of a large MPI run for the report
 * benchmark: P processes of about C calling contexts each, 4 threads,
 * CPU time and OpenMP metrics, as libgputool.so would write them.
 *
 *   bench_report_gen DIR P C
 *
 * The tree is the same on every rank (an SPMD program) but for 2 % of the
 * contexts, leaves that differ per rank, so that the merged tree grows with
 * the run (to about 200,000 contexts for 1,024 ranks). As in the library's
 * profiles, no two siblings have the same path. Values vary per rank and
 * thread. Deterministic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/metrics.h"
#include "core/profile.h"

#define THREADS 4
#define FUNCS 1500
#define FILES 60

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int write_one(const char *dir, uint32_t rank, uint32_t contexts)
{
	struct gt_prof_node root = { .parent = GT_NONE, .kind = GT_PNODE_ROOT, .name = GT_NONE, .file = GT_NONE,
				     .module = GT_NONE };
	struct gt_profile p;
	uint64_t shape = 0x9e3779b97f4a7c15ull, vals = 0x1234567ull + rank * 7919ull;
	uint32_t mod, cpu, samples, work, wait, *depth;
	uint64_t *seen; /* sibling paths so far, hashed; 0 empty */
	uint8_t *leaf_only;
	char name[64], path[1024], buf[32];
	FILE *f;
	int err;

	gt_profile__init(&p);
	for (int i = 0; i < GT_M__COUNT; i++)
		gt_profile__metric(&p, gt_metric_descs[i].name, gt_metric_descs[i].unit, gt_metric_descs[i].desc);
	cpu = gt_profile__find_metric(&p, "CPUTIME");
	samples = gt_profile__find_metric(&p, "SAMPLES");
	work = gt_profile__find_metric(&p, "OMP_WORK");
	wait = gt_profile__find_metric(&p, "OMP_WAIT");
	snprintf(buf, sizeof(buf), "%u", rank);
	gt_profile__set_meta(&p, "exe", "/home/user/app/solver");
	gt_profile__set_meta(&p, "cmdline", "/home/user/app/solver -n 4096");
	gt_profile__set_meta(&p, "rank", buf);
	snprintf(buf, sizeof(buf), "%u", 100000 + rank);
	gt_profile__set_meta(&p, "pid", buf);
	gt_profile__set_meta(&p, "host", "node0001");
	gt_profile__set_meta(&p, "wall_ns", "60000000000");
	for (uint32_t t = 0; t < THREADS; t++)
		gt_profile__thread(&p, t, 100000 + rank * 16 + t, t ? "worker" : "initial");
	mod = gt_profile__module(&p, "/home/user/app/solver");
	gt_profile__node(&p, &root);
	depth = calloc(contexts + 1, sizeof(*depth));
	leaf_only = calloc(contexts + 1, 1);
	seen = calloc(4 * (size_t)contexts, sizeof(*seen));
	if (!depth || !leaf_only || !seen)
		return -ENOMEM;
	for (uint32_t i = 1; i < contexts; i++) {
		struct gt_prof_node n = { .kind = GT_PNODE_FRAME, .module = mod };
		uint64_t r = rng(&shape);
		int own = (r >> 40) % 50 == 0; /* 2 %: this rank's own context */
		uint32_t fn = (uint32_t)(r % FUNCS);

		/* A parent among the recent nodes: trees about 8 to 16 deep. */
		n.parent = i < 8 ? i - 1 : i - 1 - (uint32_t)((r >> 20) % (i < 64 ? i : 64));
		while (leaf_only[n.parent])
			n.parent = p.nodes[n.parent].parent;
		if (depth[n.parent] > 24)
			n.parent = 0;
		leaf_only[i] = (uint8_t)own;
		depth[i] = depth[n.parent] + 1;
		snprintf(name, sizeof(name), own ? "rank%u_fn%u" : "ns::solver::kernel_%u", own ? rank : fn, fn);
		n.name = gt_profile__string(&p, name);
		snprintf(name, sizeof(name), "/home/user/app/src/module%u.cpp", fn % FILES);
		n.file = gt_profile__string(&p, name);
		n.line = 10 + (uint32_t)((r >> 12) % 900);
		if ((r >> 50) % 16 == 0) { /* an OpenMP region */
			n.kind = GT_PNODE_PLACEHOLDER;
			n.name = gt_profile__string(&p, "<omp parallel>");
			n.file = n.module = GT_NONE;
			n.line = 0;
		}
		for (;;) { /* a sibling with this path already: another line */
			uint64_t h = ((uint64_t)n.parent * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)n.name << 40) ^
				     ((uint64_t)n.line << 20) ^ n.kind ^ ((uint64_t)n.file << 8);
			size_t at;

			h |= 1;
			for (at = h % (4 * (size_t)contexts); seen[at] && seen[at] != h; at = (at + 1) % (4 * (size_t)contexts))
				;
			if (!seen[at]) {
				seen[at] = h;
				break;
			}
			if (n.kind == GT_PNODE_PLACEHOLDER) { /* one region per call site: make it a frame */
				n.kind = GT_PNODE_FRAME;
				n.name = gt_profile__string(&p, "ns::solver::region");
				n.file = gt_profile__string(&p, "/home/user/app/src/region.cpp");
				n.module = mod;
			}
			n.line++;
		}
		if (gt_profile__node(&p, &n) == GT_NONE) {
			gt_profile__fini(&p);
			free(depth);
			free(leaf_only);
			free(seen);
			return -ENOMEM;
		}
		/* Values on about 60 % of the contexts, on 1 to 4 threads. */
		if ((r >> 30) % 5 < 3) {
			uint32_t nt = 1 + (uint32_t)((r >> 33) % THREADS);

			for (uint32_t t = 0; t < nt; t++) {
				uint64_t v = 5000000ull * (1 + rng(&vals) % 20) * (1 + rank % 7);

				gt_profile__value(&p, i, t, cpu, v);
				gt_profile__value(&p, i, t, samples, v / 5000000);
				if (n.kind == GT_PNODE_PLACEHOLDER) {
					gt_profile__value(&p, i, t, work, v * 2);
					gt_profile__value(&p, i, t, wait, v / 3);
				}
			}
		}
	}
	free(depth);
	free(leaf_only);
	free(seen);
	snprintf(path, sizeof(path), "%s/solver-%u-%u.gtprof", dir, rank, 100000 + rank);
	f = fopen(path, "wb");
	if (!f) {
		gt_profile__fini(&p);
		return -errno;
	}
	err = gt_profile__write(&p, f);
	if (fclose(f) && !err)
		err = -EIO;
	gt_profile__fini(&p);
	return err;
}

int main(int argc, char **argv)
{
	uint32_t n, c;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_report_gen DIR PROCESSES CONTEXTS\n");
		return 2;
	}
	n = (uint32_t)atoi(argv[2]);
	c = (uint32_t)atoi(argv[3]);
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	for (uint32_t r = 0; r < n; r++) {
		int err = write_one(argv[1], r, c);

		if (err) {
			fprintf(stderr, "bench_report_gen: %s\n", strerror(-err));
			return 1;
		}
	}
	return 0;
}
