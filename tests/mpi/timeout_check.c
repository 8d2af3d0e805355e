/* Liveness under MPI: with TOPSYNC_TIMEOUT set, rank 1 dies (SIGKILL) or
 * hangs (SIGSTOP) in the middle of a run of barriers; the other ranks must
 * end, through MPI_Abort, with a message naming rank 1, within the timeout,
 * instead of hanging. usage: timeout_check kill|stop|diverge;
 * TIMEOUT_CHECK_VICTIM=R makes rank R the one (default 1).
 * diverge: after 20 barriers, every rank broadcasts 2 ints from rank 0,
 * the victim spelling them as one element of a derived type (an equal type
 * signature, which topsync does not support: its broadcast goes to the
 * MPI's own while the others' is topsync's), then all reduce; the abort
 * must name the broadcast, where the ranks diverged, not the reduce that
 * timed out (issue 56 item 3). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int stop = argc > 1 && !strcmp(argv[1], "stop");
    const char *victim_env = getenv("TIMEOUT_CHECK_VICTIM");
    int victim = victim_env ? atoi(victim_env) : 1;
    if (argc > 1 && !strcmp(argv[1], "diverge")) {
        for (int i = 0; i < 20; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        MPI_Datatype two_ints;
        MPI_Type_contiguous(2, MPI_INT, &two_ints);
        MPI_Type_commit(&two_ints);
        int pair[2] = {rank, rank}, sum = 0;
        if (rank == victim)
            MPI_Bcast(pair, 1, two_ints, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(pair, 2, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Reduce(&pair[0], &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        /* a non-root may leave a reduce early; the root, without the
         * victim's part, must not. Then no MPI_Finalize: the root's abort
         * ends the job (Open MPI 4.1's mpirun did not, 1 run in 5, while
         * ranks waited in MPI_Finalize) */
        fprintf(stderr, "timeout_check: rank %d left the reduce%s\n", rank,
                rank == 0 ? ": WRONG" : "");
        sleep(120);
        return 1;
    }
    for (int i = 0; i < 1000; i++) {
        if (rank == victim && i == 50) {
            fprintf(stderr, "timeout_check: rank %d %s itself now\n", rank,
                    stop ? "stops" : "kills");
            fflush(stderr);
            raise(stop ? SIGSTOP : SIGKILL);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fprintf(stderr, "timeout_check: rank %d got through: WRONG\n", rank);
    MPI_Finalize();
    return 0;
}
