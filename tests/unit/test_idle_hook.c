/*
 * The idle hook (options.idle): called from the waiting thread while a wait
 * is in its slow path, for every algorithm and wait policy; a wait whose
 * hook returns 0 ends normally when the last participant comes; a hook
 * returning non-zero abandons the wait (-ECANCELED, then -EPIPE); bad
 * intervals are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

struct hook {
    atomic_int calls;
    int give_up_at;     /* 0: never */
    atomic_int foreign; /* calls from a thread that was not waiting */
};

static _Thread_local int is_waiter;

static int idle(void *arg)
{
    struct hook *h = arg;
    if (!is_waiter)
        atomic_fetch_add(&h->foreign, 1);
    int n = atomic_fetch_add(&h->calls, 1) + 1;
    return h->give_up_at && n >= h->give_up_at;
}

struct waiter {
    topsync_barrier_t *b;
    unsigned rank;
    int rc, again;
    char message[256];
};

static void *wait_once(void *p)
{
    struct waiter *w = p;
    is_waiter = 1;
    w->rc = topsync_barrier_wait_checked(w->b, w->rank);
    snprintf(w->message, sizeof w->message, "%s", topsync_error_message());
    w->again = w->rc == 0 ? 0 : topsync_barrier_wait_checked(w->b, w->rank);
    return NULL;
}

/* Ranks 0 and 1 wait; rank 2 comes after `late` seconds and a first call of
 * the hook (negative: never). */
static void run(const char *algorithm, topsync_wait_policy_t policy, struct hook *h, double late,
                struct waiter w[2])
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = algorithm;
    o.wait = policy;
    o.idle = idle;
    o.idle_arg = h;
    o.idle_interval_seconds = 0.01;
    topsync_barrier_t *b;
    CHECK_EQ(topsync_barrier_create(&b, 3, &o), 0);
    for (unsigned i = 0; i < 2; i++)
        w[i] = (struct waiter){.b = b, .rank = i};
    pthread_t t[2];
    for (unsigned i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, wait_once, &w[i]);
    if (late >= 0) {
        usleep((useconds_t)(late * 1e6));
        /* and not before a waiter called the hook: on a loaded machine the
         * waiters may not have run at all in `late` seconds (10 s at most:
         * then the check below fails) */
        for (int i = 0; i < 1000 && atomic_load(&h->calls) < 1; i++)
            usleep(10000);
        /* the last to arrive may still wait for its release (from a waiter
         * descheduled under load, seen under ASan): it is a waiter then */
        is_waiter = 1;
        CHECK_EQ(topsync_barrier_wait_checked(b, 2), 0);
        is_waiter = 0;
    }
    for (unsigned i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(topsync_barrier_destroy(b), 0);
}

int main(void)
{
    const topsync_wait_policy_t policies[] = {TOPSYNC_WAIT_SPIN, TOPSYNC_WAIT_YIELD,
                                              TOPSYNC_WAIT_BLOCK};
    for (const char *const *name = topsync_barrier_algorithm_names(); *name; name++) {
        for (unsigned p = 0; p < 3; p++) {
            /* the last participant comes after 0.2 s: the hook ran meanwhile,
             * in the waiters only, and the waits ended normally */
            struct hook h = {.give_up_at = 0};
            struct waiter w[2];
            run(*name, policies[p], &h, 0.2, w);
            CHECK_EQ(w[0].rc, 0);
            CHECK_EQ(w[1].rc, 0);
            CHECK(atomic_load(&h.calls) >= 1);
            CHECK_EQ(atomic_load(&h.foreign), 0);
            /* it never comes: the hook gives up at its 5th call */
            struct hook quit = {.give_up_at = 5};
            run(*name, policies[p], &quit, -1, w);
            for (unsigned i = 0; i < 2; i++) {
                CHECK_EQ(w[i].rc, -ECANCELED);
                CHECK(strstr(w[i].message, "abandoned its wait") != NULL);
                CHECK_EQ(w[i].again, -EPIPE);
            }
            CHECK(atomic_load(&quit.calls) >= 5);
        }
    }
    /* a barrier of one never waits: the hook is never called */
    struct hook none = {.give_up_at = 1};
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.idle = idle;
    o.idle_arg = &none;
    topsync_barrier_t *b;
    CHECK_EQ(topsync_barrier_create(&b, 1, &o), 0);
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(topsync_barrier_wait_checked(b, 0), 0);
    CHECK_EQ(atomic_load(&none.calls), 0);
    topsync_barrier_destroy(b);
    /* bad intervals */
    const double bad[] = {-1, NAN, 1e7};
    for (unsigned i = 0; i < 3; i++) {
        o.idle_interval_seconds = bad[i];
        CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
        CHECK(strstr(topsync_error_message(), "idle_interval_seconds") != NULL);
    }
    return check_summary();
}
