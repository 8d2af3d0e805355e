/*
 * sense-reversing: the central counter barrier.
 *
 * Every participant increments one global counter with an atomic
 * fetch-and-add; the last to arrive resets it and publishes the episode in
 * the global release word, which everybody else polls. O(P) contended
 * read-modify-writes on one line, but a single wake-up for all sleepers,
 * which makes it the best choice when participants outnumber cores.
 *
 * Ordering:
 *  - the fetch_add is acq_rel: its release half publishes the arriver's
 *    earlier writes to whoever performs a later RMW on the counter; the last
 *    arriver's acquire half therefore sees every participant's writes (the
 *    RMWs form one release sequence);
 *  - the last arriver's ts_publish(release) pairs with every waiter's
 *    acquire in ts_wait_reach(), passing all of it on;
 *  - the counter reset is relaxed: it is ordered before the release store,
 *    and nobody touches the counter again before acquiring that store.
 *
 * Global block: line 1 = arrival counter, line 2 = release word.
 */
#include "barrier/barrier_private.h"

enum { LINE_COUNT = 1, LINE_RELEASE = 2 };

static void reset_counters(topsync_barrier_t *b, int rank)
{
    if (rank < 0)
        atomic_store_explicit(&ts_global_line(b, LINE_COUNT)->value, 0, memory_order_relaxed);
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    (void)rank;
    ts_word *count = ts_global_line(b, LINE_COUNT);
    ts_word *release = ts_global_line(b, LINE_RELEASE);
    /* acq_rel: release my writes to the last arriver; acquire everybody's */
    uint32_t before = atomic_fetch_add_explicit(&count->value, 1, memory_order_acq_rel);
    if (before + 1 == b->n) {
        /* relaxed: ordered before the release store of ts_publish() below */
        atomic_store_explicit(&count->value, 0, memory_order_relaxed);
        ts_publish(release, episode, &b->wait); /* pairs with ts_wait_reach() below */
    } else {
        ts_wait_reach(release, episode, &b->wait); /* pairs with ts_publish() above */
    }
}

const ts_algorithm TS_ALGO(sense_reversing) = {
    .name = "sense-reversing",
    .global_lines_fixed = 3,
    .rank_lines_fixed = 1,
    .setup = NULL,
    .reset_counters = reset_counters,
    .wait = wait,
};
