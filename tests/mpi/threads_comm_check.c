/*
 * MPI_THREAD_MULTIPLE: THREADS threads per rank, each owning a duplicate of
 * MPI_COMM_WORLD, create communicators from it in a loop (MPI_Comm_create_group,
 * MPI_Comm_split of that; or MPI_Comm_dup and MPI_Comm_create) and call
 * MPI_Barrier on each new one, while the other threads do the same. Natively
 * this is correct MPI; with topsync in MPI_Barrier it must stay so: no hang
 * (the driver runs it under a timeout, and counts /dev/shm residue).
 *
 *   threads_comm_check [create_group|dup] [THREADS] [ROUNDS]
 *
 * Prints "N passed, M failed" (the driver's convention).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>

#include <mpi.h>

static int world_rank, world_size;
static int use_dup;
static int rounds = 20;
static atomic_int failures, checks;

/* The barrier, then an exchange that tells a rank in the wrong round (a
 * barrier matched across rounds or communicators). Whether a barrier keeps
 * everyone in until the last arrives is barrier_check's business; this
 * program is about hangs under concurrent communicator creation. */
static void checked_barrier(MPI_Comm comm, int round)
{
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Barrier(comm);
    int *all = malloc((size_t)size * sizeof *all);
    MPI_Allgather(&round, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < size; i++)
        if (all[i] != round)
            atomic_fetch_add(&failures, 1);
    atomic_fetch_add(&checks, 1);
    free(all);
}

static MPI_Comm parents[64];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm mine = parents[t];
    MPI_Group group;
    MPI_Comm_group(mine, &group);
    for (int r = 0; r < rounds; r++) {
        MPI_Comm made, split;
        if (use_dup) {
            MPI_Comm dup;
            MPI_Comm_dup(mine, &dup);
            checked_barrier(dup, r);
            MPI_Comm_create(dup, group, &made);
            MPI_Comm_free(&dup);
        } else {
            MPI_Comm_create_group(mine, group, t, &made);
        }
        checked_barrier(made, r);
        int rank;
        MPI_Comm_rank(made, &rank);
        MPI_Comm_split(made, rank % 2, rank, &split);
        checked_barrier(split, r);
        MPI_Comm_free(&split);
        MPI_Comm_free(&made);
    }
    MPI_Group_free(&group);
    MPI_Comm_free(&mine);
    return NULL;
}

static void *world_barrier(void *arg)
{
    (void)arg;
    checked_barrier(MPI_COMM_WORLD, -1);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (world_rank == 0)
            printf("MPI_THREAD_MULTIPLE not provided (%d): nothing to test\n0 passed, 1 failed\n",
                   provided);
        MPI_Finalize();
        return 0;
    }
    use_dup = argc > 1 && !strcmp(argv[1], "dup");
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    rounds = argc > 3 ? atoi(argv[3]) : 20;
    if (threads < 1 || threads > 64 || rounds < 1) {
        fprintf(stderr, "usage: threads_comm_check [create_group|dup] [THREADS] [ROUNDS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_t tid[64];
    /* one parent per thread, made before the threads (collectives on one
     * communicator from several threads at once are not MPI) */
    for (int t = 0; t < threads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    /* and barriers from different threads on one communicator, one after
     * the other (MPI orders them by the join) */
    for (int t = 0; t < threads; t++) {
        pthread_create(&tid[t], NULL, world_barrier, NULL);
        pthread_join(tid[t], NULL);
    }
    int local[2] = {atomic_load(&checks), atomic_load(&failures)}, total[2];
    MPI_Reduce(local, total, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("%d passed, %d failed\n", total[0] - total[1], total[1]);
    MPI_Finalize();
    return 0;
}
