/*
 * mcs: the tree barrier of Mellor-Crummey and Scott (1991).
 * The why: docs/design.md section 8.6.
 */
#include <stdlib.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

enum { LINE_CHILDREN = 1, LINE_WAKEUP = 2 };

struct role {
    unsigned nchildren;
    ts_word *child_slots[4]; /* my arrival line, one word per existing child */
    ts_word *parent_slot;    /* my word in my parent's arrival line (NULL for 0) */
    ts_word *wakeup;         /* my wake-up word */
    unsigned nwake;
    ts_word *wake_children[2];
};

static ts_word *child_slot(topsync_barrier_t *b, unsigned parent, unsigned j)
{
    return (ts_word *)((unsigned char *)ts_rank_line(b, parent, LINE_CHILDREN) +
                       j * sizeof(ts_word));
}

static int setup(topsync_barrier_t *b)
{
    struct role *roles = calloc(b->n, sizeof *roles);
    if (!roles)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned r = 0; r < b->n; r++) {
        struct role *role = &roles[r];
        for (unsigned j = 0; j < 4; j++)
            if (4 * r + 1 + j < b->n)
                role->child_slots[role->nchildren++] = child_slot(b, r, j);
        role->parent_slot = r == 0 ? NULL : child_slot(b, (r - 1) / 4, (r - 1) % 4);
        role->wakeup = ts_rank_line(b, r, LINE_WAKEUP);
        for (unsigned j = 1; j <= 2; j++)
            if (2 * r + j < b->n)
                role->wake_children[role->nwake++] = ts_rank_line(b, 2 * r + j, LINE_WAKEUP);
    }
    b->roles = roles;
    return 0;
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    const struct role *role = &((const struct role *)b->roles)[rank];
    /* acquire: pairs with each child's publish */
    ts_wait_all((ts_word *const *)role->child_slots, role->nchildren, episode, &b->wait);
    if (role->parent_slot) {
        ts_publish(role->parent_slot, episode, &b->wait); /* pairs with the parent's wait */
        ts_wait_reach(role->wakeup, episode, &b->wait);   /* pairs with the waker's publish */
    }
    for (unsigned c = 0; c < role->nwake; c++)
        ts_publish(role->wake_children[c], episode, &b->wait); /* pairs with the child's wait */
}

/* The wake-up tree is binary: children 2r + 1 and 2r + 2. */
static int releaser(const topsync_barrier_t *b, unsigned rank)
{
    (void)b;
    return rank == 0 ? -1 : (int)((rank - 1) / 2);
}

const ts_algorithm TS_ALGO(mcs) = {
    .name = "mcs",
    .global_lines_fixed = 1,
    .rank_lines_fixed = 3,
    .setup = setup,
    .reset_counters = NULL,
    .wait = wait,
    .releaser = releaser,
};
