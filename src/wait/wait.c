#include "wait/wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Thread_local jmp_buf *ts_timeout_target;
_Thread_local unsigned ts_wait_rank;

/*
 * The adaptive spin also learns, per thread, whether spinning pays: a
 * partner that is not on our CPU may still be descheduled (unbound ranks of
 * an oversubscribed node: issue 22.22, pairs 88-131 us spinning against
 * 8-15 us not spinning). Each spin that ends without the word reached halves
 * this thread's cap, each that succeeds doubles it, between a floor that
 * keeps probing (16 pauses, under a microsecond) and the policy's spin.
 */
#define TS_ADAPTIVE_SPIN_FLOOR 16u
static _Thread_local uint32_t adaptive_cap = UINT32_MAX;

/* The spin of this wait: the policy's, or with the adaptive spin, its spin
 * (capped as above) when no other participant was last seen on this CPU
 * (wait.h). The relaxed loads read hints: a stale CPU only misjudges one
 * spin. */
static uint32_t spin_budget(const ts_wait *p)
{
    if (!p->adaptive_spin)
        return p->spin_iterations;
    int cpu = sched_getcpu();
    if (cpu < 0)
        return 0;
    for (unsigned r = 0; r < p->npeers; r++) {
        if (r == ts_wait_rank)
            continue;
        const ts_word *w = (const ts_word *)(p->peer_base + (size_t)r * p->peer_stride);
        /* relaxed: a hint (see above) */
        if (atomic_load_explicit(&w->aux, memory_order_relaxed) == (uint32_t)cpu + 1)
            return 0;
    }
    return p->adaptive_spin < adaptive_cap ? p->adaptive_spin : adaptive_cap;
}

static void adaptive_learn(const ts_wait *p, uint32_t spin, bool reached)
{
    if (!p->adaptive_spin || !spin)
        return;
    uint32_t cap = reached ? 2 * spin : spin / 2;
    if (cap < TS_ADAPTIVE_SPIN_FLOOR)
        cap = TS_ADAPTIVE_SPIN_FLOOR;
    adaptive_cap = cap > p->adaptive_spin ? p->adaptive_spin : cap;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The deadline passed or the idle hook gave up: unwind to the armed caller. */
static _Noreturn void unwind(int why)
{
    if (ts_timeout_target)
        longjmp(*ts_timeout_target, why);
    fprintf(stderr, "topsync: %s\n",
            why == TS_UNWIND_TIMEOUT ? "a wait exceeded TOPSYNC_TIMEOUT"
                                     : "a wait was abandoned by its idle hook");
    abort();
}

/* The slow path's clock: a deadline and the idle hook's next call (0: none).
 * Started at the slow path's first check, not at its entry: a wait that the
 * spin phase ends (most, when participants have CPUs of their own) reads no
 * clock at all; a deadline of seconds does not notice the spin's micro-
 * seconds. Plain waits (neither a timeout nor a hook) never read it. */
struct slow_clock {
    uint64_t deadline, next_idle;
    bool timed, started;
};

static inline void clock_init(struct slow_clock *c, const ts_wait *p)
{
    c->deadline = c->next_idle = 0;
    c->timed = p->timeout_ns || p->idle;
    c->started = false;
}

/* Unwind past the deadline, call the idle hook when due; nanoseconds until
 * the next of them (0: neither, wait without a limit). */
static uint64_t clock_check(struct slow_clock *c, const ts_wait *p)
{
    if (!c->timed)
        return 0;
    uint64_t now = now_ns();
    if (!c->started) {
        c->started = true;
        if (p->timeout_ns)
            c->deadline = now + p->timeout_ns;
        if (p->idle)
            c->next_idle = now + p->idle_ns;
    }
    if (c->deadline && now >= c->deadline)
        unwind(TS_UNWIND_TIMEOUT);
    if (c->next_idle && now >= c->next_idle) {
        if (p->idle(p->idle_arg))
            unwind(TS_UNWIND_IDLE);
        now = now_ns();
        c->next_idle = now + p->idle_ns;
    }
    uint64_t next = c->next_idle;
    if (c->deadline && (!next || c->deadline < next))
        next = c->deadline;
    return next > now ? next - now : 1;
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
    struct slow_clock clock;
    clock_init(&clock, policy);
    if (policy->kind == TS_WAIT_SPIN) {
        if (!clock.timed) {
            /* no counter in this loop: an iteration that rereads an unchanged
             * word has no effect, which GenMC's liveness check relies on */
            while (!reached_now(w, episode))
                ts_cpu_relax();
            return;
        }
        for (uint32_t i = 1; !reached_now(w, episode); i++) {
            if ((i & 1023u) == 0)
                clock_check(&clock, policy);
            ts_cpu_relax();
        }
        return;
    }
    uint32_t spin = spin_budget(policy);
    for (uint32_t i = 0; i < spin; i++) {
        if (reached_now(w, episode)) {
            adaptive_learn(policy, spin, true);
            return;
        }
        ts_cpu_relax();
    }
    adaptive_learn(policy, spin, false);
    if (policy->kind == TS_WAIT_YIELD) {
        while (!reached_now(w, episode)) {
            clock_check(&clock, policy);
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
        uint64_t left = clock_check(&clock, policy);
        if (!(v & TS_SLEEPING)) {
            /* relaxed: the CAS only has to be ordered against the publisher's
             * exchange, which the word's modification order does (see wait.h);
             * the acquire that matters is the reload at the top of the loop */
            if (!atomic_compare_exchange_strong_explicit(
                    &w->value, &v, v | TS_SLEEPING, memory_order_relaxed, memory_order_relaxed))
                continue;
            v |= TS_SLEEPING;
        }
        ts_futex_wait(&w->value, v, policy->process_shared, left);
    }
}
