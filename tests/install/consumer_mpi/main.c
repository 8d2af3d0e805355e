/* A consumer of an installed libtopsync-mpi: its MPI_Barrier must be
 * topsync's (linked before the MPI library). */
#include <mpi.h>
#include <stdio.h>

#include <topsync/mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 100; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    /* topsync_mpi_describe says which barrier ran: proof that the
     * MPI_Barrier called above was topsync's */
    if (rank == 0)
        printf("mpi consumer: %s\n", topsync_mpi_describe(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
