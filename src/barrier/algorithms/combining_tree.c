/*
 * combining-tree: the binary combining tree of Yew, Tzeng and Lawrie (1987).
 * The why: docs/design.md section 8.4.
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

enum { LINE_RELEASE = 1 };

struct node_step {
    _Atomic uint32_t *count;
    uint32_t fanin; /* 2: combine; 1 is never stored (passed through) */
};

struct role {
    unsigned nsteps;
    struct node_step *steps; /* from the leaf's node up to the root */
};

static unsigned rank_lines(const topsync_barrier_t *b)
{
    return 1 + ts_ceil_log2(b->n);
}

static int setup(topsync_barrier_t *b)
{
    unsigned levels = ts_ceil_log2(b->n);
    struct role *roles = calloc(b->n, sizeof *roles);
    struct node_step *steps = calloc((size_t)b->n * (levels ? levels : 1), sizeof *steps);
    if (!roles || !steps) {
        free(roles);
        free(steps);
        return ts_fail(ENOMEM, "out of memory");
    }
    for (unsigned r = 0; r < b->n; r++) {
        struct role *role = &roles[r];
        role->steps = &steps[(size_t)r * levels];
        unsigned index = r, width = b->n; /* my position and the count at this level */
        for (unsigned l = 0; l < levels; l++) {
            unsigned node = index / 2;
            unsigned fanin = (index ^ 1u) < width ? 2 : 1;
            if (fanin == 2) {
                unsigned owner = node << (l + 1);
                role->steps[role->nsteps].count = &ts_rank_line(b, owner, 1 + l)->value;
                role->steps[role->nsteps].fanin = 2;
                role->nsteps++;
            }
            index = node;
            width = (width + 1) / 2;
        }
    }
    b->roles = roles;
    return 0;
}

static void reset_counters(topsync_barrier_t *b, int rank)
{
    if (rank < 0)
        return;
    unsigned lines = rank_lines(b);
    for (unsigned l = 1; l < lines; l++)
        atomic_store_explicit(&ts_rank_line(b, (unsigned)rank, l)->value, 0, memory_order_relaxed);
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    const struct role *role = &((const struct role *)b->roles)[rank];
    ts_word *release = ts_global_line(b, LINE_RELEASE);
    for (unsigned s = 0; s < role->nsteps; s++) {
        const struct node_step *step = &role->steps[s];
        /* acq_rel: release my writes (and those I acquired below) to the
         * sibling that completes the node; acquire theirs if I complete it */
        uint32_t before = atomic_fetch_add_explicit(step->count, 1, memory_order_acq_rel);
        if (before + 1 < step->fanin) {
            ts_wait_reach(release, episode, &b->wait); /* pairs with the root's publish */
            return;
        }
        /* relaxed: ordered before the final ts_publish() (see the essay) */
        atomic_store_explicit(step->count, 0, memory_order_relaxed);
    }
    ts_publish(release, episode, &b->wait); /* pairs with the losers' ts_wait_reach() */
}

static void free_roles(topsync_barrier_t *b)
{
    struct role *roles = b->roles;
    if (roles)
        free(roles[0].steps);
    free(roles);
}

const ts_algorithm TS_ALGO(combining_tree) = {
    .name = "combining-tree",
    .global_lines_fixed = 2,
    .rank_lines = rank_lines,
    .setup = setup,
    .reset_counters = reset_counters,
    .wait = wait,
    .free_roles = free_roles,
};
