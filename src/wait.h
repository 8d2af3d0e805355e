/*
 * Private: the word every topsync flag and counter is made of, and how a
 * participant waits for one.
 *
 * A ts_word is a 32-bit episode value plus a count of sleepers. Episode
 * values only grow (mod 2^32) and are compared wrap-safely: a waiter asks
 * "has this word reached episode e?", i.e. (int32_t)(value - e) >= 0. No two
 * participants of a barrier are ever more than one episode apart, so the
 * comparison stays exact forever: 2^32 and 2^64 episodes are no problem.
 *
 * Each ts_word sits at the start of a cache line of its own (the layout code
 * guarantees it), except in the MCS arrival line, where up to four child
 * words deliberately share their parent's line (the parent polls one line).
 *
 * Wait policy. spin: pause in a loop. yield: spin, then sched_yield(). block:
 * spin, yield a few times, then futex-wait on the value word. A publisher
 * that may have sleepers wakes them; to keep the fast path free of system
 * calls it only calls futex_wake when the sleepers count is non-zero. The
 * count and the value form a Dekker pair, ordered by two seq_cst fences:
 *
 *   waiter                              publisher
 *   sleepers += 1                       value = e          (release)
 *   fence(seq_cst)           <-pairs->  fence(seq_cst)
 *   v = value; if v < e: futex_wait(v)  if sleepers: futex_wake(all)
 *
 * Either the waiter sees e (and does not sleep) or the publisher sees the
 * sleeper (and wakes it); futex_wait itself rechecks the value in the kernel,
 * so a wake between the waiter's load and its sleep is not lost.
 */
#ifndef TOPSYNC_SRC_WAIT_H
#define TOPSYNC_SRC_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <assert.h>

typedef struct ts_word {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
} ts_word;

static_assert(sizeof(ts_word) == 8, "a ts_word is two 32-bit words");
static_assert(sizeof(ts_word) <= 16, "a ts_word must fit the smallest line we accept");

enum ts_wait_kind { TS_WAIT_SPIN = 1, TS_WAIT_YIELD = 2, TS_WAIT_BLOCK = 3 };

typedef struct ts_wait {
    enum ts_wait_kind kind;
    uint32_t spin_iterations;  /* pauses before yielding / sleeping */
    uint32_t yield_iterations; /* yields before sleeping (block) */
    bool process_shared;       /* futex without FUTEX_PRIVATE_FLAG */
} ts_wait;

static inline bool ts_reached(uint32_t value, uint32_t episode)
{
    return (int32_t)(value - episode) >= 0;
}

static inline void ts_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Slow path of ts_wait_reach (out of line: it is the cold part). */
void ts_wait_slow(ts_word *w, uint32_t episode, const ts_wait *policy);
/* Wake every sleeper of w. */
void ts_wake_all(ts_word *w, bool process_shared);

/*
 * Wait until w has reached `episode`. Acquire: pairs with the release in the
 * ts_publish() (or ts_word release RMW) that stored a value >= episode, so
 * everything the publisher did before publishing is visible after return.
 */
static inline void ts_wait_reach(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    /* acquire: pairs with the release store in ts_publish() */
    if (ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
        return;
    ts_wait_slow(w, episode, policy);
}

/*
 * Store `episode` into w and wake sleepers when the policy can sleep.
 * Release: pairs with the acquire load in ts_wait_reach().
 */
static inline void ts_publish(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    /* release: pairs with the acquire in ts_wait_reach() / ts_wait_slow() */
    atomic_store_explicit(&w->value, episode, memory_order_release);
    if (policy->kind == TS_WAIT_BLOCK) {
        /* seq_cst: pairs with the waiter's fence in ts_wait_slow() (Dekker) */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&w->sleepers, memory_order_relaxed) != 0)
            ts_wake_all(w, policy->process_shared);
    }
}

#endif
