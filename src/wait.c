#include "wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *addr, uint32_t expected, bool process_shared)
{
    int op = process_shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
    /* EAGAIN (value changed), EINTR, spurious wake-ups: the caller rechecks. */
    syscall(SYS_futex, (uint32_t *)addr, op, expected, NULL, NULL, 0);
}

void ts_wake_all(ts_word *w, bool process_shared)
{
    int op = process_shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
    syscall(SYS_futex, (uint32_t *)&w->value, op, INT_MAX, NULL, NULL, 0);
}

static inline bool reached_now(ts_word *w, uint32_t episode)
{
    /* acquire: pairs with the release store/exchange in ts_publish() */
    return ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode);
}

void ts_wait_slow(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    if (policy->kind == TS_WAIT_SPIN) {
        while (!reached_now(w, episode))
            ts_cpu_relax();
        return;
    }
    for (uint32_t i = 0; i < policy->spin_iterations; i++) {
        if (reached_now(w, episode))
            return;
        ts_cpu_relax();
    }
    if (policy->kind == TS_WAIT_YIELD) {
        while (!reached_now(w, episode))
            sched_yield();
        return;
    }
    for (uint32_t i = 0; i < policy->yield_iterations; i++) {
        if (reached_now(w, episode))
            return;
        sched_yield();
    }
    for (;;) {
        /* acquire: pairs with the release exchange in ts_publish() */
        uint32_t v = atomic_load_explicit(&w->value, memory_order_acquire);
        if (ts_reached(v, episode))
            return;
        if (!(v & TS_SLEEPING)) {
            /* relaxed: the CAS only has to be ordered against the publisher's
             * exchange, which the word's modification order does (see wait.h);
             * the acquire that matters is the reload at the top of the loop */
            if (!atomic_compare_exchange_strong_explicit(&w->value, &v, v | TS_SLEEPING,
                                                         memory_order_relaxed,
                                                         memory_order_relaxed))
                continue;
            v |= TS_SLEEPING;
        }
        futex_wait(&w->value, v, policy->process_shared);
    }
}
