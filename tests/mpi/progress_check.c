/*
 * Programs that need MPI's progress inside MPI_Barrier (issue 35), run
 * natively and with libtopsync-mpi preloaded (tests/mpi/run_mpi_test.sh
 * case "progress"; scripts/mpi_progress.sh times them):
 *
 *   irecv: rank 0 posts a 1 MiB MPI_Irecv from rank 1, enters MPI_Barrier,
 *          then waits for it; rank 1 sends (a rendezvous: it completes only
 *          once rank 0's MPI matches it, i.e. inside the barrier), then
 *          enters the barrier.
 *   bcast-irecv: rank 0 posts an 8 MiB MPI_Irecv from rank 1, then calls
 *          MPI_Bcast and MPI_Allreduce (small: topsync's), then waits for
 *          it; rank 1 joins the broadcast, sends, joins the allreduce. The
 *          allreduce's wait must still poll eagerly (issue 56 item 2).
 *   rma:   every rank but 0 does MPI_Fetch_and_op(+1) on a counter in rank
 *          0's window and MPI_Win_flush, then MPI_Barrier (passive target:
 *          without asynchronous progress, the operation completes only
 *          while rank 0's MPI runs).
 *
 * Every iteration's data is checked: the message's contents, the values
 * the fetches return and the counter at the end. Prints
 * "PATTERN us-per-iteration" from rank 0, then "N passed, M failed".
 *   usage: progress_check irecv|bcast-irecv|rma ITERATIONS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MESSAGE_INTS (1 << 18) /* 1 MiB */

static int passed, failed;

static void check(int ok, const char *what, int iteration)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        if (failed < 5)
            fprintf(stderr, "progress_check: FAILED: %s at iteration %d\n", what, iteration);
    }
}

/* rank 1 fills the message with it * step + i: every stride-th element
 * and the last are checked */
static void check_message(const int *buf, int n, int stride, int step, int it)
{
    int ok = 1;
    for (int i = 0; i < n; i += stride)
        ok &= buf[i] == it * step + i;
    ok &= buf[n - 1] == it * step + n - 1;
    check(ok, "the message's contents", it);
}

static void irecv_pattern(int rank, int iterations)
{
    int *buf = malloc(MESSAGE_INTS * sizeof *buf);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int it = 0; it < iterations; it++) {
        if (rank == 0) {
            MPI_Request req;
            memset(buf, 0xff, MESSAGE_INTS * sizeof *buf);
            MPI_Irecv(buf, MESSAGE_INTS, MPI_INT, 1, it, MPI_COMM_WORLD, &req);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            check_message(buf, MESSAGE_INTS, 997, 7, it);
        } else {
            if (rank == 1) {
                for (int i = 0; i < MESSAGE_INTS; i++)
                    buf[i] = it * 7 + i;
                MPI_Send(buf, MESSAGE_INTS, MPI_INT, 0, it, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(buf);
}

#define BIG_MESSAGE_INTS (1 << 21) /* 8 MiB */

static void bcast_irecv_pattern(int rank, int size, int iterations)
{
    int *buf = malloc(BIG_MESSAGE_INTS * sizeof *buf);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int it = 0; it < iterations; it++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank == 0) {
            memset(buf, 0xff, BIG_MESSAGE_INTS * sizeof *buf);
            MPI_Irecv(buf, BIG_MESSAGE_INTS, MPI_INT, 1, it, MPI_COMM_WORLD, &req);
        }
        int word = rank == 0 ? it : -1;
        MPI_Bcast(&word, 1, MPI_INT, 0, MPI_COMM_WORLD);
        check(word == it, "the broadcast word", it);
        if (rank == 1) {
            for (int i = 0; i < BIG_MESSAGE_INTS; i++)
                buf[i] = it * 3 + i;
            MPI_Send(buf, BIG_MESSAGE_INTS, MPI_INT, 0, it, MPI_COMM_WORLD);
        }
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        check(sum == size, "the allreduce", it);
        if (rank == 0) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            check_message(buf, BIG_MESSAGE_INTS, 4093, 3, it);
        }
    }
    free(buf);
}

static void rma_pattern(int rank, int size, int iterations)
{
    long *counter;
    MPI_Win win;
    MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &counter, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        *counter = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    long one = 1, previous = -1, last = -1;
    for (int it = 0; it < iterations; it++) {
        if (rank != 0) {
            MPI_Fetch_and_op(&one, &previous, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
            /* every other rank adds once per iteration, and this one's
             * previous add is done: the counter has grown since then */
            check(previous > last && previous < (long)(it + 1) * (size - 1), "fetched value", it);
            last = previous;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        long total = *counter;
        MPI_Win_unlock(0, win);
        check(total == (long)iterations * (size - 1), "the counter's total", iterations);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *pattern = argc > 1 ? argv[1] : "";
    int iterations = argc > 2 ? atoi(argv[2]) : 0;
    int known =
        !strcmp(pattern, "irecv") || !strcmp(pattern, "rma") || !strcmp(pattern, "bcast-irecv");
    if (!known || iterations < 1 || size < 2) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: progress_check irecv|bcast-irecv|rma ITERATIONS (at least 2 ranks)\n");
        MPI_Finalize();
        return 2;
    }
    /* a few untimed iterations: connections, the barrier's set-up */
    if (pattern[0] == 'i')
        irecv_pattern(rank, 3);
    else if (pattern[0] == 'b')
        bcast_irecv_pattern(rank, size, 3);
    else
        rma_pattern(rank, size, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (pattern[0] == 'i')
        irecv_pattern(rank, iterations);
    else if (pattern[0] == 'b')
        bcast_irecv_pattern(rank, size, iterations);
    else
        rma_pattern(rank, size, iterations);
    double us = (MPI_Wtime() - t0) * 1e6 / iterations;
    int counts[2] = {passed, failed}, sums[2];
    MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s %.3f\n", pattern, us);
        printf("%d passed, %d failed\n", sums[0], sums[1]);
    }
    MPI_Finalize();
    return 0;
}
