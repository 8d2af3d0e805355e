/*
 * Placement: where mpirun's --map-by / --bind-to would put n ranks, on the
 * allowed cores of a topology.
 * The why: docs/design.md section 8.3.
 */
#include <stdlib.h>

#include "base/error.h"
#include "topology/topology_private.h"

struct deal {
    unsigned ndomains;
    unsigned *start; /* [ndomains + 1]: domain d's cores are cores[start[d] .. start[d+1]) */
    unsigned *cores; /* [ncores], logical order inside each domain */
    unsigned *used;  /* [ndomains]: cores taken in this round */
    unsigned *next;  /* [ndomains]: circular list of domains with a free core */
};

static void deal_free(struct deal *d)
{
    free(d->start);
    free(d->cores);
    free(d->used);
    free(d->next);
}

/* Domains: the units of level l (or one domain of every core when l < 0). */
static int deal_init(struct deal *d, const topsync_topology_t *t, int l)
{
    const int *unit = l >= 0 ? t->levels[l].core_unit : NULL;
    unsigned nunits = l >= 0 ? t->levels[l].count : 0;
    unsigned spare = 0;
    for (unsigned c = 0; c < t->ncores; c++)
        spare += !unit || unit[c] < 0;
    d->ndomains = nunits + (spare > 0);
    d->start = calloc(d->ndomains + 1, sizeof *d->start);
    d->cores = malloc(t->ncores * sizeof *d->cores);
    d->used = calloc(d->ndomains, sizeof *d->used);
    d->next = malloc(d->ndomains * sizeof *d->next);
    if (!d->start || !d->cores || !d->used || !d->next) {
        deal_free(d);
        return ts_fail(ENOMEM, "placement: out of memory");
    }
    /* counting sort of the cores by domain, stable (logical order kept) */
    for (unsigned c = 0; c < t->ncores; c++) {
        unsigned dom = unit && unit[c] >= 0 ? (unsigned)unit[c] : nunits;
        d->start[dom + 1]++;
    }
    for (unsigned k = 0; k < d->ndomains; k++)
        d->start[k + 1] += d->start[k];
    for (unsigned c = 0; c < t->ncores; c++) {
        unsigned dom = unit && unit[c] >= 0 ? (unsigned)unit[c] : nunits;
        d->cores[d->start[dom] + d->used[dom]++] = c;
    }
    return 0;
}

static void deal_new_round(struct deal *d)
{
    for (unsigned k = 0; k < d->ndomains; k++) {
        d->used[k] = 0;
        d->next[k] = (k + 1) % d->ndomains;
    }
}

/* The deal itself: rank r's core (an index into the topology's cores) and
 * its binding, a cpuset the topology owns. Either output may be NULL. */
static int placement_deal(const topsync_topology_t *t, unsigned n, topsync_map_by_t map_by,
                          topsync_bind_to_t bind_to, unsigned *cores, hwloc_const_bitmap_t *sets,
                          const char *caller)
{
    if (!t)
        return ts_fail(EINVAL, "%s: NULL topology", caller);
    if (n == 0)
        return ts_fail(EINVAL, "%s: no participants (n = 0)", caller);
    if ((unsigned)map_by > TOPSYNC_MAP_BY_SOCKET)
        return ts_fail(EINVAL, "%s: map_by %u out of range (valid: core, numa, socket)", caller,
                       (unsigned)map_by);
    if ((unsigned)bind_to > TOPSYNC_BIND_TO_NONE)
        return ts_fail(EINVAL, "%s: bind_to %u out of range (valid: core, numa, package, none)",
                       caller, (unsigned)bind_to);
    int map_level = map_by == TOPSYNC_MAP_BY_NUMA     ? ts_level_index(TOPSYNC_LEVEL_NUMA)
                    : map_by == TOPSYNC_MAP_BY_SOCKET ? ts_level_index(TOPSYNC_LEVEL_PACKAGE)
                                                      : -1;
    int bind_level = bind_to == TOPSYNC_BIND_TO_NUMA      ? ts_level_index(TOPSYNC_LEVEL_NUMA)
                     : bind_to == TOPSYNC_BIND_TO_PACKAGE ? ts_level_index(TOPSYNC_LEVEL_PACKAGE)
                                                          : -1;
    struct deal d;
    int rc = deal_init(&d, t, map_level);
    if (rc < 0)
        return rc;
    deal_new_round(&d);
    unsigned at = 0, prev = d.ndomains - 1, free_cores = t->ncores;
    for (unsigned r = 0; r < n; r++) {
        if (free_cores == 0) { /* every core has a rank: the next round, from domain 0 */
            deal_new_round(&d);
            free_cores = t->ncores;
            at = 0;
            prev = d.ndomains - 1;
        }
        unsigned dom = at;
        unsigned core = d.cores[d.start[dom] + d.used[dom]++];
        free_cores--;
        if (d.start[dom] + d.used[dom] == d.start[dom + 1] && free_cores > 0) {
            d.next[prev] = d.next[dom]; /* full: out of the deal for this round */
        } else {
            prev = dom;
        }
        at = d.next[dom];

        if (cores)
            cores[r] = core;
        if (sets) {
            hwloc_const_cpuset_t set = t->core_sets[core];
            if (bind_level >= 0 && t->levels[bind_level].core_unit[core] >= 0)
                set = t->levels[bind_level].cpusets[t->levels[bind_level].core_unit[core]];
            else if (bind_to == TOPSYNC_BIND_TO_NONE)
                set = t->allowed;
            sets[r] = set;
        }
    }
    deal_free(&d);
    return 0;
}

int topsync_placement_compute(const topsync_topology_t *t, unsigned n, topsync_map_by_t map_by,
                              topsync_bind_to_t bind_to, hwloc_bitmap_t *cpusets)
{
    if (!cpusets)
        return ts_fail(EINVAL, "topsync_placement_compute: NULL argument");
    /* the shared sets are written into the caller's array, then copied in place */
    int rc = placement_deal(t, n, map_by, bind_to, NULL, (hwloc_const_bitmap_t *)cpusets,
                            "topsync_placement_compute");
    if (rc < 0)
        return rc;
    for (unsigned r = 0; r < n; r++) {
        cpusets[r] = hwloc_bitmap_dup(cpusets[r]);
        if (!cpusets[r]) {
            for (unsigned i = 0; i < r; i++)
                hwloc_bitmap_free(cpusets[i]);
            return ts_fail(ENOMEM, "placement: out of memory");
        }
    }
    return 0;
}

int topsync_placement_compute_shared(const topsync_topology_t *t, unsigned n,
                                     topsync_map_by_t map_by, topsync_bind_to_t bind_to,
                                     hwloc_const_bitmap_t *cpusets, unsigned *cores)
{
    if (!cpusets && !cores)
        return ts_fail(EINVAL, "topsync_placement_compute_shared: no output (cpusets and cores "
                               "are NULL)");
    return placement_deal(t, n, map_by, bind_to, cores, cpusets,
                          "topsync_placement_compute_shared");
}
