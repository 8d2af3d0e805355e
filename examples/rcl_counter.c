/*
 * Remote Core Locking: worker threads increment counters under one RCL lock;
 * the increments run on the server's core. The README shows the part
 * between the README markers.
 *
 *   cc rcl_counter.c $(pkg-config --cflags --libs topsync) -lpthread
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <topsync.h>

enum { NCOUNTERS = 8, NWORKERS = 4, ROUNDS = 1000 };

static long *counts;
static topsync_rcl_lock_t *lock;

/* README: begin rcl-cs */
/* A critical section: runs on the server's core, one at a time per server. */
static void *bump(void *arg)
{
    counts[(long)arg]++;
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < ROUNDS * NCOUNTERS; i++)
        topsync_rcl_execute(lock, bump, (void *)(i % NCOUNTERS)); /* returns bump's result */
    return NULL;
}
/* README: end */

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, topsync_error_message());
        exit(1);
    }
}

int main(void)
{
    /* README: begin rcl-setup */
    topsync_rcl_runtime_t *rt;
    topsync_rcl_server_t *server;
    check(topsync_rcl_runtime_create(&rt, NULL), "runtime");      /* this machine's topology */
    counts = topsync_rcl_calloc(rt, NCOUNTERS, sizeof *counts);    /* RCLAwareMalloc */
    check(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &server), "server"); /* RCLLockInitNUMA */
    check(topsync_rcl_lock_create(server, &lock), "lock");

    pthread_t tid[NWORKERS];
    for (int t = 0; t < NWORKERS; t++) /* RCLHierarchicalAffinity: each near the server */
        check(topsync_rcl_thread_create(rt, &tid[t], NULL, worker, NULL), "worker");
    for (int t = 0; t < NWORKERS; t++)
        pthread_join(tid[t], NULL);

    topsync_rcl_lock_destroy(lock);
    topsync_rcl_server_stop(server);
    /* README: end */
    long total = 0;
    for (int c = 0; c < NCOUNTERS; c++)
        total += counts[c];
    topsync_rcl_free(rt, counts);
    topsync_rcl_runtime_destroy(rt);
    printf("rcl_counter: %ld increments (expected %d)\n", total, NWORKERS * ROUNDS * NCOUNTERS);
    return total == (long)NWORKERS * ROUNDS * NCOUNTERS ? 0 : 1;
}
