/*
 * Which levels the hierarchy is built on, and in what order.
 * The why: docs/design.md section 8.2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "topology/topology_private.h"

/* A point of no unit of level l (a block of its own there). */
static int unitless(const int *unit_of, unsigned nunits, unsigned i)
{
    return unit_of[i] < 0 || (unsigned)unit_of[i] >= nunits;
}

/* label[i]: the first point in i's block. first_of is scratch of one slot per unit. */
static void canonical_labels(unsigned n, const int *unit_of, unsigned nunits, int *first_of,
                             unsigned *label, unsigned *nblocks)
{
    for (unsigned k = 0; k < nunits; k++)
        first_of[k] = -1;
    unsigned blocks = 0;
    for (unsigned i = 0; i < n; i++) {
        int u = unit_of[i];
        if (unitless(unit_of, nunits, i)) {
            label[i] = i;
            blocks++;
        } else if (first_of[u] < 0) {
            first_of[u] = (int)i;
            label[i] = i;
            blocks++;
        } else {
            label[i] = (unsigned)first_of[u];
        }
    }
    *nblocks = blocks;
}

/*
 * Every block of a lies inside one unit of b, or wholly outside b's units:
 * points that b does not cover (the two E-cores of Arrow Lake whose L2 lies
 * in no L3) do not make b cut across a; a block with points both inside and
 * outside b's units does.
 */
static int refines(unsigned n, const unsigned *a, const unsigned *b, const int *b_unit_of,
                   unsigned b_nunits)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned first = a[i];
        int out_i = unitless(b_unit_of, b_nunits, i);
        int out_first = unitless(b_unit_of, b_nunits, first);
        if (out_i != out_first || (!out_i && b[first] != b[i]))
            return 0;
    }
    return 1;
}

static int same_partition(unsigned n, const unsigned *a, const unsigned *b)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void note(topsync_level_note_t *notes, unsigned *nnotes, int l, const char *fmt,
                 const char *other)
{
    topsync_level_note_t *x = &notes[(*nnotes)++];
    x->level = ts_level_of_index(l);
    snprintf(x->reason, sizeof x->reason, fmt, other);
}

int ts_levels_order(const topsync_topology_t *t, unsigned mask, unsigned n, const int *unit_of,
                    topsync_level_t levels[TOPSYNC_MAX_LEVELS],
                    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS], unsigned *nnotes)
{
    *nnotes = 0;
    int candidate[TOPSYNC_MAX_LEVELS], ncand = 0;
    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++) {
        const struct ts_level_units *u = &t->levels[l];
        if (!(mask & ts_level_of_index(l)))
            continue;
        if (u->count == 0)
            note(notes, nnotes, l, "%sthe topology has no such object with a core", "");
        else if (u->max_unit_cores < 2)
            note(notes, nnotes, l, "%sno unit is shared by two cores", "");
        else if (u->count == 1 && u->max_unit_cores == t->ncores)
            note(notes, nnotes, l, "%sone unit holds every core: the machine, the top", "");
        else
            candidate[ncand++] = l;
    }
    if (ncand == 0)
        return 0;

    unsigned *label[TOPSYNC_MAX_LEVELS] = {0}, nblocks[TOPSYNC_MAX_LEVELS];
    unsigned maxunits = 1;
    for (int k = 0; k < ncand; k++)
        if (t->levels[candidate[k]].count > maxunits)
            maxunits = t->levels[candidate[k]].count;
    int *first_of = malloc(maxunits * sizeof *first_of);
    int rc = first_of ? 0 : ts_fail(ENOMEM, "out of memory ordering the levels");
    for (int k = 0; k < ncand && rc == 0; k++) {
        int l = candidate[k];
        label[k] = malloc((n ? n : 1) * sizeof *label[k]);
        if (!label[k]) {
            rc = ts_fail(ENOMEM, "out of memory ordering the levels");
            break;
        }
        canonical_labels(n, unit_of + (size_t)l * n, t->levels[l].count, first_of, label[k],
                         &nblocks[k]);
    }
    free(first_of);

    int n_out = 0;
    if (rc == 0) {
        /* a level whose units each hold at most one point makes no group
         * (8 ranks map-by numa on 8 nodes of 2 packages each: no Package
         * is shared, though the machine's packages hold cores) */
        int alive[TOPSYNC_MAX_LEVELS];
        for (int k = 0; k < ncand; k++) {
            alive[k] = nblocks[k] < n;
            if (!alive[k])
                note(notes, nnotes, candidate[k], "%sno unit holds two of the participants", "");
        }
        /* 2: equal partitions collapse onto one level */
        for (int k = 0; k < ncand; k++)
            for (int j = k + 1; j < ncand && alive[k]; j++) {
                if (!alive[j] || !same_partition(n, label[k], label[j]))
                    continue;
                int drop = t->levels[candidate[k]].count > t->levels[candidate[j]].count ? j : k;
                int keep = drop == k ? j : k;
                alive[drop] = 0;
                note(notes, nnotes, candidate[drop], "same cores as %s",
                     topsync_level_name(ts_level_of_index(candidate[keep])));
            }
        /* 3: finest first, stable in the usual order */
        int order[TOPSYNC_MAX_LEVELS], norder = 0;
        for (int k = 0; k < ncand; k++)
            if (alive[k]) {
                int at = norder++;
                while (at > 0 && nblocks[order[at - 1]] < nblocks[k]) {
                    order[at] = order[at - 1];
                    at--;
                }
                order[at] = k;
            }
        int chain[TOPSYNC_MAX_LEVELS];
        for (int o = 0; o < norder; o++) {
            int k = order[o], cut = -1;
            for (int c = 0; c < n_out && cut < 0; c++)
                if (!refines(n, label[chain[c]], label[k], unit_of + (size_t)candidate[k] * n,
                             t->levels[candidate[k]].count))
                    cut = chain[c];
            if (cut >= 0) {
                note(notes, nnotes, candidate[k], "does not nest with %s (its units cut across)",
                     topsync_level_name(ts_level_of_index(candidate[cut])));
                continue;
            }
            chain[n_out] = k;
            levels[n_out++] = ts_level_of_index(candidate[k]);
        }
    }
    for (int k = 0; k < ncand; k++)
        free(label[k]);
    return rc < 0 ? rc : n_out;
}
