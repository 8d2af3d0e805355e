/*
 * Run inside the NUMA guest (tests/numa-vm/run_numa_vm.sh): checks where
 * RCLAwareMalloc's pages really are, with hwloc_get_area_memlocation()
 * (move_pages underneath), on a machine with two NUMA nodes.
 *
 *  1. A block allocated before any server, first touched by a thread bound
 *     to node 0, sits on node 0; a server started on a core of node 1
 *     migrates it to node 1.
 *  2. A block allocated while the server runs sits on node 1, although node
 *     0's thread touches it first.
 *  3. Control: a plain malloc block touched from node 0 stays on node 0 (the
 *     check can tell the nodes apart).
 *  4. RCLLockInitNUMA on the real topology: `pack` puts a second server on
 *     node 1 (the one-node binding holds); a third server on node 0 ends
 *     it: new blocks are no longer bound (they follow the first touch).
 * Prints "numa-vm: PASS" or "numa-vm: FAIL ..." lines.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topsync.h>

#include "memory_node.h"

static int failures;

#define EXPECT(cond, ...)                                           \
    do {                                                            \
        if (!(cond)) {                                              \
            printf("numa-vm: FAIL line %d: %s: ", __LINE__, #cond); \
            printf(__VA_ARGS__);                                    \
            printf("\n");                                           \
            failures++;                                             \
        }                                                           \
    } while (0)

static hwloc_topology_t h;

static void bind_to_node(unsigned node)
{
    hwloc_obj_t n = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, node);
    hwloc_set_cpubind(h, n->cpuset, HWLOC_CPUBIND_THREAD);
}

/* The logical index of the first core of NUMA node `node`. */
static int first_core_of(unsigned node)
{
    hwloc_obj_t n = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, node);
    hwloc_obj_t core = hwloc_get_next_obj_inside_cpuset_by_type(h, n->cpuset, HWLOC_OBJ_CORE, NULL);
    return core ? (int)core->logical_index : -1;
}

int main(void)
{
    topsync_rcl_runtime_t *rt;
    if (topsync_rcl_runtime_create(&rt, NULL) < 0) {
        printf("numa-vm: FAIL runtime: %s\n", topsync_error_message());
        return 1;
    }
    h = topsync_topology_hwloc(topsync_rcl_runtime_topology(rt));
    int nodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    printf("numa-vm: %d NUMA nodes, %u cores\n", nodes,
           topsync_topology_ncores(topsync_rcl_runtime_topology(rt)));
    if (nodes < 2) {
        printf("numa-vm: FAIL the guest has %d NUMA node(s)\n", nodes);
        return 1;
    }
    size_t size = 8u << 20;

    bind_to_node(0);
    char *early = topsync_rcl_malloc(rt, size);
    memset(early, 1, size);
    char *plain = malloc(size);
    memset(plain, 2, size);
    EXPECT(memory_node(h, early + 4096, size - 8192) == 0,
           "early block on node %d before the server", memory_node(h, early + 4096, size - 8192));

    topsync_rcl_server_t *s1;
    int core1 = first_core_of(1);
    EXPECT(topsync_rcl_server_start(rt, core1, &s1) == 0, "%s", topsync_error_message());
    topsync_rcl_alloc_stats_t st;
    topsync_rcl_alloc_stats(rt, &st);
    EXPECT(st.migrated_blocks == 1 && st.memory_node == 1, "migrated %zu, memory node %d",
           st.migrated_blocks, st.memory_node);
    EXPECT(memory_node(h, early + 4096, size - 8192) == 1,
           "early block on node %d after the server", memory_node(h, early + 4096, size - 8192));
    EXPECT(early[size / 2] == 1, "migration kept the contents");

    char *late = topsync_rcl_malloc(rt, size);
    memset(late, 3, size); /* first touch from node 0 */
    EXPECT(memory_node(h, late + 4096, size - 8192) == 1, "late block on node %d",
           memory_node(h, late + 4096, size - 8192));
    EXPECT(memory_node(h, plain, size) == 0, "control block on node %d",
           memory_node(h, plain, size));

    /* RCLLockInitNUMA: pack keeps node 1 */
    topsync_rcl_server_t *s2, *s3;
    EXPECT(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s2) == 0, "%s",
           topsync_error_message());
    int c2 = topsync_rcl_server_core(s2);
    hwloc_obj_t core2 = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, (unsigned)c2);
    hwloc_obj_t node1 = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, 1);
    EXPECT(hwloc_bitmap_isincluded(core2->cpuset, node1->cpuset), "pack put server 2 on core %d",
           c2);
    topsync_rcl_alloc_stats(rt, &st);
    EXPECT(st.memory_node == 1, "memory node %d with two servers on node 1", st.memory_node);

    /* a server on node 0: allocations are no longer bound */
    int core0 = first_core_of(0);
    EXPECT(topsync_rcl_server_start(rt, core0, &s3) == 0, "%s", topsync_error_message());
    topsync_rcl_alloc_stats(rt, &st);
    EXPECT(st.memory_node == -1, "memory node %d with servers on two nodes", st.memory_node);
    char *spread = topsync_rcl_malloc(rt, size);
    memset(spread, 4, size);
    EXPECT(memory_node(h, spread + 4096, size - 8192) == 0, "unbound block on node %d (toucher's)",
           memory_node(h, spread + 4096, size - 8192));

    topsync_rcl_server_stop(s3);
    topsync_rcl_server_stop(s2);
    topsync_rcl_server_stop(s1);
    topsync_rcl_free(rt, early);
    topsync_rcl_free(rt, late);
    topsync_rcl_free(rt, spread);
    free(plain);
    EXPECT(topsync_rcl_runtime_destroy(rt) == 0, "%s", topsync_error_message());
    printf("numa-vm: %s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
