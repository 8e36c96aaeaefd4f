/* SPDX-License-Identifier: MIT */
/*
 * MPI wait states with a known answer, which the program measures itself.
 *
 *   waits [UNIT_ITERS] [ROUNDS] [LATE_MS]
 *
 * 1. ROUNDS times: rank r does r + 1 units of CPU work (work(), no sleep,
 *    no MPI), then MPI_Allreduce of one double on MPI_COMM_WORLD. Each rank
 *    waits there for the last to arrive.
 * 2. ROUNDS times, a ring with a late sender: rank r sends 16 ints to r + 1
 *    (MPI_Send) and receives from r - 1 (MPI_Recv into a buffer of 64 ints:
 *    64 bytes arrive); rank 0 sleeps LATE_MS before it sends, so rank 1
 *    waits for it.
 * 3. ROUNDS times, the same ring non-blocking: MPI_Irecv of 32 doubles from
 *    r - 1, (rank 0: sleep LATE_MS), MPI_Isend of 32 doubles to r + 1,
 *    MPI_Waitall of both.
 *
 * WAITS_BALANCED=1: phase 1 balanced, the same work in all: each rank does
 * (ranks + 1) / 2 units a round, the fix a tool's advice should price.
 * Rank 0 prints on stderr how long phase 1 took by its clock, from its
 * first work to the last allreduce's return:
 *   waits-phase: allreduce_ms MS
 *
 * Every rank prints on stderr what it measured with its own clocks, one line
 * per rank, so that a tool's numbers can be checked on a machine of any load:
 *   waits: rank R cpu_ns C allreduce E0:D0,E1:D1,... send S0,... recv E0:D0,...
 *          isend S0,... waitall E0:D0,...
 * C: the CPU time (CLOCK_THREAD_CPUTIME_ID) of the rank's work(); E:D the
 * enter time (CLOCK_MONOTONIC, ns) and length of each call; S the enter of
 * each send. The waits follow: at round i of the allreduce, a rank waits
 * min(max over ranks of E - its E, its D); at a receive, min(the sender's S
 * - its E, its D).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 64

static long unit_iters = 20000000;
static volatile double sink;

static uint64_t ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Deterministic floating-point work: halves of units of unit_iters
 * iterations. */
__attribute__((noinline)) static void work(int halves)
{
	double s = 0.0;

	for (long i = 0; i < halves * unit_iters / 2; i++)
		s += (double)(i % 7) * 0.5;
	sink += s;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void print_pairs(char **p, const char *what, const uint64_t *e, const uint64_t *d, int n)
{
	*p += sprintf(*p, " %s ", what);
	for (int i = 0; i < n; i++)
		*p += d ? sprintf(*p, "%s%llu:%llu", i ? "," : "", (unsigned long long)e[i], (unsigned long long)d[i])
			: sprintf(*p, "%s%llu", i ? "," : "", (unsigned long long)e[i]);
}

int main(int argc, char **argv)
{
	static uint64_t ar_e[MAX_ROUNDS], ar_d[MAX_ROUNDS], send_e[MAX_ROUNDS], recv_e[MAX_ROUNDS],
		recv_d[MAX_ROUNDS], isend_e[MAX_ROUNDS], wall_e[MAX_ROUNDS], wall_d[MAX_ROUNDS];
	int rank, size, rounds = 8, sbuf[16], rbuf[64];
	double in, out, dsend[32], drecv[32];
	uint64_t cpu = 0, t, phase;
	long late_ms = 50;
	int balanced;
	char *line, *p;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		unit_iters = atol(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (argc > 3)
		late_ms = atol(argv[3]);
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 8;
	memset(sbuf, 0, sizeof(sbuf));
	memset(dsend, 0, sizeof(dsend));

	balanced = getenv("WAITS_BALANCED") && atoi(getenv("WAITS_BALANCED"));
	phase = ns_of(CLOCK_MONOTONIC);
	for (int i = 0; i < rounds; i++) {
		t = ns_of(CLOCK_THREAD_CPUTIME_ID);
		work(balanced ? size + 1 : 2 * (rank + 1));
		cpu += ns_of(CLOCK_THREAD_CPUTIME_ID) - t;
		in = (double)rank;
		ar_e[i] = ns_of(CLOCK_MONOTONIC);
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		ar_d[i] = ns_of(CLOCK_MONOTONIC) - ar_e[i];
	}
	phase = ns_of(CLOCK_MONOTONIC) - phase;
	for (int i = 0; i < rounds; i++) {
		if (rank == 0)
			sleep_ms(late_ms);
		send_e[i] = ns_of(CLOCK_MONOTONIC);
		MPI_Send(sbuf, 16, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
		recv_e[i] = ns_of(CLOCK_MONOTONIC);
		MPI_Recv(rbuf, 64, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		recv_d[i] = ns_of(CLOCK_MONOTONIC) - recv_e[i];
	}
	for (int i = 0; i < rounds; i++) {
		MPI_Request r[2];

		MPI_Irecv(drecv, 32, MPI_DOUBLE, (rank + size - 1) % size, 8, MPI_COMM_WORLD, &r[0]);
		if (rank == 0)
			sleep_ms(late_ms);
		isend_e[i] = ns_of(CLOCK_MONOTONIC);
		MPI_Isend(dsend, 32, MPI_DOUBLE, (rank + 1) % size, 8, MPI_COMM_WORLD, &r[1]);
		wall_e[i] = ns_of(CLOCK_MONOTONIC);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		wall_d[i] = ns_of(CLOCK_MONOTONIC) - wall_e[i];
	}

	line = malloc(64 + (size_t)rounds * 5 * 48);
	p = line;
	p += sprintf(p, "waits: rank %d cpu_ns %llu", rank, (unsigned long long)cpu);
	print_pairs(&p, "allreduce", ar_e, ar_d, rounds);
	print_pairs(&p, "send", send_e, NULL, rounds);
	print_pairs(&p, "recv", recv_e, recv_d, rounds);
	print_pairs(&p, "isend", isend_e, NULL, rounds);
	print_pairs(&p, "waitall", wall_e, wall_d, rounds);
	fprintf(stderr, "%s\n", line);
	if (rank == 0)
		fprintf(stderr, "waits-phase: allreduce_ms %.3f\n", (double)phase / 1e6);
	free(line);
	MPI_Finalize();
	if (rank == 0)
		printf("waits: %d ranks, %d rounds, sum %.1f\n", size, rounds, out);
	return 0;
}
