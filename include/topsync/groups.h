/*
 * topsync groups: the hierarchy of the hierarchical barrier (design.md section 1).
 *
 * From the lowest active level up: participants sharing a unit form a group,
 * whose leader is its lowest rank; leaders join the groups of the next active
 * level; the leaders left at the end form the TOP group. Groups of one member
 * are skipped. A participant bound wider than a unit of some level is a group
 * of its own at that level (so it is skipped there and goes up as a leader).
 *
 * A participant without binding (its cpuset covers the whole machine, or no
 * cpusets were given) makes the hierarchy unknowable: the result is then one
 * TOP group of everybody, and topsync_groups_hierarchical() returns 0 so
 * that callers can say they fell back to a flat algorithm.
 *
 * A groups object is immutable once built and may be read from any thread.
 */
#ifndef TOPSYNC_GROUPS_H
#define TOPSYNC_GROUPS_H

#include <topsync/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topsync_groups topsync_groups_t;

/* The level of a group: an active level, or TOPSYNC_GROUP_TOP. */
#define TOPSYNC_GROUP_TOP 0u

/*
 * Build the groups of n participants whose binding cpusets are cpusets[0..n-1]
 * (NULL means: no participant is bound). level_mask selects the levels
 * (TOPSYNC_LEVELS_ALL for the plain "topo" algorithm); the selected levels
 * are ordered by containment on the participants' cores, and a level that
 * partitions the participants as another does is dropped (topology.h).
 * Runs in O(n log n) after the topology's O(cores) setup.
 * Returns 0 or a negative errno (-EINVAL: n == 0, empty cpuset, or a cpuset
 * outside the topology).
 */
int topsync_groups_build(topsync_groups_t **out, const topsync_topology_t *topology, unsigned n,
                         const hwloc_const_bitmap_t *cpusets, unsigned level_mask);

/*
 * Groups of a flat barrier: one TOP group of n members (no topology needed).
 */
int topsync_groups_build_flat(topsync_groups_t **out, unsigned n);

/*
 * Groups from an explicit placement table: loc[l * n + i] is the unit of
 * level l (0 = lowest of nlevels) that participant i sits in, or -1 when it is
 * bound wider. level_ids[l] names the level (for printing). This is what
 * topsync_groups_build computes from cpusets; tests use it to build deep
 * hierarchies without a topology.
 */
int topsync_groups_build_table(topsync_groups_t **out, unsigned n, unsigned nlevels,
                               const topsync_level_t *level_ids, const int *loc);

void topsync_groups_destroy(topsync_groups_t *groups);

unsigned topsync_groups_nparticipants(const topsync_groups_t *groups);
/* 1 when the hierarchy is known, 0 for the flat fallback (unbound participants). */
int topsync_groups_hierarchical(const topsync_groups_t *groups);
/* The active levels the groups were built on (lowest first); returns their count. */
unsigned topsync_groups_levels(const topsync_groups_t *groups,
                               topsync_level_t levels[TOPSYNC_MAX_LEVELS]);
/*
 * The selected levels the groups were not built on, with the reason of each
 * (ordered by containment on the participants' cores: see topology.h);
 * returns their count.
 */
unsigned topsync_groups_level_notes(const topsync_groups_t *groups,
                                    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS]);

/* Number of groups (groups of one excluded), ordered by level then leader. */
unsigned topsync_groups_count(const topsync_groups_t *groups);

typedef struct topsync_group_info {
    unsigned level;          /* a topsync_level_t bit, or TOPSYNC_GROUP_TOP */
    unsigned leader;         /* lowest rank of the group */
    unsigned nmembers;       /* >= 2 */
    const unsigned *members; /* ascending ranks; owned by the groups object */
} topsync_group_info_t;

int topsync_groups_get(const topsync_groups_t *groups, unsigned index, topsync_group_info_t *info);

/*
 * The groups participant `rank` belongs to, lowest level first, written into
 * indexes[0..max-1] (indexes usable with topsync_groups_get); returns the
 * count. It leads every group but possibly the last (rank 0 leads all).
 */
int topsync_groups_of_rank(const topsync_groups_t *groups, unsigned rank, unsigned *indexes,
                           unsigned max);

/* Name of a group level: topsync_level_name() or "TOP". */
const char *topsync_group_level_name(unsigned level);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_GROUPS_H */
