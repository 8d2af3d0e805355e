/*
 * An ordinary MPI program for docs/results.md (oversubscribed jobs): loops on
 * MPI_Barrier over MPI_COMM_WORLD (PAIRS = 0) or over pairs of ranks
 * (PAIRS = 1, MPI_Comm_split(world, rank / 2)); prints the slowest rank's
 * mean latency in microseconds. Not built by CMake: compile it with the MPI
 * wrapper, mpicc.openmpi -O2 -o pairs scripts/mpi_pairs.c, and run it with and
 * without LD_PRELOAD=libtopsync-mpi-*.so.
 *
 *   usage: pairs PAIRS [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pairs = argc > 1 && atoi(argv[1]);
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (pairs)
        MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &comm);
    for (int i = 0; i < 100; i++)
        MPI_Barrier(comm);
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(comm);
    t = (MPI_Wtime() - t) / iters * 1e6;
    double worst;
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.2f\n", worst);
    MPI_Finalize();
    return 0;
}
