/* Liveness under MPI: with TOPSYNC_TIMEOUT set, rank 1 dies (SIGKILL) or
 * hangs (SIGSTOP) in the middle of a run of barriers; the other ranks must
 * end, through MPI_Abort, with a message naming rank 1, within the timeout,
 * instead of hanging. usage: timeout_check kill|stop; TIMEOUT_CHECK_VICTIM=R
 * makes rank R the one (default 1). */
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
