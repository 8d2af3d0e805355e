/*
 * Node barriers of freed communicators (mpi/parked.c), taken back by a
 * later communicator of the same ranks only when every rank holds the same
 * one. ROUNDS times, with duplicates of MPI_COMM_WORLD:
 *   a: made, checked, freed: from round 1 on it takes the segment the
 *      previous round's e left (every rank parked it last);
 *   b, c: both live, checked in turn, then freed in an order that depends
 *      on the rank (even: b first; odd: c first), so that the ranks' most
 *      recently parked differ; b takes what a left, c the one parked
 *      before it (round 0: nothing, a new segment);
 *   d, e: made while the ranks' choices differ: each must make a new
 *      segment, on every rank (a rank alone taking a parked one would mix
 *      two communicators on one segment, or hang); both live, checked in
 *      turn, freed in the same order everywhere.
 * So 1 + 3 * (ROUNDS - 1) set-ups take a parked barrier (rank 0's verbose
 * line "node barrier and segment of a freed one"), 4 + 2 * (ROUNDS - 1)
 * make a segment. Each check: a barrier nobody leaves before its late rank
 * arrived (2 ms late; exit times on the node's monotonic clock), then an
 * MPI_Allreduce and an MPI_Bcast (topsync's, on the segment) whose results
 * depend on the communicator and the round, so that a stale or shared
 * segment shows. Run preloaded with TOPSYNC_MPI_SETUP_AT=1 and
 * TOPSYNC_VERBOSE=2, and natively; rank 0 prints "N passed, M failed".
 *
 *   usage: parked_check [ROUNDS]   (any number of ranks, 2 or more)
 */
#define _DEFAULT_SOURCE /* usleep, in late_barrier.h */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "late_barrier.h"

static int world_rank, world_size, passed, failed;

static void expect(int ok, const char *what, int round, char which)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "parked_check: rank %d, round %d, communicator %c: %s\n", world_rank, round,
                which, what);
    }
}

/* A barrier with a late rank, then two collectives with values of this
 * communicator and round. */
static void check(MPI_Comm comm, int round, char which)
{
    int late = (round + which) % world_size;
    expect(!late_barrier_left_early(comm, late, 2000),
           "left the barrier before the late rank arrived", round, which);

    long mine = 1000L * round + 100L * which + world_rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
    long want =
        world_size * (1000L * round + 100L * which) + (long)world_size * (world_size - 1) / 2;
    expect(sum == want, "MPI_Allreduce: wrong sum", round, which);

    int value = world_rank == late ? round * 256 + which : -1;
    MPI_Bcast(&value, 1, MPI_INT, late, comm);
    expect(value == round * 256 + which, "MPI_Bcast: wrong value", round, which);
}

static MPI_Comm dup_world(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    return comm;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    if (world_size < 2 || rounds < 1) {
        if (world_rank == 0)
            fprintf(stderr, "parked_check: 2 or more ranks, 1 or more rounds\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < rounds; i++) {
        MPI_Comm a = dup_world();
        check(a, i, 'a');
        MPI_Comm_free(&a);

        MPI_Comm b = dup_world(), c = dup_world();
        for (int k = 0; k < 2; k++) {
            check(b, i, 'b');
            check(c, i, 'c');
        }
        if (world_rank % 2) {
            MPI_Comm_free(&c);
            MPI_Comm_free(&b);
        } else {
            MPI_Comm_free(&b);
            MPI_Comm_free(&c);
        }

        MPI_Comm d = dup_world();
        check(d, i, 'd');
        MPI_Comm e = dup_world();
        for (int k = 0; k < 2; k++) {
            check(e, i, 'e');
            check(d, i, 'd');
        }
        MPI_Comm_free(&d);
        MPI_Comm_free(&e);
    }
    int totals[2] = {passed, failed}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Finalize();
    return world_rank == 0 && sums[1] != 0;
}
