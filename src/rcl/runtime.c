/*
 * RCL runtime (Remote Core Locking, Lozi et al., USENIX ATC 2012; design.md
 * section 5): options, create and destroy.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/error.h"
#include "rcl/rcl_private.h"

void topsync_rcl_options_init(topsync_rcl_options_t *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->wait = TOPSYNC_WAIT_DEFAULT;
    o->placement = TOPSYNC_RCL_POLICY_DEFAULT;
}

const topsync_topology_t *topsync_rcl_runtime_topology(const topsync_rcl_runtime_t *rt)
{
    return rt && ts_rcl_runtime_is_live(rt) ? rt->topo : NULL;
}

static int resolve_options(topsync_rcl_options_t *o)
{
    int rc = ts_wait_policy_resolve(&o->wait);
    if (rc < 0)
        return rc;
    if (o->placement == TOPSYNC_RCL_POLICY_DEFAULT) {
        const char *env = ts_getenv("TOPSYNC_RCL_PLACEMENT");
        if (env && topsync_rcl_policy_parse(env, &o->placement) < 0)
            return ts_fail(EINVAL, "TOPSYNC_RCL_PLACEMENT: %s", topsync_error_message());
        if (o->placement == TOPSYNC_RCL_POLICY_DEFAULT)
            o->placement = TOPSYNC_RCL_PACK;
    } else if (o->placement != TOPSYNC_RCL_PACK && o->placement != TOPSYNC_RCL_SPREAD) {
        return ts_fail(EINVAL, "invalid RCL placement value %d; valid: pack, spread, default",
                       (int)o->placement);
    }
    if (!o->takeover_us)
        o->takeover_us = RCL_DEFAULT_TAKEOVER_US;
    if (o->takeover_us > 10000000u)
        return ts_fail(EINVAL, "takeover_us %u is too long; valid: 1 to 10000000", o->takeover_us);
    if (!o->max_clients)
        o->max_clients = RCL_DEFAULT_MAX_CLIENTS;
    if (o->max_clients > RCL_DEFAULT_MAX_CLIENTS)
        return ts_fail(EINVAL, "max_clients %u is too large; valid: 1 to %u", o->max_clients,
                       RCL_DEFAULT_MAX_CLIENTS);
    if (!o->idle_spin)
        o->idle_spin = RCL_DEFAULT_IDLE_SPIN;
    return 0;
}

/* Frees what a (possibly half-built) runtime holds. */
static void runtime_free(topsync_rcl_runtime_t *rt)
{
    for (unsigned i = 0; i < rt->quarantine_len; i++)
        free(rt->quarantine[i]);
    free(rt->quarantine);
    hwloc_bitmap_free(rt->process_cpuset);
    topsync_rcl_usage_destroy(rt->usage);
    topsync_topology_destroy(rt->topo);
    pthread_mutex_destroy(&rt->mutex);
    pthread_mutex_destroy(&rt->alloc_mutex);
    free(rt);
}

int topsync_rcl_runtime_create(topsync_rcl_runtime_t **out, const topsync_rcl_options_t *options)
{
    if (!out)
        return ts_fail(EINVAL, "topsync_rcl_runtime_create: out is NULL");
    *out = NULL;
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    if (options)
        o = *options;
    int rc = resolve_options(&o);
    if (rc < 0)
        return rc;
    topsync_rcl_runtime_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return ts_fail(ENOMEM, "out of memory");
    rt->options = o;
    atomic_init(&rt->memory_node, -1);
    pthread_mutex_init(&rt->mutex, NULL);
    pthread_mutex_init(&rt->alloc_mutex, NULL);
    rc = topsync_topology_load(&rt->topo);
    if (rc < 0)
        goto fail;
    rc = topsync_rcl_usage_create(&rt->usage, rt->topo);
    if (rc < 0)
        goto fail;
    rt->quarantine = calloc(RCL_QUARANTINE, sizeof *rt->quarantine);
    rt->process_cpuset = hwloc_bitmap_alloc();
    if (!rt->quarantine || !rt->process_cpuset) {
        rc = ts_fail(ENOMEM, "out of memory");
        goto fail;
    }
    /* The union of the bindings of the process's threads; the allowed
     * cpuset when the binding cannot be read. */
    if (hwloc_get_cpubind(rt->topo->hwloc, rt->process_cpuset, HWLOC_CPUBIND_PROCESS) < 0 ||
        hwloc_bitmap_iszero(rt->process_cpuset))
        hwloc_bitmap_copy(rt->process_cpuset, hwloc_topology_get_allowed_cpuset(rt->topo->hwloc));
    ts_rcl_runtime_register(rt);
    *out = rt;
    return 0;
fail:
    runtime_free(rt);
    return rc;
}

int topsync_rcl_runtime_destroy(topsync_rcl_runtime_t *rt)
{
    if (!rt)
        return 0;
    if (!ts_rcl_runtime_is_live(rt))
        return ts_fail(EINVAL,
                       "topsync_rcl_runtime_destroy: runtime %p was destroyed already "
                       "(or is not an RCL runtime)",
                       (void *)rt);
    pthread_mutex_lock(&rt->mutex);
    unsigned n = rt->nservers;
    pthread_mutex_unlock(&rt->mutex);
    if (n)
        return ts_fail(EBUSY,
                       "topsync_rcl_runtime_destroy: %u server(s) still running; "
                       "stop them first",
                       n);
    size_t blocks = ts_rcl_alloc_live(rt);
    if (blocks)
        return ts_fail(EBUSY,
                       "topsync_rcl_runtime_destroy: %zu block(s) of "
                       "topsync_rcl_malloc() not freed yet",
                       blocks);
    ts_rcl_runtime_unregister(rt);
    runtime_free(rt);
    return 0;
}
