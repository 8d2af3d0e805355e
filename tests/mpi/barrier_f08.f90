! MPI_Barrier from Fortran 2008 (`use mpi_f08`), with and without ierror.
program barrier_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, i, counter
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  counter = 0
  do i = 1, 1000
    if (mod(i, 2) == 0) then
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      if (ierr /= MPI_SUCCESS) stop 1
    else
      call MPI_Barrier(MPI_COMM_WORLD)
    end if
    counter = counter + 1
  end do
  if (rank == 0) print '(I0," passed, 0 failed")', counter
  call MPI_Finalize()
end program barrier_f08
