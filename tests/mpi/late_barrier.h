/*
 * A checked MPI_Barrier for the MPI tests (layouts_check.c, parked_check.c,
 * setup_at_check.c): rank `late` arrives late_us microseconds late, then
 * every rank learns when it arrived (an MPI_Bcast on comm: a second served
 * collective) and compares with when it left itself, on the node's
 * monotonic clock (the includer defines _DEFAULT_SOURCE, for usleep).
 * Collective over comm, with the same late everywhere;
 * 1 when this rank left before the late rank arrived.
 */
#ifndef TOPSYNC_TESTS_MPI_LATE_BARRIER_H
#define TOPSYNC_TESTS_MPI_LATE_BARRIER_H

#include <time.h>
#include <unistd.h>

#include <mpi.h>

static inline double late_barrier_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int late_barrier_left_early(MPI_Comm comm, int late, unsigned late_us)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == late)
        usleep(late_us);
    double arrived = late_barrier_now();
    MPI_Barrier(comm);
    double left = late_barrier_now(), late_arrival = arrived;
    MPI_Bcast(&late_arrival, 1, MPI_DOUBLE, late, comm);
    return left < late_arrival;
}

#endif
