/* SPDX-License-Identifier: MIT */
/*
 * The Fortran bindings (mpif.h and `use mpi`). Open MPI's libmpi_mpifh
 * implements mpi_send_ and the others by calling PMPI_Send, not MPI_Send:
 * the C wrappers never see a Fortran program's calls. So the Fortran
 * symbols are wrapped too, in the four spellings compilers use (mpi_send_,
 * mpi_send__, mpi_send, MPI_SEND), each measured as the C function of the
 * same name (the same region label) around the MPI library's own Fortran
 * function, found next after this library.
 *
 * Handles are converted with the f2c functions; statuses the program
 * ignores are replaced with the layer's, as in C. MPI_IN_PLACE of Fortran
 * is not told from a buffer: a collective given it counts the bytes its
 * send arguments say.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "mpi/mpi-internal.h"

/* Fortran statuses are MPI_Status's bytes as integers in Open MPI. */
#define F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a status is whole Fortran integers");

/*
 * X(lower, UPPER, Name, class, params, args, pre, post): Name is the C
 * function's (its id and label); params end with the error code, `ierr`.
 */
#define GT_MPI_FORTRAN(X)                                                                           \
	X(init, INIT, Init, OTHER, (MPI_Fint * ierr), (ierr), (void)0, gt_mpi__after_init(&c, rc))      \
	X(init_thread, INIT_THREAD, Init_thread, OTHER,                                               \
	  (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr), (required, provided, ierr),        \
	  (void)0, gt_mpi__after_init(&c, rc))                                                           \
	X(finalize, FINALIZE, Finalize, OTHER, (MPI_Fint * ierr), (ierr), gt_mpi__before_finalize(&c),  \
	  (void)0)                                                                                       \
	X(send, SEND, Send, SEND,                                                                       \
	  (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,   \
	   MPI_Fint *ierr),                                                                              \
	  (buf, count, type, dest, tag, comm, ierr),                                                     \
	  (COMM(F_COMM(comm)), SENT(*count, F_TYPE(type)), PEER(*dest, *tag)), (void)0)                  \
	X(ssend, SSEND, Ssend, SEND,                                                                    \
	  (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,   \
	   MPI_Fint *ierr),                                                                              \
	  (buf, count, type, dest, tag, comm, ierr),                                                     \
	  (COMM(F_COMM(comm)), SENT(*count, F_TYPE(type)), PEER(*dest, *tag)), (void)0)                  \
	X(isend, ISEND, Isend, START,                                                                   \
	  (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,   \
	   MPI_Fint *req, MPI_Fint *ierr),                                                               \
	  (buf, count, type, dest, tag, comm, req, ierr),                                                \
	  (COMM(F_COMM(comm)), SENT(*count, F_TYPE(type)), PEER(*dest, *tag)), F_STARTED(req, 0))       \
	X(recv, RECV, Recv, RECV,                                                                       \
	  (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, \
	   MPI_Fint *status, MPI_Fint *ierr),                                                            \
	  (buf, count, type, source, tag, comm, F_STATUS(status), ierr), COMM(F_COMM(comm)),            \
	  (F_STATUS_IN(), RECEIVED(rc)))                                                                 \
	X(irecv, IRECV, Irecv, START,                                                                   \
	  (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, \
	   MPI_Fint *req, MPI_Fint *ierr),                                                               \
	  (buf, count, type, source, tag, comm, req, ierr), COMM(F_COMM(comm)), F_STARTED(req, 1))       \
	X(sendrecv, SENDRECV, Sendrecv, SENDRECV,                                                       \
	  (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest, MPI_Fint *stag, void *rbuf,    \
	   MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm,          \
	   MPI_Fint *status, MPI_Fint *ierr),                                                            \
	  (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, F_STATUS(status),  \
	   ierr),                                                                                        \
	  (COMM(F_COMM(comm)), SENT(*scount, F_TYPE(stype)), PEER(*dest, *stag)),                       \
	  (F_STATUS_IN(), RECEIVED(rc)))                                                                 \
	X(wait, WAIT, Wait, DONE, (MPI_Fint * req, MPI_Fint *status, MPI_Fint *ierr),                   \
	  (req, F_STATUS(status), ierr), F_REQS(1, req), (F_STATUS_IN(), COMPLETED_ONE(rc, 0, 1)))      \
	X(waitall, WAITALL, Waitall, DONE,                                                              \
	  (MPI_Fint * n, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr),                           \
	  (n, reqs, F_STATUSES(statuses), ierr), F_REQS(*n, reqs),                                       \
	  (F_STATUSES_IN(*n), COMPLETED_ALL(rc, 1)))                                                     \
	X(test, TEST, Test, DONE, (MPI_Fint * req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr),   \
	  (req, flag, F_STATUS(status), ierr), F_REQS(1, req),                                           \
	  (F_STATUS_IN(), COMPLETED_ONE(rc, 0, *flag)))                                                  \
	X(probe, PROBE, Probe, PROBE,                                                                   \
	  (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),         \
	  (source, tag, comm, status, ierr), COMM(F_COMM(comm)), (void)0)                                \
	X(iprobe, IPROBE, Iprobe, PROBE,                                                                \
	  (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *status,          \
	   MPI_Fint *ierr),                                                                              \
	  (source, tag, comm, flag, status, ierr), COMM(F_COMM(comm)), (void)0)                          \
	X(barrier, BARRIER, Barrier, COLL, (MPI_Fint * comm, MPI_Fint *ierr), (comm, ierr),             \
	  COMM(F_COMM(comm)), (void)0)                                                                   \
	X(bcast, BCAST, Bcast, COLL_1N,                                                                 \
	  (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr), \
	  (buf, count, type, root, comm, ierr),                                                          \
	  (COMM(F_COMM(comm)), ROOTED(*root, SENT(*count, F_TYPE(type)), RECV(*count, F_TYPE(type)))),  \
	  (void)0)                                                                                       \
	X(reduce, REDUCE, Reduce, COLL_N1,                                                              \
	  (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *root,       \
	   MPI_Fint *comm, MPI_Fint *ierr),                                                              \
	  (sbuf, rbuf, count, type, op, root, comm, ierr),                                               \
	  (COMM(F_COMM(comm)), SENT(*count, F_TYPE(type)),                                               \
	   ROOTED(*root, RECV(*count, F_TYPE(type)), (void)0)),                                          \
	  (void)0)                                                                                       \
	X(allreduce, ALLREDUCE, Allreduce, COLL,                                                        \
	  (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,       \
	   MPI_Fint *ierr),                                                                              \
	  (sbuf, rbuf, count, type, op, comm, ierr),                                                     \
	  (COMM(F_COMM(comm)), SENT(*count, F_TYPE(type)), RECV(*count, F_TYPE(type))), (void)0)        \
	X(allgather, ALLGATHER, Allgather, COLL,                                                        \
	  (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,                 \
	   MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr),                                             \
	  (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr),                                        \
	  (COMM(F_COMM(comm)), SENT(*scount, F_TYPE(stype)),                                             \
	   RECV((long long)*rcount * c.size, F_TYPE(rtype))),                                            \
	  (void)0)                                                                                       \
	X(alltoall, ALLTOALL, Alltoall, COLL,                                                           \
	  (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,                 \
	   MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr),                                             \
	  (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr),                                        \
	  (COMM(F_COMM(comm)), SENT((long long)*scount * c.size, F_TYPE(stype)),                         \
	   RECV((long long)*rcount * c.size, F_TYPE(rtype))),                                            \
	  (void)0)                                                                                       \
	X(gather, GATHER, Gather, COLL_N1,                                                              \
	  (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,                 \
	   MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),                             \
	  (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr),                                  \
	  (COMM(F_COMM(comm)), SENT(*scount, F_TYPE(stype)),                                             \
	   ROOTED(*root, RECV((long long)*rcount * c.size, F_TYPE(rtype)), (void)0)),                    \
	  (void)0)                                                                                       \
	X(scatter, SCATTER, Scatter, COLL_1N,                                                           \
	  (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,                 \
	   MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),                             \
	  (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr),                                  \
	  (COMM(F_COMM(comm)), ROOTED(*root, SENT((long long)*scount * c.size, F_TYPE(stype)), (void)0), \
	   RECV(*rcount, F_TYPE(rtype))),                                                                \
	  (void)0)                                                                                       \
	X(comm_free, COMM_FREE, Comm_free, OTHER, (MPI_Fint * comm, MPI_Fint *ierr), (comm, ierr),      \
	  gt_mpi__before_comm_free(&c, F_COMM(comm)), (void)0)

/* The MPI library's Fortran function of that name, in whichever spelling
 * it defines, next after this library. */
static void *f__sym(const char *lower, const char *upper)
{
	static const char *const forms[] = { "%s_", "%s__", "%s" };
	char sym[64];
	void *p;

	for (unsigned i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(sym, sizeof(sym), forms[i], lower);
		if ((p = dlsym(RTLD_NEXT, sym)))
			return p;
	}
	return dlsym(RTLD_NEXT, upper);
}

/* A status the call fills: the program's, or @mine when it passed
 * MPI_F_STATUS_IGNORE. */
static MPI_Fint *f__status(struct gt_mpi_call *c, MPI_Fint *mine, MPI_Fint *s)
{
	if (!c->on)
		return s;
	return s == MPI_F_STATUS_IGNORE ? mine : s;
}

/* The Fortran requests before the call, as C handles in c->reqs. */
static void f__reqs(struct gt_mpi_call *c, int n, const MPI_Fint *r)
{
	gt_mpi__reqs(c, n, NULL);
	for (int i = 0; c->reqs && i < n; i++)
		c->reqs[i] = PMPI_Request_f2c(r[i]);
}

/* Statuses the call fills: the program's, else c->sts's bytes (as many as
 * n Fortran statuses, converted in place after the call). */
static MPI_Fint *f__statuses(struct gt_mpi_call *c, MPI_Fint *s)
{
	if (!c->on || !c->sts || s != MPI_F_STATUSES_IGNORE)
		return s;
	return (MPI_Fint *)c->sts;
}

/* After the call: the statuses in C, into c->sts. */
static void f__statuses_in(struct gt_mpi_call *c, const MPI_Fint *f, int n)
{
	if (!c->sts)
		return;
	if (f == MPI_F_STATUSES_IGNORE)
		f = (const MPI_Fint *)c->sts;
	for (int i = 0; i < n && i < c->nreqs; i++) {
		MPI_Status st;

		/* In place, index by index: status i's Fortran and C forms are
		 * the same bytes, read before written. */
		PMPI_Status_f2c(f + (size_t)i * F_STATUS_SIZE, &st);
		c->sts[i] = st;
	}
}

static void f__started(struct gt_mpi_call *c, int rc, const MPI_Fint *r, int recv)
{
	MPI_Request h;

	if (rc != MPI_SUCCESS)
		return;
	h = PMPI_Request_f2c(*r);
	gt_mpi__started(c, rc, &h, recv);
}

#define F_COMM(p) PMPI_Comm_f2c(*(p))
#define F_TYPE(p) PMPI_Type_f2c(*(p))
#define F_STATUS(s) (fstatus_arg = f__status(&c, fstatus, s))
#define F_STATUS_IN()                                                          \
	((void)(rc == MPI_SUCCESS ? (PMPI_Status_f2c(fstatus_arg, &c.st), c.stp = &c.st) : NULL))
#define F_REQS(n, r) f__reqs(&c, n, r)
#define F_STATUSES(s) (fstatuses_arg = f__statuses(&c, s))
#define F_STATUSES_IN(n) f__statuses_in(&c, fstatuses_arg, n)
#define F_STARTED(r, recv) f__started(&c, rc, r, recv)

#define X(lower, upper, name, cls, params, args, pre, post)                                           \
	static void(*freal_##lower) params;                                                           \
	GT_MPI_EXPORT void mpi_##lower##_ params;                                                     \
	void mpi_##lower##_ params                                                                    \
	{                                                                                             \
		struct gt_mpi_call c;                                                                 \
		MPI_Fint fstatus[F_STATUS_SIZE], *fstatus_arg = NULL, *fstatuses_arg = NULL;          \
		int rc;                                                                               \
                                                                                                      \
		(void)fstatus;                                                                        \
		(void)fstatus_arg;                                                                    \
		(void)fstatuses_arg;                                                                  \
		if (gt_mpi__enter(&c, GT_MPI_ID_##name, GT_MPI_CALLER)) {                                            \
			pre;                                                                          \
			gt_mpi__begin(&c);                                                            \
		}                                                                                     \
		if (!freal_##lower)                                                                   \
			*(void **)&freal_##lower = f__sym("mpi_" #lower, "MPI_" #upper);              \
		if (freal_##lower)                                                                    \
			freal_##lower args;                                                           \
		else                                                                                  \
			*ierr = MPI_ERR_INTERN;                                                       \
		rc = (int)*ierr;                                                                      \
		(void)rc;                                                                             \
		if (c.on) {                                                                           \
			gt_mpi__end(&c);                                                              \
			post;                                                                         \
			gt_mpi__leave(&c, GT_MPI_##cls);                                              \
		}                                                                                     \
	}                                                                                             \
	GT_MPI_EXPORT void mpi_##lower##__ params __attribute__((alias("mpi_" #lower "_")));           \
	GT_MPI_EXPORT void mpi_##lower params __attribute__((alias("mpi_" #lower "_")));               \
	GT_MPI_EXPORT void MPI_##upper params __attribute__((alias("mpi_" #lower "_")));
GT_MPI_FORTRAN(X)
#undef X
