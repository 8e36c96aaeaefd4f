/* SPDX-License-Identifier: MIT */
/*
 * Wait states across ranks, exact, from each call's enter and return times
 * (CLOCK_MONOTONIC, shifted to rank 0's clock when the ranks span hosts).
 *
 * Collectives. Per communicator, the last GT_MPI_BATCH instances are kept
 * (enter, return, node, the thread's work node). Collectives on a
 * communicator are called in the same order on all its ranks, so the k-th
 * instance is the same call everywhere: when a batch is full (at Comm_free
 * and, for MPI_COMM_WORLD, at Finalize: what remains), the ranks reduce it
 * together with two PMPI_Allreduce calls on that communicator: the latest
 * enter with its rank (MAXLOC), the root's enter, then the sum of the waits.
 *   wait at N x N (Barrier, Allreduce, Allgather, Alltoall, Reduce_scatter):
 *     every rank waits for the last to enter: min(last enter - own enter,
 *     own length);
 *   late broadcast (Bcast, Scatter): a rank that is not the root waits for
 *     the root: min(root's enter - own enter, own length);
 *   early reduce (Reduce, Gather): the root waits for the last: as N x N,
 *     at the root only.
 * The wait is MPI_IDLE on the call's node. The rank the others waited for
 * (the last to enter; the root of a late broadcast) charges their total
 * wait as MPI_IDLE_CAUSE to its work before the call: the context its CPU
 * samples charged most since its previous collective, outside MPI calls
 * (mpi/pmpi.c), or the call's own node when they charged less than a
 * quarter of that time (the rank did not work its way late).
 *
 * Late sender. A receive (Recv, Sendrecv, the completion of an Irecv) waits
 * for a send that entered later. Each rank logs its sends on MPI_COMM_WORLD
 * (destination, tag, enter) and its receives (source, tag, enter and length
 * of the call that waited, its node); at Finalize the sends go to their
 * destinations (PMPI_Alltoallv), and the k-th receive from (source, tag)
 * is matched with the k-th send of that source to this rank with that tag
 * (MPI's order of messages between a pair). Its wait, min(send enter -
 * call enter, call length), is MPI_IDLE on the receiving call's node; one
 * completion call waiting for several receives charges the largest, which
 * goes back to the rank whose send came last (a second exchange): its
 * MPI_IDLE_CAUSE, on its work before the send or the send's call site.
 *
 * Bounded: a batch per live communicator; logs of GT_MPI_LOG entries each,
 * beyond which sends and receives are counted, not matched (the first ones
 * still match: a log is a prefix of the rank's calls).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/thread.h"
#include "mpi/mpi-internal.h"

#define GT_MPI_BATCH 64
#define GT_MPI_LOG (1u << 16)

struct inst {
	uint64_t t0, t1; /* rank 0's clock */
	struct gt_cct_node *node, *work;
	struct gt_thread *t;
	int root;
	enum gt_mpi_class cls;
};

struct comm_state {
	struct comm_state *next;
	MPI_Comm comm;
	int rank;
	int skip; /* an intercommunicator or a single rank: no waits */
	unsigned n;
	struct inst b[GT_MPI_BATCH];
};

/* A send as it goes to its destination at Finalize. */
struct sent {
	int64_t tag;
	uint64_t t0;
	uint64_t idx; /* in the sender's log */
};

/* What only the sender keeps of it: where its lateness is charged. */
struct sent_local {
	struct gt_cct_node *node, *work;
	struct gt_thread *t;
};

/* A late send's cost, back to its sender: the receiver's wait. */
struct late {
	uint64_t idx, wait;
};

struct received {
	int source, tag;
	uint64_t t0, len;
	struct gt_cct_node *node;
	struct gt_thread *t;
	uint64_t call; /* the completion call it came in: one wait per call */
};

/* The communicators, the logs: normal context, never held across an MPI call. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct comm_state *comms;
static struct {
	int *dest;
	struct sent *e;
	struct sent_local *local;
	uint32_t n, cap;
} sends;
static struct {
	struct received *e;
	uint32_t n, cap;
	uint64_t calls;
} recvs;
static uint64_t log_full, uncharged;

static uint64_t to_rank0(uint64_t t)
{
	return t - (uint64_t)gt_mpi__clock_offset();
}

/* ---- collectives ---- */

static struct comm_state *comm__get(MPI_Comm comm, const struct gt_mpi_call *c)
{
	struct comm_state *s;
	int inter = 0;

	for (s = comms; s; s = s->next)
		if (s->comm == comm)
			return s;
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	s->comm = comm;
	s->rank = c->rank;
	s->skip = c->size < 2 || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter;
	s->n = 0;
	s->next = comms;
	comms = s;
	return s;
}

static void charge(struct gt_thread *t, struct gt_cct_node *node, enum gt_metric m, uint64_t v)
{
	if (!v)
		return;
	if (!t || !node || t != gt_thread__peek()) {
		uncharged++;
		return;
	}
	gt_cct__add(&t->cct, node, m, v, 0);
}

/*
 * Reduces a batch of @n instances across @comm's ranks and charges this
 * rank's part. Every rank of @comm calls it at the same instance.
 * Inside gt_thread__enter when the thread has a record.
 */
static void batch__reduce(MPI_Comm comm, int rank, const struct inst *b, unsigned n)
{
	struct {
		long v;
		int r;
	} last[2 * GT_MPI_BATCH], in[2 * GT_MPI_BATCH];
	int64_t wait[GT_MPI_BATCH], total[GT_MPI_BATCH];
	unsigned i;

	for (i = 0; i < n; i++) {
		in[i].v = (long)b[i].t0;
		in[i].r = rank;
		/* The root's enter, to all (0 elsewhere). */
		in[n + i].v = b[i].root == rank ? (long)b[i].t0 : 0;
		in[n + i].r = rank;
	}
	if (PMPI_Allreduce(in, last, (int)(2 * n), MPI_LONG_INT, MPI_MAXLOC, comm) != MPI_SUCCESS)
		return;
	for (i = 0; i < n; i++) {
		uint64_t until = 0, len = b[i].t1 - b[i].t0;

		switch (b[i].cls) {
		case GT_MPI_COLL_1N:
			if (b[i].root != rank)
				until = (uint64_t)last[n + i].v;
			break;
		case GT_MPI_COLL_N1:
			if (b[i].root == rank)
				until = (uint64_t)last[i].v;
			break;
		default:
			until = (uint64_t)last[i].v;
			break;
		}
		wait[i] = until > b[i].t0 ? (int64_t)(until - b[i].t0 < len ? until - b[i].t0 : len) : 0;
	}
	if (PMPI_Allreduce(wait, total, (int)n, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS)
		return;
	for (i = 0; i < n; i++) {
		int culprit = b[i].cls == GT_MPI_COLL_1N ? b[i].root : last[i].r;

		charge(b[i].t, b[i].node, GT_M_MPI_IDLE, (uint64_t)wait[i]);
		if (culprit == rank)
			charge(b[i].t, b[i].work ? b[i].work : b[i].node, GT_M_MPI_IDLE_CAUSE, (uint64_t)total[i]);
	}
}

void gt_mpi_waits__collective(struct gt_mpi_call *c, enum gt_mpi_class cls)
{
	struct inst full[GT_MPI_BATCH];
	struct comm_state *s;
	unsigned n = 0;
	int rank = 0;

	pthread_mutex_lock(&lock);
	s = comm__get(c->comm, c);
	if (s && !s->skip) {
		s->b[s->n++] = (struct inst){ to_rank0(c->t0), to_rank0(c->t1), c->node, c->work, c->t,
					      c->root, cls };
		if (s->n == GT_MPI_BATCH) {
			memcpy(full, s->b, sizeof(full));
			n = s->n;
			rank = s->rank;
			s->n = 0;
		}
	}
	pthread_mutex_unlock(&lock);
	/* The program calls the communicator's next collective only after
	 * this one returns: the batch is this call's to reduce. */
	if (n)
		batch__reduce(c->comm, rank, full, n);
}

/* What remains of @comm's batch, reduced; the communicator forgotten. */
static void comm__flush(MPI_Comm comm)
{
	struct inst rest[GT_MPI_BATCH];
	struct comm_state **p, *s = NULL;
	unsigned n = 0;
	int rank = 0;

	pthread_mutex_lock(&lock);
	for (p = &comms; *p; p = &(*p)->next) {
		if ((*p)->comm == comm) {
			s = *p;
			*p = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (!s)
		return;
	if (!s->skip && s->n) {
		n = s->n;
		rank = s->rank;
		memcpy(rest, s->b, n * sizeof(rest[0]));
	}
	free(s);
	if (n)
		batch__reduce(comm, rank, rest, n);
}

void gt_mpi_waits__comm_free(struct gt_mpi_call *c, MPI_Comm comm)
{
	(void)c;
	if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF)
		comm__flush(comm);
}

/* ---- late senders ---- */

void gt_mpi_waits__sent(const struct gt_mpi_call *c)
{
	pthread_mutex_lock(&lock);
	if (sends.n == sends.cap && sends.cap < GT_MPI_LOG) {
		uint32_t cap = sends.cap ? 2 * sends.cap : 1024;
		int *d = realloc(sends.dest, cap * sizeof(*d));
		struct sent *e = d ? realloc(sends.e, cap * sizeof(*e)) : NULL;
		struct sent_local *l = e ? realloc(sends.local, cap * sizeof(*l)) : NULL;

		if (d)
			sends.dest = d;
		if (e)
			sends.e = e;
		if (l) {
			sends.local = l;
			sends.cap = cap;
		}
	}
	if (sends.n < sends.cap) {
		sends.dest[sends.n] = c->peer;
		sends.e[sends.n] = (struct sent){ c->tag, to_rank0(c->t0), sends.n };
		sends.local[sends.n] = (struct sent_local){ c->node, c->work, c->t };
		sends.n++;
	} else {
		log_full++;
	}
	pthread_mutex_unlock(&lock);
}

void gt_mpi_waits__received(const struct gt_mpi_call *c, int source, int tag)
{
	uint64_t call = (uint64_t)(uintptr_t)c ^ c->t0;

	if (source < 0)
		return;
	pthread_mutex_lock(&lock);
	if (recvs.n == recvs.cap && recvs.cap < GT_MPI_LOG) {
		uint32_t cap = recvs.cap ? 2 * recvs.cap : 1024;
		struct received *e = realloc(recvs.e, cap * sizeof(*e));

		if (e) {
			recvs.e = e;
			recvs.cap = cap;
		}
	}
	if (recvs.n < recvs.cap)
		recvs.e[recvs.n++] = (struct received){ source, tag, to_rank0(c->t0), c->t1 - c->t0,
							c->node, c->t, call };
	else
		log_full++;
	pthread_mutex_unlock(&lock);
}

/* Order of receives and of sends for matching: by source, tag, then as
 * they happened (the index, a stable tie-break). */
struct key {
	int source, tag;
	uint32_t i;
	uint64_t t0;
};

static int key__cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Whether every rank has @ok: the ranks decide together, so that all or
 * none make the exchange that follows. */
static int all_ok(int ok)
{
	int all = 0;

	return PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && all;
}

/* The sends of every rank to this one, in *in by source (*in_counts[r] of
 * rank r, in the order r sent them; the caller frees both): 0, or -1 (every
 * rank then returns -1 alike). */
static int late__exchange(int size, struct sent **in, int **in_counts)
{
	int *cnt = calloc((size_t)size * 4, sizeof(int)), *rcnt, *sdisp, *rdisp, *at, r, total;
	struct sent *out = malloc(sends.n * sizeof(*out) + 1), *got = NULL;
	uint32_t i;

	if (!all_ok(cnt && out))
		goto out_free;
	rcnt = cnt + size;
	sdisp = cnt + 2 * size;
	at = cnt + 3 * size;
	for (i = 0; i < sends.n; i++)
		if (sends.dest[i] >= 0 && sends.dest[i] < size)
			cnt[sends.dest[i]]++;
	for (r = 0, total = 0; r < size; r++) {
		sdisp[r] = at[r] = total;
		total += cnt[r];
	}
	/* By destination; each destination's in the order sent. */
	for (i = 0; i < sends.n; i++)
		if (sends.dest[i] >= 0 && sends.dest[i] < size)
			out[at[sends.dest[i]]++] = sends.e[i];
	for (r = 0; r < size; r++) {
		cnt[r] *= (int)sizeof(struct sent);
		sdisp[r] *= (int)sizeof(struct sent);
	}
	if (PMPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS)
		goto out_free;
	rdisp = at;
	for (r = 0, total = 0; r < size; r++) {
		rdisp[r] = total;
		total += rcnt[r];
	}
	got = malloc((size_t)total + 1);
	if (!all_ok(got != NULL) ||
	    PMPI_Alltoallv(out, cnt, sdisp, MPI_BYTE, got, rcnt, rdisp, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
		goto out_free;
	/* The counts, in sends, into the front of cnt: the caller's. */
	for (r = 0; r < size; r++)
		cnt[r] = rcnt[r] / (int)sizeof(struct sent);
	*in = got;
	*in_counts = cnt;
	free(out);
	return 0;
out_free:
	free(got);
	free(out);
	free(cnt);
	return -1;
}

/*
 * Each late send's cost back to its sender, late[] by source (count[r] of
 * rank r's): the sender charges it as MPI_IDLE_CAUSE to its work before
 * the send (since its previous collective), or to the send's call site.
 * Every rank calls it after a successful late__exchange, with ok 0 when it
 * has nothing to send for want of memory: the ranks then skip it together.
 */
static void late__blame(int size, int ok, const struct late *late, const int *count)
{
	int *cnt = ok ? calloc((size_t)size * 4, sizeof(int)) : NULL, *rcnt, *sdisp, *rdisp, r, total;
	struct late *got = NULL;

	if (!all_ok(cnt != NULL))
		goto out;
	rcnt = cnt + size;
	sdisp = cnt + 2 * size;
	rdisp = cnt + 3 * size;
	for (r = 0, total = 0; r < size; r++) {
		cnt[r] = count[r] * (int)sizeof(struct late);
		sdisp[r] = total;
		total += cnt[r];
	}
	if (PMPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS)
		goto out;
	for (r = 0, total = 0; r < size; r++) {
		rdisp[r] = total;
		total += rcnt[r];
	}
	got = malloc((size_t)total + 1);
	if (!all_ok(got != NULL) || PMPI_Alltoallv(late, cnt, sdisp, MPI_BYTE, got, rcnt, rdisp, MPI_BYTE,
						     MPI_COMM_WORLD) != MPI_SUCCESS)
		goto out;
	for (size_t k = 0; k < (size_t)total / sizeof(struct late); k++) {
		const struct sent_local *l;

		if (got[k].idx >= sends.n)
			continue;
		l = &sends.local[got[k].idx];
		charge(l->t, l->work ? l->work : l->node, GT_M_MPI_IDLE_CAUSE, got[k].wait);
	}
out:
	free(got);
	free(cnt);
}

static void late__match(int size)
{
	struct sent *in = NULL;
	int *counts = NULL, *back = NULL, ok;
	struct key *ks = NULL, *kr = NULL;
	struct late *late = NULL, *by_src = NULL;
	uint64_t *wait = NULL;
	uint32_t i, j, ns = 0, n = recvs.n, *match = NULL, nlate = 0;
	int r, *src = NULL, *at_src = NULL;

	if (late__exchange(size, &in, &counts))
		return;
	for (r = 0; r < size; r++)
		ns += (uint32_t)counts[r];
	ks = malloc((ns + 1) * sizeof(*ks));
	kr = malloc((n + 1) * sizeof(*kr));
	wait = calloc(n + 1, sizeof(*wait));
	match = malloc((n + 1) * sizeof(*match));
	back = calloc((size_t)size, sizeof(*back));
	late = malloc((n + 1) * sizeof(*late));
	by_src = malloc((n + 1) * sizeof(*by_src));
	src = malloc((n + 1) * sizeof(*src));
	at_src = calloc((size_t)size, sizeof(*at_src));
	ok = ks && kr && wait && match && back && late && by_src && src && at_src;
	if (!ok)
		goto out_blame;
	for (i = 0; i < n; i++)
		match[i] = UINT32_MAX;
	for (r = 0, j = 0; r < size; r++)
		for (int k = 0; k < counts[r]; k++, j++)
			ks[j] = (struct key){ r, (int)in[j].tag, j, in[j].t0 };
	for (i = 0; i < n; i++)
		kr[i] = (struct key){ recvs.e[i].source, recvs.e[i].tag, i, recvs.e[i].t0 };
	qsort(ks, ns, sizeof(*ks), key__cmp);
	qsort(kr, n, sizeof(*kr), key__cmp);
	/* Merge: the k-th receive of (source, tag) with the k-th send. */
	for (i = 0, j = 0; i < n && j < ns;) {
		int c = (kr[i].source != ks[j].source) ? (kr[i].source < ks[j].source ? -1 : 1)
			: (kr[i].tag != ks[j].tag)     ? (kr[i].tag < ks[j].tag ? -1 : 1)
						       : 0;

		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			const struct received *e = &recvs.e[kr[i].i];

			if (ks[j].t0 > e->t0)
				wait[kr[i].i] = ks[j].t0 - e->t0 < e->len ? ks[j].t0 - e->t0 : e->len;
			match[kr[i].i] = ks[j].i;
			i++;
			j++;
		}
	}
	/* One wait per call: the largest of its receives, caused by the
	 * send that came last. */
	for (i = 0; i < n; i = j) {
		uint32_t at = i;

		for (j = i; j < n && recvs.e[j].call == recvs.e[i].call && recvs.e[j].node == recvs.e[i].node; j++)
			at = wait[j] > wait[at] ? j : at;
		charge(recvs.e[i].t, recvs.e[i].node, GT_M_MPI_IDLE, wait[at]);
		if (wait[at] && match[at] != UINT32_MAX) {
			src[nlate] = recvs.e[at].source;
			late[nlate++] = (struct late){ in[match[at]].idx, wait[at] };
			back[recvs.e[at].source]++;
		}
	}
	/* By source, for the exchange back. */
	for (r = 1; r < size; r++)
		at_src[r] = at_src[r - 1] + back[r - 1];
	for (i = 0; i < nlate; i++)
		by_src[at_src[src[i]]++] = late[i];
out_blame:
	late__blame(size, ok, by_src, back);
	free(at_src);
	free(src);
	free(by_src);
	free(late);
	free(back);
	free(match);
	free(wait);
	free(kr);
	free(ks);
	free(in);
	free(counts);
}

void gt_mpi_waits__finalize(struct gt_mpi_call *c)
{
	int size = 0;

	(void)c;
	comm__flush(MPI_COMM_WORLD);
	if (PMPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS && size > 1)
		late__match(size);
	pthread_mutex_lock(&lock);
	if (log_full)
		gt_info("mpi", "%llu sends and receives beyond the logs' %u entries: not matched for late senders",
			(unsigned long long)log_full, GT_MPI_LOG);
	if (uncharged)
		gt_debug("mpi", "%llu waits of calls on other threads than the one that evaluated them: not charged",
			 (unsigned long long)uncharged);
	for (struct comm_state *s = comms; s; s = s->next)
		if (s->n && !s->skip)
			gt_debug("mpi", "a communicator not freed before MPI_Finalize: its last %u collectives' waits "
					"are not computed", s->n);
	free(sends.e);
	free(sends.dest);
	free(sends.local);
	free(recvs.e);
	memset(&sends, 0, sizeof(sends));
	memset(&recvs, 0, sizeof(recvs));
	pthread_mutex_unlock(&lock);
}

/* ---- clocks ---- */

static int64_t clock_offset_rank0;

int64_t gt_mpi__clock_offset(void)
{
	return clock_offset_rank0;
}

void gt_mpi_waits__init(void)
{
	char host[256] = "";
	long h = 5381, lo = 0, hi = 0;
	int rank = 0, size = 0;
	MPI_Comm d;

	if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS || size < 2)
		return;
	gethostname(host, sizeof(host) - 1);
	for (const char *s = host; *s; s++)
		h = (h * 33) ^ (unsigned char)*s;
	if (PMPI_Allreduce(&h, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
	    PMPI_Allreduce(&h, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS || lo == hi)
		return; /* one host: one CLOCK_MONOTONIC */
	/*
	 * Several hosts: each rank's offset to rank 0 from the shortest of a
	 * few round trips (Cristian's method), on a communicator of the
	 * tool's own so that no message can meet a receive of the program.
	 */
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &d) != MPI_SUCCESS)
		return;
	if (rank == 0) {
		for (int r = 1; r < size; r++) {
			uint64_t best = UINT64_MAX;
			int64_t off = 0, tr;

			for (int k = 0; k < 5; k++) {
				uint64_t a = gt_clock__now(), b;

				PMPI_Send(&a, 0, MPI_BYTE, r, 1, d);
				PMPI_Recv(&tr, 1, MPI_INT64_T, r, 2, d, MPI_STATUS_IGNORE);
				b = gt_clock__now();
				if (b - a < best) {
					best = b - a;
					off = tr - (int64_t)(a + (b - a) / 2);
				}
			}
			PMPI_Send(&off, 1, MPI_INT64_T, r, 3, d);
		}
	} else {
		for (int k = 0; k < 5; k++) {
			int64_t now;

			PMPI_Recv(NULL, 0, MPI_BYTE, 0, 1, d, MPI_STATUS_IGNORE);
			now = (int64_t)gt_clock__now();
			PMPI_Send(&now, 1, MPI_INT64_T, 0, 2, d);
		}
		PMPI_Recv(&clock_offset_rank0, 1, MPI_INT64_T, 0, 3, d, MPI_STATUS_IGNORE);
	}
	PMPI_Comm_free(&d);
	gt_info("mpi", "ranks on several hosts: rank %d's clock is %lld ns from rank 0's", rank,
		(long long)clock_offset_rank0);
}
