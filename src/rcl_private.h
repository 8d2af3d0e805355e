/* Private: the RCL runtime's state shared by rcl.c and rcl_alloc.c. */
#ifndef TOPSYNC_SRC_RCL_PRIVATE_H
#define TOPSYNC_SRC_RCL_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <topsync/rcl.h>

#include "topology_private.h"
#include "wait.h"

struct ts_alloc_header;

struct topsync_rcl_runtime {
    topsync_topology_t *topo;
    topsync_rcl_options_t options;
    ts_wait client_wait;
    hwloc_bitmap_t process_cpuset; /* where servers may run */

    pthread_mutex_t mutex; /* usage, servers list, lock quarantine */
    topsync_rcl_usage_t *usage;
    unsigned nservers;
    bool migrated; /* the first server moved the recorded blocks */

    /* Destroyed locks, kept recognisable (see rcl.h), oldest first. */
    topsync_rcl_lock_t **quarantine;
    unsigned quarantine_len;

    /* RCLAwareMalloc (rcl_alloc.c). memory_node is read without the mutex
     * by every allocation; the mutex guards the recorded list and stats. */
    pthread_mutex_t alloc_mutex;
    _Atomic int memory_node; /* -1: default allocation */
    unsigned nservers_alloc; /* rt->nservers, as the allocator last saw it */
    size_t live_blocks;
    struct ts_alloc_header *recorded; /* doubly linked */
    topsync_rcl_alloc_stats_t stats; /* memory_node: filled from the atomic */
};

/* The cpuset of NUMA node `node` as topsync_rcl_memory_node() numbers them. */
hwloc_const_cpuset_t ts_rcl_node_cpuset(const topsync_rcl_runtime_t *rt, int node);
/* Called with rt->mutex held after the set of servers changed: recompute
 * the allocation node, and migrate the recorded blocks at the first start. */
void ts_rcl_alloc_servers_changed(topsync_rcl_runtime_t *rt);
/* Blocks of topsync_rcl_malloc() not freed yet. */
size_t ts_rcl_alloc_live(topsync_rcl_runtime_t *rt);

#endif
