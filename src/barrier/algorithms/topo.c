/*
 * topo: the hierarchical barrier of Kurnosov (2022), design.md section 2.
 * The why: docs/design.md section 8.10.
 */
#include <stdlib.h>

#include <topsync/groups.h>

#include "barrier/barrier_private.h"
#include "base/error.h"

enum {
    LINE_ARRIVAL = TS_TOPO_LINE_ARRIVAL,
    LINE_RELEASE = 2,
    GLOBAL_LINE_RELEASE = TS_TOPO_GLOBAL_LINE_RELEASE
};

struct led_group {
    unsigned nmembers;  /* members other than me */
    ts_word **arrivals; /* their arrival words */
    unsigned *members;  /* their ranks, ascending (for the collectives' combine) */
};

struct role {
    unsigned nled;
    struct led_group led[TOPSYNC_MAX_LEVELS + 1]; /* groups I lead, lowest first */
    ts_word *arrival;         /* where I announce my arrival, NULL if I lead all my groups */
    ts_word *release_wait;    /* what I poll to leave (NULL for rank 0) */
    ts_word *release_publish; /* what I publish when released (NULL: nothing) */
    int released_by;          /* whose publish of release_wait I wait for, -1: none */
};

static void free_roles(topsync_barrier_t *b)
{
    struct role *roles = b->roles;
    if (!roles)
        return;
    for (unsigned r = 0; r < b->n; r++)
        for (unsigned g = 0; g < roles[r].nled; g++) {
            free(roles[r].led[g].arrivals);
            free(roles[r].led[g].members);
        }
    free(roles);
    b->roles = NULL;
}

static int setup(topsync_barrier_t *b)
{
    const topsync_groups_t *groups = b->groups;
    struct role *roles = calloc(b->n, sizeof *roles);
    if (!roles)
        return ts_fail(ENOMEM, "out of memory");
    b->roles = roles;
    for (unsigned r = 0; r < b->n; r++) {
        struct role *role = &roles[r];
        role->released_by = -1;
        unsigned idx[TOPSYNC_MAX_LEVELS + 1];
        int count = topsync_groups_of_rank(groups, r, idx, TOPSYNC_MAX_LEVELS + 1);
        if (count < 0) {
            free_roles(b);
            return count;
        }
        for (int k = 0; k < count; k++) {
            topsync_group_info_t info;
            topsync_groups_get(groups, idx[k], &info);
            if (info.leader != r) {
                role->arrival = ts_rank_line(b, r, LINE_ARRIVAL);
                role->release_wait = b->tree_release ? ts_rank_line(b, info.leader, LINE_RELEASE)
                                                     : ts_global_line(b, GLOBAL_LINE_RELEASE);
                role->released_by = b->tree_release ? (int)info.leader : 0;
                break;
            }
            struct led_group *lg = &role->led[role->nled++];
            lg->arrivals = malloc(info.nmembers * sizeof *lg->arrivals);
            lg->members = malloc(info.nmembers * sizeof *lg->members);
            if (!lg->arrivals || !lg->members) {
                free_roles(b);
                return ts_fail(ENOMEM, "out of memory");
            }
            for (unsigned m = 0; m < info.nmembers; m++)
                if (info.members[m] != r) {
                    lg->members[lg->nmembers] = info.members[m];
                    lg->arrivals[lg->nmembers++] = ts_rank_line(b, info.members[m], LINE_ARRIVAL);
                }
        }
        if (b->tree_release)
            role->release_publish = role->nled ? ts_rank_line(b, r, LINE_RELEASE) : NULL;
        else
            role->release_publish =
                r == 0 && b->n > 1 ? ts_global_line(b, GLOBAL_LINE_RELEASE) : NULL;
    }
    return 0;
}

static void wait(topsync_barrier_t *b, unsigned rank, uint32_t episode)
{
    const struct role *role = &((const struct role *)b->roles)[rank];
    for (unsigned g = 0; g < role->nled; g++) {
        const struct led_group *lg = &role->led[g];
        /* acquire: pairs with each member's publish */
        ts_wait_all(lg->arrivals, lg->nmembers, episode, &b->wait);
        if (b->gathered) /* the collectives: combine what the members brought */
            b->gathered(b, rank, lg->members, lg->nmembers, g + 1 == role->nled && !role->arrival);
    }
    if (role->arrival) {
        ts_publish(role->arrival, episode, &b->wait);         /* pairs with my leader's wait */
        ts_wait_reach(role->release_wait, episode, &b->wait); /* pairs with the release publish */
    }
    if (role->release_publish)
        ts_publish(role->release_publish, episode, &b->wait); /* pairs with the pollers' wait */
}

/* rank's groups, lowest first, each after its members' own groups: a
 * member of my level-g group leads only groups below g, and had combined
 * them before it arrived (wait above). Depth: the levels. */
static void combine_subtree(const topsync_barrier_t *b, unsigned rank)
{
    const struct role *role = &((const struct role *)b->roles)[rank];
    for (unsigned g = 0; g < role->nled; g++) {
        const struct led_group *lg = &role->led[g];
        for (unsigned m = 0; m < lg->nmembers; m++)
            combine_subtree(b, lg->members[m]);
        b->gathered(b, rank, lg->members, lg->nmembers, g + 1 == role->nled && !role->arrival);
    }
}

void ts_topo_combine_all(const topsync_barrier_t *b)
{
    if (b->gathered && b->roles)
        combine_subtree(b, 0); /* participant 0 leads the top group */
}

static int releaser(const topsync_barrier_t *b, unsigned rank)
{
    return ((const struct role *)b->roles)[rank].released_by;
}

const ts_algorithm TS_ALGO(topo) = {
    .name = "topo",
    .global_lines_fixed = 2,
    .rank_lines_fixed = 3,
    .setup = setup,
    .reset_counters = NULL,
    .wait = wait,
    .free_roles = free_roles,
    .releaser = releaser,
};
