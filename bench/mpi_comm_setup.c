/*
 * The cost of a new communicator's set-up (issue 35 item 4): ITERS times,
 * make a communicator from MPI_COMM_WORLD, call MPI_Barrier on it three
 * times and free it. The second barrier is the one libtopsync-mpi sets the
 * communicator up in (TOPSYNC_MPI_SETUP_AT, 2 by default; the first is the
 * MPI's own), timed alone; the whole cycle is timed too. Run natively and
 * preloaded (scripts/mpi_setup_cost.sh). Prints, from rank 0, the means
 * over the iterations of the slowest rank:
 *
 *   <kind> setup_us <second barrier> cycle_us <make + 3 barriers + free>
 *   first_us <first barrier>
 *
 *   usage: mpi_comm_setup [dup|split|halves] [ITERS]
 *   dup: MPI_Comm_dup; split: MPI_Comm_split keeping every rank in order
 *   (the same group as the world); halves: two halves (another group).
 * The design: docs/design.md section 8.18.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *kind = argc > 1 ? argv[1] : "dup";
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    if (strcmp(kind, "dup") && strcmp(kind, "split") && strcmp(kind, "halves")) {
        if (rank == 0)
            fprintf(stderr, "mpi_comm_setup: kind '%s': valid: dup, split, halves\n", kind);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (iters < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_comm_setup: ITERS must be at least 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double times[3] = {0, 0, 0};
    for (int i = 0; i < iters; i++) {
        double start = MPI_Wtime();
        MPI_Comm comm;
        if (!strcmp(kind, "dup"))
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        else
            MPI_Comm_split(MPI_COMM_WORLD, !strcmp(kind, "split") ? 0 : rank < size / 2, rank,
                           &comm);
        double before = MPI_Wtime();
        MPI_Barrier(comm);
        times[2] += MPI_Wtime() - before;
        before = MPI_Wtime();
        MPI_Barrier(comm);
        times[0] += MPI_Wtime() - before;
        MPI_Barrier(comm);
        MPI_Comm_free(&comm);
        times[1] += MPI_Wtime() - start;
    }
    double slowest[3];
    MPI_Reduce(times, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s setup_us %.1f cycle_us %.1f first_us %.1f\n", kind, slowest[0] / iters * 1e6,
               slowest[1] / iters * 1e6, slowest[2] / iters * 1e6);
    MPI_Finalize();
    return 0;
}
