/*
 * Ranks that reach one collective through different entry points (issue 56
 * item 1): rank 0 calls the MPI-4 large-count forms (MPI_Allreduce_c,
 * MPI_Reduce_c, MPI_Bcast_c), the others the plain ones, on MPI_COMM_WORLD
 * and on a duplicate (set up at its first calls); every result checked.
 * Prints "N passed, M failed" on rank 0. Under an MPI without the _c forms
 * (Open MPI) every rank calls the plain ones.
 *   entry_points_check [ITERATIONS]  mixed entry points
 *   entry_points_check bypass        rank 0 calls the MPI's own
 *       PMPI_Allreduce (found in the MPI library itself, as a call topsync
 *       does not serve would be) where rank 1 calls MPI_Allreduce on a new
 *       communicator: with TOPSYNC_TIMEOUT the job must abort naming it
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define BIG 1
#else
#define BIG 0
#endif

static int rank, size, failed, passed;

static void expect(int ok, const char *what, int iteration)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "rank %d: %s wrong at iteration %d\n", rank, what, iteration);
    }
}

static void allreduce(int *in, int *out, int n, MPI_Comm comm)
{
#if BIG
    if (rank == 0) {
        MPI_Allreduce_c(in, out, n, MPI_INT, MPI_SUM, comm);
        return;
    }
#endif
    MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
}

static void reduce(int *in, int *out, int n, int root, MPI_Comm comm)
{
#if BIG
    if (rank == 0) {
        MPI_Reduce_c(in, out, n, MPI_INT, MPI_SUM, root, comm);
        return;
    }
#endif
    MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, comm);
}

static void bcast(int *buf, int n, int root, MPI_Comm comm)
{
#if BIG
    if (rank == 0) {
        MPI_Bcast_c(buf, n, MPI_INT, root, comm);
        return;
    }
#endif
    MPI_Bcast(buf, n, MPI_INT, root, comm);
}

static void rounds(MPI_Comm comm, int iterations)
{
    for (int it = 0; it < iterations; it++) {
        int in[4], out[4];
        for (int k = 0; k < 4; k++)
            in[k] = rank * 10 + k + it;
        int want_sum = 0;
        for (int r = 0; r < size; r++)
            want_sum += r * 10 + it;
        allreduce(in, out, 4, comm);
        expect(out[0] == want_sum && out[3] == want_sum + 3 * size, "allreduce", it);
        int root = it % size;
        memset(out, 0, sizeof out);
        reduce(in, out, 4, root, comm);
        if (rank == root)
            expect(out[1] == want_sum + size, "reduce", it);
        int buf[4] = {rank == root ? it : -1, rank == root ? root : -1, 0, 0};
        bcast(buf, 4, root, comm);
        expect(buf[0] == it && buf[1] == root, "bcast", it);
        if (it % 3 == 0)
            MPI_Barrier(comm);
    }
}

/* The MPI's own PMPI_Allreduce, from the library that defines
 * MPI_Comm_size (which topsync does not intercept). */
static int (*mpi_own_allreduce(void))(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm)
{
    Dl_info where;
    void *mpi;
    if (!dladdr((void *)MPI_Comm_size, &where) || !where.dli_fname ||
        !(mpi = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        return NULL;
    void *fn = dlsym(mpi, "PMPI_Allreduce");
    int (*out)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    memcpy(&out, &fn, sizeof out);
    return out;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "bypass")) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        int in = 1, out = 0;
        for (int call = 0; call < 3; call++) { /* past the deferred calls */
            if (rank == 0) {
                int (*own)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) =
                    mpi_own_allreduce();
                if (!own) {
                    fprintf(stderr, "rank 0: the MPI's own PMPI_Allreduce not found\n");
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                own(&in, &out, 1, MPI_INT, MPI_SUM, comm);
            } else {
                MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
            }
        }
        printf("rank %d: the bypassed allreduce returned %d\n", rank, out);
        MPI_Comm_free(&comm);
        MPI_Finalize();
        return 0;
    }
    int iterations = argc > 1 ? atoi(argv[1]) : 200;
    rounds(MPI_COMM_WORLD, iterations);
    for (int d = 0; d < 3; d++) { /* fresh communicators: set up mid-stream */
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        rounds(comm, iterations / 4 + 3);
        MPI_Comm_free(&comm);
    }
    int totals[2] = {passed, failed}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s forms on rank 0\n%d passed, %d failed\n", BIG ? "large-count" : "plain", sums[0],
               sums[1]);
    MPI_Finalize();
    return 0;
}
