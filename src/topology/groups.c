/*
 * Groups of the hierarchical barrier (design.md section 1).
 *
 * Everything is derived from the placement table loc[l][i] (the unit of
 * active level l holding participant i, -1 when i is bound wider): from the
 * lowest level up, the participants still climbing that share a unit form a
 * group led by the lowest rank; only leaders keep climbing; the last leaders
 * form the TOP group. Groups of one are not recorded.
 */
#include <stdlib.h>
#include <string.h>

#include <topsync/groups.h>

#include "base/error.h"
#include "topology/topology_private.h"

struct topsync_groups {
    unsigned n;
    int hierarchical;
    unsigned nlevels;
    topsync_level_t levels[TOPSYNC_MAX_LEVELS];
    unsigned nnotes;
    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS];
    unsigned ngroups;
    topsync_group_info_t *groups;
    unsigned *member_storage;
    /* rank_groups[r * (nlevels + 1) + k]: k-th group of rank r, lowest first */
    unsigned *rank_groups;
    unsigned *rank_ngroups;
};

void topsync_groups_destroy(topsync_groups_t *g)
{
    if (!g)
        return;
    free(g->groups);
    free(g->member_storage);
    free(g->rank_groups);
    free(g->rank_ngroups);
    free(g);
}

struct unit_rank {
    int unit; /* -1: in no unit, alone */
    unsigned rank;
};

static int by_unit_then_rank(const void *pa, const void *pb)
{
    const struct unit_rank *x = pa, *y = pb;
    /* participants in no unit sort as units of their own, by rank */
    long ux = x->unit >= 0 ? x->unit : -1 - (long)x->rank;
    long uy = y->unit >= 0 ? y->unit : -1 - (long)y->rank;
    if (ux != uy)
        return ux < uy ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

struct run {
    unsigned leader, first, end; /* sorted[first .. end) */
};

static int by_leader(const void *pa, const void *pb)
{
    const struct run *x = pa, *y = pb;
    return x->leader < y->leader ? -1 : x->leader > y->leader;
}

static int build(topsync_groups_t **out, unsigned n, unsigned nlevels,
                 const topsync_level_t *level_ids, const int *loc, int hierarchical)
{
    if (!out)
        return ts_fail(EINVAL, "groups: out is NULL");
    *out = NULL;
    if (n == 0)
        return ts_fail(EINVAL, "groups: no participants (n = 0)");
    if (nlevels > TOPSYNC_MAX_LEVELS)
        return ts_fail(EINVAL, "groups: %u levels, at most %d", nlevels, TOPSYNC_MAX_LEVELS);

    topsync_groups_t *g = calloc(1, sizeof *g);
    unsigned per_rank = nlevels + 1;
    /* Every group has >= 2 members and each rank is a non-leader member of at
     * most one group, so there are fewer than n groups and at most
     * n + ngroups < 2n member slots. */
    unsigned *climbing = malloc((size_t)n * sizeof *climbing);
    struct unit_rank *sorted = malloc((size_t)n * sizeof *sorted);
    struct run *runs = malloc((size_t)n * sizeof *runs);
    if (g) {
        g->groups = calloc(n, sizeof *g->groups);
        g->member_storage = calloc((size_t)2 * n, sizeof *g->member_storage);
        g->rank_groups = malloc((size_t)n * per_rank * sizeof *g->rank_groups);
        g->rank_ngroups = calloc(n, sizeof *g->rank_ngroups);
    }
    if (!g || !climbing || !sorted || !runs || !g->groups || !g->member_storage ||
        !g->rank_groups || !g->rank_ngroups) {
        free(climbing);
        free(sorted);
        free(runs);
        topsync_groups_destroy(g);
        return ts_fail(ENOMEM, "groups: out of memory");
    }
    g->n = n;
    g->hierarchical = hierarchical;
    g->nlevels = nlevels;
    for (unsigned l = 0; l < nlevels; l++)
        g->levels[l] = level_ids[l];

    unsigned nclimbing = n, used = 0;
    for (unsigned r = 0; r < n; r++)
        climbing[r] = r;

    /* Each level: the climbing ranks sorted by (unit, rank), so that each
     * unit is a run whose first rank is its leader; runs are then taken in
     * the order of their leaders. O(n log n) per level. */
    for (unsigned l = 0; l <= nlevels; l++) {
        int top = l == nlevels;
        for (unsigned a = 0; a < nclimbing; a++) {
            sorted[a].rank = climbing[a];
            sorted[a].unit = top ? 0 : loc[(size_t)l * n + climbing[a]];
        }
        qsort(sorted, nclimbing, sizeof *sorted, by_unit_then_rank);
        unsigned nruns = 0;
        for (unsigned a = 0; a < nclimbing;) {
            unsigned b = a + 1;
            if (sorted[a].unit >= 0)
                while (b < nclimbing && sorted[b].unit == sorted[a].unit)
                    b++;
            runs[nruns++] = (struct run){sorted[a].rank, a, b};
            a = b;
        }
        qsort(runs, nruns, sizeof *runs, by_leader);
        for (unsigned k = 0; k < nruns; k++) {
            const struct run *run = &runs[k];
            climbing[k] = run->leader;
            unsigned nb = run->end - run->first;
            if (nb < 2)
                continue; /* a group of one is skipped */
            topsync_group_info_t *gi = &g->groups[g->ngroups];
            gi->level = top ? TOPSYNC_GROUP_TOP : (unsigned)level_ids[l];
            gi->leader = run->leader;
            gi->nmembers = nb;
            gi->members = &g->member_storage[used];
            for (unsigned m = 0; m < nb; m++) {
                unsigned r = sorted[run->first + m].rank;
                g->member_storage[used + m] = r;
                g->rank_groups[(size_t)r * per_rank + g->rank_ngroups[r]++] = g->ngroups;
            }
            used += nb;
            g->ngroups++;
        }
        nclimbing = nruns;
    }
    free(climbing);
    free(sorted);
    free(runs);
    *out = g;
    return 0;
}

int topsync_groups_build_table(topsync_groups_t **out, unsigned n, unsigned nlevels,
                               const topsync_level_t *level_ids, const int *loc)
{
    if (nlevels > TOPSYNC_MAX_LEVELS)
        return ts_fail(EINVAL, "groups: %u levels, at most %d", nlevels, TOPSYNC_MAX_LEVELS);
    if (nlevels > 0 && (!level_ids || !loc))
        return ts_fail(EINVAL, "groups: NULL level ids or placement table");
    for (unsigned l = 0; l < nlevels; l++)
        if (ts_level_index(level_ids[l]) < 0)
            return ts_fail(EINVAL, "groups: level id %u is not a single topsync level",
                           (unsigned)level_ids[l]);
    return build(out, n, nlevels, level_ids, loc, 1);
}

int topsync_groups_build_flat(topsync_groups_t **out, unsigned n)
{
    return build(out, n, 0, NULL, NULL, 0);
}

int topsync_groups_build(topsync_groups_t **out, const topsync_topology_t *t, unsigned n,
                         const hwloc_const_bitmap_t *cpusets, unsigned level_mask)
{
    if (!out)
        return ts_fail(EINVAL, "groups: out is NULL");
    *out = NULL;
    if (!t)
        return ts_fail(EINVAL, "groups: topology is NULL");
    if (n == 0)
        return ts_fail(EINVAL, "groups: no participants (n = 0)");
    if (!cpusets)
        return build(out, n, 0, NULL, NULL, 0);

    hwloc_const_cpuset_t machine = hwloc_topology_get_topology_cpuset(t->hwloc);
    int unbound = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!cpusets[i] || hwloc_bitmap_iszero(cpusets[i]))
            return ts_fail(EINVAL, "groups: participant %u has an empty cpuset", i);
        if (!hwloc_bitmap_isincluded(cpusets[i], machine))
            return ts_fail(EINVAL, "groups: participant %u is bound to CPUs outside the topology",
                           i);
        /* bound to every allowed core (or wider): not bound at all */
        if (t->ncores > 1 && hwloc_bitmap_isincluded(t->allowed, cpusets[i]))
            unbound = 1;
    }
    if (unbound)
        return build(out, n, 0, NULL, NULL, 0);

    if (level_mask & ~(unsigned)TOPSYNC_LEVELS_ALL)
        return ts_fail(EINVAL, "groups: level mask 0x%x has unknown bits", level_mask);

    /* Every participant's unit at every level (-1: bound wider, or in none);
     * then the levels in the order their partitions of the participants nest. */
    int *unit_of = malloc((size_t)TOPSYNC_MAX_LEVELS * n * sizeof *unit_of);
    if (!unit_of)
        return ts_fail(ENOMEM, "groups: out of memory");
    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++)
        for (unsigned i = 0; i < n; i++)
            unit_of[(size_t)l * n + i] = ts_topology_unit_of_set(t, l, cpusets[i]);
    topsync_level_t levels[TOPSYNC_MAX_LEVELS];
    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS];
    unsigned nnotes = 0;
    int nlevels = ts_levels_order(t, level_mask, n, unit_of, levels, notes, &nnotes);
    int *loc = nlevels < 0 ? NULL : malloc((size_t)(nlevels ? nlevels : 1) * n * sizeof *loc);
    if (nlevels >= 0 && !loc)
        nlevels = ts_fail(ENOMEM, "groups: out of memory");
    if (nlevels < 0) {
        free(unit_of);
        return nlevels;
    }
    for (int l = 0; l < nlevels; l++)
        memcpy(loc + (size_t)l * n, unit_of + (size_t)ts_level_index(levels[l]) * n,
               n * sizeof *loc);
    free(unit_of);
    int rc = build(out, n, (unsigned)nlevels, levels, loc, 1);
    free(loc);
    if (rc == 0) {
        (*out)->nnotes = nnotes;
        memcpy((*out)->notes, notes, nnotes * sizeof *notes);
    }
    return rc;
}

unsigned topsync_groups_nparticipants(const topsync_groups_t *g)
{
    return g ? g->n : 0;
}

int topsync_groups_hierarchical(const topsync_groups_t *g)
{
    return g ? g->hierarchical : 0;
}

unsigned topsync_groups_levels(const topsync_groups_t *g,
                               topsync_level_t levels[TOPSYNC_MAX_LEVELS])
{
    if (!g)
        return 0;
    for (unsigned l = 0; l < g->nlevels; l++)
        levels[l] = g->levels[l];
    return g->nlevels;
}

unsigned topsync_groups_level_notes(const topsync_groups_t *g,
                                    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS])
{
    if (!g || !notes)
        return 0;
    memcpy(notes, g->notes, g->nnotes * sizeof *notes);
    return g->nnotes;
}

unsigned topsync_groups_count(const topsync_groups_t *g)
{
    return g ? g->ngroups : 0;
}

int topsync_groups_get(const topsync_groups_t *g, unsigned index, topsync_group_info_t *info)
{
    if (!g || !info)
        return ts_fail(EINVAL, "topsync_groups_get: NULL argument");
    if (index >= g->ngroups)
        return ts_fail(EINVAL, "topsync_groups_get: group %u out of range (%u groups)", index,
                       g->ngroups);
    *info = g->groups[index];
    return 0;
}

int topsync_groups_of_rank(const topsync_groups_t *g, unsigned rank, unsigned *indexes,
                           unsigned max)
{
    if (!g || (!indexes && max))
        return ts_fail(EINVAL, "topsync_groups_of_rank: NULL argument");
    if (rank >= g->n)
        return ts_fail(EINVAL, "rank %u out of range (%u participants)", rank, g->n);
    unsigned count = g->rank_ngroups[rank];
    for (unsigned k = 0; k < count && k < max; k++)
        indexes[k] = g->rank_groups[(size_t)rank * (g->nlevels + 1) + k];
    return (int)count;
}

const char *topsync_group_level_name(unsigned level)
{
    if (level == TOPSYNC_GROUP_TOP)
        return "TOP";
    return topsync_level_name((topsync_level_t)level);
}

/* Private: a deep copy, so that a barrier does not depend on the caller's. */
topsync_groups_t *ts_groups_clone(const topsync_groups_t *g);
topsync_groups_t *ts_groups_clone(const topsync_groups_t *g)
{
    topsync_groups_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = *g;
    size_t per_rank = g->nlevels + 1;
    c->groups = malloc((g->ngroups ? g->ngroups : 1) * sizeof *c->groups);
    c->member_storage = malloc((size_t)2 * g->n * sizeof *c->member_storage);
    c->rank_groups = malloc((size_t)g->n * per_rank * sizeof *c->rank_groups);
    c->rank_ngroups = malloc((size_t)g->n * sizeof *c->rank_ngroups);
    if (!c->groups || !c->member_storage || !c->rank_groups || !c->rank_ngroups) {
        topsync_groups_destroy(c);
        return NULL;
    }
    memcpy(c->member_storage, g->member_storage, (size_t)2 * g->n * sizeof *c->member_storage);
    memcpy(c->rank_groups, g->rank_groups, (size_t)g->n * per_rank * sizeof *c->rank_groups);
    memcpy(c->rank_ngroups, g->rank_ngroups, (size_t)g->n * sizeof *c->rank_ngroups);
    for (unsigned i = 0; i < g->ngroups; i++) {
        c->groups[i] = g->groups[i];
        c->groups[i].members = c->member_storage + (g->groups[i].members - g->member_storage);
    }
    return c;
}
