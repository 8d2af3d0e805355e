/*
 * topsync RCL placement: the NUMA placement decisions of the Remote Core
 * Locking papers (SPEC section 5), as pure functions of a topology and the
 * current usage, so that they can be tested on synthetic machines.
 *
 *   - RCLLockInitNUMA (Paznikov & Shichkina 2018, Algorithm 1):
 *     topsync_rcl_place_server() picks the core of a new server, with the
 *     `pack` (the node that already hosts servers; the paper's pseudocode,
 *     GetMostBusyNode) or `spread` (the least busy node; the paper's text)
 *     policy; topsync_rcl_memory_node() says where memory should be bound
 *     (the single node hosting servers, if there is one).
 *   - RCLHierarchicalAffinity (Algorithm 2): topsync_rcl_place_worker() pins a
 *     new worker to the nearest free core to a server, climbing the hwloc tree.
 *
 * Cores are numbered by hwloc logical index (Core objects, or PUs on a
 * topology without cores). The RCL runtime itself (servers, locks,
 * execute) is not part of this version.
 */
#ifndef TOPSYNC_RCL_H
#define TOPSYNC_RCL_H

#include <topsync/common.h>
#include <topsync/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum topsync_rcl_policy {
    TOPSYNC_RCL_PACK,   /* servers on the node that already hosts the most */
    TOPSYNC_RCL_SPREAD, /* servers on the node that hosts the fewest */
} topsync_rcl_policy_t;

/* "pack" | "spread"; -EINVAL lists the valid ones. */
int topsync_rcl_policy_parse(const char *name, topsync_rcl_policy_t *out);

/* Who runs where: servers, workers placed by topsync, and threads the
 * application bound itself. Not thread-safe: serialize calls on one usage. */
typedef struct topsync_rcl_usage topsync_rcl_usage_t;

int topsync_rcl_usage_create(topsync_rcl_usage_t **out, const topsync_topology_t *topology);
void topsync_rcl_usage_destroy(topsync_rcl_usage_t *usage);
int topsync_rcl_usage_add_server(topsync_rcl_usage_t *usage, unsigned core);
int topsync_rcl_usage_remove_server(topsync_rcl_usage_t *usage, unsigned core);
int topsync_rcl_usage_add_app_thread(topsync_rcl_usage_t *usage, unsigned core);
int topsync_rcl_usage_add_worker(topsync_rcl_usage_t *usage, unsigned core);
int topsync_rcl_usage_remove_worker(topsync_rcl_usage_t *usage, unsigned core);
/* Counts on a core (negative errno for a core out of range). */
int topsync_rcl_usage_servers(const topsync_rcl_usage_t *usage, unsigned core);
int topsync_rcl_usage_workers(const topsync_rcl_usage_t *usage, unsigned core);
/* NUMA node (index among the nodes that hold cores) of a core. */
int topsync_rcl_core_node(const topsync_rcl_usage_t *usage, unsigned core);

/*
 * RCLLockInitNUMA: the core for a new server (not recorded: call
 * topsync_rcl_usage_add_server once it runs there).
 *  - When at most one core hosts no server, the server shares a server core,
 *    round-robin, so that one core always stays for the workers.
 *  - Otherwise the policy picks the node (ties: lowest index) among those
 *    with a core free of servers, and the first such core on it (logical
 *    order). A core where the application bound a thread is only taken when
 *    no other core is free.
 */
int topsync_rcl_place_server(topsync_rcl_usage_t *usage, topsync_rcl_policy_t policy,
                             unsigned *core);

/*
 * The NUMA node memory should be bound to: the node hosting every server
 * when they all share one (*node >= 0), else -1 (no server, or several
 * nodes: use the default allocation). Returns 0.
 */
int topsync_rcl_memory_node(const topsync_rcl_usage_t *usage, int *node);

/*
 * RCLHierarchicalAffinity: the core for a new worker, recorded in usage.
 * From the core of the first server (lowest core index), climb to the first
 * ancestor covering more cores, and take its first core (logical order,
 * server cores excluded) holding at most `limit - 1` workers; at the root,
 * raise the limit (initially 1) and climb again. Counts persist across
 * calls. -EAGAIN when no server runs, -ENOSPC when every core hosts one.
 */
int topsync_rcl_place_worker(topsync_rcl_usage_t *usage, unsigned *core);

#ifdef __cplusplus
}
#endif

#endif
