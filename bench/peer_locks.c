#define _GNU_SOURCE
/*
 * Lock peers of `topsync-bench rcl`: each runs the same critical section
 * (a function and its context) under a lock, as RCL runs it on its server.
 *
 *   peer:mutex           pthread_mutex_t (futex: sleeps when contended)
 *   peer:ttas            test-and-test-and-set spinlock with a pause loop
 *   peer:ck-mcs          Concurrency Kit ck_spinlock_mcs
 *   peer:ck-cohort       Concurrency Kit ck_cohort of ticket locks, one
 *                        local lock per NUMA node (from hwloc), ticket global;
 *                        a thread joins the cohort of its core's node
 *   peer:flat-combining  a flat-combining lock (Hendler et al. 2010): each
 *                        thread publishes its request in its own line; the
 *                        thread holding the combiner lock runs every
 *                        published request
 * The spinning peers (all but the mutex) never give the CPU up and are run
 * only with one thread per CPU; flat combining yields after a while, as the
 * published request makes progress possible without the waiter.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rcl.h"

#ifdef TOPSYNC_HAVE_CK
#include <ck_cohort.h>
#include <ck_spinlock.h>
#endif

#define PEER_LINE 128 /* padding only: the peers are not topsync code */

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* ---- mutex ---------------------------------------------------------------- */

static void *mutex_create(unsigned nthreads, const topsync_topology_t *t)
{
    (void)nthreads;
    (void)t;
    pthread_mutex_t *m = malloc(sizeof *m);
    if (m)
        pthread_mutex_init(m, NULL);
    return m;
}
static void *mutex_run(void *lock, unsigned tid, rcl_bench_cs_t cs, void *ctx)
{
    (void)tid;
    pthread_mutex_lock(lock);
    void *r = cs(ctx);
    pthread_mutex_unlock(lock);
    return r;
}
static void mutex_destroy(void *lock)
{
    pthread_mutex_destroy(lock);
    free(lock);
}

/* ---- TTAS ------------------------------------------------------------------ */

struct ttas {
    _Alignas(PEER_LINE) atomic_int held;
};
static void *ttas_create(unsigned nthreads, const topsync_topology_t *t)
{
    (void)nthreads;
    (void)t;
    struct ttas *l = aligned_alloc(PEER_LINE, sizeof *l);
    if (l)
        atomic_init(&l->held, 0);
    return l;
}
static void *ttas_run(void *p, unsigned tid, rcl_bench_cs_t cs, void *ctx)
{
    (void)tid;
    struct ttas *l = p;
    for (;;) {
        if (!atomic_load_explicit(&l->held, memory_order_relaxed) &&
            !atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
            break;
        relax();
    }
    void *r = cs(ctx);
    atomic_store_explicit(&l->held, 0, memory_order_release);
    return r;
}
static void ttas_destroy(void *p)
{
    free(p);
}

/* ---- flat combining ----------------------------------------------------- */

struct fc_record {
    _Alignas(PEER_LINE) atomic_int pending;
    rcl_bench_cs_t cs;
    void *ctx;
    void *result;
};
struct fc_lock {
    _Alignas(PEER_LINE) atomic_int combiner;
    unsigned n;
    struct fc_record *records;
};
static void *fc_create(unsigned nthreads, const topsync_topology_t *t)
{
    (void)t;
    struct fc_lock *l = aligned_alloc(PEER_LINE, sizeof *l);
    if (!l)
        return NULL;
    atomic_init(&l->combiner, 0);
    l->n = nthreads;
    l->records = aligned_alloc(PEER_LINE, nthreads * sizeof *l->records);
    if (!l->records) {
        free(l);
        return NULL;
    }
    memset(l->records, 0, nthreads * sizeof *l->records);
    return l;
}
static void *fc_run(void *p, unsigned tid, rcl_bench_cs_t cs, void *ctx)
{
    struct fc_lock *l = p;
    struct fc_record *me = &l->records[tid];
    me->cs = cs;
    me->ctx = ctx;
    atomic_store_explicit(&me->pending, 1, memory_order_release);
    for (unsigned spins = 0;; spins++) {
        if (!atomic_load_explicit(&me->pending, memory_order_acquire))
            return me->result;
        if (!atomic_load_explicit(&l->combiner, memory_order_relaxed) &&
            !atomic_exchange_explicit(&l->combiner, 1, memory_order_acquire)) {
            for (unsigned i = 0; i < l->n; i++) {
                struct fc_record *r = &l->records[i];
                if (atomic_load_explicit(&r->pending, memory_order_acquire)) {
                    r->result = r->cs(r->ctx);
                    atomic_store_explicit(&r->pending, 0, memory_order_release);
                }
            }
            atomic_store_explicit(&l->combiner, 0, memory_order_release);
            continue;
        }
        if (spins > 1024)
            sched_yield();
        else
            relax();
    }
}
static void fc_destroy(void *p)
{
    struct fc_lock *l = p;
    free(l->records);
    free(l);
}

#ifdef TOPSYNC_HAVE_CK
/* ---- CK MCS ---------------------------------------------------------------- */

struct mcs_lock {
    _Alignas(PEER_LINE) ck_spinlock_mcs_t queue;
    ck_spinlock_mcs_context_t *nodes; /* one per thread, each on its own line */
};
static void *mcs_create(unsigned nthreads, const topsync_topology_t *t)
{
    (void)t;
    struct mcs_lock *l = aligned_alloc(PEER_LINE, sizeof *l);
    if (!l)
        return NULL;
    ck_spinlock_mcs_init(&l->queue);
    l->nodes = aligned_alloc(PEER_LINE, (size_t)nthreads * PEER_LINE);
    if (!l->nodes) {
        free(l);
        return NULL;
    }
    return l;
}
static void *mcs_run(void *p, unsigned tid, rcl_bench_cs_t cs, void *ctx)
{
    struct mcs_lock *l = p;
    ck_spinlock_mcs_context_t *node =
        (ck_spinlock_mcs_context_t *)((char *)l->nodes + (size_t)tid * PEER_LINE);
    ck_spinlock_mcs_lock(&l->queue, node);
    void *r = cs(ctx);
    ck_spinlock_mcs_unlock(&l->queue, node);
    return r;
}
static void mcs_destroy(void *p)
{
    struct mcs_lock *l = p;
    free(l->nodes);
    free(l);
}

/* ---- CK cohort --------------------------------------------------------------- */

static void ticket_lock(ck_spinlock_ticket_t *l, void *c)
{
    (void)c;
    ck_spinlock_ticket_lock(l);
}
static void ticket_unlock(ck_spinlock_ticket_t *l, void *c)
{
    (void)c;
    ck_spinlock_ticket_unlock(l);
}
static bool ticket_locked(ck_spinlock_ticket_t *l, void *c)
{
    (void)c;
    return ck_spinlock_ticket_locked(l);
}
CK_COHORT_PROTOTYPE(ticket, ticket_lock, ticket_unlock, ticket_locked, ticket_lock, ticket_unlock,
                    ticket_locked)

struct cohort_node {
    _Alignas(PEER_LINE) CK_COHORT_INSTANCE(ticket) cohort;
    _Alignas(PEER_LINE) ck_spinlock_ticket_t local;
};
struct cohort_lock {
    _Alignas(PEER_LINE) ck_spinlock_ticket_t global;
    unsigned nnodes;
    struct cohort_node *nodes;
    unsigned *node_of_thread; /* threads are spread over nodes round-robin */
};
static void *cohort_create(unsigned nthreads, const topsync_topology_t *t)
{
    struct cohort_lock *l = aligned_alloc(PEER_LINE, sizeof *l);
    if (!l)
        return NULL;
    int nodes = topsync_topology_level_units(t, TOPSYNC_LEVEL_NUMA);
    l->nnodes = nodes > 0 ? (unsigned)nodes : 1;
    ck_spinlock_ticket_init(&l->global);
    l->nodes = aligned_alloc(PEER_LINE, l->nnodes * sizeof *l->nodes);
    l->node_of_thread = calloc(nthreads, sizeof *l->node_of_thread);
    if (!l->nodes || !l->node_of_thread) {
        free(l->nodes);
        free(l->node_of_thread);
        free(l);
        return NULL;
    }
    for (unsigned i = 0; i < l->nnodes; i++) {
        ck_spinlock_ticket_init(&l->nodes[i].local);
        CK_COHORT_INIT(ticket, &l->nodes[i].cohort, &l->global, &l->nodes[i].local,
                       CK_COHORT_DEFAULT_LOCAL_PASS_LIMIT);
    }
    /* Thread i runs on core i mod cores when pinned (rcl_bench.c): its
     * cohort is that core's NUMA node. */
    hwloc_topology_t h = topsync_topology_hwloc(t);
    unsigned ncores = topsync_topology_ncores(t);
    for (unsigned i = 0; i < nthreads; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, i % ncores);
        l->node_of_thread[i] = 0;
        for (unsigned n = 0; core && nodes > 0 && n < l->nnodes; n++)
            if (hwloc_bitmap_isincluded(
                    core->cpuset, topsync_topology_level_unit_cpuset(t, TOPSYNC_LEVEL_NUMA, n)))
                l->node_of_thread[i] = n;
    }
    return l;
}
static void *cohort_run(void *p, unsigned tid, rcl_bench_cs_t cs, void *ctx)
{
    struct cohort_lock *l = p;
    struct cohort_node *n = &l->nodes[l->node_of_thread[tid]];
    CK_COHORT_LOCK(ticket, &n->cohort, NULL, NULL);
    void *r = cs(ctx);
    CK_COHORT_UNLOCK(ticket, &n->cohort, NULL, NULL);
    return r;
}
static void cohort_destroy(void *p)
{
    struct cohort_lock *l = p;
    free(l->nodes);
    free(l->node_of_thread);
    free(l);
}
#endif

static const rcl_bench_peer peers[] = {
    {"peer:mutex", mutex_create, mutex_run, mutex_destroy, 0},
    {"peer:ttas", ttas_create, ttas_run, ttas_destroy, 1},
#ifdef TOPSYNC_HAVE_CK
    {"peer:ck-mcs", mcs_create, mcs_run, mcs_destroy, 1},
    {"peer:ck-cohort", cohort_create, cohort_run, cohort_destroy, 1},
#endif
    {"peer:flat-combining", fc_create, fc_run, fc_destroy, 0},
};

int rcl_bench_peers(const rcl_bench_peer **out)
{
    *out = peers;
    return (int)(sizeof peers / sizeof peers[0]);
}
