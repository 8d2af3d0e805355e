/*
 * RCL clients (Lozi et al. 2012; design.md section 5): locks, each client
 * thread's request line on each server, and execute. The protocol of a
 * request line is described in rcl/serving_loop.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "rcl/rcl_private.h"

int topsync_rcl_lock_create(topsync_rcl_server_t *s, topsync_rcl_lock_t **out)
{
    if (!s || !out)
        return ts_fail(EINVAL, "topsync_rcl_lock_create: NULL argument");
    *out = NULL;
    if (!ts_rcl_server_is_live(s))
        return ts_fail(EINVAL,
                       "topsync_rcl_lock_create: server %p was stopped (or is not an "
                       "RCL server)",
                       (void *)s);
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
        if (ts_rcl_request_pending(slot, &episode) &&
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
        return ts_fail(EBUSY,
                       "topsync_rcl_lock_destroy: a critical section of lock %p is "
                       "pending or running",
                       (void *)l);
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
        memmove(rt->quarantine, rt->quarantine + 1, (RCL_QUARANTINE - 1) * sizeof *rt->quarantine);
        rt->quarantine_len--;
    }
    rt->quarantine[rt->quarantine_len++] = l;
    pthread_mutex_unlock(&rt->mutex);
    return 0;
}

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
    pthread_mutex_lock(&ts_rcl_servers.mutex);
    for (unsigned i = 0; i < cs->n; i++) {
        topsync_rcl_server_t *s = ts_rcl_server_find_locked(cs->entries[i].uid);
        if (s)
            release_slot(s, cs->entries[i].slot);
    }
    pthread_mutex_unlock(&ts_rcl_servers.mutex);
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
            return ts_fail(ENOSPC,
                           "topsync_rcl_execute: more than %u client threads on the "
                           "server on core %u (max_clients)",
                           s->max_slots, s->core);
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
    pthread_mutex_lock(&ts_rcl_servers.mutex);
    unsigned kept = 0;
    for (unsigned i = 0; i < cs->n; i++)
        if (ts_rcl_server_find_locked(cs->entries[i].uid))
            cs->entries[kept++] = cs->entries[i];
    cs->n = kept;
    pthread_mutex_unlock(&ts_rcl_servers.mutex);
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
    cs->entries[cs->n++] = (struct client_entry){s, s->live.uid, *out};
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
            if (cs->entries[i].server == s && cs->entries[i].uid == s->live.uid)
                return cs->entries[i].slot;
    struct rcl_slot *slot = NULL;
    *rc = client_slot_slow(s, &slot);
    return *rc < 0 ? NULL : slot;
}

int topsync_rcl_execute_checked(topsync_rcl_lock_t *lock, topsync_rcl_fn_t fn, void *arg,
                                void **result)
{
    if (!lock || !fn)
        return ts_fail(EINVAL, "topsync_rcl_execute: %s is NULL", lock ? "fn" : "lock");
    if (atomic_load_explicit(&lock->state, memory_order_relaxed) != LOCK_LIVE)
        return ts_fail(EINVAL,
                       "topsync_rcl_execute: lock %p was destroyed (or is not an RCL "
                       "lock)",
                       (void *)lock);
    if (__builtin_expect(ts_rcl_running_lock == lock, 0))
        return ts_fail(EDEADLK,
                       "topsync_rcl_execute: called on lock %p from inside one of its "
                       "own critical sections: it would wait for itself forever",
                       (void *)lock);
    topsync_rcl_server_t *s = lock->server;
    int rc = 0;
    struct rcl_slot *slot = client_slot(s, &rc);
    if (!slot)
        return rc;
    /* release: pairs with the acquire load of the lock in run_request(): a
     * servicing thread that reads this lock sees the done of our previous
     * request, which we acquired before writing it, and cannot run that
     * request again under this lock */
    atomic_store_explicit(&slot->lock, lock, TS_RCL_LOCK_STORE_ORDER);
    slot->fn = fn;
    slot->arg = arg;
    uint32_t episode = slot->last_episode = (slot->last_episode + 1) & TS_EPISODE_MASK;
    /* release: pairs with the acquire load in ts_rcl_request_pending() (server) */
    atomic_store_explicit(&slot->request.value, episode, memory_order_release);
    /* seq_cst fence: pairs with the fence in sleep_idle(): either the server's
     * rescan sees our request, or we see it SLEEPING and wake it */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->doorbell_line->doorbell, memory_order_relaxed) == DOOR_SLEEPING)
        ts_rcl_wake_server(s);
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
