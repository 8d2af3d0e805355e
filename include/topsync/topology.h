/*
 * topsync topology: the machine (or a synthetic/XML one), its active levels,
 * and where participants sit.
 *
 * A topology handle wraps an hwloc topology. Everything that depends on the
 * machine takes a handle, so a 128-core server can be studied on a laptop:
 *
 *     topsync_topology_t *t;
 *     topsync_topology_load_synthetic(&t, "pack:2 numa:2 l3:1 core:32 pu:1");
 *
 * Units. A unit of a level is a set of cores: the allowed cores of one
 * hwloc object of that type (L2, L3, NUMA node, package). Each core belongs
 * to the smallest object of the type that holds it, so NUMA nodes with the
 * same cores (DDR and MCDRAM/HBM twins) are one unit, a node attached to the
 * root beside smaller ones keeps only the cores in none of them, and nodes
 * with no cores (GPU or CXL memory) are no unit. Cores may lie in no unit of
 * a level (offline or restricted CPUs can leave a package without a node).
 *
 * Active levels (docs/design.md section 1): a level is a candidate when one
 * of its units holds two or more cores and no single unit holds every core
 * (that is the machine, the implicit top). The candidates are ordered by
 * containment on the cores at hand (every core for
 * topsync_topology_active_levels, the participants' cores for groups): a
 * level whose partition refines another's is below it, so L3 may sit above
 * NUMA (Intel sub-NUMA clustering) and NUMA above package (Itanium). A level
 * with the same partition as another is dropped in favour of the one higher
 * in the usual order L2 < L3 < NUMA < package (on Kunpeng 920 L3 == NUMA:
 * NUMA is kept); a level that nests with neither neighbour is dropped. Each
 * dropped level gets a note saying why.
 *
 * Handles are not thread-safe for concurrent load/destroy; concurrent reads
 * of a loaded handle are safe.
 */
#ifndef TOPSYNC_TOPOLOGY_H
#define TOPSYNC_TOPOLOGY_H

#include <stddef.h>
#include <hwloc.h>
#include <topsync/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hierarchy levels, usable as bits of a level mask. */
typedef enum topsync_level {
    TOPSYNC_LEVEL_L2 = 1u << 0,
    TOPSYNC_LEVEL_L3 = 1u << 1,
    TOPSYNC_LEVEL_NUMA = 1u << 2,
    TOPSYNC_LEVEL_PACKAGE = 1u << 3,
} topsync_level_t;

#define TOPSYNC_LEVELS_ALL \
    (TOPSYNC_LEVEL_L2 | TOPSYNC_LEVEL_L3 | TOPSYNC_LEVEL_NUMA | TOPSYNC_LEVEL_PACKAGE)
#define TOPSYNC_MAX_LEVELS 4

typedef struct topsync_topology topsync_topology_t;

/* Load this machine's topology (hwloc discovery). */
int topsync_topology_load(topsync_topology_t **out);
/*
 * Load an hwloc synthetic description, e.g. "pack:2 numa:2 l3:1 core:32 pu:1",
 * or what `lstopo --of synthetic` writes (attached "[NUMANode(memory=...)]",
 * "(size=...)", "(indexes=...)"). topsync checks the text before hwloc does:
 * levels separated by blanks, at most 1024 objects per level, 8192 in all,
 * indexes up to 65535; anything else is -EINVAL with the position of the
 * first unexpected character in topsync_error_message().
 */
int topsync_topology_load_synthetic(topsync_topology_t **out, const char *description);
/*
 * Load an hwloc XML export (lstopo --of xml), from a file or from memory
 * (`size` bytes, no terminating NUL needed). A file hwloc cannot read, or
 * one its loader is known to crash on (format 2 without a NUMANode), is
 * -EINVAL with a one-line message.
 */
int topsync_topology_load_xml(topsync_topology_t **out, const char *path);
int topsync_topology_load_xml_buffer(topsync_topology_t **out, const char *buffer, size_t size);
/* Release a handle; NULL is accepted. */
void topsync_topology_destroy(topsync_topology_t *topology);

/* The underlying hwloc topology (owned by the handle; do not destroy). */
hwloc_topology_t topsync_topology_hwloc(const topsync_topology_t *topology);
/* Number of cores (hwloc Core objects holding an allowed PU; PUs when the
 * topology has no cores). Core i is the i-th of them in hwloc logical order. */
unsigned topsync_topology_ncores(const topsync_topology_t *topology);
/* Largest cache line size hwloc reports for any cache, or 128 when none does
 * (the largest line of common servers: a missing figure costs memory, never
 * false sharing). */
size_t topsync_topology_line_size(const topsync_topology_t *topology);
/* Where the topology came from: "this machine", "synthetic: ...", "xml: ...". */
const char *topsync_topology_source(const topsync_topology_t *topology);

/*
 * The active levels among those in `mask`, lowest first, written into
 * levels[0..n-1]; returns n (0..TOPSYNC_MAX_LEVELS) or a negative errno.
 * The mask selects first, then unshared and repeated levels are dropped
 * among the selected ones (so "topo:l3" on Kunpeng 920, where L3 repeats the
 * NUMA node, keeps L3 since NUMA was not selected).
 */
int topsync_topology_active_levels(const topsync_topology_t *topology, unsigned mask,
                                   topsync_level_t levels[TOPSYNC_MAX_LEVELS]);

/* Why a selected level is not active. */
typedef struct topsync_level_note {
    topsync_level_t level;
    char reason[120]; /* e.g. "same cores as NUMANode", "does not nest with L3Cache" */
} topsync_level_note_t;

/*
 * The selected levels that topsync_topology_active_levels drops, with the
 * reason of each, written into notes[]; returns their count or a negative
 * errno.
 */
int topsync_topology_level_notes(const topsync_topology_t *topology, unsigned mask,
                                 topsync_level_note_t notes[TOPSYNC_MAX_LEVELS]);

/* Number of units of a level, and the cpuset of unit `index` (the PUs of its
 * cores; owned by the handle). */
int topsync_topology_level_units(const topsync_topology_t *topology, topsync_level_t level);
hwloc_const_cpuset_t topsync_topology_level_unit_cpuset(const topsync_topology_t *topology,
                                                        topsync_level_t level, unsigned index);

/* "L2Cache", "L3Cache", "NUMANode", "Package" (hwloc's spelling), or NULL. */
const char *topsync_level_name(topsync_level_t level);

/*
 * Parse a level list such as "numa,socket" or "l3,numa,package" (case
 * insensitive; "socket" and "pack" mean package, "node" means numa; "all"
 * selects every level) into a mask. Returns 0 or -EINVAL with a message
 * naming the bad word and the valid ones.
 */
int topsync_levels_parse(const char *list, unsigned *mask);

/* ------------------------------------------------------------------------
 * Placement: where participants are bound.
 * ------------------------------------------------------------------------ */

typedef enum topsync_map_by {
    TOPSYNC_MAP_BY_CORE,   /* rank r on core r (mod cores) */
    TOPSYNC_MAP_BY_NUMA,   /* round robin over the NUMA units, the next free core of each */
    TOPSYNC_MAP_BY_SOCKET, /* round robin over the packages, the next free core of each */
} topsync_map_by_t;

typedef enum topsync_bind_to {
    TOPSYNC_BIND_TO_CORE,
    TOPSYNC_BIND_TO_NUMA,
    TOPSYNC_BIND_TO_PACKAGE,
    TOPSYNC_BIND_TO_NONE,
} topsync_bind_to_t;

int topsync_map_by_parse(const char *word, topsync_map_by_t *out);
int topsync_bind_to_parse(const char *word, topsync_bind_to_t *out);

/*
 * Compute the binding cpusets of n participants placed like mpirun's
 * --map-by / --bind-to would, over the allowed cores in hwloc logical order.
 * map-by numa/socket deals ranks round robin over the units of that level
 * (the cores in no unit form one more), each unit giving its next free core
 * and full units skipped, so no core gets a second rank while an allowed
 * core has none; past one rank per core the deal starts again. bind-to
 * numa/package binds to the core's unit of that level (to the core when it
 * lies in none); bind-to none to every allowed core. cpusets[i] is
 * allocated (free each with hwloc_bitmap_free). Runs in O(cores + n).
 * Returns 0 or -EINVAL (n == 0, an enum value out of range), -ENOMEM.
 */
int topsync_placement_compute(const topsync_topology_t *topology, unsigned n,
                              topsync_map_by_t map_by, topsync_bind_to_t bind_to,
                              hwloc_bitmap_t *cpusets);

/*
 * The same placement without an allocation per participant, for large n:
 * cpusets[i] (when cpusets is not NULL) points to a cpuset the topology owns
 * (a core's, a unit's, or the allowed cpuset), valid until
 * topsync_topology_destroy and not to be freed or changed; cores[i] (when
 * cores is not NULL) is participant i's core, an index from 0 to
 * topsync_topology_ncores() - 1 in hwloc logical order. Memory grows with n
 * only. Returns 0 or -EINVAL (both outputs NULL, n == 0, an enum value out
 * of range).
 */
int topsync_placement_compute_shared(const topsync_topology_t *topology, unsigned n,
                                     topsync_map_by_t map_by, topsync_bind_to_t bind_to,
                                     hwloc_const_bitmap_t *cpusets, unsigned *cores);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_TOPOLOGY_H */
