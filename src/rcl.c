/*
 * Remote Core Locking runtime (SPEC section 5; Lozi et al., as extended by
 * Paznikov and Shichkina).
 *
 * The request line. Each client thread owns one line per server it uses
 * (struct rcl_slot): it writes (lock, fn, arg), then publishes the request
 * episode e in `request` with a release store; the server reads `request`
 * with acquire, runs fn(arg), writes `result` and publishes e in `done` with
 * ts_publish() (release), which the client awaits with ts_wait_reach()
 * (acquire) under its wait policy. One line carries the whole exchange, so a
 * request costs the two line transfers of the papers' design and nothing
 * else: no atomic read-modify-write on the client side, no shared counter.
 *
 * The server scans the lines of its clients (slot table, grown 64 lines at a
 * time under a mutex and published by a release store of `nslots`, read with
 * acquire by the scanner).
 *
 * Mutual exclusion per lock, under every interleaving. Normally one thread
 * (the active servicing thread) scans, so critical sections of one server
 * never overlap. But a critical section may block, and then a standby thread
 * takes over the scanning while the blocked one is still inside its critical
 * section; for a moment around a takeover two threads may even scan at once.
 * So a servicing thread runs a request only after claiming the lock's `busy`
 * word with a CAS 0 -> 1 (acquire; pairs with the release store of 0 that
 * ended the lock's previous critical section, so fn sees its effects) and
 * re-checking, under that claim, that the request is still pending:
 * run_request() gives the exact order and why no request runs twice.
 *
 * Takeover. The running thread marks each critical section in `cs_seq`
 * (odd while inside). A standby thread wakes every takeover_us; if it sees
 * the same odd value twice, one critical section has lasted a whole period,
 * and it takes the active role (CAS on `active`). The old thread, when its
 * critical section returns, completes that one request and becomes a
 * standby. When no standby is left, the thread that took over starts a new
 * one, so a server has at most (locks blocked at once + 2) threads.
 *
 * Idle. An active thread that found no work for idle_spin scans yields a
 * while, then sleeps on the `doorbell` futex. Sleeping and publishing a
 * request form a Dekker pair: the server stores SLEEPING, fences (seq_cst),
 * rescans; the client stores its request, fences (seq_cst), loads the
 * doorbell. Either the rescan sees the request or the client sees SLEEPING
 * and wakes the server; the futex compares the word in the kernel, so a wake
 * before the sleep is not lost.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "rcl_private.h"

#define RCL_CHUNK_SLOTS 64u
#define RCL_MAX_CHUNKS 1024u
#define RCL_DEFAULT_MAX_CLIENTS (RCL_CHUNK_SLOTS * RCL_MAX_CHUNKS)
#define RCL_DEFAULT_TAKEOVER_US 1000u
#define RCL_DEFAULT_IDLE_SPIN 20000u
#define RCL_IDLE_YIELDS 64u
#define RCL_OVERSUBSCRIBED_IDLE_SPIN 16u
#define RCL_QUARANTINE 1024u
#define RCL_CLIENT_SPIN 2048u
#define RCL_CLIENT_YIELDS 8u
#define RCL_CLIENT_SHORT_SPIN 256u
#define RCL_CLIENT_YIELDS_OVERSUBSCRIBED 16u

#define LOCK_LIVE 0x52434c4cu /* "RCLL" */
#define LOCK_DEAD 0xdead0001u

#define DOOR_AWAKE 0u
#define DOOR_SLEEPING 1u

/* One client's request line (see the essay above). */
struct rcl_slot {
    ts_word request; /* client: episode of its latest request (release) */
    ts_word done;    /* server: episode of the latest completed one (release) */
    _Atomic(topsync_rcl_lock_t *) lock;
    topsync_rcl_fn_t fn;
    void *arg;
    void *result;
    uint32_t last_episode;      /* client-private */
    struct rcl_slot *next_free; /* under slots_mutex */
};

/* The lock's first line is read by clients, its second written by servers. */
struct topsync_rcl_lock {
    _Atomic uint32_t state; /* LOCK_LIVE or LOCK_DEAD */
    topsync_rcl_server_t *server;
    size_t line;
};

struct server_lines {
    _Atomic uint32_t doorbell; /* read by every client, written on sleep/wake */
};
struct server_control {
    _Atomic uint32_t cs_seq;  /* odd while a critical section runs */
    _Atomic uint32_t active;  /* id of the scanning thread */
    _Atomic uint32_t stop;
    _Atomic uint32_t standby_word; /* futex the standbys time out on */
    _Atomic uint32_t standbys; /* 0 or 1 */
    _Atomic uint32_t parked;
    _Atomic uint32_t park_word;
    _Atomic unsigned long takeovers;
};

struct topsync_rcl_server {
    topsync_rcl_runtime_t *rt;
    unsigned core;
    uint64_t uid;
    size_t line, stride;
    hwloc_bitmap_t cpuset;
    ts_wait wait_normal, wait_short_spin, wait_oversubscribed;
    unsigned takeover_us, idle_spin, max_slots, cpus;
    unsigned nlocks; /* under rt->mutex */

    void *lines_block;
    struct server_lines *doorbell_line;
    struct server_control *control;

    pthread_mutex_t slots_mutex;
    struct rcl_slot *free_slots;
    _Atomic unsigned nslots;   /* high-water mark, release-published */
    _Atomic unsigned nclients; /* slots in use: the oversubscription guess */
    struct rcl_slot *chunks[RCL_MAX_CHUNKS];

    pthread_mutex_t threads_mutex;
    pthread_cond_t started_cond;
    pthread_t *threads;
    unsigned nthreads, cap_threads, next_id;
    int bind_error; /* first thread's binding result */
    bool first_started;

    topsync_rcl_server_t *registry_next;
};

static_assert(sizeof(struct rcl_slot) <= 64, "a request fits the smallest line we use");
static_assert(sizeof(struct topsync_rcl_lock) <= 64, "a lock's client part fits one line");
static_assert(sizeof(struct server_control) <= 64, "server control words share one line");

/* ---------------------------------------------------------------------- */
/* Small helpers                                                            */

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

static inline struct rcl_slot *slot_at(const topsync_rcl_server_t *s, unsigned i)
{
    return (struct rcl_slot *)((char *)s->chunks[i / RCL_CHUNK_SLOTS] +
                               (size_t)(i % RCL_CHUNK_SLOTS) * s->stride);
}

static inline _Atomic uint32_t *lock_busy(topsync_rcl_lock_t *l)
{
    return (_Atomic uint32_t *)((char *)l + l->line);
}

/* ---------------------------------------------------------------------- */
/* Options and runtime                                                      */

void topsync_rcl_options_init(topsync_rcl_options_t *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->wait = TOPSYNC_WAIT_DEFAULT;
    o->placement = TOPSYNC_RCL_POLICY_DEFAULT;
}

const topsync_topology_t *topsync_rcl_runtime_topology(const topsync_rcl_runtime_t *rt)
{
    return rt ? rt->topo : NULL;
}

static int resolve_options(topsync_rcl_options_t *o)
{
    int rc = ts_wait_policy_resolve(&o->wait);
    if (rc < 0)
        return rc;
    if (o->placement == TOPSYNC_RCL_POLICY_DEFAULT) {
        const char *env = getenv("TOPSYNC_RCL_PLACEMENT");
        if (env && *env && topsync_rcl_policy_parse(env, &o->placement) < 0)
            return ts_fail(EINVAL, "TOPSYNC_RCL_PLACEMENT: %s", topsync_error_message());
        if (o->placement == TOPSYNC_RCL_POLICY_DEFAULT)
            o->placement = TOPSYNC_RCL_PACK;
    } else if (o->placement != TOPSYNC_RCL_PACK && o->placement != TOPSYNC_RCL_SPREAD) {
        return ts_fail(EINVAL, "invalid RCL placement value %d; valid: pack, spread, default",
                       (int)o->placement);
    }
    if (!o->takeover_us)
        o->takeover_us = RCL_DEFAULT_TAKEOVER_US;
    if (o->takeover_us > 10000000u)
        return ts_fail(EINVAL, "takeover_us %u is too long; valid: 1 to 10000000", o->takeover_us);
    if (!o->max_clients)
        o->max_clients = RCL_DEFAULT_MAX_CLIENTS;
    if (o->max_clients > RCL_DEFAULT_MAX_CLIENTS)
        return ts_fail(EINVAL, "max_clients %u is too large; valid: 1 to %u", o->max_clients,
                       RCL_DEFAULT_MAX_CLIENTS);
    if (!o->idle_spin)
        o->idle_spin = RCL_DEFAULT_IDLE_SPIN;
    return 0;
}

/* Frees what a (possibly half-built) runtime holds. */
static void runtime_free(topsync_rcl_runtime_t *rt)
{
    for (unsigned i = 0; i < rt->quarantine_len; i++)
        free(rt->quarantine[i]);
    free(rt->quarantine);
    hwloc_bitmap_free(rt->process_cpuset);
    topsync_rcl_usage_destroy(rt->usage);
    topsync_topology_destroy(rt->topo);
    pthread_mutex_destroy(&rt->mutex);
    pthread_mutex_destroy(&rt->alloc_mutex);
    free(rt);
}

int topsync_rcl_runtime_create(topsync_rcl_runtime_t **out, const topsync_rcl_options_t *options)
{
    if (!out)
        return ts_fail(EINVAL, "topsync_rcl_runtime_create: out is NULL");
    *out = NULL;
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    if (options)
        o = *options;
    int rc = resolve_options(&o);
    if (rc < 0)
        return rc;
    topsync_rcl_runtime_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return ts_fail(ENOMEM, "out of memory");
    rt->options = o;
    atomic_init(&rt->memory_node, -1);
    pthread_mutex_init(&rt->mutex, NULL);
    pthread_mutex_init(&rt->alloc_mutex, NULL);
    rc = topsync_topology_load(&rt->topo);
    if (rc < 0)
        goto fail;
    rc = topsync_rcl_usage_create(&rt->usage, rt->topo);
    if (rc < 0)
        goto fail;
    rt->quarantine = calloc(RCL_QUARANTINE, sizeof *rt->quarantine);
    rt->process_cpuset = hwloc_bitmap_alloc();
    if (!rt->quarantine || !rt->process_cpuset) {
        rc = ts_fail(ENOMEM, "out of memory");
        goto fail;
    }
    /* The union of the bindings of the process's threads; the allowed
     * cpuset when the binding cannot be read. */
    if (hwloc_get_cpubind(rt->topo->hwloc, rt->process_cpuset, HWLOC_CPUBIND_PROCESS) < 0 ||
        hwloc_bitmap_iszero(rt->process_cpuset))
        hwloc_bitmap_copy(rt->process_cpuset, hwloc_topology_get_allowed_cpuset(rt->topo->hwloc));
    *out = rt;
    return 0;
fail:
    runtime_free(rt);
    return rc;
}

int topsync_rcl_runtime_destroy(topsync_rcl_runtime_t *rt)
{
    if (!rt)
        return 0;
    pthread_mutex_lock(&rt->mutex);
    unsigned n = rt->nservers;
    pthread_mutex_unlock(&rt->mutex);
    if (n)
        return ts_fail(EBUSY, "topsync_rcl_runtime_destroy: %u server(s) still running; "
                              "stop them first", n);
    size_t blocks = ts_rcl_alloc_live(rt);
    if (blocks)
        return ts_fail(EBUSY, "topsync_rcl_runtime_destroy: %zu block(s) of "
                              "topsync_rcl_malloc() not freed yet", blocks);
    runtime_free(rt);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Live servers, by uid: thread-exit slot release must not touch a stopped
 * server.                                                                  */

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static topsync_rcl_server_t *registry;
static uint64_t registry_next_uid = 1;

static topsync_rcl_server_t *registry_find(uint64_t uid) /* registry_mutex held */
{
    for (topsync_rcl_server_t *s = registry; s; s = s->registry_next)
        if (s->uid == uid)
            return s;
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Servicing threads                                                        */

static bool request_pending(struct rcl_slot *slot, uint32_t *episode)
{
    /* acquire: pairs with the client's release store of `request` in
     * topsync_rcl_execute_checked(), making (lock, fn, arg) visible */
    uint32_t req = atomic_load_explicit(&slot->request.value, memory_order_acquire);
    uint32_t done = atomic_load_explicit(&slot->done.value, memory_order_relaxed);
    *episode = req;
    return ((req ^ done) & TS_EPISODE_MASK) != 0;
}

/* The lock whose critical section this (servicing) thread is running: an
 * execute on it from inside would wait for itself forever. */
static _Thread_local topsync_rcl_lock_t *tl_running_lock;

/*
 * Run one pending request, if its lock is free. Order: claim busy (acquire),
 * re-read the request (still pending, same lock), run, publish done
 * (release), drop busy (release). A thread that claims busy after our drop
 * sees our done through the busy release/acquire pair, so its re-check
 * fails: no request runs twice. A lock is only destroyed once busy is 0
 * again (topsync_rcl_lock_destroy waits for it), so no servicing thread
 * touches a destroyed lock.
 */
static bool run_request(topsync_rcl_server_t *s, struct rcl_slot *slot, uint32_t episode,
                        uint32_t *cs_counter)
{
    topsync_rcl_lock_t *lock = atomic_load_explicit(&slot->lock, memory_order_relaxed);
    _Atomic uint32_t *busy = lock_busy(lock);
    uint32_t expected = 0;
    /* acquire: pairs with the release store of 0 below, by whichever thread
     * ran this lock's previous critical section */
    if (!atomic_compare_exchange_strong_explicit(busy, &expected, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return false;
    uint32_t again;
    if (!request_pending(slot, &again) || again != episode ||
        atomic_load_explicit(&slot->lock, memory_order_relaxed) != lock) {
        /* release: pairs with the acquire CAS above (of the next claimer) */
        atomic_store_explicit(busy, 0, memory_order_release);
        return false;
    }
    struct server_control *c = s->control;
    /* release: pairs with the acquire load of cs_seq in standby(), so a
     * standby that sees this critical section running also sees busy = 1 */
    atomic_store_explicit(&c->cs_seq, ++*cs_counter | 1u, memory_order_release);
    tl_running_lock = lock;
    slot->result = slot->fn(slot->arg);
    tl_running_lock = NULL;
    /* release: pairs with the client's acquire in ts_wait_reach() */
    /* the policy's kind says whether to exchange and wake: all three client
     * policies share it */
    ts_publish(&slot->done, episode, &s->wait_normal);
    /* release: pairs with the acquire CAS above (of the next claimer), and
     * with the acquire load in topsync_rcl_lock_destroy() */
    atomic_store_explicit(busy, 0, memory_order_release);
    atomic_store_explicit(&c->cs_seq, ++*cs_counter & ~1u, memory_order_relaxed);
    return true;
}

/* One pass over the request lines; the number of requests run. */
static unsigned scan(topsync_rcl_server_t *s, uint32_t *cs_counter, uint32_t self)
{
    /* acquire: pairs with the release store of nslots in acquire_slot() */
    unsigned n = atomic_load_explicit(&s->nslots, memory_order_acquire);
    unsigned ran = 0;
    for (unsigned i = 0; i < n; i++) {
        struct rcl_slot *slot = slot_at(s, i);
        uint32_t episode;
        if (request_pending(slot, &episode) && run_request(s, slot, episode, cs_counter)) {
            ran++;
            if (atomic_load_explicit(&s->control->active, memory_order_relaxed) != self)
                break; /* taken over while we ran: stop scanning */
        }
    }
    return ran;
}

/* Is there a request some thread could run now (its lock not busy)? */
static bool runnable_request(topsync_rcl_server_t *s)
{
    /* acquire: pairs with the release store of nslots in acquire_slot() */
    unsigned n = atomic_load_explicit(&s->nslots, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        struct rcl_slot *slot = slot_at(s, i);
        uint32_t episode;
        if (!request_pending(slot, &episode))
            continue;
        topsync_rcl_lock_t *lock = atomic_load_explicit(&slot->lock, memory_order_relaxed);
        /* relaxed: a stale busy = 1 only means the releasing thread's own
         * wake-up (leave_active) comes after our sleep, see sleep_idle() */
        if (!atomic_load_explicit(lock_busy(lock), memory_order_relaxed))
            return true;
    }
    return false;
}

static void wake_server(topsync_rcl_server_t *s)
{
    _Atomic uint32_t *door = &s->doorbell_line->doorbell;
    if (atomic_exchange_explicit(door, DOOR_AWAKE, memory_order_relaxed) == DOOR_SLEEPING)
        ts_futex_wake(door, false);
}

static void sleep_idle(topsync_rcl_server_t *s, uint32_t self)
{
    _Atomic uint32_t *door = &s->doorbell_line->doorbell;
    struct server_control *c = s->control;
    atomic_store_explicit(door, DOOR_SLEEPING, memory_order_relaxed);
    /* seq_cst fence: pairs with the fence in topsync_rcl_execute_checked()
     * (after the request store), in leave_active() (after busy = 0) and in
     * server_join_all() (after stop = 1): either our recheck sees their
     * store or they see SLEEPING and wake us */
    atomic_thread_fence(memory_order_seq_cst);
    if (runnable_request(s) || atomic_load_explicit(&c->stop, memory_order_relaxed) ||
        atomic_load_explicit(&c->active, memory_order_relaxed) != self) {
        atomic_store_explicit(door, DOOR_AWAKE, memory_order_relaxed);
        return;
    }
    ts_futex_wait(door, DOOR_SLEEPING, false, 0);
    atomic_store_explicit(door, DOOR_AWAKE, memory_order_relaxed);
}

static void serve(topsync_rcl_server_t *s, uint32_t self, uint32_t *cs_counter)
{
    struct server_control *c = s->control;
    unsigned empty = 0;
    while (!atomic_load_explicit(&c->stop, memory_order_relaxed) &&
           atomic_load_explicit(&c->active, memory_order_relaxed) == self) {
        if (scan(s, cs_counter, self)) {
            empty = 0;
            continue;
        }
        empty++;
        /* relaxed: a guess. With more clients than CPUs, the next request
         * most likely waits for this very CPU: hand it over soon */
        unsigned spin = atomic_load_explicit(&s->nclients, memory_order_relaxed) + 1 > s->cpus
                            ? RCL_OVERSUBSCRIBED_IDLE_SPIN
                            : s->idle_spin;
        if (empty < spin) {
            ts_cpu_relax();
        } else if (empty < spin + RCL_IDLE_YIELDS) {
            sched_yield();
        } else {
            sleep_idle(s, self);
            empty = 0;
        }
    }
}

/* A thread whose critical section blocked lost the active role: the active
 * one may have gone to sleep while this lock was busy. */
static void leave_active(topsync_rcl_server_t *s)
{
    /* seq_cst fence: pairs with the fence in sleep_idle() (see there) */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->doorbell_line->doorbell, memory_order_relaxed) == DOOR_SLEEPING)
        wake_server(s);
}

static int spawn_servicing_thread(topsync_rcl_server_t *s);

/*
 * At most one standby watches the active thread; surplus servicing threads
 * (a thread whose blocked critical section returned after a takeover) park
 * until a takeover needs a new standby, so that threads are reused rather
 * than piling up. Parking and handing out the standby role form a Dekker
 * pair, made of seq_cst operations: a parking thread increments `parked`,
 * then reads `standbys`; a thread leaving the standby role stores 0 in
 * `standbys`, then reads `parked`. Either the parking thread sees the role
 * free and takes it, or the leaving one sees it parked and wakes it.
 */
static bool become_standby(topsync_rcl_server_t *s)
{
    struct server_control *c = s->control;
    while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
        uint32_t none = 0;
        /* seq_cst: the Dekker pair above, with leave_standby() */
        if (atomic_compare_exchange_strong(&c->standbys, &none, 1))
            return true;
        uint32_t word = atomic_load_explicit(&c->park_word, memory_order_relaxed);
        atomic_fetch_add(&c->parked, 1); /* seq_cst: see above */
        if (atomic_load(&c->standbys) != 0 && !atomic_load(&c->stop))
            ts_futex_wait(&c->park_word, word, false, 0);
        atomic_fetch_sub(&c->parked, 1);
    }
    return false;
}

static void leave_standby(topsync_rcl_server_t *s)
{
    struct server_control *c = s->control;
    atomic_store(&c->standbys, 0); /* seq_cst: see become_standby() */
    if (atomic_load(&c->stop))
        return;
    if (atomic_load(&c->parked)) {
        atomic_fetch_add_explicit(&c->park_word, 1, memory_order_relaxed);
        ts_futex_wake(&c->park_word, false);
    } else {
        spawn_servicing_thread(s); /* on failure: no takeover until one returns */
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
            if (cur != self && atomic_compare_exchange_strong_explicit(
                                   &c->active, &cur, self, memory_order_acq_rel,
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
    struct servicing_arg a = *(struct servicing_arg *)p;
    free(p);
    topsync_rcl_server_t *s = a.server;
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
        if (atomic_load_explicit(&c->active, memory_order_acquire) == a.id) {
            serve(s, a.id, &cs_counter);
            if (atomic_load_explicit(&c->active, memory_order_relaxed) != a.id)
                leave_active(s);
        } else {
            standby(s, a.id);
        }
    }
    return NULL;
}

static int spawn_servicing_thread(topsync_rcl_server_t *s)
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

/* ---------------------------------------------------------------------- */
/* Servers                                                                  */

static void server_free(topsync_rcl_server_t *s)
{
    for (unsigned i = 0; i < RCL_MAX_CHUNKS && s->chunks[i]; i++)
        free(s->chunks[i]);
    free(s->lines_block);
    free(s->threads);
    hwloc_bitmap_free(s->cpuset);
    pthread_mutex_destroy(&s->slots_mutex);
    pthread_mutex_destroy(&s->threads_mutex);
    pthread_cond_destroy(&s->started_cond);
    free(s);
}

static void server_join_all(topsync_rcl_server_t *s)
{
    atomic_store_explicit(&s->control->stop, 1, memory_order_release);
    /* seq_cst fence: pairs with the fence in sleep_idle(), a Dekker pair
     * (stop, doorbell): either the idle server's recheck sees stop, or our
     * exchange in wake_server() sees SLEEPING and wakes it. Without it RC11
     * lets both miss (GenMC found the server asleep forever, issue 13). */
    atomic_thread_fence(memory_order_seq_cst);
    wake_server(s);
    ts_futex_wake(&s->doorbell_line->doorbell, false);
    atomic_fetch_add_explicit(&s->control->standby_word, 1, memory_order_relaxed);
    ts_futex_wake(&s->control->standby_word, false);
    atomic_fetch_add_explicit(&s->control->park_word, 1, memory_order_relaxed);
    ts_futex_wake(&s->control->park_word, false);
    for (unsigned joined = 0;;) {
        pthread_mutex_lock(&s->threads_mutex);
        bool more = joined < s->nthreads;
        pthread_t t = more ? s->threads[joined] : (pthread_t)0;
        pthread_mutex_unlock(&s->threads_mutex);
        if (!more)
            break;
        pthread_join(t, NULL);
        joined++;
    }
}

static void init_waits(topsync_rcl_server_t *s, topsync_wait_policy_t p)
{
    enum ts_wait_kind kind = p == TOPSYNC_WAIT_SPIN    ? TS_WAIT_SPIN
                             : p == TOPSYNC_WAIT_YIELD ? TS_WAIT_YIELD
                                                       : TS_WAIT_BLOCK;
    s->wait_normal = (ts_wait){.kind = kind, .spin_iterations = RCL_CLIENT_SPIN,
                               .yield_iterations = RCL_CLIENT_YIELDS};
    /* more clients and servers than CPUs: the server most likely needs our
     * CPU, give it up at once (as the barrier does, see barrier.c) */
    s->wait_oversubscribed = (ts_wait){.kind = kind, .spin_iterations = 0,
                                       .yield_iterations = RCL_CLIENT_YIELDS_OVERSUBSCRIBED};
    s->wait_short_spin = (ts_wait){.kind = kind, .spin_iterations = RCL_CLIENT_SHORT_SPIN,
                                   .yield_iterations = RCL_CLIENT_YIELDS_OVERSUBSCRIBED};
}

int topsync_rcl_server_start(topsync_rcl_runtime_t *rt, int core, topsync_rcl_server_t **out)
{
    if (!rt || !out)
        return ts_fail(EINVAL, "topsync_rcl_server_start: NULL argument");
    *out = NULL;
    pthread_mutex_lock(&rt->mutex);
    int rc = 0;
    unsigned chosen;
    if (core == TOPSYNC_RCL_CORE_AUTO) {
        rc = topsync_rcl_place_server(rt->usage, rt->options.placement, &chosen);
        if (rc < 0)
            goto unlock;
    } else if (core < 0 || (unsigned)core >= rt->topo->ncores) {
        rc = ts_fail(EINVAL, "topsync_rcl_server_start: core %d out of range; valid: 0 to %u "
                             "or TOPSYNC_RCL_CORE_AUTO", core, rt->topo->ncores - 1);
        goto unlock;
    } else {
        chosen = (unsigned)core;
    }
    hwloc_obj_t obj = hwloc_get_obj_by_type(rt->topo->hwloc, rt->topo->core_type, chosen);
    topsync_rcl_server_t *s = calloc(1, sizeof *s);
    if (!s || !(s->cpuset = hwloc_bitmap_alloc())) {
        free(s);
        rc = ts_fail(ENOMEM, "out of memory");
        goto unlock;
    }
    hwloc_bitmap_and(s->cpuset, obj->cpuset, rt->process_cpuset);
    if (hwloc_bitmap_iszero(s->cpuset)) {
        char *core_str = NULL, *proc_str = NULL;
        hwloc_bitmap_list_asprintf(&core_str, obj->cpuset);
        hwloc_bitmap_list_asprintf(&proc_str, rt->process_cpuset);
        rc = ts_fail(EINVAL, "topsync_rcl_server_start: core %u (PUs %s) is outside the "
                             "process's cpuset (PUs %s)", chosen, core_str ? core_str : "?",
                     proc_str ? proc_str : "?");
        free(core_str);
        free(proc_str);
        hwloc_bitmap_free(s->cpuset);
        free(s);
        goto unlock;
    }
    s->rt = rt;
    s->core = chosen;
    s->line = rt->topo->line_size < 64 ? 64 : rt->topo->line_size;
    s->stride = round_up(sizeof(struct rcl_slot), s->line);
    s->takeover_us = rt->options.takeover_us;
    s->idle_spin = rt->options.idle_spin;
    s->max_slots = rt->options.max_clients;
    s->cpus = (unsigned)hwloc_bitmap_weight(rt->process_cpuset);
    init_waits(s, rt->options.wait);
    pthread_mutex_init(&s->slots_mutex, NULL);
    pthread_mutex_init(&s->threads_mutex, NULL);
    pthread_cond_init(&s->started_cond, NULL);
    if (posix_memalign(&s->lines_block, s->line, 2 * s->line)) {
        s->lines_block = NULL;
        server_free(s);
        rc = ts_fail(ENOMEM, "out of memory");
        goto unlock;
    }
    memset(s->lines_block, 0, 2 * s->line);
    s->doorbell_line = s->lines_block;
    s->control = (struct server_control *)((char *)s->lines_block + s->line);
    atomic_store_explicit(&s->control->active, 1, memory_order_relaxed); /* first thread */

    pthread_mutex_lock(&registry_mutex);
    s->uid = registry_next_uid++;
    pthread_mutex_unlock(&registry_mutex);

    rc = spawn_servicing_thread(s);
    if (rc == 0)
        rc = spawn_servicing_thread(s); /* the standby */
    if (rc < 0) {
        server_join_all(s);
        server_free(s);
        rc = ts_fail(-rc, "topsync_rcl_server_start: cannot create the server thread");
        goto unlock;
    }
    pthread_mutex_lock(&s->threads_mutex);
    while (!s->first_started)
        pthread_cond_wait(&s->started_cond, &s->threads_mutex);
    int bind_error = s->bind_error;
    pthread_mutex_unlock(&s->threads_mutex);
    if (bind_error) {
        server_join_all(s);
        server_free(s);
        rc = ts_fail(bind_error, "topsync_rcl_server_start: cannot bind the server to core %u: %s",
                     chosen, strerror(bind_error));
        goto unlock;
    }
    pthread_mutex_lock(&registry_mutex);
    s->registry_next = registry;
    registry = s;
    pthread_mutex_unlock(&registry_mutex);
    topsync_rcl_usage_add_server(rt->usage, chosen);
    rt->nservers++;
    ts_rcl_alloc_servers_changed(rt);
    *out = s;
unlock:
    pthread_mutex_unlock(&rt->mutex);
    return rc;
}

int topsync_rcl_server_core(const topsync_rcl_server_t *s)
{
    return s ? (int)s->core : ts_fail(EINVAL, "topsync_rcl_server_core: NULL server");
}

int topsync_rcl_server_stats(const topsync_rcl_server_t *s, topsync_rcl_server_stats_t *out)
{
    if (!s || !out)
        return ts_fail(EINVAL, "topsync_rcl_server_stats: NULL argument");
    out->takeovers = atomic_load_explicit(&s->control->takeovers, memory_order_relaxed);
    pthread_mutex_lock((pthread_mutex_t *)&s->threads_mutex);
    out->threads = s->nthreads;
    pthread_mutex_unlock((pthread_mutex_t *)&s->threads_mutex);
    return 0;
}

int topsync_rcl_server_stop(topsync_rcl_server_t *s)
{
    if (!s)
        return ts_fail(EINVAL, "topsync_rcl_server_stop: NULL server");
    topsync_rcl_runtime_t *rt = s->rt;
    pthread_mutex_lock(&rt->mutex);
    if (s->nlocks) {
        unsigned n = s->nlocks;
        pthread_mutex_unlock(&rt->mutex);
        return ts_fail(EBUSY, "topsync_rcl_server_stop: %u lock(s) still attached to the "
                              "server on core %u; destroy them first", n, s->core);
    }
    pthread_mutex_lock(&registry_mutex);
    for (topsync_rcl_server_t **p = &registry; *p; p = &(*p)->registry_next)
        if (*p == s) {
            *p = s->registry_next;
            break;
        }
    pthread_mutex_unlock(&registry_mutex);
    server_join_all(s);
    topsync_rcl_usage_remove_server(rt->usage, s->core);
    rt->nservers--;
    ts_rcl_alloc_servers_changed(rt);
    pthread_mutex_unlock(&rt->mutex);
    server_free(s);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Locks                                                                    */

int topsync_rcl_lock_create(topsync_rcl_server_t *s, topsync_rcl_lock_t **out)
{
    if (!s || !out)
        return ts_fail(EINVAL, "topsync_rcl_lock_create: NULL argument");
    *out = NULL;
    void *mem;
    if (posix_memalign(&mem, s->line, 2 * s->line))
        return ts_fail(ENOMEM, "out of memory");
    memset(mem, 0, 2 * s->line);
    topsync_rcl_lock_t *l = mem;
    l->server = s;
    l->line = s->line;
    atomic_init(lock_busy(l), 0);
    atomic_store_explicit(&l->state, LOCK_LIVE, memory_order_relaxed);
    pthread_mutex_lock(&s->rt->mutex);
    s->nlocks++;
    pthread_mutex_unlock(&s->rt->mutex);
    *out = l;
    return 0;
}

/* Is a request of lock l pending on its server? */
static bool lock_has_pending(topsync_rcl_lock_t *l)
{
    topsync_rcl_server_t *s = l->server;
    /* acquire: pairs with the release store of nslots in acquire_slot() */
    unsigned n = atomic_load_explicit(&s->nslots, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        struct rcl_slot *slot = slot_at(s, i);
        uint32_t episode;
        if (request_pending(slot, &episode) &&
            atomic_load_explicit(&slot->lock, memory_order_relaxed) == l)
            return true;
    }
    return false;
}

int topsync_rcl_lock_destroy(topsync_rcl_lock_t *l)
{
    if (!l)
        return ts_fail(EINVAL, "topsync_rcl_lock_destroy: NULL lock");
    if (atomic_load_explicit(&l->state, memory_order_relaxed) != LOCK_LIVE)
        return ts_fail(EINVAL, "topsync_rcl_lock_destroy: lock %p was already destroyed",
                       (void *)l);
    topsync_rcl_server_t *s = l->server;
    topsync_rcl_runtime_t *rt = s->rt;
    pthread_mutex_lock(&rt->mutex);
    if (lock_has_pending(l)) {
        pthread_mutex_unlock(&rt->mutex);
        return ts_fail(EBUSY, "topsync_rcl_lock_destroy: a critical section of lock %p is "
                              "pending or running", (void *)l);
    }
    /* The thread that ran the lock's last critical section drops busy just
     * after publishing its completion: wait for that store. acquire: pairs
     * with the release store of 0 in run_request() */
    while (atomic_load_explicit(lock_busy(l), memory_order_acquire))
        sched_yield();
    atomic_store_explicit(&l->state, LOCK_DEAD, memory_order_relaxed);
    s->nlocks--;
    if (rt->quarantine_len == RCL_QUARANTINE) {
        free(rt->quarantine[0]);
        memmove(rt->quarantine, rt->quarantine + 1,
                (RCL_QUARANTINE - 1) * sizeof *rt->quarantine);
        rt->quarantine_len--;
    }
    rt->quarantine[rt->quarantine_len++] = l;
    pthread_mutex_unlock(&rt->mutex);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Client slots                                                             */

struct client_entry {
    topsync_rcl_server_t *server;
    uint64_t uid;
    struct rcl_slot *slot;
};
struct client_state {
    unsigned n, cap;
    struct client_entry *entries;
};

static _Thread_local struct client_state *tl_client;
static pthread_key_t client_key;
static pthread_once_t client_key_once = PTHREAD_ONCE_INIT;

static void release_slot(topsync_rcl_server_t *s, struct rcl_slot *slot)
{
    pthread_mutex_lock(&s->slots_mutex);
    slot->next_free = s->free_slots;
    s->free_slots = slot;
    atomic_fetch_sub_explicit(&s->nclients, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->slots_mutex);
}

static void client_exit(void *p)
{
    struct client_state *cs = p;
    pthread_mutex_lock(&registry_mutex);
    for (unsigned i = 0; i < cs->n; i++) {
        topsync_rcl_server_t *s = registry_find(cs->entries[i].uid);
        if (s)
            release_slot(s, cs->entries[i].slot);
    }
    pthread_mutex_unlock(&registry_mutex);
    free(cs->entries);
    free(cs);
    tl_client = NULL;
}

static void client_key_create(void)
{
    pthread_key_create(&client_key, client_exit);
}

static int new_slot(topsync_rcl_server_t *s, struct rcl_slot **out)
{
    pthread_mutex_lock(&s->slots_mutex);
    struct rcl_slot *slot = s->free_slots;
    if (slot) {
        s->free_slots = slot->next_free;
    } else {
        unsigned n = atomic_load_explicit(&s->nslots, memory_order_relaxed);
        if (n >= s->max_slots) {
            pthread_mutex_unlock(&s->slots_mutex);
            return ts_fail(ENOSPC, "topsync_rcl_execute: more than %u client threads on the "
                                   "server on core %u (max_clients)", s->max_slots, s->core);
        }
        if (n % RCL_CHUNK_SLOTS == 0) {
            void *chunk;
            if (posix_memalign(&chunk, s->line, RCL_CHUNK_SLOTS * s->stride)) {
                pthread_mutex_unlock(&s->slots_mutex);
                return ts_fail(ENOMEM, "out of memory");
            }
            memset(chunk, 0, RCL_CHUNK_SLOTS * s->stride);
            s->chunks[n / RCL_CHUNK_SLOTS] = chunk;
        }
        slot = slot_at(s, n);
        /* release: pairs with the acquire loads of nslots by the scanners,
         * which then see the chunk pointer and the zeroed line */
        atomic_store_explicit(&s->nslots, n + 1, memory_order_release);
    }
    atomic_fetch_add_explicit(&s->nclients, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->slots_mutex);
    *out = slot;
    return 0;
}

static int client_slot_slow(topsync_rcl_server_t *s, struct rcl_slot **out)
{
    pthread_once(&client_key_once, client_key_create);
    struct client_state *cs = tl_client;
    if (!cs) {
        cs = calloc(1, sizeof *cs);
        if (!cs)
            return ts_fail(ENOMEM, "out of memory");
        pthread_setspecific(client_key, cs);
        tl_client = cs;
    }
    /* forget the slots of stopped servers */
    pthread_mutex_lock(&registry_mutex);
    unsigned kept = 0;
    for (unsigned i = 0; i < cs->n; i++)
        if (registry_find(cs->entries[i].uid))
            cs->entries[kept++] = cs->entries[i];
    cs->n = kept;
    pthread_mutex_unlock(&registry_mutex);
    if (cs->n == cs->cap) {
        unsigned cap = cs->cap ? 2 * cs->cap : 4;
        struct client_entry *e = realloc(cs->entries, cap * sizeof *e);
        if (!e)
            return ts_fail(ENOMEM, "out of memory");
        cs->entries = e;
        cs->cap = cap;
    }
    int rc = new_slot(s, out);
    if (rc < 0)
        return rc;
    cs->entries[cs->n++] = (struct client_entry){s, s->uid, *out};
    return 0;
}

/* The calling thread's slot on s; NULL and *rc < 0 on failure. */
static inline struct rcl_slot *client_slot(topsync_rcl_server_t *s, int *rc)
{
    struct client_state *cs = tl_client;
    if (cs)
        for (unsigned i = 0; i < cs->n; i++)
            /* s is live (the caller holds one of its locks), so reading its
             * uid is safe; the uid tells a new server at a recycled address */
            if (cs->entries[i].server == s && cs->entries[i].uid == s->uid)
                return cs->entries[i].slot;
    struct rcl_slot *slot = NULL;
    *rc = client_slot_slow(s, &slot);
    return *rc < 0 ? NULL : slot;
}

/* ---------------------------------------------------------------------- */
/* Execute                                                                  */

int topsync_rcl_execute_checked(topsync_rcl_lock_t *lock, topsync_rcl_fn_t fn, void *arg,
                                void **result)
{
    if (!lock || !fn)
        return ts_fail(EINVAL, "topsync_rcl_execute: %s is NULL", lock ? "fn" : "lock");
    if (atomic_load_explicit(&lock->state, memory_order_relaxed) != LOCK_LIVE)
        return ts_fail(EINVAL, "topsync_rcl_execute: lock %p was destroyed (or is not an RCL "
                               "lock)", (void *)lock);
    if (__builtin_expect(tl_running_lock == lock, 0))
        return ts_fail(EDEADLK, "topsync_rcl_execute: called on lock %p from inside one of its "
                                "own critical sections: it would wait for itself forever",
                       (void *)lock);
    topsync_rcl_server_t *s = lock->server;
    int rc = 0;
    struct rcl_slot *slot = client_slot(s, &rc);
    if (!slot)
        return rc;
    atomic_store_explicit(&slot->lock, lock, memory_order_relaxed);
    slot->fn = fn;
    slot->arg = arg;
    uint32_t episode = slot->last_episode = (slot->last_episode + 1) & TS_EPISODE_MASK;
    /* release: pairs with the acquire load in request_pending() (server) */
    atomic_store_explicit(&slot->request.value, episode, memory_order_release);
    /* seq_cst fence: pairs with the fence in sleep_idle(): either the server's
     * rescan sees our request, or we see it SLEEPING and wake it */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->doorbell_line->doorbell, memory_order_relaxed) == DOOR_SLEEPING)
        wake_server(s);
    /* relaxed: a guess; more clients than CPUs beside the server's own */
    const ts_wait *wait = &s->wait_normal;
    if (atomic_load_explicit(&s->nclients, memory_order_relaxed) + 1 > s->cpus) {
        /* Oversubscribed. On the server's own CPU, waiting only delays the
         * server: give the CPU up at once. Elsewhere the server answers
         * within a round trip: a short spin saves a context switch (1 us
         * here) per request; measured with topsync-bench rcl, 2 clients on
         * core 0 and the server on core 1: 0.7-1.4 Mops/s yielding at once */
        int cpu = sched_getcpu();
        wait = cpu >= 0 && hwloc_bitmap_isset(s->cpuset, (unsigned)cpu) ? &s->wait_oversubscribed
                                                                        : &s->wait_short_spin;
    }
    /* acquire: pairs with the release ts_publish() of done in run_request() */
    ts_wait_reach(&slot->done, episode, wait);
    if (result)
        *result = slot->result;
    return 0;
}

void *topsync_rcl_execute(topsync_rcl_lock_t *lock, topsync_rcl_fn_t fn, void *arg)
{
    void *result = NULL;
    if (topsync_rcl_execute_checked(lock, fn, arg, &result) < 0) {
        fprintf(stderr, "topsync: %s\n", topsync_error_message());
        abort();
    }
    return result;
}

/* ---------------------------------------------------------------------- */
/* RCLHierarchicalAffinity: pinning workers                                 */

static int bind_thread_to_core(topsync_rcl_runtime_t *rt, unsigned core)
{
    hwloc_obj_t obj = hwloc_get_obj_by_type(rt->topo->hwloc, rt->topo->core_type, core);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return ts_fail(ENOMEM, "out of memory");
    hwloc_bitmap_and(set, obj->cpuset, rt->process_cpuset);
    if (hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, obj->cpuset);
    int rc = hwloc_set_cpubind(rt->topo->hwloc, set, HWLOC_CPUBIND_THREAD);
    int err = errno;
    hwloc_bitmap_free(set);
    if (rc < 0)
        return ts_fail(err, "cannot bind the worker to core %u: %s", core, strerror(err));
    return 0;
}

int topsync_rcl_worker_pin(topsync_rcl_runtime_t *rt, unsigned *core)
{
    if (!rt || !core)
        return ts_fail(EINVAL, "topsync_rcl_worker_pin: NULL argument");
    pthread_mutex_lock(&rt->mutex);
    int rc = topsync_rcl_place_worker(rt->usage, core);
    pthread_mutex_unlock(&rt->mutex);
    if (rc < 0)
        return rc;
    rc = bind_thread_to_core(rt, *core);
    if (rc < 0) {
        pthread_mutex_lock(&rt->mutex);
        topsync_rcl_usage_remove_worker(rt->usage, *core);
        pthread_mutex_unlock(&rt->mutex);
    }
    return rc;
}

int topsync_rcl_worker_unpin(topsync_rcl_runtime_t *rt, unsigned core)
{
    if (!rt)
        return ts_fail(EINVAL, "topsync_rcl_worker_unpin: NULL runtime");
    pthread_mutex_lock(&rt->mutex);
    int rc = topsync_rcl_usage_remove_worker(rt->usage, core);
    pthread_mutex_unlock(&rt->mutex);
    return rc;
}

struct worker_start {
    topsync_rcl_runtime_t *rt;
    unsigned core;
    void *(*start)(void *);
    void *arg;
};

static void worker_cleanup(void *p)
{
    struct worker_start *w = p;
    topsync_rcl_worker_unpin(w->rt, w->core);
    free(w);
}

static void *worker_main(void *p)
{
    struct worker_start *w = p;
    void *ret;
    pthread_cleanup_push(worker_cleanup, w);
    bind_thread_to_core(w->rt, w->core); /* placement recorded; binding best effort */
    ret = w->start(w->arg);
    pthread_cleanup_pop(1);
    return ret;
}

int topsync_rcl_thread_create(topsync_rcl_runtime_t *rt, pthread_t *thread,
                              const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    if (!rt || !thread || !start)
        return ts_fail(EINVAL, "topsync_rcl_thread_create: NULL argument");
    struct worker_start *w = malloc(sizeof *w);
    if (!w)
        return ts_fail(ENOMEM, "out of memory");
    pthread_mutex_lock(&rt->mutex);
    int rc = topsync_rcl_place_worker(rt->usage, &w->core);
    pthread_mutex_unlock(&rt->mutex);
    if (rc < 0) {
        free(w);
        return rc;
    }
    w->rt = rt;
    w->start = start;
    w->arg = arg;
    rc = pthread_create(thread, attr, worker_main, w);
    if (rc) {
        topsync_rcl_worker_unpin(rt, w->core);
        free(w);
        return ts_fail(rc, "topsync_rcl_thread_create: pthread_create: %s", strerror(rc));
    }
    return 0;
}
