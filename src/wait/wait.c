#include "wait/wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

_Thread_local jmp_buf *ts_timeout_target;
_Thread_local unsigned ts_wait_rank;
TS_TLS_INITIAL_EXEC _Thread_local ts_word *ts_wait_learned;
/* This thread's spin probe (below, "The spin probe"), as struct
 * ts_spin_probe's fields: scalars, which GenMC's interpreter takes as
 * thread-locals where it refuses a struct */
static TS_TLS_INITIAL_EXEC _Thread_local uint64_t ts_spin_probe_due;
static TS_TLS_INITIAL_EXEC _Thread_local unsigned ts_spin_probe_failed;
static TS_TLS_INITIAL_EXEC _Thread_local uint64_t ts_spin_probe_last_wait;

/*
 * Learning (docs/design.md section 2, "The spin"). Spinning and yielding
 * only pay while the awaited participant runs: bound but on a busy CPU,
 * unbound and placed on ours, or descheduled for other work (issue 35: 2
 * unbound threads with a CPU hog took 488-637 us per barrier with a
 * 4096-pause spin and 8 yields, 5-8.5 us without the spin; a yield to a
 * hog costs its whole time slice). Each spin that ends without the word
 * reached halves this participant's spin cap, each that succeeds doubles
 * it, between a floor that keeps probing (16 pauses, under a microsecond)
 * and the policy's most; yields the same, down to none, a zero cap being
 * probed with one yield every TS_YIELD_PROBE_PERIOD slow waits, a period
 * that doubles (up to 256 times) with each probe that fails: a probe that
 * hands the CPU to a hog costs its time slice (issue 35: 8 unbound threads
 * with 2 CPU hogs, 2 ms per barrier with 16 yields, 0.32 ms with probes
 * every 16 waits).
 */
#define TS_YIELD_PROBE_PERIOD 16u
#define TS_YIELD_PROBE_MAX_SHIFT 8u

/* The cap learned in word `which`: `initial` while nothing was learned,
 * never above `most`. */
static inline uint32_t learned_cap(ts_word *learned, unsigned which, uint32_t initial,
                                   uint32_t most)
{
    /* relaxed: the word is this participant's own (wait.h) */
    return ts_spin_cap_learned(atomic_load_explicit(&learned[which].aux, memory_order_relaxed),
                               initial, most);
}

static inline void learned_set(ts_word *learned, unsigned which, uint32_t cap)
{
    /* relaxed: the word is this participant's own (wait.h) */
    atomic_store_explicit(&learned[which].aux, cap + 1, memory_order_relaxed);
}

/* Was another participant last seen on this CPU? (Or is this CPU not
 * known.) The relaxed loads read hints: a stale CPU only misjudges one
 * spin. */
static bool colocated(const ts_wait *p)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return true;
    for (unsigned r = 0; r < p->npeers; r++) {
        if (r == ts_wait_rank)
            continue;
        const ts_word *w = (const ts_word *)(p->peer_base + (size_t)r * p->peer_stride);
        /* relaxed: a hint (see above) */
        if (atomic_load_explicit(&w->aux, memory_order_relaxed) == (uint32_t)cpu + 1)
            return true;
    }
    return false;
}

/* The spin of this wait: the policy's, capped by what was learned; none
 * when the policy checks co-location and another participant was last seen
 * on this CPU (wait.h). */
static uint32_t spin_budget(const ts_wait *p, ts_word *learned)
{
    if (p->colocation && colocated(p))
        return 0;
    return learned ? learned_cap(learned, 0, p->spin_iterations, ts_spin_most(p))
                   : p->spin_iterations;
}

/* A spin that ended the wait (wait.h, ts_spin_cap_after_catch). */
static void spin_learn(const ts_wait *p, ts_word *learned, uint32_t spin, bool caught)
{
    if (!learned || !spin)
        return;
    learned_set(learned, 0, ts_spin_cap_after_catch(p, spin, caught));
}

/* A spin that ran out, in a wait that lasted waited_ns more (wait.h,
 * ts_spin_cap_after_miss); the whole wait is also the next probe's
 * measure. */
static void spin_learn_missed(const ts_wait *p, ts_word *learned, uint32_t spin, uint64_t waited_ns)
{
    uint64_t wait_ns = ts_spin_ns(spin) + waited_ns;
    ts_spin_probe_last_wait = wait_ns;
    learned_set(learned, 0, ts_spin_cap_after_miss(p, spin, wait_ns));
}

/*
 * The spin probe. Two participants that both sleep keep each other asleep:
 * each waits for the other's futex wake-up, which on a VM whose idle vCPU
 * the host has descheduled takes 20-60 us, so every wait lasts longer than
 * the most and halves the cap, down to the floor, where no spin ever
 * catches the partner again (issue 35: 2 threads bound to idle CPUs, 17 of
 * 50 runs of 20000 barriers at 1-73 us per barrier where the others took
 * 44-84 ns; glibc's barrier, one wake-up per barrier, 40-60 us in the
 * same runs). A spin that outlasts one wake-up ends it: the partner that
 * was woken arrives, and neither sleeps any more. So a spin that ran out
 * below the probe's length, when this thread's probe is due, goes on to
 * that length: twice the thread's last wait that the spin did not end
 * (the partner's wake-up is in it), within [TS_SPIN_PROBE_LEAST_NS,
 * TS_SPIN_PROBE_MOST_NS]. A probe that catches the partner sets the cap as
 * any spin that caught does. Due at most every TS_SPIN_PROBE_NS, a period
 * that doubles with each probe that fails, up to 1024 times (about 1 s):
 * on a busy node, where waits are long because the partner is preempted
 * for a time slice, probes cost at most 256 us in the first millisecond,
 * 2.6 ms over the first second, then 256 us a second. Per thread, as the
 * yields' slow rule is.
 */
#define TS_SPIN_PROBE_NS 1000000u
#define TS_SPIN_PROBE_MAX_SHIFT 10u

void ts_wait_spin_probe_get(struct ts_spin_probe *out)
{
    out->due_ns = ts_spin_probe_due;
    out->failed = ts_spin_probe_failed;
    out->last_wait_ns = ts_spin_probe_last_wait;
}

void ts_wait_spin_probe_set(const struct ts_spin_probe *in)
{
    ts_spin_probe_due = in->due_ns;
    ts_spin_probe_failed =
        in->failed < TS_SPIN_PROBE_MAX_SHIFT ? in->failed : TS_SPIN_PROBE_MAX_SHIFT;
    ts_spin_probe_last_wait = in->last_wait_ns;
}

/* The pauses of a probe after a spin of `spin` ran out at `now`; 0 when
 * none is due, when the spin was that long already, when the policy's
 * spin may not grow (oversubscribed: the awaited participant most likely
 * needs a CPU that a long spin would hold; settings.c), or when it may
 * grow past any probe (the long spin, up to a scheduler slice: there the
 * rule of spin_learn_missed brings the cap back up by itself, a wake-up
 * being far shorter than the most). */
static uint32_t spin_probe_pauses(const ts_wait *p, uint32_t spin, uint64_t now)
{
    if (now < ts_spin_probe_due || p->spin_learn_most <= p->spin_iterations ||
        p->spin_learn_most >= ts_wait_pauses_for_ns(TS_SPIN_PROBE_MOST_NS))
        return 0;
    uint64_t ns = 2 * ts_spin_probe_last_wait;
    ns = ns < TS_SPIN_PROBE_LEAST_NS  ? TS_SPIN_PROBE_LEAST_NS
         : ns > TS_SPIN_PROBE_MOST_NS ? TS_SPIN_PROBE_MOST_NS
                                      : ns;
    uint32_t probe = ts_wait_pauses_for_ns(ns);
    return probe > spin ? probe : 0;
}

static void spin_probe_done(bool caught, uint64_t now)
{
    if (caught)
        ts_spin_probe_failed = 0;
    else if (ts_spin_probe_failed < TS_SPIN_PROBE_MAX_SHIFT)
        ts_spin_probe_failed++;
    ts_spin_probe_due = now + ((uint64_t)TS_SPIN_PROBE_NS << ts_spin_probe_failed);
}

/* Did a long spin (past its unclocked part) end only because another
 * participant, now seen on this CPU, got it? Then the spin held the CPU
 * that participant needed until the scheduler took it away: a miss. */
static bool spun_on_partners_cpu(const ts_wait *p, uint32_t pauses)
{
    return p->colocation && p->spin_unclocked && pauses > p->spin_unclocked && colocated(p);
}

/* Yields before the futex (block policy): the policy's, capped by what was
 * learned; a zero cap probes one yield now and then. */
static uint32_t yield_budget(const ts_wait *p, ts_word *learned)
{
    uint32_t most = p->yield_iterations;
    if (!learned || !most)
        return most;
    uint32_t cap = learned_cap(learned, 1, most, most);
    if (cap)
        return cap;
    /* relaxed: this participant's own word; bits 24-31 the period's
     * doublings, 0-23 the waits since the last probe */
    uint32_t probe = atomic_load_explicit(&learned[2].aux, memory_order_relaxed);
    uint32_t shift = probe >> 24, since = (probe & 0xffffffu) + 1;
    bool due = since >= TS_YIELD_PROBE_PERIOD << shift;
    atomic_store_explicit(&learned[2].aux, shift << 24 | (due ? 0 : since), memory_order_relaxed);
    return due ? 1 : 0;
}

/* Yields that end the wait within this time paid off; longer, they gave
 * the CPU to other work (a CPU hog's time slice is milliseconds) and a
 * futex sleep, woken in a few microseconds (the futex's round trip, about
 * 5-10 us on the machines of docs/results.md), would have done better. */
#define TS_YIELDS_WORTH_NS 50000u

static void yield_learn(const ts_wait *p, ts_word *learned, uint32_t yields, bool reached)
{
    if (!learned || !yields)
        return;
    uint32_t cap = reached ? 2 * yields : yields / 2;
    learned_set(learned, 1, cap > p->yield_iterations ? p->yield_iterations : cap);
    if (cap == 0 || reached) {
        /* relaxed: this participant's own word (yield_budget) */
        uint32_t probe = atomic_load_explicit(&learned[2].aux, memory_order_relaxed);
        uint32_t shift = reached ? 0 : probe >> 24;
        if (!reached && yields == 1 && shift < TS_YIELD_PROBE_MAX_SHIFT)
            shift++; /* a probe failed */
        atomic_store_explicit(&learned[2].aux, shift << 24 | (probe & 0xffffffu),
                              memory_order_relaxed);
    }
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
 * seconds. Plain waits (neither a timeout nor a hook) never read it.
 *
 * The idle hook is called at the first check (the spin is over: whatever
 * the hook does for the runtime, an MPI's progress engine, is due now),
 * then at intervals that double from TS_IDLE_FIRST_NS up to the policy's
 * idle_ns, and start over when the hook answers TOPSYNC_IDLE_AGAIN (issue
 * 35: a rank polling MPI every 0.1 s made one-sided and nonblocking
 * programs 30-2000x slower than in the MPI's own barrier, which polls all
 * along). */
#define TS_IDLE_FIRST_NS 1000u
/* The hook's last answer on this thread was TOPSYNC_IDLE_AGAIN (the
 * runtime wants its progress all along: an MPI program with a window or
 * nonblocking calls in flight): the next wait spins no longer than the
 * floor before it calls the hook, as the MPI's own barrier polls from its
 * start (issue 35: with a learned spin of up to a scheduler slice before
 * the hook, MPICH's Fetch_and_op + Win_flush pattern, unbound, took 37 us
 * per iteration against 2.5 natively; with the hook called every 8 pauses
 * from the start of that spin, 2.7-3.4 us against 2.2-2.7 with the
 * short spin). */
static TS_TLS_INITIAL_EXEC _Thread_local bool ts_idle_eager;
struct slow_clock {
    uint64_t deadline, next_idle, interval;
    bool timed, started;
};

static inline void clock_init(struct slow_clock *c, const ts_wait *p)
{
    c->deadline = c->next_idle = 0;
    c->interval = TS_IDLE_FIRST_NS;
    c->timed = p->timeout_ns || p->idle;
    c->started = false;
}

/* Unwind past the deadline, call the idle hook when due; nanoseconds until
 * the next of them (0: neither, wait without a limit). */
static uint64_t clock_check(struct slow_clock *c, const ts_wait *p)
{
    if (!c->timed)
        return 0;
    uint64_t now = ts_monotonic_ns();
    if (!c->started) {
        c->started = true;
        if (p->timeout_ns)
            c->deadline = now + p->timeout_ns;
        if (p->idle)
            c->next_idle = now;
    }
    if (c->deadline && now >= c->deadline)
        unwind(TS_UNWIND_TIMEOUT);
    if (c->next_idle && now >= c->next_idle) {
        int rc = p->idle(p->idle_arg);
        ts_idle_eager = rc == TOPSYNC_IDLE_AGAIN;
        if (rc == TOPSYNC_IDLE_AGAIN) {
            c->interval = TS_IDLE_FIRST_NS;
        } else if (rc) {
            unwind(TS_UNWIND_IDLE);
        } else {
            uint64_t longest = p->idle_ns > TS_IDLE_FIRST_NS ? p->idle_ns : TS_IDLE_FIRST_NS;
            c->interval = 2 * c->interval < longest ? 2 * c->interval : longest;
        }
        now = ts_monotonic_ns();
        c->next_idle = now + c->interval;
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

/* Less than this to the hook's next call: no futex sleep (a timed sleep
 * lasts at least the kernel's timer slack, 50 us by default). */
#define TS_SLEEP_MIN_NS 50000u

/* Until the word reaches episode or about `ns` have passed: pauses, or
 * yields when the policy yields (its participants share CPUs). */
static bool short_wait(ts_word *w, uint32_t episode, const ts_wait *p, uint64_t ns)
{
    if (p->yield_iterations && !p->spin_unclocked) {
        sched_yield();
        return reached_now(w, episode);
    }
    uint32_t pauses = ts_wait_pauses_for_ns(ns);
    for (uint32_t i = 0; i < pauses; i++) {
        if (reached_now(w, episode))
            return true;
        ts_cpu_relax();
    }
    return reached_now(w, episode);
}

/* A yield after which this thread ran again only this much later gave its
 * CPU to other work for that work's time slice, not to a participant that
 * arrived in the meantime (microseconds; a scheduler slice is 0.75-3 ms,
 * TS_SLICE_NS_BASE in wait.h). Yields are then off for this thread, for
 * 256 times as long as that yield took (ts_yields_off_ns): such yields cost
 * at most 1/256 of the time, whatever the barrier's rate (issue 35:
 * Splash-3's OCEAN, 8 threads beside 2 CPU hogs, made 811 yields of 358 us
 * on average and ran 1.67x as long as with glibc's barrier, which never
 * yields; yield_learn judges the whole wait, and a yield that hands the
 * CPU to another participant, as most do, succeeds).
 * Per thread: the other work runs on the thread's CPU, whatever barrier it
 * waits in. Only on a second slow yield among the thread's last 64
 * (ts_yield_record): 8 unbound threads on 2 idle CPUs took 6.3-8.2 us per
 * barrier before the rule, 7.6-8.7 us with it on the first slow yield,
 * and 39 us in one run of five, all futex sleeps. In the long spin
 * (wait.h) for a shorter time (ts_yields_off_ns): its waiter yields only
 * when co-located with its partner, which then gets the CPU; there the
 * futex instead of yields made 2 unbound threads beside 2 CPU hogs 1.6-7.7
 * us per barrier, against 0.1-1.5 us. */
#define TS_YIELD_SLOW_NS 200000u
static TS_TLS_INITIAL_EXEC _Thread_local uint64_t ts_yields_off_until;
static TS_TLS_INITIAL_EXEC _Thread_local uint64_t ts_yield_history;

/* The rest of a wait whose spin ran out: yields or the futex, as the
 * policy says. */
static void wait_after_spin(ts_word *w, uint32_t episode, const ts_wait *policy, ts_word *learned,
                            struct slow_clock *clock, bool colocated_now)
{
    if (policy->kind == TS_WAIT_YIELD) {
        while (!reached_now(w, episode)) {
            clock_check(clock, policy);
            sched_yield();
        }
        return;
    }
    uint32_t yields = !policy->spin_unclocked || colocated_now ? yield_budget(policy, learned) : 0;
    uint64_t yields_began = yields ? ts_monotonic_ns() : 0;
    if (yields && yields_began < ts_yields_off_until)
        yields = 0;
    for (uint32_t i = 0; i < yields; i++) {
        if (reached_now(w, episode)) {
            /* reached, but a yield that handed the CPU to other work for
             * its time slice did not pay: a sleep would have been woken
             * sooner */
            yield_learn(policy, learned, yields,
                        ts_monotonic_ns() - yields_began < TS_YIELDS_WORTH_NS);
            return;
        }
        clock_check(clock, policy);
        uint64_t before = ts_monotonic_ns();
        sched_yield();
        uint64_t back = ts_monotonic_ns();
        if (ts_yield_record(&ts_yield_history, back - before > TS_YIELD_SLOW_NS)) {
            ts_yields_off_until = back + ts_yields_off_ns(back - before, policy->spin_unclocked);
            break;
        }
    }
    yield_learn(policy, learned, yields, false);
    for (;;) {
        /* acquire: pairs with the release exchange in ts_publish() */
        uint32_t v = atomic_load_explicit(&w->value, memory_order_acquire);
        if (ts_reached(v, episode))
            return;
        uint64_t left = clock_check(clock, policy);
        if (left && left < TS_SLEEP_MIN_NS && policy->idle) {
            /* the hook is due soon: not worth a sleep */
            if (short_wait(w, episode, policy, left))
                return;
            continue;
        }
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
        /* the clock every 64 pauses with a hook (about every microsecond
         * or two: the hook's shortest interval), every 1024 without */
        uint32_t mask = policy->idle ? 63u : 1023u;
        for (uint32_t i = 0; !reached_now(w, episode); i++) {
            if ((i & mask) == 0)
                clock_check(&clock, policy);
            ts_cpu_relax();
        }
        return;
    }
    /* The hook wants to run all along (ts_idle_eager): after a spin of at
     * most the floor, the loop of wait_after_spin calls it every microsecond and
     * polls the word in between; what such waits would teach is left out.
     * Otherwise one thread-local read per wait (NULL: nothing to learn). */
    bool eager = policy->idle && ts_idle_eager;
    ts_word *learned = policy->learn && !eager ? ts_wait_learned : NULL;
    uint32_t spin = !eager ? spin_budget(policy, learned)
                    : policy->spin_iterations < TS_ADAPTIVE_SPIN_FLOOR ? policy->spin_iterations
                                                                       : TS_ADAPTIVE_SPIN_FLOOR;
    /* a long spin (a scheduler slice, wait.h) still keeps the deadline and
     * calls the idle hook (the MPI's progress) every 32 pauses past its
     * first part */
    uint32_t unclocked = clock.timed && policy->spin_unclocked ? policy->spin_unclocked : spin;
    for (uint32_t i = 0; i < spin; i++) {
        if (reached_now(w, episode)) {
            spin_learn(policy, learned, spin, !spun_on_partners_cpu(policy, i));
            return;
        }
        if (i >= unclocked && (i & 31u) == 0)
            clock_check(&clock, policy);
        ts_cpu_relax();
    }
    uint64_t missed_at = learned && spin ? ts_monotonic_ns() : 0;
    uint32_t probe = missed_at ? spin_probe_pauses(policy, spin, missed_at) : 0;
    for (uint32_t i = spin; i < probe; i++) {
        if (reached_now(w, episode)) {
            bool caught = !spun_on_partners_cpu(policy, i);
            spin_probe_done(caught, ts_monotonic_ns());
            spin_learn(policy, learned, probe, caught);
            return;
        }
        if ((i & 31u) == 0)
            clock_check(&clock, policy);
        ts_cpu_relax();
    }
    if (probe) /* the wait, judged below, counts from the spin's end */
        spin_probe_done(false, ts_monotonic_ns());
    wait_after_spin(w, episode, policy, learned, &clock, spin == 0 && !eager);
    if (missed_at)
        spin_learn_missed(policy, learned, spin, ts_monotonic_ns() - missed_at);
}
