! SPDX-License-Identifier: MIT
!
! OpenACC constructs at known call sites with known counts and bytes, built
! by gfortran (GCC's OpenACC runtime, libgomp): transport::saxpy runs a
! compute construct 3 times per step, transport::scale once, for STEPS
! steps; transport::stage moves x with enter data, update and exit data
! once per step. The data clauses name N real(4) elements (4*N bytes) each:
! saxpy copies x in and y in and out, scale y in and out.
module transport
  implicit none
  integer, parameter :: n = 100000
  integer, parameter :: steps = 10
  real(4) :: x(n), y(n)
contains
  subroutine saxpy(a)
    real(4), intent(in) :: a
    integer :: i

    !$acc parallel loop copyin(x) copy(y)
    do i = 1, n
      y(i) = y(i) + a * x(i)
    end do
  end subroutine saxpy

  subroutine scale(s)
    real(4), intent(in) :: s
    integer :: i

    !$acc parallel loop copy(y)
    do i = 1, n
      y(i) = y(i) * s
    end do
  end subroutine scale

  subroutine stage()
    !$acc enter data copyin(x)
    !$acc update device(x)
    !$acc exit data delete(x)
  end subroutine stage
end module transport

program sites
  use transport
  implicit none
  integer :: i, step, k

  do i = 1, n
    x(i) = real(mod(i - 1, 10), 4)
    y(i) = 1.0
  end do
  do step = 1, steps
    do k = 1, 3
      call saxpy(0.5)
    end do
    call scale(0.5)
    call stage()
  end do
  print '(a,i0,a,f0.3)', 'openacc: ', steps, ' steps, checksum ', sum(real(y, 8))
end program sites
