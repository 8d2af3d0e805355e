/*
 * The machine's fingerprint: a hash of what makes two topologies the same
 * machine for a tuning file. docs/design.md section 1.
 */
#include "topology/topology_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/hash.h"

/*
 * The machine's fingerprint (topsync_tuning_fingerprint, tune.h): FNV-1a
 * over hwloc's tree depth first: each object's type, OS index and number of
 * children (normal and memory), each cache's size and line size, the CPU
 * model hwloc reports, and the root's complete cpuset (CPUs offline
 * included). The tree's shape with its PUs' OS indexes says which PUs each
 * object holds, so the objects' own cpusets add nothing: leaving them out
 * keeps a 32768-PU machine at milliseconds. Memory sizes and the allowed
 * CPUs are left out: they change with boots and jobs, not with the machine.
 */
static uint64_t hash_object(uint64_t h, hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_MISC || hwloc_obj_type_is_io(o->type))
        return h;
    char buf[160];
    int len = snprintf(buf, sizeof buf, "%s:%d:%u:%u", hwloc_obj_type_string(o->type),
                       o->os_index == HWLOC_UNKNOWN_INDEX ? -1 : (int)o->os_index, o->arity,
                       o->memory_arity);
    if (hwloc_obj_type_is_cache(o->type) && o->attr && len > 0 && (size_t)len < sizeof buf)
        snprintf(buf + len, sizeof buf - (size_t)len, ":%llu:%u",
                 (unsigned long long)o->attr->cache.size, o->attr->cache.linesize);
    h = ts_fnv1a64_str(h, buf);
    const char *model = hwloc_obj_get_info_by_name(o, "CPUModel");
    if (model)
        h = ts_fnv1a64_str(ts_fnv1a64_str(h, ":"), model);
    h = ts_fnv1a64_str(h, ";");
    for (hwloc_obj_t c = o->memory_first_child; c; c = c->next_sibling)
        h = hash_object(h, c);
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling)
        h = hash_object(h, c);
    return h;
}

int ts_topology_fingerprint(topsync_topology_t *t)
{
    hwloc_obj_t root = hwloc_get_root_obj(t->hwloc);
    uint64_t h = hash_object(TS_FNV1A64_OFFSET, root);
    char *set = NULL;
    if (hwloc_bitmap_asprintf(&set, hwloc_topology_get_complete_cpuset(t->hwloc)) < 0)
        return ts_fail(ENOMEM, "out of memory loading the topology");
    h = ts_fnv1a64_str(h, set);
    free(set);
    snprintf(t->fingerprint, sizeof t->fingerprint, "%016llx", (unsigned long long)h);
    return 0;
}
