! SPDX-License-Identifier: MIT
! MPI through the Fortran bindings (mpif.h): the counts and bytes of each call.
program ring
  implicit none
  include 'mpif.h'
  integer :: rank, size, ierr, i, left, right, req(2)
  integer :: status(MPI_STATUS_SIZE)
  integer :: sbuf(16), rbuf(64)
  double precision :: x, y, ds(32), dr(32)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  sbuf = rank
  ds = 1.0d0
  do i = 1, 5
    x = rank
    call MPI_ALLREDUCE(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_SEND(sbuf, 16, MPI_INTEGER, right, 7, MPI_COMM_WORLD, ierr)
    call MPI_RECV(rbuf, 64, MPI_INTEGER, left, 7, MPI_COMM_WORLD, status, ierr)
    call MPI_IRECV(dr, 32, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, req(1), ierr)
    call MPI_ISEND(ds, 32, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD, req(2), ierr)
    call MPI_WAITALL(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
  if (rank == 0) print '(a,i0,a,f5.1)', 'ring: ', size, ' ranks, sum ', y
end program ring
