/*
 * RCL: servicing threads, standby and takeover.
 *
 * Takeover. The running thread marks each critical section in `cs_seq`
 * (odd while inside). A standby thread wakes every takeover_us; if it sees
 * the same odd value twice, one critical section has lasted a whole period,
 * and it takes the active role (CAS on `active`). The old thread, when its
 * critical section returns, completes that one request and becomes a
 * standby. When no standby is left, the thread that took over starts a new
 * one, so a server has at most (locks blocked at once + 2) threads.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "rcl/rcl_private.h"

/*
 * At most one standby watches the active thread; surplus servicing threads
 * (a thread whose blocked critical section returned after a takeover) park
 * until a takeover needs a new standby, so that threads are reused rather
 * than piling up. Parking and handing out the standby role form a Dekker
 * pair, made of seq_cst operations: a parking thread increments `parked`,
 * then reads `standbys`; a thread leaving the standby role stores 0 in
 * `standbys`, then reads `parked`. Either the parking thread sees the role
 * free and takes it, or the leaving one sees it parked and wakes it.
 * tests/genmc/rcl_takeover.c relaxes either side of the pair (the two
 * macros below) and GenMC must find the parked thread asleep forever.
 */
#ifndef TS_RCL_PARK_ORDER
#define TS_RCL_PARK_ORDER memory_order_seq_cst
#endif
#ifndef TS_RCL_LEAVE_ORDER
#define TS_RCL_LEAVE_ORDER memory_order_seq_cst
#endif
static bool become_standby(topsync_rcl_server_t *s)
{
    struct server_control *c = s->control;
    while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
        uint32_t none = 0;
        /* seq_cst: the Dekker pair above, with the store in leave_standby() */
        if (atomic_compare_exchange_strong_explicit(&c->standbys, &none, 1, memory_order_seq_cst,
                                                    memory_order_seq_cst))
            return true;
        uint32_t word = atomic_load_explicit(&c->park_word, memory_order_relaxed);
        /* seq_cst: the Dekker pair, with the load of parked in leave_standby() */
        atomic_fetch_add_explicit(&c->parked, 1, TS_RCL_PARK_ORDER);
        /* seq_cst: the Dekker pair, with the store of standbys in leave_standby() */
        if (atomic_load_explicit(&c->standbys, TS_RCL_PARK_ORDER) != 0 &&
            !atomic_load_explicit(&c->stop, memory_order_seq_cst))
            ts_futex_wait(&c->park_word, word, false, 0);
        /* seq_cst: in the pair's total order, so that a leaving thread that
         * reads parked after this spawns a standby instead of waking none */
        atomic_fetch_sub_explicit(&c->parked, 1, memory_order_seq_cst);
    }
    return false;
}

static void leave_standby(topsync_rcl_server_t *s)
{
    struct server_control *c = s->control;
    /* seq_cst: the Dekker pair, with the increment of parked in become_standby() */
    atomic_store_explicit(&c->standbys, 0, TS_RCL_LEAVE_ORDER);
    if (atomic_load_explicit(&c->stop, memory_order_seq_cst))
        return;
    /* seq_cst: the Dekker pair, with the load of standbys in become_standby() */
    if (atomic_load_explicit(&c->parked, TS_RCL_LEAVE_ORDER)) {
        atomic_fetch_add_explicit(&c->park_word, 1, memory_order_relaxed);
        ts_futex_wake(&c->park_word, false);
    } else {
        ts_rcl_spawn_servicing_thread(s); /* on failure: no takeover until one returns */
    }
}

/* Serve as the standby; returns once this thread holds the active role (or
 * at stop). */
static void standby(topsync_rcl_server_t *s, uint32_t self)
{
    struct server_control *c = s->control;
    if (!become_standby(s))
        return;
    /* acquire: pairs with the release stores of cs_seq in run_request() */
    uint32_t last = atomic_load_explicit(&c->cs_seq, memory_order_acquire);
    while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
        _Atomic uint32_t *door = &s->doorbell_line->doorbell;
        if (atomic_load_explicit(door, memory_order_relaxed) == DOOR_SLEEPING) {
            /* the active thread sleeps: no critical section runs */
            ts_futex_wait(door, DOOR_SLEEPING, false, 0);
            last = atomic_load_explicit(&c->cs_seq, memory_order_acquire);
            continue;
        }
        uint32_t word = atomic_load_explicit(&c->standby_word, memory_order_relaxed);
        ts_futex_wait(&c->standby_word, word, false, (uint64_t)s->takeover_us * 1000);
        /* acquire: pairs with the release stores of cs_seq in run_request() */
        uint32_t seq = atomic_load_explicit(&c->cs_seq, memory_order_acquire);
        if (seq == last && (seq & 1u)) {
            uint32_t cur = atomic_load_explicit(&c->active, memory_order_relaxed);
            /* acq_rel: orders our scanning after everything the previous
             * active thread published before its critical section */
            if (cur != self && atomic_compare_exchange_strong_explicit(&c->active, &cur, self,
                                                                       memory_order_acq_rel,
                                                                       memory_order_relaxed)) {
                atomic_fetch_add_explicit(&c->takeovers, 1, memory_order_relaxed);
                break;
            }
        }
        last = seq;
    }
    leave_standby(s);
}

struct servicing_arg {
    topsync_rcl_server_t *server;
    uint32_t id;
};

static void *servicing_main(void *p)
{
    /* field by field: GenMC (tests/genmc/rcl_takeover.c) cannot run the
     * memcpy a struct copy makes */
    topsync_rcl_server_t *s = ((struct servicing_arg *)p)->server;
    uint32_t id = ((struct servicing_arg *)p)->id;
    free(p);
    int rc = hwloc_set_cpubind(s->rt->topo->hwloc, s->cpuset, HWLOC_CPUBIND_THREAD);
    pthread_mutex_lock(&s->threads_mutex);
    if (!s->first_started) {
        s->bind_error = rc < 0 ? errno : 0;
        s->first_started = true;
        pthread_cond_broadcast(&s->started_cond);
    }
    pthread_mutex_unlock(&s->threads_mutex);

    struct server_control *c = s->control;
    uint32_t cs_counter = 0;
    while (!atomic_load_explicit(&c->stop, memory_order_acquire)) {
        if (atomic_load_explicit(&c->active, memory_order_acquire) == id) {
            ts_rcl_serve(s, id, &cs_counter);
            if (atomic_load_explicit(&c->active, memory_order_relaxed) != id)
                ts_rcl_leave_active(s);
        } else {
            standby(s, id);
        }
    }
    return NULL;
}

int ts_rcl_spawn_servicing_thread(topsync_rcl_server_t *s)
{
    struct servicing_arg *a = malloc(sizeof *a);
    if (!a)
        return -ENOMEM;
    pthread_mutex_lock(&s->threads_mutex);
    if (atomic_load_explicit(&s->control->stop, memory_order_relaxed)) {
        pthread_mutex_unlock(&s->threads_mutex);
        free(a);
        return -ESHUTDOWN;
    }
    if (s->nthreads == s->cap_threads) {
        unsigned cap = s->cap_threads ? 2 * s->cap_threads : 4;
        pthread_t *t = realloc(s->threads, cap * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&s->threads_mutex);
            free(a);
            return -ENOMEM;
        }
        s->threads = t;
        s->cap_threads = cap;
    }
    a->server = s;
    a->id = ++s->next_id;
    int rc = pthread_create(&s->threads[s->nthreads], NULL, servicing_main, a);
    if (rc == 0)
        s->nthreads++;
    else
        free(a);
    pthread_mutex_unlock(&s->threads_mutex);
    return -rc;
}
