/*
 * The simplest use: a barrier between threads, algorithm and wait policy
 * from the defaults and the environment (TOPSYNC_BARRIER, TOPSYNC_WAIT).
 *
 *   cc barrier_threads.c $(pkg-config --cflags --libs topsync) -lpthread
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <topsync.h>

enum { NTHREADS = 4, EPISODES = 1000 };

static topsync_barrier_t *b;
static int cell[NTHREADS];
static int errors;

static void *participant(void *arg)
{
    unsigned rank = (unsigned)(long)arg;
    for (int e = 1; e <= EPISODES; e++) {
        cell[rank] = e;
        /* README: begin barrier-wait */
        topsync_barrier_wait(b, rank); /* in thread `rank` (0 .. nthreads-1) */
        /* README: end */
        for (int r = 0; r < NTHREADS; r++) /* everybody's write is visible now */
            if (cell[r] < e)
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
        topsync_barrier_wait(b, rank); /* nobody writes episode e + 1 before all read e */
    }
    return NULL;
}

int main(void)
{
    unsigned nthreads = NTHREADS;
    /* README: begin barrier-create */
    if (topsync_barrier_create(&b, nthreads, NULL) < 0) { /* NULL: defaults + environment */
        fprintf(stderr, "topsync: %s\n", topsync_error_message());
        exit(1);
    }
    /* README: end */
    pthread_t t[NTHREADS];
    for (long r = 0; r < NTHREADS; r++)
        pthread_create(&t[r], NULL, participant, (void *)r);
    for (int r = 0; r < NTHREADS; r++)
        pthread_join(t[r], NULL);
    printf("barrier_threads: %s, %d episodes, %d errors\n", topsync_barrier_algorithm(b),
           EPISODES, errors);
    topsync_barrier_destroy(b);
    return errors ? 1 : 0;
}
