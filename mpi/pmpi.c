/* SPDX-License-Identifier: MIT */
/*
 * The MPI profiling interface: a wrapper MPI_<name> for each function of
 * mpi/calls.h, exported, so that a preloaded library comes before the MPI
 * library and the program's calls land here. Each measured call is a region
 * "<mpi MPI_<name>>" (core/region.h, GT_REGION_CALL) under the program's
 * call site, with its count and time, the bytes it sent and received and
 * its communicator's size; then the PMPI_<name> of the MPI library runs.
 *
 * Non-blocking requests: an Isend's bytes are charged at its start; an
 * Irecv's when its completion tells them (the status), to the Irecv's node
 * still; the completion itself is a region of its own (Wait, Test...), where
 * the waiting is. A bounded map per thread links a request to its start.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/region.h"
#include "core/sample.h"
#include "core/thread.h"
#include "core/tool.h"
#include "mpi/mpi-internal.h"

/* ---- the MPI library's functions ---- */

#define X(name, cls, params, args, pre, post) static int(*real_##name) params;
GT_MPI_CALLS(X)
#undef X

static const char *const labels[GT_MPI_ID__COUNT] = {
#define X(name, cls, params, args, pre, post) [GT_MPI_ID_##name] = "<mpi MPI_" #name ">",
	GT_MPI_CALLS(X)
#undef X
};

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

/* PMPI_<name>: the MPI library's own entry, which no profiling layer
 * interposes. Without one (an MPI without a profiling interface), the next
 * MPI_<name> after this library's. */
static void *mpi__sym(const char *name)
{
	char sym[64];
	void *p;

	snprintf(sym, sizeof(sym), "PMPI_%s", name);
	p = dlsym(RTLD_DEFAULT, sym);
	if (!p) {
		snprintf(sym, sizeof(sym), "MPI_%s", name);
		p = dlsym(RTLD_NEXT, sym);
	}
	return p;
}

/* Whether the weak references of mpi-internal.h were bound: not when the
 * MPI library was opened after this one (a dlopen), then the calls pass
 * through unmeasured. */
static int linked;

static void mpi__resolve(void)
{
#define X(name, cls, params, args, pre, post) *(void **)&real_##name = mpi__sym(#name);
	GT_MPI_CALLS(X)
#undef X
	linked = PMPI_Allreduce && PMPI_Alltoall && PMPI_Alltoallv && PMPI_Comm_dup && PMPI_Comm_free &&
		 PMPI_Comm_rank && PMPI_Comm_size && PMPI_Comm_test_inter && PMPI_Get_count &&
		 PMPI_Get_library_version && PMPI_Recv && PMPI_Send && PMPI_Type_size && PMPI_Comm_f2c &&
		 PMPI_Type_f2c && PMPI_Request_f2c && PMPI_Status_f2c && &MPI_F_STATUS_IGNORE &&
		 &MPI_F_STATUSES_IGNORE;
#ifdef OPEN_MPI
	linked = linked && &ompi_mpi_comm_world && &ompi_mpi_byte && &ompi_mpi_op_sum;
#endif
	if (!linked)
		gt_info("mpi", "the MPI library was loaded after the tool: MPI calls are not measured");
}

/* ---- state of the process ---- */

/* Set once at MPI_Init (release), read by every call (acquire). */
static atomic_int waits_on;

int gt_mpi__waits_on(void)
{
	return atomic_load_explicit(&waits_on, memory_order_acquire);
}

/* ---- where the thread worked since its last collective ---- */

/*
 * The contexts the thread's CPU samples charged most since its last
 * collective call, outside MPI calls (the work a rank late at a collective
 * did since the ranks last met; point-to-point calls between do not end
 * it), by the space-saving heavy-hitter count: a new context takes the
 * place of the lightest and inherits its weight, so the heaviest of the
 * interval is kept (exactly when it holds more than 1/WORK_SLOTS of it).
 * Written by the thread's own sampling handler (the hook below), read and
 * cleared by the thread inside gt_thread__enter, when its handler touches
 * nothing: same thread, no atomics. Initial-exec TLS: no allocation in the
 * handler.
 */
#define WORK_SLOTS 16
static _Thread_local struct {
	struct gt_cct_node *node[WORK_SLOTS];
	uint64_t w[WORK_SLOTS];
	uint64_t since; /* the last collective's return; 0 before the first */
} work;

/*
 * A rank that worked less than a quarter of the time since its last
 * collective (CPU time sampled outside MPI calls) was not late for its
 * work: it slept, read a file or waited in MPI. MPI's polling inside a call
 * accrues CPU time that the next sample charges just outside it, so a
 * sleeping rank still gets a sample or two there; its lateness is then
 * the call's own (mpi/waits.c charges the call's node).
 */
#define WORK_MIN_SHARE 4

/* The sample hook (core/sample.h). Async-signal-safe: reads and writes this
 * thread's table only. */
static void mpi__sample(struct gt_thread *t, struct gt_cct_node *node, uint64_t weight)
{
	unsigned i, min = 0;

	if (gt_region__in_call(t))
		return; /* waiting in MPI is no work */
	for (i = 0; i < WORK_SLOTS; i++) {
		if (work.node[i] == node) {
			work.w[i] += weight;
			return;
		}
		if (work.w[i] < work.w[min])
			min = i;
	}
	work.node[min] = node;
	work.w[min] += weight;
}

/* The heaviest context into @c, with the CPU time of all and since when. */
static void work__take(struct gt_mpi_call *c)
{
	unsigned i, best = 0;

	c->work_ns = work.w[0];
	for (i = 1; i < WORK_SLOTS; i++) {
		c->work_ns += work.w[i];
		if (work.w[i] > work.w[best])
			best = i;
	}
	c->work = work.w[best] ? work.node[best] : NULL;
	c->work_since = work.since;
}

static void work__reset(uint64_t now)
{
	memset(&work, 0, sizeof(work));
	work.since = now;
}

/* ---- requests ---- */

/*
 * One thread's requests in flight: open addressing on the handle, linear
 * probing, removal by backward shift. Full: the request is not linked (its
 * completion is measured, its start's bytes of a receive are not), and
 * counted. Owned by the thread; touched inside gt_thread__enter only.
 */
#define REQ_SLOTS 4096u
struct req {
	MPI_Request h; /* MPI_REQUEST_NULL: empty */
	struct gt_cct_node *node;
	struct gt_thread *t;
	uint8_t recv, world;
};
static _Thread_local struct req *req_map;
static atomic_ullong reqs_unlinked; /* relaxed: a count for the log */

static unsigned req__slot(MPI_Request h)
{
	uint64_t k = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;

	return (unsigned)(k >> 40) & (REQ_SLOTS - 1);
}

static void req__put(MPI_Request h, const struct gt_mpi_call *c, int recv)
{
	unsigned i, n;

	if (h == MPI_REQUEST_NULL)
		return;
	if (!req_map) {
		req_map = malloc(REQ_SLOTS * sizeof(*req_map));
		if (!req_map)
			goto out_unlinked;
		for (i = 0; i < REQ_SLOTS; i++)
			req_map[i].h = MPI_REQUEST_NULL;
	}
	for (i = req__slot(h), n = 0; n < REQ_SLOTS; i = (i + 1) & (REQ_SLOTS - 1), n++) {
		if (req_map[i].h == MPI_REQUEST_NULL || req_map[i].h == h) {
			req_map[i] = (struct req){ h, c->node, c->t, (uint8_t)recv, (uint8_t)c->world };
			return;
		}
	}
out_unlinked:
	atomic_fetch_add_explicit(&reqs_unlinked, 1, memory_order_relaxed);
}

/* Takes h's entry out into *out: 1, or 0 when h is not linked. */
static int req__take(MPI_Request h, struct req *out)
{
	unsigned i, j, n;

	if (!req_map || h == MPI_REQUEST_NULL)
		return 0;
	for (i = req__slot(h), n = 0; n < REQ_SLOTS; i = (i + 1) & (REQ_SLOTS - 1), n++) {
		if (req_map[i].h == MPI_REQUEST_NULL)
			return 0;
		if (req_map[i].h == h)
			break;
	}
	if (n == REQ_SLOTS)
		return 0;
	*out = req_map[i];
	/* Backward shift: entries after i that probed past it move up. */
	for (j = (i + 1) & (REQ_SLOTS - 1); req_map[j].h != MPI_REQUEST_NULL; j = (j + 1) & (REQ_SLOTS - 1)) {
		unsigned home = req__slot(req_map[j].h);

		/* j's home lies cyclically in (i, j]: it stays. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		req_map[i] = req_map[j];
		i = j;
	}
	req_map[i].h = MPI_REQUEST_NULL;
	return 1;
}

/* ---- helpers of the table's pre and post ---- */

/* The bytes of @count elements of @type (0 for none or an error). */
long long gt_mpi__bytes(long long count, MPI_Datatype type)
{
	int size = 0;

	/* A null type would reach the fatal error handler of MPI_COMM_WORLD. */
	if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
		return 0;
	return count * size;
}

long long gt_mpi__status_bytes(const MPI_Status *status)
{
	int n = 0;

	if (PMPI_Get_count(status, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return n;
}

void gt_mpi__comm(struct gt_mpi_call *c, MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &c->size) != MPI_SUCCESS ||
	    PMPI_Comm_rank(comm, &c->rank) != MPI_SUCCESS) {
		c->size = c->rank = 0;
		return;
	}
	c->comm = comm;
	c->has_comm = 1;
	c->world = comm == MPI_COMM_WORLD;
}

static long long mpi__sum(const int *v, int n)
{
	long long s = 0;

	for (int i = 0; v && i < n; i++)
		s += v[i];
	return s;
}

static MPI_Status *mpi__status(struct gt_mpi_call *c, MPI_Status *s)
{
	if (!c->on)
		return s;
	c->stp = s == MPI_STATUS_IGNORE ? &c->st : s;
	return c->stp;
}

/* The requests before the call: a completion nulls those it completes. */
void gt_mpi__reqs(struct gt_mpi_call *c, int n, const MPI_Request *r)
{
	if (n <= 0)
		return;
	if (n > GT_MPI_STACK_REQS) {
		c->heap = malloc((size_t)n * (sizeof(MPI_Request) + sizeof(MPI_Status)));
		if (!c->heap)
			return;
		c->reqs = c->heap;
		c->sts = (MPI_Status *)(c->reqs + n);
	} else {
		c->reqs = c->req_stack;
		c->sts = c->st_stack;
	}
	if (r) /* NULL: the caller fills them (the Fortran bindings) */
		memcpy(c->reqs, r, (size_t)n * sizeof(*r));
	c->nreqs = n;
}

/* The statuses the call fills: the program's, or the layer's when it
 * passed MPI_STATUSES_IGNORE (and the requests could be copied). */
static MPI_Status *mpi__statuses(struct gt_mpi_call *c, MPI_Status *s)
{
	if (!c->on || !c->reqs) {
		c->sts = NULL;
		return s;
	}
	if (s != MPI_STATUSES_IGNORE)
		c->sts = s;
	return c->sts;
}

/* A request of c->reqs[i] completed with status @s. */
static void mpi__completed(struct gt_mpi_call *c, int i, const MPI_Status *s)
{
	struct req r;
	long long bytes;

	if (!c->reqs || i < 0 || i >= c->nreqs || !req__take(c->reqs[i], &r) || !r.recv || !s)
		return;
	bytes = gt_mpi__status_bytes(s);
	/* The start's node when this thread made it (its tree is this
	 * thread's to write), else the completion's. */
	if (r.t == c->t && r.node)
		gt_cct__add(&c->t->cct, r.node, GT_M_MPI_BYTES_RECV, (uint64_t)bytes, 0);
	else
		c->recv += bytes;
	if (r.world)
		gt_mpi_waits__received(c, s->MPI_SOURCE, s->MPI_TAG);
}

void gt_mpi__completed_one(struct gt_mpi_call *c, int rc, int i, int flag)
{
	if (rc == MPI_SUCCESS && flag && i != MPI_UNDEFINED)
		mpi__completed(c, i, c->stp);
}

void gt_mpi__completed_all(struct gt_mpi_call *c, int rc, int flag)
{
	if (rc != MPI_SUCCESS || !flag || !c->sts)
		return;
	for (int i = 0; i < c->nreqs; i++)
		mpi__completed(c, i, &c->sts[i]);
}

static void mpi__completed_some(struct gt_mpi_call *c, int rc, int n, const int *idx)
{
	if (rc != MPI_SUCCESS || n == MPI_UNDEFINED || !c->sts)
		return;
	for (int k = 0; k < n; k++)
		mpi__completed(c, idx[k], &c->sts[k]);
}

void gt_mpi__received(struct gt_mpi_call *c, int rc)
{
	if (rc != MPI_SUCCESS || !c->stp)
		return;
	c->recv += gt_mpi__status_bytes(c->stp);
	if (c->world && c->stp->MPI_SOURCE >= 0)
		gt_mpi_waits__received(c, c->stp->MPI_SOURCE, c->stp->MPI_TAG);
}

void gt_mpi__started(struct gt_mpi_call *c, int rc, MPI_Request *r, int recv)
{
	if (rc == MPI_SUCCESS && r && c->t)
		req__put(*r, c, recv);
}

/* ---- Init and Finalize ---- */

void gt_mpi__after_init(struct gt_mpi_call *c, int rc)
{
	/* Open MPI's count of programs in the job (mpirun A : B). */
	const char *ctx = getenv("OMPI_NUM_APP_CTX");
	char version[MPI_MAX_LIBRARY_VERSION_STRING], *nl;
	int size = 0, len = 0, on;

	(void)c;
	if (rc != MPI_SUCCESS || PMPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS)
		return;
	if (PMPI_Get_library_version(version, &len) == MPI_SUCCESS) {
		if ((nl = strchr(version, ',')) || (nl = strchr(version, '\n')))
			*nl = 0;
		gt_tool__set_fact("mpi_library", version);
	}
	/*
	 * Waits across ranks take collectives of the tool's own, which every
	 * rank must join: one program in the job (the same command on every
	 * rank, so all under the tool), unless the user turned them off. Of
	 * several (mpirun A : B), some may run without the tool: a collective
	 * of the tool's would never complete.
	 */
	on = gt_config.mpi_waits && (!ctx || atoi(ctx) <= 1);
	if (gt_config.mpi_waits && !on)
		gt_info("mpi", "%s programs in one job of %d ranks: waits across ranks are not computed", ctx, size);
	if (on) {
		gt_mpi_waits__init();
		gt_sample__add_hook(mpi__sample);
	}
	atomic_store_explicit(&waits_on, on, memory_order_release);
}

void gt_mpi__before_finalize(struct gt_mpi_call *c)
{
	uint64_t n = atomic_load_explicit(&reqs_unlinked, memory_order_relaxed);

	if (gt_mpi__waits_on())
		gt_mpi_waits__finalize(c);
	if (n)
		gt_info("mpi", "%llu requests were started with the thread's map full: their receives' bytes are "
			       "charged at their completion", (unsigned long long)n);
}

void gt_mpi__before_comm_free(struct gt_mpi_call *c, MPI_Comm comm)
{
	if (gt_mpi__waits_on())
		gt_mpi_waits__comm_free(c, comm);
}

/* ---- a call ---- */

/*
 * Opens the call's region. 1 when the tool sees the call (c->on): then the
 * thread is inside gt_thread__enter until mpi__begin. A call the tool sees
 * with no region (no thread record, the region stack full) still counts for
 * the wait states, whose collectives every rank must make alike.
 */
int gt_mpi__enter(struct gt_mpi_call *c, enum gt_mpi_id id, uintptr_t ra, uintptr_t key)
{
	struct gt_thread *t;

	c->on = 0;
	c->id = id;
	c->t = NULL;
	c->node = c->work = NULL;
	c->sent = c->recv = 0;
	c->has_comm = c->size = c->rank = c->world = 0;
	c->comm = MPI_COMM_NULL;
	c->has_peer = 0;
	c->root = -1;
	c->stp = NULL;
	c->nreqs = 0;
	c->reqs = NULL;
	c->sts = NULL;
	c->heap = NULL;
	pthread_once(&resolve_once, mpi__resolve);
	if (!linked || gt_tool__start() || gt_tool__stopping())
		return 0;
	c->on = 1;
	t = gt_thread__self(GT_THREAD_OTHER);
	if (!t)
		return 1;
	gt_thread__enter(t);
	c->t = t;
	work__take(c);
	c->node = gt_region__open(t, GT_REGION_MPI, labels[id], 0, GT_REGION_CALL, ra, key);
	return 1;
}

void gt_mpi__begin(struct gt_mpi_call *c)
{
	if (c->t)
		gt_thread__leave(c->t);
	c->t0 = gt_clock__now();
	/* Too little work since the last collective: none (WORK_MIN_SHARE). */
	if (c->work && c->work_since && c->work_ns * WORK_MIN_SHARE < c->t0 - c->work_since)
		c->work = NULL;
}

void gt_mpi__end(struct gt_mpi_call *c)
{
	c->t1 = gt_clock__now();
	if (c->t)
		gt_thread__enter(c->t);
}

void gt_mpi__leave(struct gt_mpi_call *c, enum gt_mpi_class cls)
{
	struct gt_thread *t = c->t;

	if (c->has_peer && c->world && c->peer >= 0 && gt_mpi__waits_on() &&
	    (cls == GT_MPI_SEND || cls == GT_MPI_SENDRECV || cls == GT_MPI_START))
		gt_mpi_waits__sent(c);
	if (t && c->node) {
		gt_region__close(t, GT_REGION_MPI, 0, NULL);
		if (c->sent)
			gt_cct__add(&t->cct, c->node, GT_M_MPI_BYTES_SENT, (uint64_t)c->sent, 0);
		if (c->recv)
			gt_cct__add(&t->cct, c->node, GT_M_MPI_BYTES_RECV, (uint64_t)c->recv, 0);
		if (c->has_comm)
			gt_cct__add(&t->cct, c->node, GT_M_MPI_COMM_RANKS, (uint64_t)c->size, 0);
	}
	if (c->has_comm && gt_mpi__waits_on() &&
	    (cls == GT_MPI_COLL || cls == GT_MPI_COLL_1N || cls == GT_MPI_COLL_N1))
		gt_mpi_waits__collective(c, cls);
	if (t) {
		if (cls == GT_MPI_COLL || cls == GT_MPI_COLL_1N || cls == GT_MPI_COLL_N1)
			work__reset(c->t1); /* the next collective's work starts now */
		gt_thread__leave(t);
	}
	free(c->heap);
}

/* ---- the wrappers ---- */

#define X(name, cls, params, args, pre, post)                                                       \
	GT_MPI_EXPORT int MPI_##name params                                                         \
	{                                                                                           \
		struct gt_mpi_call c;                                                               \
		int rc;                                                                             \
                                                                                                    \
		if (gt_mpi__enter(&c, GT_MPI_ID_##name, GT_MPI_CALLER)) {                                             \
			pre;                                                                        \
			gt_mpi__begin(&c);                                                             \
		}                                                                                   \
		if (!real_##name)                                                                   \
			*(void **)&real_##name = mpi__sym(#name);                                   \
		rc = real_##name ? real_##name args : MPI_ERR_INTERN;                               \
		if (c.on) {                                                                         \
			gt_mpi__end(&c);                                                               \
			post;                                                                       \
			gt_mpi__leave(&c, GT_MPI_##cls);                                               \
		}                                                                                   \
		return rc;                                                                          \
	}
GT_MPI_CALLS(X)
#undef X
