/*
 * Private: the RCL runtime's state, shared by its files:
 *   rcl/runtime.c   options, runtime create/destroy, the live-runtime registry
 *   rcl/server.c    server start/stop, the live-server registry
 *   rcl/serving_loop.c     the servicing loop: request lines, idle sleep, stop
 *   rcl/takeover.c  servicing threads, standby and takeover
 *   rcl/client.c    locks, client request lines, execute
 *   rcl/worker_affinity.c   RCLHierarchicalAffinity: pinning worker threads
 *   rcl/numa_alloc.c     RCLAwareMalloc
 *   rcl/server_placement.c RCLLockInitNUMA / server core choice
 * The design essay is in rcl/serving_loop.c (request lines, mutual exclusion,
 * idle) and rcl/takeover.c (takeover).
 */
#ifndef TOPSYNC_SRC_RCL_PRIVATE_H
#define TOPSYNC_SRC_RCL_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <assert.h>

#include <topsync/rcl.h>

#include "base/registry.h"
#include "topology/topology_private.h"
#include "wait/wait.h"

struct ts_alloc_header;

struct topsync_rcl_runtime {
    ts_registry_link_t live; /* in the live runtimes (rcl/runtime_registry.c) */
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

    /* RCLAwareMalloc (rcl/numa_alloc.c). memory_node is read without the mutex
     * by every allocation; the mutex guards the recorded list and stats. */
    pthread_mutex_t alloc_mutex;
    _Atomic int memory_node; /* -1: default allocation */
    unsigned nservers_alloc; /* rt->nservers, as the allocator last saw it */
    size_t live_blocks;
    struct ts_alloc_header *recorded; /* doubly linked */
    topsync_rcl_alloc_stats_t stats;  /* memory_node: filled from the atomic */
};

/* The cpuset of NUMA node `node` as topsync_rcl_memory_node() numbers them. */
hwloc_const_cpuset_t ts_rcl_node_cpuset(const topsync_rcl_runtime_t *rt, int node);
/* Called with rt->mutex held after the set of servers changed: recompute
 * the allocation node, and migrate the recorded blocks at the first start. */
void ts_rcl_alloc_servers_changed(topsync_rcl_runtime_t *rt);
/* Blocks of topsync_rcl_malloc() not freed yet. */
size_t ts_rcl_alloc_live(topsync_rcl_runtime_t *rt);

#define RCL_CHUNK_SLOTS 64u
#define RCL_MAX_CHUNKS 1024u
#define RCL_DEFAULT_MAX_CLIENTS (RCL_CHUNK_SLOTS * RCL_MAX_CHUNKS)
#define RCL_DEFAULT_TAKEOVER_US 1000u
#define RCL_DEFAULT_IDLE_SPIN 20000u
#ifndef RCL_IDLE_YIELDS /* tests/genmc shortens it: each pass is explored */
#define RCL_IDLE_YIELDS 64u
#endif
#define RCL_OVERSUBSCRIBED_IDLE_SPIN 16u
#define RCL_QUARANTINE 1024u
#define RCL_CLIENT_SPIN 2048u
#define RCL_CLIENT_YIELDS 8u
#define RCL_CLIENT_SHORT_SPIN 256u
#define RCL_CLIENT_YIELDS_OVERSUBSCRIBED 16u

#define LOCK_LIVE 0x52434c4cu /* "RCLL" */
#define LOCK_DEAD 0xdead0001u

#define DOOR_AWAKE 0u
#define DOOR_SLEEPING 1u

/* One client's request line (see the essay above). */
/* The orderings of a slot's lock pointer (rcl/client.c stores, rcl/serving_loop.c
 * loads): tests/genmc/rcl_scanners.c relaxes both and GenMC must catch it. */
#ifndef TS_RCL_LOCK_STORE_ORDER
#define TS_RCL_LOCK_STORE_ORDER memory_order_release
#define TS_RCL_LOCK_LOAD_ORDER memory_order_acquire
#endif

struct rcl_slot {
    ts_word request; /* client: episode of its latest request (release) */
    ts_word done;    /* server: episode of the latest completed one (release) */
    _Atomic(topsync_rcl_lock_t *) lock;
    topsync_rcl_fn_t fn;
    void *arg;
    void *result;
    uint32_t last_episode;      /* client-private */
    struct rcl_slot *next_free; /* under slots_mutex */
};

/* The lock's first line is read by clients, its second written by servers. */
struct topsync_rcl_lock {
    _Atomic uint32_t state; /* LOCK_LIVE or LOCK_DEAD */
    topsync_rcl_server_t *server;
    size_t line;
};

struct server_lines {
    _Atomic uint32_t doorbell; /* read by every client, written on sleep/wake */
};
struct server_control {
    _Atomic uint32_t cs_seq; /* odd while a critical section runs */
    _Atomic uint32_t active; /* id of the scanning thread */
    _Atomic uint32_t stop;
    _Atomic uint32_t standby_word; /* futex the standbys time out on */
    _Atomic uint32_t standbys;     /* 0 or 1 */
    _Atomic uint32_t parked;
    _Atomic uint32_t park_word;
    _Atomic unsigned long takeovers;
};

struct topsync_rcl_server {
    topsync_rcl_runtime_t *rt;
    unsigned core;
    ts_registry_link_t live; /* in the live servers (rcl/server.c); its uid */
    size_t line, stride;
    hwloc_bitmap_t cpuset;
    ts_wait wait_normal, wait_short_spin, wait_oversubscribed;
    unsigned takeover_us, idle_spin, max_slots, cpus;
    unsigned nlocks; /* under rt->mutex */

    void *lines_block;
    struct server_lines *doorbell_line;
    struct server_control *control;

    pthread_mutex_t slots_mutex;
    struct rcl_slot *free_slots;
    _Atomic unsigned nslots;   /* high-water mark, release-published */
    _Atomic unsigned nclients; /* slots in use: the oversubscription guess */
    struct rcl_slot *chunks[RCL_MAX_CHUNKS];

    pthread_mutex_t threads_mutex;
    pthread_cond_t started_cond;
    pthread_t *threads;
    unsigned nthreads, cap_threads, next_id;
    int bind_error; /* first thread's binding result */
    bool first_started;
};

static_assert(sizeof(struct rcl_slot) <= 64, "a request fits the smallest line we use");
static_assert(sizeof(struct topsync_rcl_lock) <= 64, "a lock's client part fits one line");
static_assert(sizeof(struct server_control) <= 64, "server control words share one line");

static inline size_t ts_rcl_round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

static inline struct rcl_slot *slot_at(const topsync_rcl_server_t *s, unsigned i)
{
    return (struct rcl_slot *)((char *)s->chunks[i / RCL_CHUNK_SLOTS] +
                               (size_t)(i % RCL_CHUNK_SLOTS) * s->stride);
}

static inline _Atomic uint32_t *lock_busy(topsync_rcl_lock_t *l)
{
    return (_Atomic uint32_t *)((char *)l + l->line);
}

/* rcl/runtime_registry.c: is rt a runtime that topsync_rcl_runtime_create() made and
 * topsync_rcl_runtime_destroy() has not destroyed? (Setup paths only.) */
bool ts_rcl_runtime_is_live(const topsync_rcl_runtime_t *rt);
/* Add a runtime to the live ones (at the end of its creation) / remove it. */
void ts_rcl_runtime_register(topsync_rcl_runtime_t *rt);
void ts_rcl_runtime_unregister(topsync_rcl_runtime_t *rt);

/* rcl/server.c: the live servers, by uid (thread-exit slot release must not
 * touch a stopped server). */
extern ts_registry_t ts_rcl_servers;
topsync_rcl_server_t *ts_rcl_server_find_locked(uint64_t uid); /* ts_rcl_servers.mutex held */
/* Is s a started server that was not stopped? Takes the registry mutex. */
bool ts_rcl_server_is_live(const topsync_rcl_server_t *s);

/* rcl/serving_loop.c */
/* The lock whose critical section this (servicing) thread is running: an
 * execute on it from inside would wait for itself forever. */
extern _Thread_local topsync_rcl_lock_t *ts_rcl_running_lock;
bool ts_rcl_request_pending(struct rcl_slot *slot, uint32_t *episode);
/* Serve as the active thread `self` until stopped or taken over. */
void ts_rcl_serve(topsync_rcl_server_t *s, uint32_t self, uint32_t *cs_counter);
/* After losing the active role: wake the active thread if it sleeps. */
void ts_rcl_leave_active(topsync_rcl_server_t *s);
/* Wake the active thread if it sleeps on the doorbell. */
void ts_rcl_wake_server(topsync_rcl_server_t *s);
/* Store stop and wake every thread of s that may sleep (the Dekker pair with
 * the idle sleep: see rcl/serving_loop.c). */
void ts_rcl_signal_stop(topsync_rcl_server_t *s);

/* rcl/takeover.c */
int ts_rcl_spawn_servicing_thread(topsync_rcl_server_t *s);

#endif
