/*
 * RCL: the servicing loop (design.md section 5; Lozi et al., as extended by
 * Paznikov and Shichkina).
 * The why: docs/design.md section 8.17.
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
 * Pending means `done` has not reached `request` (wrap-safe), not merely
 * that they differ: two servicing threads may scan at once around a
 * takeover, and one may read a stale request (0) with a fresh done (1),
 * which must not look like a request, whose lock would be the initial NULL.
 * tests/genmc/rcl_scanners.c substitutes the old predicate (TS_RCL_PENDING)
 * and GenMC must catch it.
 */
#ifndef TS_RCL_PENDING
#define TS_RCL_PENDING(req, done) (!ts_reached((done), (req)))
#endif

bool ts_rcl_request_pending(struct rcl_slot *slot, uint32_t *episode)
{
    /* acquire: pairs with the client's release store of `request` in
     * topsync_rcl_execute_checked(), making (lock, fn, arg) visible */
    uint32_t req = atomic_load_explicit(&slot->request.value, memory_order_acquire);
    uint32_t done = atomic_load_explicit(&slot->done.value, memory_order_relaxed);
    *episode = req;
    return TS_RCL_PENDING(req, done);
}

_Thread_local topsync_rcl_lock_t *ts_rcl_running_lock;

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
    /* acquire: pairs with the client's release store of the lock in
     * topsync_rcl_execute_checked(). If we read the lock of a newer request
     * than `episode`, its client had seen `episode` done before writing it,
     * so the re-check below under the claim sees that done and gives up:
     * an older request is never run again under a newer request's lock. */
    topsync_rcl_lock_t *lock = atomic_load_explicit(&slot->lock, TS_RCL_LOCK_LOAD_ORDER);
    _Atomic uint32_t *busy = lock_busy(lock);
    uint32_t expected = 0;
    /* acquire: pairs with the release store of 0 below, by whichever thread
     * ran this lock's previous critical section */
    if (!atomic_compare_exchange_strong_explicit(busy, &expected, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return false;
    uint32_t again;
    if (!ts_rcl_request_pending(slot, &again) || again != episode ||
        atomic_load_explicit(&slot->lock, memory_order_relaxed) != lock) {
        /* release: pairs with the acquire CAS above (of the next claimer) */
        atomic_store_explicit(busy, 0, memory_order_release);
        return false;
    }
    struct server_control *c = s->control;
    /* release: pairs with the acquire load of cs_seq in standby(), so a
     * standby that sees this critical section running also sees busy = 1 */
    atomic_store_explicit(&c->cs_seq, ++*cs_counter | 1u, memory_order_release);
    ts_rcl_running_lock = lock;
    slot->result = slot->fn(slot->arg);
    ts_rcl_running_lock = NULL;
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
        if (ts_rcl_request_pending(slot, &episode) && run_request(s, slot, episode, cs_counter)) {
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
        if (!ts_rcl_request_pending(slot, &episode))
            continue;
        topsync_rcl_lock_t *lock = atomic_load_explicit(&slot->lock, memory_order_relaxed);
        /* relaxed: a stale busy = 1 only means the releasing thread's own
         * wake-up (leave_active) comes after our sleep, see sleep_idle() */
        if (!atomic_load_explicit(lock_busy(lock), memory_order_relaxed))
            return true;
    }
    return false;
}

void ts_rcl_wake_server(topsync_rcl_server_t *s)
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
     * ts_rcl_signal_stop() (after stop = 1): either our recheck sees their
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

void ts_rcl_serve(topsync_rcl_server_t *s, uint32_t self, uint32_t *cs_counter)
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
void ts_rcl_leave_active(topsync_rcl_server_t *s)
{
    /* seq_cst fence: pairs with the fence in sleep_idle() (see there) */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->doorbell_line->doorbell, memory_order_relaxed) == DOOR_SLEEPING)
        ts_rcl_wake_server(s);
}

void ts_rcl_signal_stop(topsync_rcl_server_t *s)
{
    atomic_store_explicit(&s->control->stop, 1, memory_order_release);
    /* seq_cst fence: pairs with the fence in sleep_idle(), a Dekker pair
     * (stop, doorbell): either the idle server's recheck sees stop, or our
     * exchange in ts_rcl_wake_server() sees SLEEPING and wakes it. Without it
     * RC11 lets both miss (GenMC found the server asleep forever, issue 13;
     * tests/genmc/rcl_stop.c keeps it found) */
    atomic_thread_fence(memory_order_seq_cst);
    ts_rcl_wake_server(s);
    ts_futex_wake(&s->doorbell_line->doorbell, false);
    atomic_fetch_add_explicit(&s->control->standby_word, 1, memory_order_relaxed);
    ts_futex_wake(&s->control->standby_word, false);
    atomic_fetch_add_explicit(&s->control->park_word, 1, memory_order_relaxed);
    ts_futex_wake(&s->control->park_word, false);
}
