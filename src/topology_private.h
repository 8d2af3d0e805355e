/* Private: the topology handle. */
#ifndef TOPSYNC_SRC_TOPOLOGY_PRIVATE_H
#define TOPSYNC_SRC_TOPOLOGY_PRIVATE_H

#include <topsync/topology.h>

struct ts_level_units {
    unsigned count;          /* units holding at least one core */
    hwloc_bitmap_t *cpusets; /* owned copies, in hwloc logical order */
};

struct topsync_topology {
    hwloc_topology_t hwloc;
    char source[256];
    unsigned ncores;
    hwloc_obj_type_t core_type; /* HWLOC_OBJ_CORE, or PU when there are no cores */
    size_t line_size;
    struct ts_level_units levels[TOPSYNC_MAX_LEVELS]; /* indexed by level bit number */
};

/* Bit number 0..3 of a single level bit, or -1. */
int ts_level_index(topsync_level_t level);

#endif
