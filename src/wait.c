#include "wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Thread_local jmp_buf *ts_timeout_target;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The deadline of a wait has passed: unwind to the armed caller. */
static _Noreturn void timed_out(void)
{
    if (ts_timeout_target)
        longjmp(*ts_timeout_target, 1);
    fprintf(stderr, "topsync: a wait exceeded TOPSYNC_TIMEOUT\n");
    abort();
}

/* Has the deadline (0: none) passed? */
static inline bool expired(uint64_t deadline)
{
    return deadline && now_ns() >= deadline;
}

void ts_futex_wait(_Atomic uint32_t *addr, uint32_t expected, bool process_shared,
                   uint64_t timeout_ns)
{
    int op = process_shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
    struct timespec rel = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                           .tv_nsec = (long)(timeout_ns % 1000000000u)};
    /* EAGAIN (value changed), EINTR, ETIMEDOUT, spurious wake-ups: the
     * caller rechecks the value (and its deadline). */
    syscall(SYS_futex, (uint32_t *)addr, op, expected, timeout_ns ? &rel : NULL, NULL, 0);
}

void ts_futex_wake(_Atomic uint32_t *addr, bool process_shared)
{
    int op = process_shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
    syscall(SYS_futex, (uint32_t *)addr, op, INT_MAX, NULL, NULL, 0);
}

static inline bool reached_now(ts_word *w, uint32_t episode)
{
    /* acquire: pairs with the release store/exchange in ts_publish() */
    return ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode);
}

void ts_wait_slow(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    uint64_t deadline = policy->timeout_ns ? now_ns() + policy->timeout_ns : 0;
    if (policy->kind == TS_WAIT_SPIN) {
        for (uint32_t i = 1; !reached_now(w, episode); i++) {
            if (deadline && (i & 1023u) == 0 && expired(deadline))
                timed_out();
            ts_cpu_relax();
        }
        return;
    }
    for (uint32_t i = 0; i < policy->spin_iterations; i++) {
        if (reached_now(w, episode))
            return;
        ts_cpu_relax();
    }
    if (policy->kind == TS_WAIT_YIELD) {
        while (!reached_now(w, episode)) {
            if (expired(deadline))
                timed_out();
            sched_yield();
        }
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
        if (expired(deadline))
            timed_out();
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
        uint64_t left = 0;
        if (deadline) {
            uint64_t now = now_ns();
            left = deadline > now ? deadline - now : 1;
        }
        ts_futex_wait(&w->value, v, policy->process_shared, left);
    }
}
