/*
 * Deferred set-up (TOPSYNC_MPI_SETUP_AT): ten duplicates of MPI_COMM_WORLD,
 * duplicate i used for 1 + i % 3 rounds of a barrier and a bcast (2, 4 or
 * 6 served collectives), then freed. Run preloaded with TOPSYNC_VERBOSE=2,
 * the driver counts the set-ups (one "topsync-mpi: comm of" line per
 * set-up, from rank 0): 10 with the default (set up at the second served
 * collective) and with TOPSYNC_MPI_SETUP_AT=1, 6 with 3, 3 with 5, and one
 * more for MPI_COMM_WORLD, set up in MPI_Init. Each barrier
 * is checked: nobody leaves before the last arrives (one rank arrives 20 ms
 * late; every rank's exit time, on the node's monotonic clock, must follow
 * the late rank's arrival).
 *
 * A duplicate keeps the ranks of MPI_COMM_WORLD in order: its set-up reuses
 * the world's layout (nodes, bindings, collectives; one verbose line says
 * so). With the argument "diverge", rank 1 changes its TOPSYNC_* variables
 * (TOPSYNC_NODE_SPLIT=1, the default) before the sixth duplicate: from
 * there the ranks' kept layouts no longer agree, and every set-up must
 * gather afresh, on every rank (else the ranks' collectives mismatch and
 * the job hangs): 5 reuses, not 10. With "invalid", rank 1 sets
 * TOPSYNC_NODE_SPLIT=0 instead: the sixth duplicate's set-up must report
 * it and abort, although the five before validated the variables (the
 * set-up does not parse variables again that hash as the last valid ones).
 *
 *   usage: setup_at_check [diverge|invalid]
 */
#define _DEFAULT_SOURCE /* usleep, in late_barrier.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "late_barrier.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int diverge = argc > 1 && !strcmp(argv[1], "diverge");
    int invalid = argc > 1 && !strcmp(argv[1], "invalid");
    for (int i = 0; i < 10; i++) {
        if ((diverge || invalid) && i == 5 && rank == 1)
            setenv("TOPSYNC_NODE_SPLIT", invalid ? "0" : "1", 1);
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        for (int b = 0; b <= i % 3; b++) {
            failures += late_barrier_left_early(dup, (i + b) % size, 20000);
        }
        MPI_Comm_free(&dup);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", all ? 0 : 1, all);
    MPI_Finalize();
    return all != 0;
}
