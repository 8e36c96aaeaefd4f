! SPDX-License-Identifier: MIT
!
! A Fortran OpenMP program with known counts, built by flang (LLVM's libomp,
! OMPT): the module procedure physics::shared_step runs one parallel do;
! physics::alpha calls it 3 times per step, physics::beta once, for STEPS
! steps, each call the same work. So the region under alpha has 3*STEPS
! instances and three times beta's CPU time. The external procedure checksum
! (flang names it checksum_, as gfortran does) runs one more region, once.
!
! With SAMPLE_TIMES=1 in the environment the program prints, on stderr, the
! wall-clock and process CPU time it measured itself around alpha's and
! beta's calls ("physics times: alpha wall_ns W cpu_ns C beta wall_ns W cpu_ns C").
module physics
  use omp_lib
  implicit none
  integer, parameter :: n = 400000
  integer, parameter :: steps = 20
  real(8) :: field(n)
  integer(8) :: wall_ns(2) = 0, cpu_ns(2) = 0
contains
  subroutine shared_step(scale)
    real(8), intent(in) :: scale
    integer :: i, k

    !$omp parallel do private(k)
    do i = 1, n
      do k = 1, 4
        field(i) = field(i) * scale + 1.0d-7 * sin(field(i))
      end do
    end do
    !$omp end parallel do
  end subroutine shared_step

  subroutine alpha()
    integer :: k
    real(8) :: w0, c0, c1

    w0 = omp_get_wtime()
    call cpu_time(c0)
    do k = 1, 3
      call shared_step(0.999999d0)
    end do
    call cpu_time(c1)
    call account(1, w0, c0, c1)
  end subroutine alpha

  subroutine beta()
    real(8) :: w0, c0, c1

    w0 = omp_get_wtime()
    call cpu_time(c0)
    call shared_step(1.000001d0)
    call cpu_time(c1)
    call account(2, w0, c0, c1)
  end subroutine beta

  subroutine account(who, w0, c0, c1)
    integer, intent(in) :: who
    real(8), intent(in) :: w0, c0, c1

    wall_ns(who) = wall_ns(who) + int((omp_get_wtime() - w0) * 1.0d9, 8)
    cpu_ns(who) = cpu_ns(who) + int((c1 - c0) * 1.0d9, 8)
  end subroutine account
end module physics

subroutine checksum(a, m, total)
  implicit none
  integer, intent(in) :: m
  real(8), intent(in) :: a(m)
  real(8), intent(out) :: total
  integer :: i

  total = 0
  !$omp parallel do reduction(+:total)
  do i = 1, m
    total = total + a(i)
  end do
  !$omp end parallel do
end subroutine checksum

program physics_demo
  use physics
  implicit none
  integer :: s, len, stat
  character(len=8) :: times
  real(8) :: total

  field = 1.0d0
  do s = 1, steps
    call alpha()
    call beta()
  end do
  call checksum(field, n, total)
  print '(a,i0,a,f14.6)', 'physics: ', steps, ' steps, checksum ', total / n
  call get_environment_variable('SAMPLE_TIMES', times, len, stat)
  if (stat == 0 .and. times(1:len) == '1') then
    write (0, '(4(a,i0))') 'physics times: alpha wall_ns ', wall_ns(1), ' cpu_ns ', cpu_ns(1), &
      ' beta wall_ns ', wall_ns(2), ' cpu_ns ', cpu_ns(2)
  end if
end program physics_demo
