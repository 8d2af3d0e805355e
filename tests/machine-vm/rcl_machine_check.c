/*
 * RCL on a detected many-node machine (run inside tests/machine-vm guests):
 * where servers, their memory and their workers really are.
 *  1. pack: two servers started with TOPSYNC_RCL_CORE_AUTO share the first
 *     node (design.md section 5.1); a critical section run by each (so on
 *     the server thread) finds itself on a PU of that node (sched_getcpu);
 *     RCLAwareMalloc's pages sit on it (move_pages via hwloc).
 *  2. RCLHierarchicalAffinity: as many workers as that node has free cores
 *     all run inside it, each on its own core.
 *  3. spread: a second server goes to another node, and memory is no
 *     longer bound to one node.
 * Prints "rcl-machine: PASS" or "rcl-machine: FAIL ..." lines.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topsync.h>

#include "../numa-vm/memory_node.h"

static int failures;
static hwloc_topology_t h;

#define EXPECT(cond, ...)                                               \
    do {                                                                \
        if (!(cond)) {                                                  \
            printf("rcl-machine: FAIL line %d: %s: ", __LINE__, #cond); \
            printf(__VA_ARGS__);                                        \
            printf("\n");                                               \
            failures++;                                                 \
        }                                                               \
    } while (0)

/* The NUMA node (hwloc logical index) of a PU by its OS number, or -1. */
static int node_of_pu(int pu)
{
    hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(h, (unsigned)pu);
    int n = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    for (int i = 0; obj && i < n; i++)
        if (hwloc_bitmap_isset(hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)i)->cpuset,
                               (unsigned)pu))
            return i;
    return -1;
}

static int node_of_core(int core)
{
    hwloc_obj_t c = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, (unsigned)core);
    return c ? node_of_pu(hwloc_bitmap_first(c->cpuset)) : -1;
}

static void *where_am_i(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)sched_getcpu();
}

static int server_pu(topsync_rcl_server_t *s)
{
    topsync_rcl_lock_t *lock;
    if (topsync_rcl_lock_create(s, &lock) < 0)
        return -1;
    int pu = (int)(intptr_t)topsync_rcl_execute(lock, where_am_i, NULL);
    topsync_rcl_lock_destroy(lock);
    return pu;
}

struct worker {
    pthread_t thread;
    int pu;
};

/* Workers stay until all have started: one that ends gives its core back
 * (the placement counts live workers), and the next would take it. */
static pthread_barrier_t all_started;

static void *worker_main(void *arg)
{
    ((struct worker *)arg)->pu = sched_getcpu();
    pthread_barrier_wait(&all_started);
    return NULL;
}

static topsync_rcl_runtime_t *runtime(topsync_rcl_policy_t policy)
{
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    o.placement = policy;
    topsync_rcl_runtime_t *rt = NULL;
    if (topsync_rcl_runtime_create(&rt, &o) < 0) {
        printf("rcl-machine: FAIL runtime: %s\n", topsync_error_message());
        exit(1);
    }
    h = topsync_topology_hwloc(topsync_rcl_runtime_topology(rt));
    return rt;
}

int main(void)
{
    size_t size = 4u << 20;
    topsync_rcl_runtime_t *rt = runtime(TOPSYNC_RCL_PACK);
    int nodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    printf("rcl-machine: %d NUMA nodes, %u cores\n", nodes,
           topsync_topology_ncores(topsync_rcl_runtime_topology(rt)));
    if (nodes < 2) {
        printf("rcl-machine: FAIL the machine has %d NUMA node(s); the check needs 2\n", nodes);
        return 1;
    }

    /* 1. pack */
    topsync_rcl_server_t *s[2];
    for (int i = 0; i < 2; i++) {
        EXPECT(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s[i]) == 0, "%s",
               topsync_error_message());
        int core = topsync_rcl_server_core(s[i]), pu = server_pu(s[i]);
        printf("rcl-machine: pack: server %d on core %d, runs on PU %d (node %d)\n", i, core, pu,
               node_of_pu(pu));
        EXPECT(node_of_core(core) == 0, "pack put server %d on core %d of node %d", i, core,
               node_of_core(core));
        EXPECT(
            node_of_pu(pu) == 0 &&
                hwloc_bitmap_isset(hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, (unsigned)core)->cpuset,
                                   (unsigned)pu),
            "server %d's critical section ran on PU %d, not on its core %d", i, pu, core);
    }
    char *block = topsync_rcl_malloc(rt, size);
    memset(block, 1, size);
    EXPECT(memory_node(h, block, size) == 0, "RCLAwareMalloc block on node %d",
           memory_node(h, block, size));

    /* 2. workers fill the servers' node */
    hwloc_obj_t node0 = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, 0);
    int free_cores = hwloc_get_nbobjs_inside_cpuset_by_type(h, node0->cpuset, HWLOC_OBJ_CORE) - 2;
    if (free_cores < 1) {
        printf("rcl-machine: FAIL node 0 has no core beside the two servers\n");
        return 1;
    }
    struct worker *w = calloc((size_t)free_cores, sizeof *w);
    pthread_barrier_init(&all_started, NULL, (unsigned)free_cores + 1);
    for (int i = 0; i < free_cores; i++) {
        if (topsync_rcl_thread_create(rt, &w[i].thread, NULL, worker_main, &w[i]) != 0) {
            printf("rcl-machine: FAIL worker %d: %s\n", i, topsync_error_message());
            exit(1); /* the others wait for it at all_started */
        }
    }
    pthread_barrier_wait(&all_started);
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    for (int i = 0; i < free_cores; i++) {
        pthread_join(w[i].thread, NULL);
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(
            h, HWLOC_OBJ_CORE, hwloc_get_pu_obj_by_os_index(h, (unsigned)w[i].pu));
        EXPECT(node_of_pu(w[i].pu) == 0, "worker %d ran on PU %d of node %d", i, w[i].pu,
               node_of_pu(w[i].pu));
        EXPECT(core && !hwloc_bitmap_isset(seen, core->logical_index),
               "worker %d shares core %d with another worker", i,
               core ? (int)core->logical_index : -1);
        if (core)
            hwloc_bitmap_set(seen, core->logical_index);
    }
    printf("rcl-machine: %d workers ran on %d cores of node 0\n", free_cores,
           hwloc_bitmap_weight(seen));
    hwloc_bitmap_free(seen);
    pthread_barrier_destroy(&all_started);
    free(w);
    for (int i = 0; i < 2; i++)
        topsync_rcl_server_stop(s[i]);
    topsync_rcl_free(rt, block);
    EXPECT(topsync_rcl_runtime_destroy(rt) == 0, "%s", topsync_error_message());

    /* 3. spread */
    rt = runtime(TOPSYNC_RCL_SPREAD);
    int seen_node[2];
    for (int i = 0; i < 2; i++) {
        EXPECT(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s[i]) == 0, "%s",
               topsync_error_message());
        int pu = server_pu(s[i]);
        seen_node[i] = node_of_pu(pu);
        printf("rcl-machine: spread: server %d on core %d, runs on PU %d (node %d)\n", i,
               topsync_rcl_server_core(s[i]), pu, seen_node[i]);
    }
    EXPECT(seen_node[0] == 0 && seen_node[1] == 1, "spread put the servers on nodes %d and %d",
           seen_node[0], seen_node[1]);
    topsync_rcl_alloc_stats_t st;
    topsync_rcl_alloc_stats(rt, &st);
    EXPECT(st.memory_node == -1, "memory node %d with servers on two nodes", st.memory_node);
    for (int i = 0; i < 2; i++)
        topsync_rcl_server_stop(s[i]);
    EXPECT(topsync_rcl_runtime_destroy(rt) == 0, "%s", topsync_error_message());
    printf("rcl-machine: %s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
