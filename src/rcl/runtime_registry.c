/*
 * The live RCL runtimes, so that a destroyed (or never created) runtime
 * handed to a call is refused with a message instead of being used. Its
 * own file so that the runtime, the servers and the allocator all ask it
 * without calling each other. docs/design.md section 5.
 */
#include <pthread.h>

#include "rcl/rcl_private.h"

static pthread_mutex_t runtimes_mutex = PTHREAD_MUTEX_INITIALIZER;
static topsync_rcl_runtime_t *runtimes;

bool ts_rcl_runtime_is_live(const topsync_rcl_runtime_t *rt)
{
    pthread_mutex_lock(&runtimes_mutex);
    const topsync_rcl_runtime_t *p = runtimes;
    while (p && p != rt)
        p = p->registry_next;
    pthread_mutex_unlock(&runtimes_mutex);
    return p != NULL;
}

void ts_rcl_runtime_register(topsync_rcl_runtime_t *rt)
{
    pthread_mutex_lock(&runtimes_mutex);
    rt->registry_next = runtimes;
    runtimes = rt;
    pthread_mutex_unlock(&runtimes_mutex);
}

void ts_rcl_runtime_unregister(topsync_rcl_runtime_t *rt)
{
    pthread_mutex_lock(&runtimes_mutex);
    for (topsync_rcl_runtime_t **p = &runtimes; *p; p = &(*p)->registry_next)
        if (*p == rt) {
            *p = rt->registry_next;
            break;
        }
    pthread_mutex_unlock(&runtimes_mutex);
}
