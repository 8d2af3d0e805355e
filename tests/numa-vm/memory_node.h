/* Where memory lies, for the guest checks (tests/numa-vm and
 * tests/machine-vm): the NUMA node (hwloc logical index) holding all of
 * [p, p+size), or -1 when it is spread over several or unknown. */
#ifndef TOPSYNC_TESTS_MEMORY_NODE_H
#define TOPSYNC_TESTS_MEMORY_NODE_H

#include <stddef.h>

#include <hwloc.h>

static inline int memory_node(hwloc_topology_t topology, void *p, size_t size)
{
    hwloc_nodeset_t set = hwloc_bitmap_alloc();
    int node = -1;
    if (hwloc_get_area_memlocation(topology, p, size, set, HWLOC_MEMBIND_BYNODESET) == 0 &&
        hwloc_bitmap_weight(set) == 1) {
        hwloc_obj_t o =
            hwloc_get_numanode_obj_by_os_index(topology, (unsigned)hwloc_bitmap_first(set));
        node = o ? (int)o->logical_index : -1;
    }
    hwloc_bitmap_free(set);
    return node;
}

#endif
