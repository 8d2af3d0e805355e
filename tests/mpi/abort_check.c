/* One rank calls MPI_Abort after a few topsync barriers: the job must end
 * (non-zero status) and leave nothing of topsync's in /dev/shm (the driver
 * compares the listing before and after). Rank 1 says it got there in
 * ABORT_CHECK_MARKER, a file: the launcher's copy of its stderr can be
 * lost when the abort tears the job down (MPICH's hydra, once in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < 100; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(dup);
    }
    if (rank == 1) {
        fprintf(stderr, "abort_check: rank 1 aborts now\n");
        const char *marker = getenv("ABORT_CHECK_MARKER");
        FILE *f = marker ? fopen(marker, "w") : NULL;
        if (f) {
            fputs("rank 1 aborts now\n", f);
            fclose(f);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* The others wait in a barrier that rank 1 never reaches. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
