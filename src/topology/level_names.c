/*
 * The four levels topsync groups by (L2, L3, NUMA node, package): their
 * order, lowest first, their hwloc object types and their names; used by
 * loading (topology.c) and level choice (levels.c) alike. docs/design.md
 * section 1.
 */
#include "topology/topology_private.h"

/* Lowest first: the order in which groups are formed. */
static const topsync_level_t level_order[TOPSYNC_MAX_LEVELS] = {
    TOPSYNC_LEVEL_L2, TOPSYNC_LEVEL_L3, TOPSYNC_LEVEL_NUMA, TOPSYNC_LEVEL_PACKAGE};
static const hwloc_obj_type_t level_type[TOPSYNC_MAX_LEVELS] = {
    HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_PACKAGE};

int ts_level_index(topsync_level_t level)
{
    for (int i = 0; i < TOPSYNC_MAX_LEVELS; i++)
        if (level_order[i] == level)
            return i;
    return -1;
}

const char *topsync_level_name(topsync_level_t level)
{
    int i = ts_level_index(level);
    return i < 0 ? NULL : hwloc_obj_type_string(level_type[i]);
}

topsync_level_t ts_level_of_index(int l)
{
    return level_order[l];
}

hwloc_obj_type_t ts_level_type(int l)
{
    return level_type[l];
}
