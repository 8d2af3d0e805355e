/*
 * sense-reversing: the central counter barrier.
 * The why: docs/design.md section 8.7.
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
    ts_word *count = ts_global_line(b, LINE_COUNT);
    ts_word *release = ts_global_line(b, LINE_RELEASE);
    /* acq_rel: release my writes to the last arriver; acquire everybody's
     * (each earlier fetch_add heads a release sequence that the later ones
     * continue, so the last one synchronizes with all of them) */
    uint32_t before = atomic_fetch_add_explicit(&count->value, 1, memory_order_acq_rel);
    if (before + 1 == b->n) {
        if (b->completed) /* the collectives: combine what everybody brought */
            b->completed(b, rank);
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
