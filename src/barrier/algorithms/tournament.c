/*
 * tournament: the tournament barrier of Hensgen, Finkel and Manber (1988).
 *
 * ceil(log2 P) rounds with statically chosen winners: in round k,
 * participant i with i mod 2^(k+1) == 0 is the winner of the match against
 * i + 2^k (a bye when that one does not exist). The loser publishes the
 * episode in the winner's arrival word for round k (in the winner's block)
 * and then polls its own wake-up word; the winner waits for it and plays the
 * next round. The champion (participant 0) then wakes the losers of its
 * matches from the last round down, and every woken participant does the
 * same for the matches it won, so the wake-up is the tournament in reverse.
 *
 * Ordering: the loser's ts_publish(arrival[k]) pairs with the winner's
 * ts_wait_reach(arrival[k]); the waker's ts_publish(wake-up of loser) pairs
 * with the loser's ts_wait_reach(own wake-up). Both chains are transitive.
 *
 * Rank block: lines 1..R = arrival word of round k at line 1 + k, line R + 1
 * = wake-up word (R = ceil(log2 P)).
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

struct role {
    unsigned nwon;              /* matches won (byes excluded), lowest round first */
    ts_word *won_arrival[32];   /* my arrival word of each match won */
    ts_word *won_loser_wake[32];
    ts_word *lost_to;           /* the winner's arrival word of my losing round */
    int winner;                 /* who beat me (and wakes me), -1 for the champion */
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
