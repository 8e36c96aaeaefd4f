/* SPDX-License-Identifier: MIT */
#ifndef GT_MPI_CALLS_H
#define GT_MPI_CALLS_H

/*
 * The MPI functions the layer wraps: the one list. mpi/pmpi.c generates from
 * it each wrapper MPI_<name> (exported, in front of the MPI library when the
 * tool is preloaded), the pointer to the PMPI_<name> it calls, the labels
 * "<mpi MPI_<name>>" and the classes.
 *
 * X(name, class, params, args, pre, post)
 *   class   what the call is, for wait states and requests (enum gt_mpi_class):
 *           SEND, RECV, SENDRECV (blocking point-to-point), START (a
 *           non-blocking start), DONE (a completion: Wait*, Test*), COLL (a
 *           collective where every rank waits for the last: Barrier,
 *           Allreduce...), COLL_1N (the root's data goes to all: Bcast,
 *           Scatter), COLL_N1 (all to the root: Reduce, Gather), PROBE, OTHER
 *           (Init, Finalize, communicators).
 *   params  the C binding's parameters, as the MPI library's mpi.h declares
 *           them: a wrong one fails to compile against it.
 *   args    what the wrapper passes to PMPI_<name>: the parameters, except a
 *           status the layer needs to read (STATUS(s), STATUSES(n, s)),
 *           which it substitutes when the program passed MPI_STATUS_IGNORE.
 *   pre     runs after the region opened, before the call: the bytes known
 *           beforehand (SENT, RECV), the communicator (COMM), the send's
 *           peer (PEER), the requests a completion may complete (REQS).
 *   post    runs after the call, before the region closes (rc: its result).
 * Both see the parameters by name and `c`, the call's state (mpi-internal.h).
 */
#define GT_MPI_CALLS(X)                                                                           \
	X(Init, OTHER, (int *argc, char ***argv), (argc, argv), (void)0,                                \
	  gt_mpi__after_init(&c, rc))                                                                    \
	X(Init_thread, OTHER, (int *argc, char ***argv, int required, int *provided),                  \
	  (argc, argv, required, provided), (void)0, gt_mpi__after_init(&c, rc))                        \
	X(Finalize, OTHER, (void), (), gt_mpi__before_finalize(&c), (void)0)                           \
	X(Send, SEND, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), \
	  (buf, count, type, dest, tag, comm), (COMM(comm), SENT(count, type), PEER(dest, tag)), (void)0) \
	X(Ssend, SEND, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), \
	  (buf, count, type, dest, tag, comm), (COMM(comm), SENT(count, type), PEER(dest, tag)), (void)0) \
	X(Rsend, SEND, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), \
	  (buf, count, type, dest, tag, comm), (COMM(comm), SENT(count, type), PEER(dest, tag)), (void)0) \
	X(Bsend, SEND, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), \
	  (buf, count, type, dest, tag, comm), (COMM(comm), SENT(count, type), PEER(dest, tag)), (void)0) \
	X(Isend, START,                                                                                 \
	  (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,             \
	   MPI_Request *req),                                                                            \
	  (buf, count, type, dest, tag, comm, req), (COMM(comm), SENT(count, type), PEER(dest, tag)),   \
	  STARTED(req, 0))                                                                               \
	X(Issend, START,                                                                                \
	  (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,             \
	   MPI_Request *req),                                                                            \
	  (buf, count, type, dest, tag, comm, req), (COMM(comm), SENT(count, type), PEER(dest, tag)),   \
	  STARTED(req, 0))                                                                               \
	X(Recv, RECV,                                                                                   \
	  (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,                 \
	   MPI_Status *status),                                                                          \
	  (buf, count, type, source, tag, comm, STATUS(status)), COMM(comm), RECEIVED(rc))              \
	X(Irecv, START,                                                                                 \
	  (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,                 \
	   MPI_Request *req),                                                                            \
	  (buf, count, type, source, tag, comm, req), COMM(comm), STARTED(req, 1))                      \
	X(Sendrecv, SENDRECV,                                                                           \
	  (const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,             \
	   int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status),     \
	  (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, STATUS(status)),   \
	  (COMM(comm), SENT(scount, stype), PEER(dest, stag)), RECEIVED(rc))                            \
	X(Wait, DONE, (MPI_Request *req, MPI_Status *status), (req, STATUS(status)), REQS(1, req),       \
	  COMPLETED_ONE(rc, 0, 1))                                        \
	X(Waitall, DONE, (int n, MPI_Request reqs[], MPI_Status statuses[]),                            \
	  (n, reqs, STATUSES(n, statuses)), REQS(n, reqs), COMPLETED_ALL(rc, 1))                        \
	X(Waitany, DONE, (int n, MPI_Request reqs[], int *index, MPI_Status *status),                   \
	  (n, reqs, index, STATUS(status)), REQS(n, reqs), COMPLETED_ONE(rc, *index, 1))                 \
	X(Waitsome, DONE,                                                                               \
	  (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]),             \
	  (n, reqs, outcount, indices, STATUSES(n, statuses)), REQS(n, reqs),                            \
	  COMPLETED_SOME(rc, *outcount, indices))                                                        \
	X(Test, DONE, (MPI_Request *req, int *flag, MPI_Status *status), (req, flag, STATUS(status)),   \
	  REQS(1, req), COMPLETED_ONE(rc, 0, *flag))                                                     \
	X(Testall, DONE, (int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]),                 \
	  (n, reqs, flag, STATUSES(n, statuses)), REQS(n, reqs), COMPLETED_ALL(rc, *flag))               \
	X(Testany, DONE, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status),        \
	  (n, reqs, index, flag, STATUS(status)), REQS(n, reqs), COMPLETED_ONE(rc, *index, *flag))       \
	X(Testsome, DONE,                                                                               \
	  (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]),             \
	  (n, reqs, outcount, indices, STATUSES(n, statuses)), REQS(n, reqs),                            \
	  COMPLETED_SOME(rc, *outcount, indices))                                                        \
	X(Probe, PROBE, (int source, int tag, MPI_Comm comm, MPI_Status *status),                       \
	  (source, tag, comm, status), COMM(comm), (void)0)                                              \
	X(Iprobe, PROBE, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),           \
	  (source, tag, comm, flag, status), COMM(comm), (void)0)                                        \
	X(Barrier, COLL, (MPI_Comm comm), (comm), COMM(comm), (void)0)                                  \
	X(Bcast, COLL_1N, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),              \
	  (buf, count, type, root, comm),                                                                \
	  (COMM(comm), ROOTED(root, SENT(count, type), RECV(count, type))), (void)0)                     \
	X(Reduce, COLL_N1,                                                                                 \
	  (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,             \
	   MPI_Comm comm),                                                                               \
	  (sbuf, rbuf, count, type, op, root, comm),                                                     \
	  (COMM(comm), SENT(count, type), ROOTED(root, RECV(count, type), (void)0)), (void)0)           \
	X(Allreduce, COLL,                                                                              \
	  (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),       \
	  (sbuf, rbuf, count, type, op, comm), (COMM(comm), SENT(count, type), RECV(count, type)),      \
	  (void)0)                                                                                       \
	X(Allgather, COLL,                                                                              \
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,                    \
	   MPI_Datatype rtype, MPI_Comm comm),                                                           \
	  (sbuf, scount, stype, rbuf, rcount, rtype, comm),                                              \
	  (COMM(comm), SENT_OR_IN_PLACE(sbuf, scount, stype, rcount, rtype),                             \
	   RECV((long long)rcount * c.size, rtype)),                                                     \
	  (void)0)                                                                                       \
	X(Allgatherv, COLL,                                                                             \
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],           \
	   const int displs[], MPI_Datatype rtype, MPI_Comm comm),                                       \
	  (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),                                     \
	  (COMM(comm), SENT_OR_IN_PLACE(sbuf, scount, stype, rcounts[c.rank], rtype),                    \
	   RECV(SUM(rcounts, c.size), rtype)),                                                           \
	  (void)0)                                                                                       \
	X(Alltoall, COLL,                                                                               \
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,                    \
	   MPI_Datatype rtype, MPI_Comm comm),                                                           \
	  (sbuf, scount, stype, rbuf, rcount, rtype, comm),                                              \
	  (COMM(comm), SENT_OR_IN_PLACE(sbuf, (long long)scount * c.size, stype,                         \
				     (long long)rcount * c.size, rtype),                                 \
	   RECV((long long)rcount * c.size, rtype)),                                                     \
	  (void)0)                                                                                       \
	X(Alltoallv, COLL,                                                                              \
	  (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,  \
	   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm),                 \
	  (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),                          \
	  (COMM(comm), SENT_OR_IN_PLACE(sbuf, SUM(scounts, c.size), stype, SUM(rcounts, c.size), rtype), \
	   RECV(SUM(rcounts, c.size), rtype)),                                                           \
	  (void)0)                                                                                       \
	X(Gather, COLL_N1,                                                                                 \
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,                    \
	   MPI_Datatype rtype, int root, MPI_Comm comm),                                                 \
	  (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),                                        \
	  (COMM(comm), SENT_OR_IN_PLACE(sbuf, scount, stype, rcount, rtype),                             \
	   ROOTED(root, RECV((long long)rcount * c.size, rtype), (void)0)),                              \
	  (void)0)                                                                                       \
	X(Scatter, COLL_1N,                                                                                \
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,                    \
	   MPI_Datatype rtype, int root, MPI_Comm comm),                                                 \
	  (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),                                        \
	  (COMM(comm), ROOTED(root, SENT((long long)scount * c.size, stype), (void)0),                  \
	   RECV_UNLESS_IN_PLACE(rbuf, rcount, rtype)),                                        \
	  (void)0)                                                                                       \
	X(Reduce_scatter, COLL,                                                                         \
	  (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,             \
	   MPI_Comm comm),                                                                               \
	  (sbuf, rbuf, rcounts, type, op, comm),                                                         \
	  (COMM(comm), SENT(SUM(rcounts, c.size), type), RECV(rcounts[c.rank], type)), (void)0)         \
	X(Comm_dup, OTHER, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm), (void)0, (void)0)       \
	X(Comm_split, OTHER, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm),                    \
	  (comm, color, key, newcomm), (void)0, (void)0)                                                 \
	X(Comm_free, OTHER, (MPI_Comm *comm), (comm), gt_mpi__before_comm_free(&c, *comm), (void)0)   \
	X(Comm_disconnect, OTHER, (MPI_Comm *comm), (comm), gt_mpi__before_comm_free(&c, *comm), (void)0)

#endif
