/*
 * The barrier benchmark's harness (design.md section 4), shared by
 * topsync-bench barrier and topsync-tune: participants bound as given,
 * warm-up, K timed barriers, a run's figure is the maximum over
 * participants of the mean latency; R runs summarised by the protocol.
 * Threads through any bench_barrier (topsync or a peer); processes through
 * a process-shared topsync barrier, one forked process per participant.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <topsync.h>

#include "bench.h"

void bench_bind_rank(unsigned rank, void *ctx)
{
    bench_binding *b = ctx;
    if (b && b->sets && b->sets[rank])
        hwloc_set_cpubind(topsync_topology_hwloc(b->topo), b->sets[rank], HWLOC_CPUBIND_THREAD);
}

/* ---------------------------------------------------------------------- */
/* topsync as a bench_barrier.                                               */

void bench_topsync_options(const bench_topsync_arg *a, topsync_barrier_options_t *o)
{
    topsync_barrier_options_init(o);
    o->algorithm = a->algorithm;
    o->wait = a->wait;
    o->topology = a->binding->topo;
    o->cpusets = (const hwloc_const_bitmap_t *)a->binding->sets;
}

void *bench_topsync_create(unsigned n, const void *arg)
{
    topsync_barrier_options_t o;
    bench_topsync_options(arg, &o);
    topsync_barrier_t *b;
    if (topsync_barrier_create(&b, n, &o) < 0) {
        fprintf(stderr, "topsync-bench: %s: %s\n", o.algorithm, topsync_error_message());
        return NULL;
    }
    return b;
}

void bench_topsync_wait(void *state, unsigned rank)
{
    topsync_barrier_wait(state, rank);
}

_Atomic uint64_t bench_topsync_switches;

void bench_topsync_destroy(void *state)
{
    /* relaxed: a count read after the run's threads were joined */
    atomic_fetch_add_explicit(&bench_topsync_switches, topsync_barrier_switches(state),
                              memory_order_relaxed);
    topsync_barrier_destroy(state);
}

/* ---------------------------------------------------------------------- */
/* Threads.                                                                  */

struct harness {
    const bench_barrier *bb;
    void *state;
    uint64_t warmup, iterations;
    double *per_thread;
    bench_binding *binding;
};

struct worker {
    struct harness *h;
    unsigned rank;
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    struct harness *h = w->h;
    bench_bind_rank(w->rank, h->binding);
    for (uint64_t i = 0; i < h->warmup; i++)
        h->bb->wait_fn(h->state, w->rank);
    uint64_t t0 = ts_monotonic_ns();
    for (uint64_t i = 0; i < h->iterations; i++)
        h->bb->wait_fn(h->state, w->rank);
    h->per_thread[w->rank] = (double)(ts_monotonic_ns() - t0) / (double)h->iterations;
    return NULL;
}

double bench_thread_run(const bench_barrier *bb, unsigned n, uint64_t warmup, uint64_t iterations,
                        bench_binding *binding)
{
    struct harness h = {bb, NULL, warmup, iterations, calloc(n, sizeof(double)), binding};
    pthread_t *tids = calloc(n, sizeof *tids);
    struct worker *ws = calloc(n, sizeof *ws);
    double worst = -1;
    h.state = bb->create(n, bb->arg);
    if (!h.state || !h.per_thread || !tids || !ws)
        goto out;
    for (unsigned r = 0; r < n; r++) {
        ws[r] = (struct worker){&h, r};
        if (pthread_create(&tids[r], NULL, worker_main, &ws[r]) != 0) {
            fprintf(stderr, "topsync-bench: cannot create thread %u\n", r);
            exit(1);
        }
    }
    for (unsigned r = 0; r < n; r++)
        pthread_join(tids[r], NULL);
    worst = 0;
    for (unsigned r = 0; r < n; r++)
        if (h.per_thread[r] > worst)
            worst = h.per_thread[r];
out:
    if (h.state)
        bb->destroy(h.state);
    free(h.per_thread);
    free(tids);
    free(ws);
    return worst;
}

/* ---------------------------------------------------------------------- */
/* Processes.                                                               */

/* One forked process per participant, each calling wait(ctx, rank): the
 * worst participant's mean, or -1. */
static double process_run(unsigned n, uint64_t warmup, uint64_t iterations, bench_binding *binding,
                          void (*wait)(void *, unsigned), void *ctx)
{
    size_t bytes = ((size_t)n * sizeof(double) + 4095) / 4096 * 4096;
    double *means = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (means == MAP_FAILED)
        return -1;
    pid_t *pids = calloc(n, sizeof *pids);
    unsigned started = 0;
    int failed = !pids;
    fflush(NULL); /* the children must not print the parent's buffers */
    for (unsigned r = 0; r < n && !failed; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            failed = 1;
            break;
        }
        if (pid == 0) {
            if (binding && binding->sets && binding->sets[r])
                hwloc_set_cpubind(topsync_topology_hwloc(binding->topo), binding->sets[r],
                                  HWLOC_CPUBIND_PROCESS);
            for (uint64_t i = 0; i < warmup; i++)
                wait(ctx, r);
            uint64_t t0 = ts_monotonic_ns();
            for (uint64_t i = 0; i < iterations; i++)
                wait(ctx, r);
            means[r] = (double)(ts_monotonic_ns() - t0) / (double)iterations;
            _exit(0);
        }
        pids[started++] = pid;
    }
    if (failed) /* a participant never came: the others would wait forever */
        for (unsigned r = 0; r < started; r++)
            kill(pids[r], SIGKILL);
    for (unsigned r = 0; r < started; r++) {
        int status;
        if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
            failed = 1;
    }
    double worst = failed ? -1 : 0;
    for (unsigned r = 0; r < n && !failed; r++)
        if (means[r] > worst)
            worst = means[r];
    munmap(means, bytes);
    free(pids);
    return worst;
}

static void topsync_process_wait(void *ctx, unsigned rank)
{
    topsync_barrier_wait(ctx, rank);
}

double bench_process_run(const topsync_barrier_options_t *options, unsigned n, uint64_t warmup,
                         uint64_t iterations, bench_binding *binding, char *resolved,
                         size_t resolved_len)
{
    topsync_barrier_options_t o = *options;
    o.process_shared = 1;
    topsync_barrier_t *b;
    if (topsync_barrier_create(&b, n, &o) < 0) {
        fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
        return -1;
    }
    if (resolved)
        snprintf(resolved, resolved_len, "%s", topsync_barrier_algorithm(b));
    double worst = process_run(n, warmup, iterations, binding, topsync_process_wait, b);
    bench_topsync_destroy(b);
    return worst;
}

static void pthread_process_wait(void *ctx, unsigned rank)
{
    (void)rank;
    pthread_barrier_wait(ctx);
}

double bench_pthread_process_run(unsigned n, uint64_t warmup, uint64_t iterations,
                                 bench_binding *binding)
{
    pthread_barrier_t *b =
        mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return -1;
    pthread_barrierattr_t attr;
    double worst = -1;
    if (pthread_barrierattr_init(&attr) == 0 &&
        pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == 0 &&
        pthread_barrier_init(b, &attr, n) == 0) {
        worst = process_run(n, warmup, iterations, binding, pthread_process_wait, b);
        pthread_barrier_destroy(b);
    }
    munmap(b, sizeof *b);
    return worst;
}
