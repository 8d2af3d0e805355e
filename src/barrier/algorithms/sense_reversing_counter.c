/*
 * sense-reversing-counter: the flat counter tree.
 * The why: docs/design.md section 8.8.
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

enum { LINE_ARRIVAL = 1, LINE_RELEASE = 1 };

static int setup(topsync_barrier_t *b)
{
    ts_word **arrivals = malloc(b->n * sizeof *arrivals);
    if (!arrivals)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned r = 0; r < b->n; r++)
        arrivals[r] = ts_rank_line(b, r, LINE_ARRIVAL);
    b->roles = arrivals;
    return 0;
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    ts_word *release = ts_global_line(b, LINE_RELEASE);
    ts_word **arrivals = b->roles;
    if (rank != 0) {
        ts_publish(arrivals[rank], episode, &b->wait); /* pairs with the root's wait */
        ts_wait_reach(release, episode, &b->wait);     /* pairs with the root's publish */
        return;
    }
    ts_wait_all(arrivals + 1, b->n - 1, episode, &b->wait); /* pairs with each r's publish */
    ts_publish(release, episode, &b->wait);                 /* pairs with the others' wait */
}

const ts_algorithm TS_ALGO(sense_reversing_counter) = {
    .name = "sense-reversing-counter",
    .global_lines_fixed = 2,
    .rank_lines_fixed = 2,
    .setup = setup,
    .reset_counters = NULL,
    .wait = wait,
};
