/*
 * A PMPI tool for Fortran programs: it wraps the gfortran mangling of
 * MPI_BARRIER and calls the profiling name, pmpi_barrier_. Preloaded before
 * or after libtopsync-mpi (tests/mpi/run_mpi_test.sh case "tools"), it must
 * see every barrier of barrier_f.f90 while topsync serves them. Prints
 * "count_tool_f: barrier N" at exit.
 */
#include <stdio.h>

#include <mpi.h>

void pmpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);

static int barriers;

void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr)
{
    barriers++;
    pmpi_barrier_(comm, ierr);
}

__attribute__((destructor)) static void report(void)
{
    printf("count_tool_f: barrier %d\n", barriers);
    fflush(stdout);
}
