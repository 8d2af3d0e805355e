/*
 * The idle hook (options.idle): called from the waiting thread while a wait
 * is in its slow path, for every algorithm and wait policy; a wait whose
 * hook returns 0 ends normally when the last participant comes; the hook is
 * called as soon as the spin is over, then at intervals that start at about
 * a microsecond (not at idle_interval_seconds), and returning
 * TOPSYNC_IDLE_AGAIN keeps them there; a hook returning another non-zero
 * value abandons the wait (-ECANCELED, then -EPIPE); bad intervals are
 * refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

struct hook {
    atomic_int calls;
    int give_up_at;     /* 0: never */
    int again;          /* return TOPSYNC_IDLE_AGAIN (until give_up_at) */
    atomic_int foreign; /* calls from a thread that was not waiting */
};

static _Thread_local int is_waiter;

static int idle(void *arg)
{
    struct hook *h = arg;
    if (!is_waiter)
        atomic_fetch_add(&h->foreign, 1);
    int n = atomic_fetch_add(&h->calls, 1) + 1;
    if (h->give_up_at && n >= h->give_up_at)
        return 1;
    return h->again ? TOPSYNC_IDLE_AGAIN : 0;
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

/* Ranks 0 and 1 wait; rank 2 comes after `late` seconds and `calls` calls
 * of the hook (late negative: never), or after 10 s without them: then
 * *reached is false. */
static void run(const char *algorithm, topsync_wait_policy_t policy, struct hook *h, double late,
                int calls, double interval, struct waiter w[2], bool *reached)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = algorithm;
    o.wait = policy;
    o.idle = idle;
    o.idle_arg = h;
    o.idle_interval_seconds = interval;
    topsync_barrier_t *b;
    CHECK_EQ(topsync_barrier_create(&b, 3, &o), 0);
    for (unsigned i = 0; i < 2; i++)
        w[i] = (struct waiter){.b = b, .rank = i};
    pthread_t t[2];
    for (unsigned i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, wait_once, &w[i]);
    if (late >= 0) {
        usleep((useconds_t)(late * 1e6));
        /* and not before the waiters called the hook `calls` times: on a
         * loaded machine they may not have run at all in `late` seconds
         * (10 s at most: then the caller's check fails) */
        for (int i = 0; i < 100000 && atomic_load(&h->calls) < calls; i++)
            usleep(100);
        *reached = atomic_load(&h->calls) >= calls;
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
            bool reached = false;
            run(*name, policies[p], &h, 0.2, 1, 0.01, w, &reached);
            CHECK(reached);
            CHECK_EQ(w[0].rc, 0);
            CHECK_EQ(w[1].rc, 0);
            CHECK_EQ(atomic_load(&h.foreign), 0);
            /* with an interval of 1000 s, the first calls still come within
             * microseconds of each other (1, 2, 4, 8 us: 5 calls) */
            struct hook backoff = {.give_up_at = 0};
            run(*name, policies[p], &backoff, 0, 5, 1000, w, &reached);
            CHECK(reached);
            CHECK(w[0].rc == 0 && w[1].rc == 0);
            /* TOPSYNC_IDLE_AGAIN keeps them coming: 200 calls, which the
             * doubling intervals alone would not make in 10 s (about 24) */
            struct hook again = {.give_up_at = 0, .again = 1};
            run(*name, policies[p], &again, 0, 200, 1000, w, &reached);
            CHECK(reached);
            CHECK(w[0].rc == 0 && w[1].rc == 0);
            CHECK_EQ(atomic_load(&again.foreign), 0);
            /* it never comes: the hook gives up at its 5th call; that
             * waiter's wait is abandoned (-ECANCELED), the other's too or,
             * if the broken barrier reaches it before its own hook gives
             * up, it finds it broken (-EPIPE) */
            struct hook quit = {.give_up_at = 5};
            run(*name, policies[p], &quit, -1, 0, 0.01, w, &reached);
            unsigned cancelled = 0;
            for (unsigned i = 0; i < 2; i++) {
                if (w[i].rc == -ECANCELED) {
                    cancelled++;
                    CHECK(strstr(w[i].message, "abandoned its wait") != NULL);
                } else {
                    CHECK_EQ(w[i].rc, -EPIPE);
                    CHECK(strstr(w[i].message, "broken") != NULL);
                }
                CHECK_EQ(w[i].again, -EPIPE);
            }
            CHECK(cancelled >= 1);
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
