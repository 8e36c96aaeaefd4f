/*
 * dense: a region-dense OpenMP program shaped like a hydrodynamics time-step
 * loop (LULESH-like): every time step runs a few hundred small parallel
 * regions and worksharing constructs, reached through nested and recursive
 * calls, so a tool's cost per construct shows in the elapsed time.
 *
 * Construct sites: GROUP(k) below expands to one function with 8 sites
 * (parallel for, parallel, for, single, for reduction, barrier, parallel for
 * reduction(max), parallel reduction); 16 groups give 128 sites, and two
 * helpers add 4 orphaned worksharing sites called from inside every group's
 * parallel region.  The groups are reached through descend(), which recurses
 * `depth` levels (default 5) and is entered from three phases of the time
 * step, so most sites are reached from several call paths at several
 * recursion depths.
 *
 * Work per construct: `-n` elements (default 16384) of a few flops each,
 * split over the team: a few microseconds with 2 threads.
 *
 * Output (stdout):
 *   # dense threads T elements N steps S depth D sites 132
 *   # ompt-tool none|attached
 *   result DENSE <elapsed> s regions R per_region_us P checksum C
 * <elapsed> is the time of the time-step loop (after a warm-up), R the number
 * of parallel regions it ran, P = elapsed / R, and C a checksum of the mesh
 * that does not depend on the thread count or on a tool being attached.
 *
 * Usage: dense [-n ELEMENTS] [-i STEPS] [-d DEPTH]; threads: OMP_NUM_THREADS.
 */
#include "bench-util.h"

#include <math.h>
#include <string.h>

#define NGROUPS 16
#define SITES_PER_GROUP 8
#define ORPHAN_SITES 4
#define REGIONS_PER_GROUP 4 /* parallel regions one group call runs */

struct mesh {
	int n;
	double *x; /* positions */
	double *v; /* velocities */
	double *e; /* energies */
	long hot;  /* elements above the energy threshold, summed over steps */
	long ticks;
	double emax;
	long group_calls;
};

/* Orphaned worksharing: called from inside the parallel region of every
 * group, so each of these sites is reached from all 16 groups' regions. */
static void __attribute__((noinline)) energy_ws(struct mesh *m, int k)
{
	double *restrict e = m->e;
	const double *restrict v = m->v;
#pragma omp for
	for (int i = 0; i < m->n; i++)
		e[i] = 0.99 * e[i] + 0.01 * fabs(v[i]) + 1e-4 * (double)k;
#pragma omp single
	m->ticks++;
}

static void __attribute__((noinline)) pressure_ws(struct mesh *m)
{
	double *restrict v = m->v;
	const double *restrict e = m->e;
#pragma omp for
	for (int i = 0; i < m->n; i++)
		v[i] -= 1e-3 * (e[i] - 0.5);
#pragma omp single
	m->ticks += 2;
}

/* One group of 8 construct sites; K makes the arithmetic differ per group. */
#define GROUP(K)                                                                         \
	static void group_##K(struct mesh *m)                                           \
	{                                                                                \
		const int n = m->n;                                                      \
		double *restrict x = m->x, *restrict v = m->v, *restrict e = m->e;       \
		long hot = 0, team = 0;                                                  \
		double emax = 0.0;                                                       \
		_Pragma("omp parallel for")                                              \
		for (int i = 0; i < n; i++)                                              \
			v[i] = 0.999 * v[i] + (K + 1) * 1e-6 * (0.5 - x[i]);             \
		_Pragma("omp parallel")                                                  \
		{                                                                        \
			_Pragma("omp for")                                               \
			for (int i = 0; i < n; i++)                                      \
				x[i] += 1e-3 * v[i];                                     \
			_Pragma("omp single")                                            \
			m->ticks++;                                                      \
			_Pragma("omp for reduction(+ : hot)")                            \
			for (int i = 0; i < n; i++)                                      \
				hot += e[i] > 0.5;                                       \
			_Pragma("omp barrier")                                           \
			if (K % 2)                                                       \
				energy_ws(m, K);                                         \
			else                                                             \
				pressure_ws(m);                                          \
		}                                                                        \
		_Pragma("omp parallel for reduction(max : emax)")                        \
		for (int i = 0; i < n; i++)                                              \
			emax = e[i] > emax ? e[i] : emax;                                \
		_Pragma("omp parallel reduction(+ : team)")                              \
		team += omp_get_thread_num() == 0;                                       \
		m->hot += hot + team - 1;                                                \
		m->emax = emax > m->emax ? emax : m->emax;                               \
		m->group_calls++;                                                        \
	}

GROUP(0)
GROUP(1)
GROUP(2)
GROUP(3)
GROUP(4)
GROUP(5)
GROUP(6)
GROUP(7)
GROUP(8)
GROUP(9)
GROUP(10)
GROUP(11)
GROUP(12)
GROUP(13)
GROUP(14)
GROUP(15)

static void (*const groups[NGROUPS])(struct mesh *) = {
	group_0, group_1, group_2,  group_3,  group_4,  group_5,  group_6,  group_7,
	group_8, group_9, group_10, group_11, group_12, group_13, group_14, group_15,
};

/* Runs group g on the way down and group g + NGROUPS/2 on the way back up:
 * entered with g = 0 and g = 3 at depth 5, every group is reached. */
static void __attribute__((noinline)) descend(struct mesh *m, int level, int g)
{
	groups[g % NGROUPS](m);
	if (level > 0)
		descend(m, level - 1, g + 1);
	groups[(g + NGROUPS / 2) % NGROUPS](m);
}

static void __attribute__((noinline)) lagrange_nodal(struct mesh *m, int depth)
{
	descend(m, depth, 0);
}

static void __attribute__((noinline)) lagrange_elements(struct mesh *m, int depth)
{
	descend(m, depth, 3);
}

static void __attribute__((noinline)) time_constraints(struct mesh *m, int depth)
{
	descend(m, depth > 2 ? 2 : depth, 6);
}

static void time_step(struct mesh *m, int depth)
{
	lagrange_nodal(m, depth);
	lagrange_elements(m, depth);
	time_constraints(m, depth);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-n ELEMENTS] [-i STEPS] [-d DEPTH]\n"
		"  -n ELEMENTS  elements per construct (default 16384)\n"
		"  -i STEPS     time steps (default 200)\n"
		"  -d DEPTH     recursion depth of descend() (default 5, at least 4)\n"
		"Threads: OMP_NUM_THREADS.\n",
		argv0);
}

int main(int argc, char **argv)
{
	int n = 16384, steps = 200, depth = 5;
	double v;

	for (int i = 1, opt; (opt = bench__option(argc, argv, &i, &v)) != 0;) {
		if (opt == 'n' && v < (1 << 30)) {
			n = (int)v;
		} else if (opt == 'i' && v < (1 << 30)) {
			steps = (int)v;
		} else if (opt == 'd' && v >= 4 && v < 64) {
			depth = (int)v;
		} else {
			usage(argv[0]);
			return 2;
		}
	}

	struct mesh m = { .n = n };
	m.x = malloc(sizeof(double) * (size_t)n);
	m.v = malloc(sizeof(double) * (size_t)n);
	m.e = malloc(sizeof(double) * (size_t)n);
	if (!m.x || !m.v || !m.e) {
		fprintf(stderr, "dense: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		m.x[i] = (double)(i % 97) / 97.0;
		m.v[i] = 0.0;
		m.e[i] = (double)(i % 13) / 13.0;
	}

	printf("# dense threads %d elements %d steps %d depth %d sites %d\n",
	       omp_get_max_threads(), n, steps, depth,
	       NGROUPS * SITES_PER_GROUP + ORPHAN_SITES);
	bench__print_tool();
	fflush(stdout);

	/* Warm-up: wake the threads, then run a few steps so that first-touch
	 * and a tool's first encounters of each site are not timed. */
	bench__warm_up(200.0);
	for (int s = 0; s < 3; s++)
		time_step(&m, depth);

	long calls0 = m.group_calls;
	double t0 = bench__now_us();
	for (int s = 0; s < steps; s++)
		time_step(&m, depth);
	double elapsed_us = bench__now_us() - t0;
	long regions = (m.group_calls - calls0) * REGIONS_PER_GROUP;

	double sum = 0.0;
	for (int i = 0; i < n; i++)
		sum += m.x[i] + m.v[i] + m.e[i];
	sum += (double)m.hot + (double)m.ticks + m.emax;

	printf("result DENSE %.6f s regions %ld per_region_us %.4f checksum %.10e\n",
	       elapsed_us * 1e-6, regions, elapsed_us / (double)regions, sum);
	free(m.x);
	free(m.v);
	free(m.e);
	return 0;
}
