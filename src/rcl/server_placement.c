/*
 * RCL placement decisions: RCLLockInitNUMA's server core (Paznikov &
 * Shichkina 2018, Algorithm 1) and the workers' cores (design.md 5.1-5.3).
 * Everything here is a function of the hwloc topology and of the usage
 * counters, so that the 8-core Oak node or a 128-core Kunpeng can be
 * studied on any machine.
 *
 * Two readings of the papers are decided here, as docs/design.md (5.2, 5.3) says:
 *  - Algorithm 1 names GetMostBusyNode where the text says "least busy":
 *    both are policies (pack = most busy, spread = least busy);
 *  - Algorithm 2 resets core_usage on each call, which would pile every
 *    worker on the same core: the counts persist in the usage object.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <topsync/rcl.h>

#include "base/error.h"
#include "base/keywords.h"
#include "topology/topology_private.h"

struct topsync_rcl_usage {
    const topsync_topology_t *topo;
    unsigned ncores, nnodes;
    unsigned *servers, *workers, *app_threads, *node_of;
    unsigned next_shared; /* round-robin position among server cores */
};

int topsync_rcl_policy_parse(const char *name, topsync_rcl_policy_t *out)
{
    if (!name || !out)
        return ts_fail(EINVAL, "topsync_rcl_policy_parse: NULL argument");
    static const ts_keyword_t words[] = {
        {"pack", TOPSYNC_RCL_PACK, false},
        {"spread", TOPSYNC_RCL_SPREAD, false},
        {"default", TOPSYNC_RCL_POLICY_DEFAULT, false},
        {NULL, 0, false},
    };
    int value;
    int rc = ts_keyword_parse(words, "RCL placement policy", name, &value);
    if (rc == 0)
        *out = (topsync_rcl_policy_t)value;
    return rc;
}

static hwloc_obj_t core_obj(const topsync_rcl_usage_t *u, unsigned core)
{
    return hwloc_get_obj_by_type(u->topo->hwloc, u->topo->core_type, core);
}

void topsync_rcl_usage_destroy(topsync_rcl_usage_t *u)
{
    if (!u)
        return;
    free(u->servers);
    free(u->workers);
    free(u->app_threads);
    free(u->node_of);
    free(u);
}

int topsync_rcl_usage_create(topsync_rcl_usage_t **out, const topsync_topology_t *t)
{
    if (!out || !t)
        return ts_fail(EINVAL, "topsync_rcl_usage_create: NULL argument");
    *out = NULL;
    topsync_rcl_usage_t *u = calloc(1, sizeof *u);
    if (!u)
        return ts_fail(ENOMEM, "out of memory");
    u->topo = t;
    u->ncores = t->ncores;
    u->servers = calloc(u->ncores, sizeof *u->servers);
    u->workers = calloc(u->ncores, sizeof *u->workers);
    u->app_threads = calloc(u->ncores, sizeof *u->app_threads);
    u->node_of = calloc(u->ncores, sizeof *u->node_of);
    if (!u->servers || !u->workers || !u->app_threads || !u->node_of) {
        topsync_rcl_usage_destroy(u);
        return ts_fail(ENOMEM, "out of memory");
    }
    const struct ts_level_units *numa = &t->levels[ts_level_index(TOPSYNC_LEVEL_NUMA)];
    u->nnodes = numa->count ? numa->count : 1;
    for (unsigned c = 0; c < u->ncores; c++) {
        hwloc_obj_t o = core_obj(u, c);
        for (unsigned n = 0; n < numa->count; n++)
            if (hwloc_bitmap_isincluded(o->cpuset, numa->cpusets[n])) {
                u->node_of[c] = n;
                break;
            }
    }
    *out = u;
    return 0;
}

static int check_core(const topsync_rcl_usage_t *u, unsigned core, const char *what)
{
    if (!u)
        return ts_fail(EINVAL, "%s: usage is NULL", what);
    if (core >= u->ncores)
        return ts_fail(EINVAL, "%s: core %u out of range (%u cores)", what, core, u->ncores);
    return 0;
}

static int add(topsync_rcl_usage_t *u, unsigned *counts, unsigned core, int delta, const char *what)
{
    int rc = check_core(u, core, what);
    if (rc < 0)
        return rc;
    if (delta < 0 && counts[core] == 0)
        return ts_fail(EINVAL, "%s: nothing to remove on core %u", what, core);
    counts[core] += (unsigned)delta;
    return 0;
}

int topsync_rcl_usage_add_server(topsync_rcl_usage_t *u, unsigned core)
{
    return add(u, u ? u->servers : NULL, core, 1, "topsync_rcl_usage_add_server");
}
int topsync_rcl_usage_remove_server(topsync_rcl_usage_t *u, unsigned core)
{
    return add(u, u ? u->servers : NULL, core, -1, "topsync_rcl_usage_remove_server");
}
int topsync_rcl_usage_add_app_thread(topsync_rcl_usage_t *u, unsigned core)
{
    return add(u, u ? u->app_threads : NULL, core, 1, "topsync_rcl_usage_add_app_thread");
}
int topsync_rcl_usage_add_worker(topsync_rcl_usage_t *u, unsigned core)
{
    return add(u, u ? u->workers : NULL, core, 1, "topsync_rcl_usage_add_worker");
}
int topsync_rcl_usage_remove_worker(topsync_rcl_usage_t *u, unsigned core)
{
    return add(u, u ? u->workers : NULL, core, -1, "topsync_rcl_usage_remove_worker");
}

int topsync_rcl_usage_servers(const topsync_rcl_usage_t *u, unsigned core)
{
    int rc = check_core(u, core, "topsync_rcl_usage_servers");
    return rc < 0 ? rc : (int)u->servers[core];
}
int topsync_rcl_usage_workers(const topsync_rcl_usage_t *u, unsigned core)
{
    int rc = check_core(u, core, "topsync_rcl_usage_workers");
    return rc < 0 ? rc : (int)u->workers[core];
}
int topsync_rcl_core_node(const topsync_rcl_usage_t *u, unsigned core)
{
    int rc = check_core(u, core, "topsync_rcl_core_node");
    return rc < 0 ? rc : (int)u->node_of[core];
}

int topsync_rcl_memory_node(const topsync_rcl_usage_t *u, int *node)
{
    if (!u || !node)
        return ts_fail(EINVAL, "topsync_rcl_memory_node: NULL argument");
    *node = -1;
    for (unsigned c = 0; c < u->ncores; c++) {
        if (!u->servers[c])
            continue;
        if (*node >= 0 && (unsigned)*node != u->node_of[c]) {
            *node = -1;
            return 0;
        }
        *node = (int)u->node_of[c];
    }
    return 0;
}

int topsync_rcl_place_server(topsync_rcl_usage_t *u, topsync_rcl_policy_t policy, unsigned *core)
{
    if (!u || !core)
        return ts_fail(EINVAL, "topsync_rcl_place_server: NULL argument");
    if (policy != TOPSYNC_RCL_PACK && policy != TOPSYNC_RCL_SPREAD)
        return ts_fail(EINVAL, "topsync_rcl_place_server: invalid policy %d", (int)policy);

    unsigned free_cores = 0, server_cores = 0;
    for (unsigned c = 0; c < u->ncores; c++) {
        if (u->servers[c])
            server_cores++;
        else
            free_cores++;
    }
    /* One core always stays for the workers: share a server core, round robin. */
    if (free_cores <= 1 && server_cores > 0) {
        unsigned k = u->next_shared++ % server_cores;
        for (unsigned c = 0; c < u->ncores; c++)
            if (u->servers[c] && k-- == 0) {
                *core = c;
                return 0;
            }
    }
    if (free_cores == 0) { /* unreachable with server_cores > 0 handled above */
        *core = 0;
        return 0;
    }
    unsigned *node_servers = calloc(u->nnodes, sizeof *node_servers);
    if (!node_servers)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned c = 0; c < u->ncores; c++)
        if (u->servers[c])
            node_servers[u->node_of[c]]++;
    /* First the cores no application thread is bound to, then any free core. */
    for (int allow_app = 0; allow_app <= 1; allow_app++) {
        int best = -1;
        for (unsigned n = 0; n < u->nnodes; n++) {
            int has_candidate = 0;
            for (unsigned c = 0; c < u->ncores && !has_candidate; c++)
                has_candidate =
                    u->node_of[c] == n && !u->servers[c] && (allow_app || !u->app_threads[c]);
            if (!has_candidate)
                continue;
            if (best < 0 || (policy == TOPSYNC_RCL_PACK && node_servers[n] > node_servers[best]) ||
                (policy == TOPSYNC_RCL_SPREAD && node_servers[n] < node_servers[best]))
                best = (int)n;
        }
        if (best < 0)
            continue;
        for (unsigned c = 0; c < u->ncores; c++)
            if (u->node_of[c] == (unsigned)best && !u->servers[c] &&
                (allow_app || !u->app_threads[c])) {
                *core = c;
                free(node_servers);
                return 0;
            }
    }
    free(node_servers);
    return ts_fail(ENOSPC, "topsync_rcl_place_server: no core available");
}

static unsigned cores_inside(const topsync_rcl_usage_t *u, hwloc_obj_t obj)
{
    return (unsigned)hwloc_get_nbobjs_inside_cpuset_by_type(u->topo->hwloc, obj->cpuset,
                                                            u->topo->core_type);
}

int topsync_rcl_place_worker(topsync_rcl_usage_t *u, unsigned *core)
{
    if (!u || !core)
        return ts_fail(EINVAL, "topsync_rcl_place_worker: NULL argument");
    int server = -1;
    unsigned non_server = 0;
    for (unsigned c = 0; c < u->ncores; c++) {
        if (u->servers[c] && server < 0)
            server = (int)c;
        if (!u->servers[c])
            non_server++;
    }
    if (server < 0)
        return ts_fail(EAGAIN, "topsync_rcl_place_worker: no RCL server runs");
    if (non_server == 0)
        return ts_fail(ENOSPC, "topsync_rcl_place_worker: every core hosts an RCL server");

    hwloc_topology_t h = u->topo->hwloc;
    for (unsigned limit = 1;; limit++) {
        hwloc_obj_t element = core_obj(u, (unsigned)server);
        for (;;) {
            /* The first ancestor covering more cores than the current element. */
            unsigned have = cores_inside(u, element);
            hwloc_obj_t up = element->parent;
            while (up && cores_inside(u, up) == have)
                up = up->parent;
            if (!up)
                break; /* climbed past the root: raise the limit */
            element = up;
            unsigned count = cores_inside(u, element);
            for (unsigned j = 0; j < count; j++) {
                hwloc_obj_t o =
                    hwloc_get_obj_inside_cpuset_by_type(h, element->cpuset, u->topo->core_type, j);
                unsigned c = o->logical_index;
                if (!u->servers[c] && u->workers[c] < limit) {
                    u->workers[c]++;
                    *core = c;
                    return 0;
                }
            }
        }
    }
}
