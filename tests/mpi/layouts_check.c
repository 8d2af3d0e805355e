/*
 * Layouts kept per group (mpi/layouts.c) when the ranks keep different
 * ones: ROUNDS times, every rank splits MPI_COMM_WORLD with the ranks in
 * one of 15 orders in turn (the key a permutation of the rank: the group
 * differs by its order), and ranks 0 and 1 also make two communicators of
 * their pair, in both orders, that the others never see. Ranks 2 and 3
 * then keep all 15 world groups (a process keeps 16), while ranks 0 and 1,
 * with 17, have always just dropped the one needed next (the least
 * recently used): every set-up must still agree (all reuse, or all
 * gather), or the ranks' collectives mismatch. Preloaded with
 * TOPSYNC_VERBOSE=2, the driver counts the reuses: each round's pair
 * communicators after the first round's, and round 0's world order (the
 * world's own layout), 2 * (ROUNDS - 1) + 1. Each communicator's barrier is
 * checked: nobody leaves before the last arrives (a rank arrives 2 ms
 * late in turn; every rank's exit time, on the node's monotonic clock,
 * must follow the late rank's arrival), and its ranks' order is the one
 * asked for. Run natively and preloaded with TOPSYNC_MPI_SETUP_AT=1
 * (every communicator set up at its first barrier); rank 0 prints
 * "N passed, M failed".
 *
 *   usage: layouts_check [ROUNDS]   (4 ranks)
 */
#define _DEFAULT_SOURCE /* usleep, in late_barrier.h */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "late_barrier.h"

/* One barrier on comm, with its late rank; 1 when someone left early. */
static int checked_barrier(MPI_Comm comm, int late)
{
    return late_barrier_left_early(comm, late, 2000);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, passed = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 60;
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "layouts_check: 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < rounds; i++) {
        /* the (i % 15)-th permutation of 0..3: rank r gets key perm[r] */
        int perm[4], left[4] = {0, 1, 2, 3}, code = i % 15, nleft = 4;
        for (int k = 0; k < 4; k++) {
            int f = 1;
            for (int j = 2; j < nleft; j++)
                f *= j;
            int pick = code / f;
            code %= f;
            perm[k] = left[pick];
            for (int j = pick; j + 1 < nleft; j++)
                left[j] = left[j + 1];
            nleft--;
        }
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, 0, perm[rank], &comm);
        int mine;
        MPI_Comm_rank(comm, &mine);
        if (mine != perm[rank])
            failed++;
        failed += checked_barrier(comm, i % 4);
        failed += checked_barrier(comm, (i + 1) % 4);
        passed += 2;
        MPI_Comm_free(&comm);
        /* ranks 0 and 1 only: their pair, in both orders */
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
        if (pair != MPI_COMM_NULL) {
            for (int order = 0; order < 2; order++) {
                MPI_Comm ordered;
                MPI_Comm_split(pair, 0, order ? -rank : rank, &ordered);
                failed += checked_barrier(ordered, i % 2);
                passed++;
                MPI_Comm_free(&ordered);
            }
            MPI_Comm_free(&pair);
        }
    }
    int totals[2] = {passed - failed, failed}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Finalize();
    return sums[1] != 0 && rank == 0;
}
