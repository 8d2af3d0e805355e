/*
 * The program under a PMPI tool (count_tool.c) and libtopsync-mpi in both
 * preload orders (tests/mpi/run_mpi_test.sh case "tools"): one window
 * made and freed, then ROUNDS rounds of a ring exchange (MPI_Irecv,
 * MPI_Isend, MPI_Waitall) and MPI_Barrier(MPI_COMM_WORLD). Every message's
 * contents are checked; the barrier is checked by a value each rank puts
 * in its right neighbour's window before the barrier and reads after it.
 * Prints "N passed, M failed" from rank 0 (the failures of all ranks).
 *   usage: tool_check ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int cell = -1;
    MPI_Win win;
    MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);

    int failed = 0, passed = 0;
    for (int round = 0; round < rounds; round++) {
        int out = rank * 100000 + round, in = -1;
        MPI_Request requests[2];
        MPI_Status statuses[2];
        MPI_Irecv(&in, 1, MPI_INT, left, round, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(&out, 1, MPI_INT, right, round, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, statuses);
        if (in == left * 100000 + round)
            passed++;
        else
            failed++;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all_failed = 0, all_passed = 0;
    MPI_Reduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&passed, &all_passed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%d passed, %d failed\n", all_passed, all_failed);
        fflush(stdout);
    }
    MPI_Finalize();
    return all_failed != 0;
}
