/*
 * What topsync did in a job, said once at its end: every rank counts the
 * calls topsync served and those it gave to the MPI's own, and
 * MPI_Finalize's hook (finalize.c) sums them over MPI_COMM_WORLD, which
 * rank 0 prints with TOPSYNC_VERBOSE=1. The counts are per thread (no
 * shared line on the hot path), in blocks that live to the end so that a
 * thread that exited still counts. With TOPSYNC_VERBOSE set, the time in
 * topsync's calls too (two clock reads a call, only then), and the
 * switches of the node barriers (reactive, docs/design.md section 10),
 * counted once per node by the rank that decides them.
 * docs/design.md section 8.31.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "base/clock.h"
#include "node/node.h"

struct call_counts {
    /* written only by the owning thread (relaxed load and store: plain
     * moves, and no data race with the finalizing reader, which MPI orders
     * after every other thread's last call) */
    _Atomic unsigned long n[TS_MPI_CALL_KINDS];
    _Atomic uint64_t ns[TS_MPI_CALL_KINDS]; /* time in the call (TOPSYNC_VERBOSE) */
    struct call_counts *next;
};

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct call_counts *blocks; /* every thread's, under blocks_lock */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct call_counts *mine;
/* set by ts_mpi_summary: calls after it (the MPI's own inside MPI_Finalize)
 * are not counted, and no thread touches its freed block. Relaxed: MPI
 * orders every other thread's calls before MPI_Finalize. */
static atomic_bool summarized;

/* The node barriers whose switches this rank counts (its node's rank 0
 * decides them, so one per node), and what freed ones had switched. Under
 * blocks_lock: set-up and free only, never a barrier's path. */
struct tracked {
    const topsync_barrier_t *barrier;
    struct tracked *next;
};
static struct tracked *tracked;
static uint64_t switches_of_freed;

static struct call_counts *my_counts(void)
{
    struct call_counts *c = calloc(1, sizeof *c);
    if (!c)
        return NULL; /* not counted: the summary is a report, not a result */
    pthread_mutex_lock(&blocks_lock);
    c->next = blocks;
    blocks = c;
    pthread_mutex_unlock(&blocks_lock);
    return mine = c;
}

void ts_mpi_count(enum ts_mpi_call kind)
{
    if (__builtin_expect(atomic_load_explicit(&summarized, memory_order_relaxed), 0))
        return;
    struct call_counts *c = mine;
    if (__builtin_expect(!c, 0) && !(c = my_counts()))
        return;
    unsigned long v = atomic_load_explicit(&c->n[kind], memory_order_relaxed);
    atomic_store_explicit(&c->n[kind], v + 1, memory_order_relaxed);
}

uint64_t ts_mpi_time_start(void)
{
    return __builtin_expect(ts_mpi_verbose() > 0, 0) ? ts_monotonic_ns() : 0;
}

void ts_mpi_time_add(enum ts_mpi_call kind, uint64_t start)
{
    struct call_counts *c = mine; /* made by the call's ts_mpi_count */
    if (__builtin_expect(!start, 1) || !c ||
        atomic_load_explicit(&summarized, memory_order_relaxed))
        return;
    uint64_t v = atomic_load_explicit(&c->ns[kind], memory_order_relaxed);
    atomic_store_explicit(&c->ns[kind], v + (ts_monotonic_ns() - start), memory_order_relaxed);
}

void ts_mpi_summary_track(const topsync_barrier_t *barrier)
{
    struct tracked *t = malloc(sizeof *t);
    if (!barrier || !t) { /* not counted: the summary is a report */
        free(t);
        return;
    }
    pthread_mutex_lock(&blocks_lock);
    *t = (struct tracked){barrier, tracked};
    tracked = t;
    pthread_mutex_unlock(&blocks_lock);
}

void ts_mpi_summary_untrack(const topsync_barrier_t *barrier)
{
    pthread_mutex_lock(&blocks_lock);
    for (struct tracked **t = &tracked; *t; t = &(*t)->next)
        if ((*t)->barrier == barrier) {
            struct tracked *gone = *t;
            *t = gone->next;
            switches_of_freed += topsync_barrier_switches(barrier);
            free(gone);
            break;
        }
    pthread_mutex_unlock(&blocks_lock);
}

/* ", MPI_Barrier 12.3 us" for each kind served and timed, after "; time
 * per call in topsync's: " (nothing when none was timed) */
static void times_per_call(char *out, size_t len, const long long *calls, const long long *ns)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < TS_MPI_CALL_OWN && used < len; k++) {
        if (calls[k] <= 0 || ns[k] <= 0)
            continue;
        double t = (double)ns[k] / (double)calls[k];
        const char *unit = t < 1e3 ? "ns" : t < 1e6 ? "us" : "ms";
        t /= t < 1e3 ? 1 : t < 1e6 ? 1e3 : 1e6;
        used += (size_t)snprintf(out + used, len - used, "%s%s %.3g %s",
                                 used ? ", " : "; time per call in topsync's: ",
                                 ts_mpi_call_name((enum ts_mpi_call)k), t, unit);
    }
}

void ts_mpi_summary(void)
{
    /* the calls, their time, then the switches: one reduction */
    enum { TIMES = TS_MPI_CALL_KINDS, SWITCHES = 2 * TS_MPI_CALL_KINDS, PARTS };
    long long total[PARTS] = {0}, sum[PARTS] = {0};
    atomic_store_explicit(&summarized, true, memory_order_relaxed);
    pthread_mutex_lock(&blocks_lock);
    for (struct call_counts *c = blocks, *next; c; c = next) {
        next = c->next;
        for (int k = 0; k < TS_MPI_CALL_KINDS; k++) {
            total[k] += (long long)atomic_load_explicit(&c->n[k], memory_order_relaxed);
            total[TIMES + k] += (long long)atomic_load_explicit(&c->ns[k], memory_order_relaxed);
        }
        free(c);
    }
    blocks = NULL;
    total[SWITCHES] = (long long)switches_of_freed;
    for (const struct tracked *t = tracked; t; t = t->next)
        total[SWITCHES] += (long long)topsync_barrier_switches(t->barrier);
    pthread_mutex_unlock(&blocks_lock);
    mine = NULL;
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char whose[64];
    /* collective: only when MPI_Init was ours, which it is on every rank
     * of the job alike (the same program, the same preload); else (a
     * Fortran MPI_INIT that calls the MPI's internals) each rank's own */
    if (ts_mpi_init_seen()) {
        TS_MPI_OWN(Reduce)
        (total, sum, PARTS, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank != 0 || !ts_mpi_verbose())
            return;
        snprintf(whose, sizeof whose, "summary of %d ranks", size);
    } else {
        if (!ts_mpi_verbose())
            return;
        memcpy(sum, total, sizeof sum);
        snprintf(whose, sizeof whose, "summary of rank %d (MPI_Init not seen)", rank);
    }
    char times[200];
    times_per_call(times, sizeof times, sum, sum + TIMES);
    fprintf(stderr,
            "topsync-mpi: %s: topsync served %lld MPI_Barrier, %lld MPI_Allreduce, %lld "
            "MPI_Reduce, %lld MPI_Bcast; the MPI's own served %lld of those calls (calls summed "
            "over the ranks; %s)%s; node barriers switched configuration %lld times\n",
            whose, sum[TS_MPI_CALL_BARRIER], sum[TS_MPI_CALL_ALLREDUCE], sum[TS_MPI_CALL_REDUCE],
            sum[TS_MPI_CALL_BCAST], sum[TS_MPI_CALL_OWN],
            ts_mpi_verbose() >= 2 ? "the lines above say why" : "TOPSYNC_VERBOSE=2 says why", times,
            sum[SWITCHES]);
}
