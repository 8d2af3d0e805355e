/*
 * An ordinary MPI program for the oversubscription measurements
 * (scripts/mpi_oversub.sh, docs/results.md): loops on MPI_Barrier over
 * MPI_COMM_WORLD (SPLIT = 0), over pairs of ranks (SPLIT = 1,
 * MPI_Comm_split(world, rank / 2)) or over two halves (SPLIT = 2,
 * MPI_Comm_split(world, rank < size / 2)), every sub-communicator's barriers
 * running at the same time as the others'. Prints the slowest rank's mean
 * latency in microseconds, and the context switches per barrier of the
 * whole job (every rank's voluntary and involuntary switches, getrusage,
 * summed, over the barrier count). Not built by CMake: compile it with the
 * MPI wrapper, mpicc.openmpi -O2 -o pairs scripts/mpi_pairs.c, and run it
 * with and without LD_PRELOAD=libtopsync-mpi-*.so.
 *
 * The barrier count: ITERATIONS, or with SECONDS instead (a number with a
 * point, e.g. 0.5) as many as fit that time, from a timed probe of 100
 * barriers (max over ranks), between 100 and 1000000. Short runs measure
 * where the launcher happened to leave unbound ranks more than the
 * barrier: the oversubscribed cases want half a second.
 *
 *   usage: pairs SPLIT [ITERATIONS | SECONDS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long switches(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int split = argc > 1 ? atoi(argv[1]) : 0;
    const char *count = argc > 2 ? argv[2] : "2000";
    int iters = atoi(count);
    double budget = strchr(count, '.') ? atof(count) : 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (split == 1)
        MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &comm);
    else if (split == 2)
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &comm);
    for (int i = 0; i < 100; i++)
        MPI_Barrier(comm);
    if (budget > 0) {
        double probe = MPI_Wtime(), worst_probe;
        for (int i = 0; i < 100; i++)
            MPI_Barrier(comm);
        probe = (MPI_Wtime() - probe) / 100;
        MPI_Allreduce(&probe, &worst_probe, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double fit = budget / (worst_probe > 0 ? worst_probe : 1e-9);
        iters = fit < 100 ? 100 : fit > 1e6 ? 1000000 : (int)fit;
    }
    long cs = switches();
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(comm);
    t = (MPI_Wtime() - t) / iters * 1e6;
    cs = switches() - cs;
    double worst;
    long all_cs;
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cs, &all_cs, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.2f %.2f\n", worst, (double)all_cs / iters);
    MPI_Finalize();
    return 0;
}
