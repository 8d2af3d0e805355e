! MPI_Barrier from Fortran (mpif.h-style `use mpi` bindings): with
! TOPSYNC_VERBOSE=2 the library prints a line when it sets the communicator
! up, which the test driver looks for.
program barrier_f
  use mpi
  implicit none
  integer :: ierr, rank, i, counter
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  counter = 0
  do i = 1, 1000
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) stop 1
    counter = counter + 1
  end do
  if (rank == 0) print '(I0," passed, 0 failed")', counter
  call MPI_Finalize(ierr)
end program barrier_f
