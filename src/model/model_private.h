/* Private: the machine model's representation (model/machine.c) and the engine's
 * entry points (sim_engine.c) that sim_barrier.c drives. */
#ifndef TOPSYNC_SRC_MODEL_PRIVATE_H
#define TOPSYNC_SRC_MODEL_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <topsync/model.h>

/* Virtual time is kept in integer picoseconds: exact, and the same on
 * every machine (no floating-point order of evaluation in the schedule). */
typedef int64_t ts_ps;

struct topsync_model {
    const topsync_topology_t *topology; /* the caller's; outlives the model */
    unsigned pu_limit;                  /* largest PU OS index + 1 */
    bool derived;                       /* per-level latencies, else a table */
    /* table: table_n x table_n, full (symmetric), in ps */
    unsigned table_n;
    ts_ps *table;
    int *table_index; /* [pu_limit]: the PU's table CPU, -1: not a PU */
    int *package;     /* [pu_limit]: package unit (per-package tables) */
    bool per_package;
    ts_ps cross_package_ps;
    /* The unit of each level holding the PU (-1: none), and the level class
     * of a pair sharing that unit (model/machine.c, "Levels of a pair"). */
    int *unit[TOPSYNC_MODEL_MACHINE];                         /* [level][pu_limit] */
    topsync_model_level_t *unit_class[TOPSYNC_MODEL_MACHINE]; /* [level][pu_limit] */
    ts_ps level_ps[TOPSYNC_MODEL_NLEVELS];                    /* derived tables */
    unsigned mlp;          /* outstanding misses per core; 0: not known */
    ts_ps home_service_ps; /* one request's occupancy of a home; 0: none */
    char description[512];
};

/* The level class of two distinct PUs of the model. */
static inline topsync_model_level_t ts_model_level(const topsync_model_t *m, unsigned a, unsigned b)
{
    for (int l = 0; l < TOPSYNC_MODEL_MACHINE; l++)
        if (m->unit[l][a] >= 0 && m->unit[l][a] == m->unit[l][b])
            return m->unit_class[l][a];
    return TOPSYNC_MODEL_MACHINE;
}

/* Picoseconds from PU a to PU b (both valid PUs of the model). */
static inline ts_ps ts_model_ps(const topsync_model_t *m, unsigned a, unsigned b)
{
    if (a == b)
        return 0;
    if (m->derived)
        return m->level_ps[ts_model_level(m, a, b)];
    if (m->per_package && m->package[a] != m->package[b])
        return m->cross_package_ps;
    return m->table[(size_t)m->table_index[a] * m->table_n + (unsigned)m->table_index[b]];
}

/* Is os a PU of the model? */
/* splitmix64: the simulation's draws from its seed. Advance the state by
 * TS_SPLITMIX_STEP, then mix it (the engine's tie-breaks; the scheduler's
 * CPU phases, the k-th from seed + (k + 1) steps). */
#define TS_SPLITMIX_STEP 0x9e3779b97f4a7c15ull
static inline uint64_t ts_splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline bool ts_model_has_pu(const topsync_model_t *m, unsigned os)
{
    return os < m->pu_limit && m->table_index[os] >= 0;
}

#endif
