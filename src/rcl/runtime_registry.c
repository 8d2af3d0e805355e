/*
 * The live RCL runtimes, so that a destroyed (or never created) runtime
 * handed to a call is refused with a message instead of being used. Its
 * own file so that the runtime, the servers and the allocator all ask it
 * without calling each other. docs/design.md section 5.
 */
#include <stddef.h>

#include "rcl/rcl_private.h"

static ts_registry_t runtimes = TS_REGISTRY_INITIALIZER;

bool ts_rcl_runtime_is_live(const topsync_rcl_runtime_t *rt)
{
    /* the link's address is computed, never read: rt may be any pointer */
    return rt &&
           ts_registry_contains(
               &runtimes, (const ts_registry_link_t *)((const char *)rt +
                                                       offsetof(topsync_rcl_runtime_t, live)));
}

void ts_rcl_runtime_register(topsync_rcl_runtime_t *rt)
{
    ts_registry_add(&runtimes, &rt->live);
}

void ts_rcl_runtime_unregister(topsync_rcl_runtime_t *rt)
{
    ts_registry_remove(&runtimes, &rt->live);
}
