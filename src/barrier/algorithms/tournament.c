/*
 * tournament: the tournament barrier of Hensgen, Finkel and Manber (1988).
 * The why: docs/design.md section 8.11.
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

struct role {
    unsigned nwon;            /* matches won (byes excluded), lowest round first */
    ts_word *won_arrival[32]; /* my arrival word of each match won */
    ts_word *won_loser_wake[32];
    ts_word *lost_to; /* the winner's arrival word of my losing round */
    int winner;       /* who beat me (and wakes me), -1 for the champion */
    ts_word *wakeup;
};

static unsigned rounds(const topsync_barrier_t *b)
{
    return ts_ceil_log2(b->n);
}

static unsigned rank_lines(const topsync_barrier_t *b)
{
    return 2 + rounds(b);
}

static int setup(topsync_barrier_t *b)
{
    unsigned R = rounds(b);
    struct role *roles = calloc(b->n, sizeof *roles);
    if (!roles)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned r = 0; r < b->n; r++) {
        struct role *role = &roles[r];
        role->wakeup = ts_rank_line(b, r, 1 + R);
        role->winner = -1;
        for (unsigned k = 0; k < R; k++) {
            unsigned half = 1u << k;
            if (r % (2 * half) == 0) {
                if (r + half < b->n) {
                    role->won_arrival[role->nwon] = ts_rank_line(b, r, 1 + k);
                    role->won_loser_wake[role->nwon] = ts_rank_line(b, r + half, 1 + R);
                    role->nwon++;
                }
            } else {
                role->lost_to = ts_rank_line(b, r - half, 1 + k);
                role->winner = (int)(r - half);
                break;
            }
        }
    }
    b->roles = roles;
    return 0;
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    const struct role *role = &((const struct role *)b->roles)[rank];
    for (unsigned m = 0; m < role->nwon; m++)
        ts_wait_reach(role->won_arrival[m], episode, &b->wait); /* pairs with the loser's publish */
    if (role->lost_to) {
        ts_publish(role->lost_to, episode, &b->wait);   /* pairs with the winner's wait */
        ts_wait_reach(role->wakeup, episode, &b->wait); /* pairs with the winner's wake-up */
    }
    for (unsigned m = role->nwon; m-- > 0;)
        ts_publish(role->won_loser_wake[m], episode, &b->wait); /* pairs with the loser's wait */
}

static int releaser(const topsync_barrier_t *b, unsigned rank)
{
    return ((const struct role *)b->roles)[rank].winner;
}

const ts_algorithm TS_ALGO(tournament) = {
    .name = "tournament",
    .global_lines_fixed = 1,
    .rank_lines = rank_lines,
    .setup = setup,
    .reset_counters = NULL,
    .wait = wait,
    .releaser = releaser,
};
