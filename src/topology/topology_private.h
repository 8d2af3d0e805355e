/* Private: the topology handle. */
#ifndef TOPSYNC_SRC_TOPOLOGY_PRIVATE_H
#define TOPSYNC_SRC_TOPOLOGY_PRIVATE_H

#include <stdint.h>

#include <topsync/topology.h>

/*
 * The units of one candidate level, as sets of allowed cores (see
 * topology.c, "Units"): a partition of some of the cores, each unit inside
 * one hwloc object of the level's type.
 */
struct ts_level_units {
    unsigned count;          /* units holding at least one allowed core */
    hwloc_bitmap_t *cpusets; /* the PUs of each unit's cores, in hwloc logical order */
    int *core_unit;          /* [ncores]: the unit of each core, -1 when in none */
    unsigned max_unit_cores; /* cores of the largest unit */
};

struct topsync_topology {
    hwloc_topology_t hwloc;
    char source[320];
    unsigned ncores;            /* cores holding at least one allowed PU */
    hwloc_obj_type_t core_type; /* HWLOC_OBJ_CORE, or PU when there are no cores */
    hwloc_obj_t *cores;         /* [ncores], hwloc logical order */
    hwloc_bitmap_t *core_sets;  /* [ncores]: each core's allowed PUs */
    hwloc_bitmap_t allowed;     /* every allowed PU of every core */
    int *pu_core;               /* [pu_limit]: PU OS index -> core index, or -1 */
    unsigned pu_limit;
    size_t line_size;
    char fingerprint[17];                             /* topsync_tuning_fingerprint (topology.c) */
    struct ts_level_units levels[TOPSYNC_MAX_LEVELS]; /* indexed by level bit number */
};

/* Bit number 0..3 of a single level bit, or -1. */
int ts_level_index(topsync_level_t level);
/* hwloc's object type of level index l (0 = L2 .. 3 = package) */
hwloc_obj_type_t ts_level_type(int l);

/* The level of bit number l (0..3). */
topsync_level_t ts_level_of_index(int l);

/* The core holding PU `os_index`, or -1. */
int ts_topology_pu_core(const topsync_topology_t *t, unsigned os_index);

/*
 * The unit of level index l holding every PU of `set`, or -1 when the set
 * spans several units (or lies outside every unit).
 */
int ts_topology_unit_of_set(const topsync_topology_t *t, int l, hwloc_const_cpuset_t set);

/*
 * Order the levels selected by `mask` by containment on n points (cores or
 * participants). unit_of[l * n + i] is the unit of level index l (0..3)
 * holding point i, or -1 when it is in none (a unit of its own). Writes the
 * kept levels, lowest first, into levels[] and returns their count; for each
 * selected level that was dropped, notes[] gets the level and why (at most
 * TOPSYNC_MAX_LEVELS notes, *nnotes set). Returns -ENOMEM on failure.
 */
int ts_levels_order(const topsync_topology_t *t, unsigned mask, unsigned n, const int *unit_of,
                    topsync_level_t levels[TOPSYNC_MAX_LEVELS],
                    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS], unsigned *nnotes);

/* The loader's pieces in files of their own (docs/design.md section 1):
 * fingerprint.c, synthetic_check.c, xml_check.c. Each check returns 0 or a
 * negative errno with the message naming the input. */
int ts_topology_fingerprint(topsync_topology_t *t);
int ts_topology_synthetic_check(const char *description);
int ts_topology_xml_check(const char *text, const char *name);
/* The largest XML topology read or checked. */
#define TS_XML_MAX_BYTES (256u << 20)

#endif
