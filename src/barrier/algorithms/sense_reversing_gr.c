/*
 * sense-reversing-gr: the two-phase flat tree of Jain et al. (SC'18),
 * gather then release.
 * The why: docs/design.md section 8.9.
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

enum { LINE_RELEASE = 1 };

static unsigned global_lines(const topsync_barrier_t *b)
{
    return 1 + b->n; /* line 0, then release (line 1) and gather[r] at line 1 + r, r >= 1 */
}

static inline ts_word *gather_flag(topsync_barrier_t *b, unsigned rank)
{
    return ts_global_line(b, 1 + rank);
}

/* The root's list of gather flags 1..n-1, for ts_wait_all. */
static int setup(topsync_barrier_t *b)
{
    ts_word **flags = malloc((b->n > 1 ? b->n - 1 : 1) * sizeof *flags);
    if (!flags)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned r = 1; r < b->n; r++)
        flags[r - 1] = gather_flag(b, r);
    b->roles = flags;
    return 0;
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    ts_word *release = ts_global_line(b, LINE_RELEASE);
    if (rank != 0) {
        ts_publish(gather_flag(b, rank), episode, &b->wait); /* pairs with the root's wait */
        ts_wait_reach(release, episode, &b->wait);           /* pairs with the root's publish */
        return;
    }
    ts_word **flags = b->roles;
    ts_wait_all(flags, b->n - 1, episode, &b->wait); /* pairs with each r's publish */
    ts_publish(release, episode, &b->wait);          /* pairs with the others' wait */
}

const ts_algorithm TS_ALGO(sense_reversing_gr) = {
    .name = "sense-reversing-gr",
    .global_lines = global_lines,
    .rank_lines_fixed = 1,
    .setup = setup,
    .reset_counters = NULL,
    .wait = wait,
};
