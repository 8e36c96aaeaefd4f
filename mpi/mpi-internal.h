/* SPDX-License-Identifier: MIT */
#ifndef GT_MPI_INTERNAL_H
#define GT_MPI_INTERNAL_H

/*
 * The MPI layer: wrappers of the C bindings (mpi/pmpi.c, generated from
 * mpi/calls.h) and the wait states computed across ranks (mpi/waits.c).
 *
 * Compiled against the mpi.h of the MPI library CMake found: the handles'
 * types and constants (MPI_Comm, MPI_STATUS_IGNORE, MPI_COMM_WORLD) are that
 * library's ABI, so the layer measures programs of that MPI only (Open MPI
 * 4.1 where it was written). The library never links libmpi: the PMPI_
 * functions are looked up when a wrapper is first called, which only an MPI
 * program does.
 *
 * Threads: a call's state lives on the calling thread's stack; requests are
 * kept per thread (a request completed on another thread than the one that
 * started it is counted there, its start's bytes stay where they were);
 * communicators and the point-to-point logs are per process, under one
 * mutex taken in normal context only, never across an MPI call.
 */
#include <mpi.h>
#include <stdint.h>

#include "core/unwind.h"
#include "mpi/calls.h"

/*
 * What the layer calls of the MPI library outside the wrapped functions,
 * and Open MPI's predefined handles (MPI_COMM_WORLD is &ompi_mpi_comm_world):
 * weak references, so that the library loads in a program without libmpi,
 * where they are null and no wrapper runs.
 */
#pragma weak PMPI_Allreduce
#pragma weak PMPI_Alltoall
#pragma weak PMPI_Alltoallv
#pragma weak PMPI_Comm_dup
#pragma weak PMPI_Comm_f2c
#pragma weak PMPI_Comm_free
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Comm_test_inter
#pragma weak PMPI_Get_count
#pragma weak PMPI_Get_library_version
#pragma weak PMPI_Recv
#pragma weak PMPI_Request_f2c
#pragma weak PMPI_Send
#pragma weak PMPI_Status_f2c
#pragma weak PMPI_Type_f2c
#pragma weak PMPI_Type_size
#pragma weak MPI_F_STATUS_IGNORE
#pragma weak MPI_F_STATUSES_IGNORE
#ifdef OPEN_MPI
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_int64_t
#pragma weak ompi_mpi_long
#pragma weak ompi_mpi_long_int
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_maxloc
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_sum
#pragma weak ompi_request_null
#endif

struct gt_thread;
struct gt_cct_node;

enum gt_mpi_class {
	GT_MPI_SEND,
	GT_MPI_RECV,
	GT_MPI_SENDRECV,
	GT_MPI_START,
	GT_MPI_DONE,
	GT_MPI_COLL,
	GT_MPI_COLL_1N,
	GT_MPI_COLL_N1,
	GT_MPI_PROBE,
	GT_MPI_OTHER,
};

enum gt_mpi_id {
#define X(name, cls, params, args, pre, post) GT_MPI_ID_##name,
	GT_MPI_CALLS(X)
#undef X
	GT_MPI_ID__COUNT
};

/* Requests and statuses a completion handles on the stack; more are
 * allocated, and without memory the call is only counted. */
#define GT_MPI_STACK_REQS 32

/* One wrapped call, on the caller's stack. */
struct gt_mpi_call {
	int on; /* measured: the region is open */
	enum gt_mpi_id id;
	struct gt_thread *t;
	struct gt_cct_node *node; /* the call's region */
	struct gt_cct_node *work; /* where the thread's samples fell most since its last collective */
	uint64_t work_ns, work_since; /* the CPU time they charged, since when (0: the start) */
	uint64_t t0, t1;	  /* the call into the MPI library, and its return */
	long long sent, recv;	  /* bytes */
	MPI_Comm comm;
	int has_comm, size, rank, world;
	int peer, tag, has_peer; /* a send's destination and tag (PEER) */
	int root;
	/* STATUS: the program's status, or st when it passed MPI_STATUS_IGNORE. */
	MPI_Status st, *stp;
	/* REQS: the requests as they were before the call (a completed one is
	 * set to MPI_REQUEST_NULL); STATUSES: the statuses the call fills. */
	int nreqs;
	MPI_Request *reqs;
	MPI_Status *sts;
	void *heap; /* reqs and sts when over the stack's */
	MPI_Request req_stack[GT_MPI_STACK_REQS];
	MPI_Status st_stack[GT_MPI_STACK_REQS];
};

/* ---- mpi/pmpi.c ---- */

#define GT_MPI_EXPORT __attribute__((visibility("default")))

/*
 * A wrapper's steps: gt_mpi__enter (1: the tool sees the call; its region
 * is open and the thread inside gt_thread__enter), the table's pre,
 * gt_mpi__begin (the clock, before the MPI library's function), the call,
 * gt_mpi__end, the table's post, gt_mpi__leave (closes the region, charges
 * the metrics, records a collective for the wait states).
 */
int gt_mpi__enter(struct gt_mpi_call *c, enum gt_mpi_id id, uintptr_t ra, uintptr_t key);
/* A wrapper's caller, for gt_mpi__enter: its return address into the
 * program and its frame (a call opened again there costs no unwind). */
#define GT_MPI_CALLER (uintptr_t)__builtin_return_address(0), GT_UNWIND_KEY()
void gt_mpi__begin(struct gt_mpi_call *c);
void gt_mpi__end(struct gt_mpi_call *c);
void gt_mpi__leave(struct gt_mpi_call *c, enum gt_mpi_class cls);

/* The helpers the tables' pre and post use, through the macros below
 * (those only mpi/calls.h uses are pmpi.c's own). */
long long gt_mpi__bytes(long long count, MPI_Datatype type);
long long gt_mpi__status_bytes(const MPI_Status *status);
void gt_mpi__comm(struct gt_mpi_call *c, MPI_Comm comm);
void gt_mpi__reqs(struct gt_mpi_call *c, int n, const MPI_Request *r);
void gt_mpi__completed_one(struct gt_mpi_call *c, int rc, int i, int flag);
void gt_mpi__completed_all(struct gt_mpi_call *c, int rc, int flag);
void gt_mpi__received(struct gt_mpi_call *c, int rc);
void gt_mpi__started(struct gt_mpi_call *c, int rc, MPI_Request *r, int recv);
void gt_mpi__after_init(struct gt_mpi_call *c, int rc);
void gt_mpi__before_finalize(struct gt_mpi_call *c);
void gt_mpi__before_comm_free(struct gt_mpi_call *c, MPI_Comm comm);

/* The words of the tables' pre and post (mpi/calls.h): `c` is the call. */
#define COMM(comm) gt_mpi__comm(&c, comm)
#define SENT(count, type) ((void)(c.sent += gt_mpi__bytes((long long)(count), type)))
#define RECV(count, type) ((void)(c.recv += gt_mpi__bytes((long long)(count), type)))
#define SENT_OR_IN_PLACE(sbuf, scount, stype, ipcount, iptype) \
	((sbuf) == MPI_IN_PLACE ? SENT(ipcount, iptype) : SENT(scount, stype))
#define RECV_UNLESS_IN_PLACE(rbuf, rcount, rtype) ((rbuf) == MPI_IN_PLACE ? (void)0 : RECV(rcount, rtype))
#define ROOTED(r, at_root, elsewhere) ((void)(c.root = (r)), c.rank == (r) ? (at_root) : (elsewhere))
#define SUM(v, n) mpi__sum(v, n)
#define PEER(dest, t) ((void)(c.peer = (dest), c.tag = (t), c.has_peer = 1))
#define STATUS(s) mpi__status(&c, s)
#define STATUSES(n, s) mpi__statuses(&c, s)
#define REQS(n, r) gt_mpi__reqs(&c, n, r)
#define STARTED(r, recv) gt_mpi__started(&c, rc, r, recv)
#define RECEIVED(rc) gt_mpi__received(&c, rc)
#define COMPLETED_ONE(rc, i, flag) gt_mpi__completed_one(&c, rc, i, flag)
#define COMPLETED_ALL(rc, flag) gt_mpi__completed_all(&c, rc, flag)
#define COMPLETED_SOME(rc, n, idx) mpi__completed_some(&c, rc, n, idx)

/* Whether waits across ranks are computed: every rank of the job is
 * measured (one application context), GPUTOOL_MPI_WAITS is not 0. */
int gt_mpi__waits_on(void);
/* This rank's clock minus rank 0's (0 on one host). */
int64_t gt_mpi__clock_offset(void);

/* ---- mpi/waits.c ---- */

/* Called inside gt_thread__enter on c->t, after the call returned. */
void gt_mpi_waits__collective(struct gt_mpi_call *c, enum gt_mpi_class cls);
/* A send (blocking or started) to c->peer of MPI_COMM_WORLD entered at c->t0. */
void gt_mpi_waits__sent(const struct gt_mpi_call *c);
/* A receive from @source with @tag on MPI_COMM_WORLD completed in the call c
 * (a blocking receive, or a completion of an Irecv); @group tells the
 * receives one completion call waited for together. */
void gt_mpi_waits__received(const struct gt_mpi_call *c, int source, int tag);
/* The batch of @comm before it is freed (collective over @comm). */
void gt_mpi_waits__comm_free(struct gt_mpi_call *c, MPI_Comm comm);
/* At MPI_Finalize, before PMPI_Finalize, on every rank: what remains of
 * MPI_COMM_WORLD's batch, and the late senders. */
void gt_mpi_waits__finalize(struct gt_mpi_call *c);
/* At MPI_Init: clock offsets of the ranks when they span several hosts. */
void gt_mpi_waits__init(void);

#endif
