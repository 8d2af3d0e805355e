/*
 * Threads summing a small vector with topsync_allreduce, every result
 * checked, then a broadcast and a reduce. Prints "coll_threads: 4
 * threads, 1000 allreduces, right".
 *
 *   cc coll_threads.c $(pkg-config --cflags --libs topsync) -lpthread
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <topsync.h>

#define NTHREADS 4
#define CALLS 1000

static topsync_coll_t *coll;
static int wrong;

static void *worker(void *arg)
{
    unsigned rank = (unsigned)(size_t)arg;
    for (int k = 0; k < CALLS; k++) {
        /* README: begin coll_threads_allreduce */
        double mine[2] = {(double)rank, 1.0}, sum[2];
        if (topsync_allreduce(coll, rank, mine, sum, 2, TOPSYNC_TYPE_DOUBLE, TOPSYNC_OP_SUM) < 0) {
            fprintf(stderr, "topsync: %s\n", topsync_error_message());
            exit(1);
        }
        /* every thread: sum[0] == 0 + 1 + ... + (n-1), sum[1] == n, the same bits */
        /* README: end */
        if (sum[0] != NTHREADS * (NTHREADS - 1) / 2 || sum[1] != NTHREADS)
            __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    }
    /* README: begin coll_threads_bcast */
    char word[16] = "";
    if (rank == 2)
        snprintf(word, sizeof word, "from %u", rank);
    topsync_bcast(coll, rank, word, sizeof word, 2); /* root 2's bytes everywhere */
    long one = 1, count = 0;
    topsync_reduce(coll, rank, &one, &count, 1, TOPSYNC_TYPE_INT64, TOPSYNC_OP_SUM, 0);
    /* README: end */
    if (word[5] != '2' || (rank == 0 && count != NTHREADS))
        __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    /* README: begin coll_threads_create */
    if (topsync_coll_create(&coll, NTHREADS, NULL) < 0) { /* NULL: defaults + environment */
        fprintf(stderr, "topsync: %s\n", topsync_error_message());
        return 1;
    }
    /* README: end */
    pthread_t tid[NTHREADS];
    for (unsigned r = 0; r < NTHREADS; r++)
        pthread_create(&tid[r], NULL, worker, (void *)(size_t)r);
    for (unsigned r = 0; r < NTHREADS; r++)
        pthread_join(tid[r], NULL);
    topsync_coll_destroy(coll);
    printf("coll_threads: %d threads, %d allreduces, %s\n", NTHREADS, CALLS,
           wrong ? "WRONG" : "right");
    return wrong != 0;
}
