/* MPI_Abort on a communicator other than MPI_COMM_WORLD while the other
 * ranks wait in MPI_Barrier(MPI_COMM_WORLD) (topsync's node barrier when
 * preloaded or linked): the job must end as it does natively.
 *
 *   abort_comm_check sub|inter
 *
 * sub: the ranks of even world rank form a communicator, world rank 2
 * aborts on it. inter: an intercommunicator between the even and the odd
 * ranks, world rank 1 aborts on it. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int inter = argc > 1 && !strcmp(argv[1], "inter");
    MPI_Comm half, target;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (inter) {
        /* leaders: world rank 0 (even half) and 1 (odd half) */
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &target);
    } else {
        target = half;
    }
    for (int i = 0; i < 50; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(half);
        MPI_Barrier(target);
    }
    int aborter = inter ? 1 : 2 % size;
    if (rank == aborter) {
        fprintf(stderr, "abort_comm_check: rank %d aborts on the %s communicator\n", rank,
                inter ? "inter" : "sub");
        usleep(200 * 1000); /* the others are in the barrier by now */
        MPI_Abort(target, 3);
        /* MPICH's MPI_Abort on an intercommunicator can return (seen with
         * a spinning peer): end this process as an abort would */
        fprintf(stderr, "abort_comm_check: MPI_Abort returned on rank %d\n", rank);
        _exit(3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(stderr, "abort_comm_check: rank %d passed a barrier rank %d never entered: WRONG\n",
            rank, aborter);
    MPI_Finalize();
    return 1;
}
