/*
 * RCL servers (Lozi et al. 2012; design.md section 5): start (core choice,
 * binding, first threads) and stop.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stddef.h>

#include "base/error.h"
#include "rcl/rcl_private.h"

/* The live servers, by uid: thread-exit slot release must not touch a
 * stopped server, and a stopped server's handle must be refused. */
ts_registry_t ts_rcl_servers = TS_REGISTRY_INITIALIZER;

topsync_rcl_server_t *ts_rcl_server_find_locked(uint64_t uid)
{
    ts_registry_link_t *link = ts_registry_find_uid_locked(&ts_rcl_servers, uid);
    return link ? (topsync_rcl_server_t *)((char *)link - offsetof(topsync_rcl_server_t, live))
                : NULL;
}

bool ts_rcl_server_is_live(const topsync_rcl_server_t *s)
{
    /* the link's address is computed, never read: s may be any pointer */
    return s &&
           ts_registry_contains(&ts_rcl_servers,
                                (const ts_registry_link_t *)((const char *)s +
                                                             offsetof(topsync_rcl_server_t, live)));
}

static void server_free(topsync_rcl_server_t *s)
{
    for (unsigned i = 0; i < RCL_MAX_CHUNKS && s->chunks[i]; i++)
        free(s->chunks[i]);
    free(s->lines_block);
    free(s->threads);
    hwloc_bitmap_free(s->cpuset);
    pthread_mutex_destroy(&s->slots_mutex);
    pthread_mutex_destroy(&s->threads_mutex);
    pthread_cond_destroy(&s->started_cond);
    free(s);
}

static void server_join_all(topsync_rcl_server_t *s)
{
    ts_rcl_signal_stop(s);
    for (unsigned joined = 0;;) {
        pthread_mutex_lock(&s->threads_mutex);
        bool more = joined < s->nthreads;
        pthread_t t = more ? s->threads[joined] : (pthread_t)0;
        pthread_mutex_unlock(&s->threads_mutex);
        if (!more)
            break;
        pthread_join(t, NULL);
        joined++;
    }
}

static void init_waits(topsync_rcl_server_t *s, topsync_wait_policy_t p)
{
    enum ts_wait_kind kind = p == TOPSYNC_WAIT_SPIN    ? TS_WAIT_SPIN
                             : p == TOPSYNC_WAIT_YIELD ? TS_WAIT_YIELD
                                                       : TS_WAIT_BLOCK;
    s->wait_normal = (ts_wait){
        .kind = kind, .spin_iterations = RCL_CLIENT_SPIN, .yield_iterations = RCL_CLIENT_YIELDS};
    /* more clients and servers than CPUs: the server most likely needs our
     * CPU, give it up at once (as the barrier does, see barrier.c) */
    s->wait_oversubscribed = (ts_wait){
        .kind = kind, .spin_iterations = 0, .yield_iterations = RCL_CLIENT_YIELDS_OVERSUBSCRIBED};
    s->wait_short_spin = (ts_wait){.kind = kind,
                                   .spin_iterations = RCL_CLIENT_SHORT_SPIN,
                                   .yield_iterations = RCL_CLIENT_YIELDS_OVERSUBSCRIBED};
}

int topsync_rcl_server_start(topsync_rcl_runtime_t *rt, int core, topsync_rcl_server_t **out)
{
    if (!rt || !out)
        return ts_fail(EINVAL, "topsync_rcl_server_start: NULL argument");
    *out = NULL;
    if (!ts_rcl_runtime_is_live(rt))
        return ts_fail(EINVAL,
                       "topsync_rcl_server_start: runtime %p was destroyed (or is not "
                       "an RCL runtime)",
                       (void *)rt);
    pthread_mutex_lock(&rt->mutex);
    int rc = 0;
    unsigned chosen;
    if (core == TOPSYNC_RCL_CORE_AUTO) {
        rc = topsync_rcl_place_server(rt->usage, rt->options.placement, &chosen);
        if (rc < 0)
            goto unlock;
    } else if (core < 0 || (unsigned)core >= rt->topo->ncores) {
        rc = ts_fail(EINVAL,
                     "topsync_rcl_server_start: core %d out of range; valid: 0 to %u "
                     "or TOPSYNC_RCL_CORE_AUTO",
                     core, rt->topo->ncores - 1);
        goto unlock;
    } else {
        chosen = (unsigned)core;
    }
    hwloc_obj_t obj = hwloc_get_obj_by_type(rt->topo->hwloc, rt->topo->core_type, chosen);
    topsync_rcl_server_t *s = calloc(1, sizeof *s);
    if (!s || !(s->cpuset = hwloc_bitmap_alloc())) {
        free(s);
        rc = ts_fail(ENOMEM, "out of memory");
        goto unlock;
    }
    hwloc_bitmap_and(s->cpuset, obj->cpuset, rt->process_cpuset);
    if (hwloc_bitmap_iszero(s->cpuset)) {
        char *core_str = NULL, *proc_str = NULL;
        hwloc_bitmap_list_asprintf(&core_str, obj->cpuset);
        hwloc_bitmap_list_asprintf(&proc_str, rt->process_cpuset);
        rc = ts_fail(EINVAL,
                     "topsync_rcl_server_start: core %u (PUs %s) is outside the "
                     "process's cpuset (PUs %s)",
                     chosen, core_str ? core_str : "?", proc_str ? proc_str : "?");
        free(core_str);
        free(proc_str);
        hwloc_bitmap_free(s->cpuset);
        free(s);
        goto unlock;
    }
    s->rt = rt;
    s->core = chosen;
    s->line = rt->topo->line_size < 64 ? 64 : rt->topo->line_size;
    s->stride = ts_rcl_round_up(sizeof(struct rcl_slot), s->line);
    s->takeover_us = rt->options.takeover_us;
    s->idle_spin = rt->options.idle_spin;
    s->max_slots = rt->options.max_clients;
    s->cpus = (unsigned)hwloc_bitmap_weight(rt->process_cpuset);
    init_waits(s, rt->options.wait);
    pthread_mutex_init(&s->slots_mutex, NULL);
    pthread_mutex_init(&s->threads_mutex, NULL);
    pthread_cond_init(&s->started_cond, NULL);
    if (posix_memalign(&s->lines_block, s->line, 2 * s->line)) {
        s->lines_block = NULL;
        server_free(s);
        rc = ts_fail(ENOMEM, "out of memory");
        goto unlock;
    }
    memset(s->lines_block, 0, 2 * s->line);
    s->doorbell_line = s->lines_block;
    s->control = (struct server_control *)((char *)s->lines_block + s->line);
    atomic_store_explicit(&s->control->active, 1, memory_order_relaxed); /* first thread */

    s->live.uid = ts_registry_new_uid(&ts_rcl_servers);

    rc = ts_rcl_spawn_servicing_thread(s);
    if (rc == 0)
        rc = ts_rcl_spawn_servicing_thread(s); /* the standby */
    if (rc < 0) {
        server_join_all(s);
        server_free(s);
        rc = ts_fail(-rc, "topsync_rcl_server_start: cannot create the server thread");
        goto unlock;
    }
    pthread_mutex_lock(&s->threads_mutex);
    while (!s->first_started)
        pthread_cond_wait(&s->started_cond, &s->threads_mutex);
    int bind_error = s->bind_error;
    pthread_mutex_unlock(&s->threads_mutex);
    if (bind_error) {
        server_join_all(s);
        server_free(s);
        rc = ts_fail(bind_error, "topsync_rcl_server_start: cannot bind the server to core %u: %s",
                     chosen, strerror(bind_error));
        goto unlock;
    }
    ts_registry_add(&ts_rcl_servers, &s->live);
    topsync_rcl_usage_add_server(rt->usage, chosen);
    rt->nservers++;
    ts_rcl_alloc_servers_changed(rt);
    *out = s;
unlock:
    pthread_mutex_unlock(&rt->mutex);
    return rc;
}

static int dead_server(const char *fn, const topsync_rcl_server_t *s)
{
    return ts_fail(EINVAL, "%s: server %p was stopped (or is not an RCL server)", fn,
                   (const void *)s);
}

int topsync_rcl_server_core(const topsync_rcl_server_t *s)
{
    if (!s)
        return ts_fail(EINVAL, "topsync_rcl_server_core: NULL server");
    if (!ts_rcl_server_is_live(s))
        return dead_server("topsync_rcl_server_core", s);
    return (int)s->core;
}

int topsync_rcl_server_stats(const topsync_rcl_server_t *s, topsync_rcl_server_stats_t *out)
{
    if (!s || !out)
        return ts_fail(EINVAL, "topsync_rcl_server_stats: NULL argument");
    if (!ts_rcl_server_is_live(s))
        return dead_server("topsync_rcl_server_stats", s);
    out->takeovers = atomic_load_explicit(&s->control->takeovers, memory_order_relaxed);
    pthread_mutex_lock((pthread_mutex_t *)&s->threads_mutex);
    out->threads = s->nthreads;
    pthread_mutex_unlock((pthread_mutex_t *)&s->threads_mutex);
    return 0;
}

int topsync_rcl_server_stop(topsync_rcl_server_t *s)
{
    if (!s)
        return ts_fail(EINVAL, "topsync_rcl_server_stop: NULL server");
    if (!ts_rcl_server_is_live(s))
        return dead_server("topsync_rcl_server_stop", s);
    topsync_rcl_runtime_t *rt = s->rt;
    pthread_mutex_lock(&rt->mutex);
    if (s->nlocks) {
        unsigned n = s->nlocks;
        pthread_mutex_unlock(&rt->mutex);
        return ts_fail(EBUSY,
                       "topsync_rcl_server_stop: %u lock(s) still attached to the "
                       "server on core %u; destroy them first",
                       n, s->core);
    }
    ts_registry_remove(&ts_rcl_servers, &s->live);
    server_join_all(s);
    topsync_rcl_usage_remove_server(rt->usage, s->core);
    rt->nservers--;
    ts_rcl_alloc_servers_changed(rt);
    pthread_mutex_unlock(&rt->mutex);
    server_free(s);
    return 0;
}
