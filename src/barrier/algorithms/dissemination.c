/*
 * dissemination: Hensgen, Finkel and Manber's dissemination barrier (Brooks'
 * butterfly generalised to any P).
 * The why: docs/design.md section 8.5.
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

struct role {
    unsigned nrounds;
    ts_word *mine[32];   /* my flag of round k */
    ts_word *target[32]; /* the flag of round k of (rank + 2^k) mod P */
};

static unsigned rank_lines(const topsync_barrier_t *b)
{
    return 1 + ts_ceil_log2(b->n);
}

static int setup(topsync_barrier_t *b)
{
    unsigned R = ts_ceil_log2(b->n);
    struct role *roles = calloc(b->n, sizeof *roles);
    if (!roles)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned r = 0; r < b->n; r++)
        for (unsigned k = 0; k < R; k++) {
            roles[r].nrounds = R;
            roles[r].mine[k] = ts_rank_line(b, r, 1 + k);
            roles[r].target[k] = ts_rank_line(b, (unsigned)((r + (1ull << k)) % b->n), 1 + k);
        }
    b->roles = roles;
    return 0;
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    const struct role *role = &((const struct role *)b->roles)[rank];
    for (unsigned k = 0; k < role->nrounds; k++) {
        ts_publish(role->target[k], episode, &b->wait);  /* pairs with the target's wait */
        ts_wait_reach(role->mine[k], episode, &b->wait); /* pairs with the source's publish */
    }
}

const ts_algorithm TS_ALGO(dissemination) = {
    .name = "dissemination",
    .global_lines_fixed = 1,
    .rank_lines = rank_lines,
    .setup = setup,
    .reset_counters = NULL,
    .wait = wait,
};
