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

void ts_wait_slow(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    uint32_t v;
    uint32_t spins = policy->kind == TS_WAIT_SPIN ? UINT32_MAX : policy->spin_iterations;

    for (uint32_t i = 0;; i++) {
        /* acquire: pairs with the release store in ts_publish() */
        if (ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
            return;
        if (policy->kind == TS_WAIT_SPIN || i < spins) {
            ts_cpu_relax();
            continue;
        }
        break;
    }
    if (policy->kind == TS_WAIT_YIELD) {
        /* acquire: pairs with the release store in ts_publish() */
        while (!ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
            sched_yield();
        return;
    }
    for (uint32_t i = 0; i < policy->yield_iterations; i++) {
        sched_yield();
        /* acquire: pairs with the release store in ts_publish() */
        if (ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
            return;
    }
    for (;;) {
        atomic_fetch_add_explicit(&w->sleepers, 1, memory_order_relaxed);
        /* seq_cst: pairs with the publisher's fence in ts_publish() (Dekker) */
        atomic_thread_fence(memory_order_seq_cst);
        /* acquire: pairs with the release store in ts_publish() */
        v = atomic_load_explicit(&w->value, memory_order_acquire);
        if (!ts_reached(v, episode))
            futex_wait(&w->value, v, policy->process_shared);
        atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_relaxed);
        /* acquire: pairs with the release store in ts_publish() */
        if (ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
            return;
    }
}
