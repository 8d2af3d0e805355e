/*
 * RCLHierarchicalAffinity (Paznikov & Shichkina 2018, Algorithm 2; design.md
 * section 5.3): pinning worker threads to the cores that
 * topsync_rcl_place_worker() chooses (rcl/server_placement.c).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "rcl/rcl_private.h"

static int bind_thread_to_core(topsync_rcl_runtime_t *rt, unsigned core)
{
    hwloc_obj_t obj = hwloc_get_obj_by_type(rt->topo->hwloc, rt->topo->core_type, core);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return ts_fail(ENOMEM, "out of memory");
    hwloc_bitmap_and(set, obj->cpuset, rt->process_cpuset);
    if (hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, obj->cpuset);
    int rc = hwloc_set_cpubind(rt->topo->hwloc, set, HWLOC_CPUBIND_THREAD);
    int err = errno;
    hwloc_bitmap_free(set);
    if (rc < 0)
        return ts_fail(err, "cannot bind the worker to core %u: %s", core, strerror(err));
    return 0;
}

int topsync_rcl_worker_pin(topsync_rcl_runtime_t *rt, unsigned *core)
{
    if (!rt || !core)
        return ts_fail(EINVAL, "topsync_rcl_worker_pin: NULL argument");
    pthread_mutex_lock(&rt->mutex);
    int rc = topsync_rcl_place_worker(rt->usage, core);
    pthread_mutex_unlock(&rt->mutex);
    if (rc < 0)
        return rc;
    rc = bind_thread_to_core(rt, *core);
    if (rc < 0) {
        pthread_mutex_lock(&rt->mutex);
        topsync_rcl_usage_remove_worker(rt->usage, *core);
        pthread_mutex_unlock(&rt->mutex);
    }
    return rc;
}

int topsync_rcl_worker_unpin(topsync_rcl_runtime_t *rt, unsigned core)
{
    if (!rt)
        return ts_fail(EINVAL, "topsync_rcl_worker_unpin: NULL runtime");
    pthread_mutex_lock(&rt->mutex);
    int rc = topsync_rcl_usage_remove_worker(rt->usage, core);
    pthread_mutex_unlock(&rt->mutex);
    return rc;
}

struct worker_start {
    topsync_rcl_runtime_t *rt;
    unsigned core;
    void *(*start)(void *);
    void *arg;
};

static void worker_cleanup(void *p)
{
    struct worker_start *w = p;
    topsync_rcl_worker_unpin(w->rt, w->core);
    free(w);
}

static void *worker_main(void *p)
{
    struct worker_start *w = p;
    void *ret;
    pthread_cleanup_push(worker_cleanup, w);
    bind_thread_to_core(w->rt, w->core); /* placement recorded; binding best effort */
    ret = w->start(w->arg);
    pthread_cleanup_pop(1);
    return ret;
}

int topsync_rcl_thread_create(topsync_rcl_runtime_t *rt, pthread_t *thread,
                              const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    if (!rt || !thread || !start)
        return ts_fail(EINVAL, "topsync_rcl_thread_create: NULL argument");
    struct worker_start *w = malloc(sizeof *w);
    if (!w)
        return ts_fail(ENOMEM, "out of memory");
    pthread_mutex_lock(&rt->mutex);
    int rc = topsync_rcl_place_worker(rt->usage, &w->core);
    pthread_mutex_unlock(&rt->mutex);
    if (rc < 0) {
        free(w);
        return rc;
    }
    w->rt = rt;
    w->start = start;
    w->arg = arg;
    rc = pthread_create(thread, attr, worker_main, w);
    if (rc) {
        topsync_rcl_worker_unpin(rt, w->core);
        free(w);
        return ts_fail(rc, "topsync_rcl_thread_create: pthread_create: %s", strerror(rc));
    }
    return 0;
}
