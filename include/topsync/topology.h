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
 * Active levels (SPEC section 1): a level (L2, L3, NUMA node, package) is
 * active when one of its units is shared by two or more cores. A level whose
 * units partition the cores exactly as the level below does adds nothing and
 * the lower one is dropped (on Kunpeng 920 L3 == NUMA node: NUMA is kept). A
 * level made of one unit covering every core is the machine itself, which is
 * always the implicit top, and is dropped too.
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

#define TOPSYNC_LEVELS_ALL                                                    \
    (TOPSYNC_LEVEL_L2 | TOPSYNC_LEVEL_L3 | TOPSYNC_LEVEL_NUMA |               \
     TOPSYNC_LEVEL_PACKAGE)
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
/* Load an hwloc XML export (lstopo --of xml). */
int topsync_topology_load_xml(topsync_topology_t **out, const char *path);
/* Release a handle; NULL is accepted. */
void topsync_topology_destroy(topsync_topology_t *topology);

/* The underlying hwloc topology (owned by the handle; do not destroy). */
hwloc_topology_t topsync_topology_hwloc(const topsync_topology_t *topology);
/* Number of cores (hwloc Core objects; PUs when the topology has no cores). */
unsigned topsync_topology_ncores(const topsync_topology_t *topology);
/* Largest cache line size hwloc reports for any cache, or 64 when none does. */
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

/* Number of units of a level, and the cpuset of unit `index` (owned by hwloc). */
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
    TOPSYNC_MAP_BY_NUMA,   /* rank r on NUMA node r mod N, its (r div N)-th core */
    TOPSYNC_MAP_BY_SOCKET, /* rank r on package r mod S, its (r div S)-th core */
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
 * --map-by / --bind-to would (cores in hwloc logical order, wrapping around
 * when n exceeds them). cpusets[i] is allocated (free each with
 * hwloc_bitmap_free); with TOPSYNC_BIND_TO_NONE each is the whole machine.
 */
int topsync_placement_compute(const topsync_topology_t *topology, unsigned n,
                              topsync_map_by_t map_by, topsync_bind_to_t bind_to,
                              hwloc_bitmap_t *cpusets);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_TOPOLOGY_H */
