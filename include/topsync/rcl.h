/*
 * topsync RCL placement: the NUMA placement decisions of the Remote Core
 * Locking papers (design.md section 5), as pure functions of a topology and the
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
 * topology without cores).
 *
 * The RCL runtime (second half of this header) runs on this machine: servers
 * bound to cores execute the critical sections of their locks on behalf of
 * client threads; an allocator family places memory on the servers' node
 * (RCLAwareMalloc); a thread-creation helper pins workers next to a server
 * (RCLHierarchicalAffinity).
 */
#ifndef TOPSYNC_RCL_H
#define TOPSYNC_RCL_H

#include <pthread.h>
#include <stddef.h>

#include <topsync/wait.h>
#include <topsync/common.h>
#include <topsync/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum topsync_rcl_policy {
    TOPSYNC_RCL_PACK,           /* servers on the node that already hosts the most */
    TOPSYNC_RCL_SPREAD,         /* servers on the node that hosts the fewest */
    TOPSYNC_RCL_POLICY_DEFAULT, /* runtime: TOPSYNC_RCL_PLACEMENT, else pack */
} topsync_rcl_policy_t;

/* "pack" | "spread" | "default"; -EINVAL lists the valid ones. */
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

/* ======================================================================== */
/* RCL runtime                                                                */
/* ======================================================================== */

/*
 * Model. A runtime owns this machine's topology, the placement usage above,
 * and the allocator state. A server is a thread bound to one core; it owns a
 * table of request slots, one cache line per client thread, and scans it.
 * A lock belongs to one server; topsync_rcl_execute(lock, fn, arg) writes
 * (lock, fn, arg) into the calling thread's slot of that server, waits until
 * the server has run fn(arg), and returns its result. All critical sections
 * of one server run one at a time, so locks of one server exclude each other
 * as well (as in the RCL papers); locks of different servers run in
 * parallel.
 *
 * Memory ordering. Everything the calling thread did before
 * topsync_rcl_execute() happens before fn runs, and everything fn did
 * happens before topsync_rcl_execute() returns (the request is published
 * with a release store the server reads with acquire; the completion is
 * published with a release the client reads with acquire). Two critical
 * sections of the same lock are therefore ordered as with a mutex.
 *
 * Blocking critical sections. A critical section may sleep, take a mutex or
 * wait for I/O. The server keeps a standby thread on its core: when one
 * critical section has run for longer than `takeover_us` (default 1000 us),
 * the standby takes over the scanning and serves every other lock of the
 * server; requests of the lock whose critical section is still running wait
 * for it (mutual exclusion per lock is kept under every interleaving). A new
 * standby is started when the last one takes over, so any number of locks
 * can be blocked at once, each holding one thread. Guarantee: a lock whose
 * critical sections do not block is served within about takeover_us plus
 * its own queueing delay, whatever the other locks of its server do.
 * A critical section that calls topsync_rcl_execute() on another lock of the
 * same server therefore completes (after one takeover); on its own lock it
 * could only wait for itself: that is an error (-EDEADLK), not a hang.
 *
 * Idle servers spin for a while, then yield, then sleep on a futex; the next
 * execute wakes them. Clients wait with the runtime's wait policy.
 *
 * Errors. Set-up calls return 0 or a negative errno and record a message
 * (topsync_error_message()). topsync_rcl_execute_checked() reports misuse
 * (a destroyed lock, too many client threads) as -EINVAL / -ENOSPC;
 * topsync_rcl_execute() prints the same message and aborts, since it has no
 * way to return an error beside fn's result. Destroyed locks stay
 * recognisable (quarantined) until 1024 more locks were destroyed or the
 * runtime is destroyed; after that, using one is undefined, as with a freed
 * pthread mutex. A stopped server or a destroyed runtime handed to a set-up
 * call (a second stop or destroy, lock_create on a stopped server,
 * server_start or malloc on a destroyed runtime) is refused with -EINVAL
 * (malloc: NULL, errno EINVAL) and a message, as long as no new server or
 * runtime was created at the same address; topsync_rcl_free() and
 * topsync_rcl_realloc() abort with a message on a block that is not a live
 * block of the runtime they are given.
 */

typedef struct topsync_rcl_runtime topsync_rcl_runtime_t;
typedef struct topsync_rcl_server topsync_rcl_server_t;
typedef struct topsync_rcl_lock topsync_rcl_lock_t;
typedef void *(*topsync_rcl_fn_t)(void *arg);

typedef struct topsync_rcl_options {
    /* How clients wait for their critical section: TOPSYNC_WAIT_DEFAULT
     * takes TOPSYNC_WAIT from the environment, else block. */
    topsync_wait_policy_t wait;
    /* Placement of servers started with TOPSYNC_RCL_CORE_AUTO. Default pack
     * (TOPSYNC_RCL_PLACEMENT in the environment: pack | spread). */
    topsync_rcl_policy_t placement;
    /* A critical section running longer than this lets the standby thread
     * serve the other locks. 0: default (1000 us). */
    unsigned takeover_us;
    /* Client threads per server (slots are added 64 at a time up to this).
     * 0: default (65536). */
    unsigned max_clients;
    /* Empty scans before an idle server yields, then sleeps. 0: default. */
    unsigned idle_spin;
} topsync_rcl_options_t;

void topsync_rcl_options_init(topsync_rcl_options_t *options);

/* A runtime on this machine (loads its hwloc topology). options may be NULL.
 * TOPSYNC_WAIT and TOPSYNC_RCL_PLACEMENT are validated here. */
int topsync_rcl_runtime_create(topsync_rcl_runtime_t **out, const topsync_rcl_options_t *options);
/* -EBUSY (and nothing freed) while servers run. */
int topsync_rcl_runtime_destroy(topsync_rcl_runtime_t *runtime);
const topsync_topology_t *topsync_rcl_runtime_topology(const topsync_rcl_runtime_t *runtime);

#define TOPSYNC_RCL_CORE_AUTO (-1)

/*
 * Start a server on `core` (hwloc logical core index: RCLLockInitDefault), or
 * on the core chosen by the runtime's placement policy for
 * TOPSYNC_RCL_CORE_AUTO (RCLLockInitNUMA). -EINVAL when the core is outside
 * the process's cpuset as it was when the runtime was created: the union of
 * the bindings of its threads then (so create the runtime before the main
 * thread pins itself to one core). The first server
 * of a runtime migrates the blocks topsync_rcl_malloc() recorded to its NUMA
 * node. Returns once the server runs.
 */
int topsync_rcl_server_start(topsync_rcl_runtime_t *runtime, int core, topsync_rcl_server_t **out);
/* -EBUSY while locks are attached to the server. Joins its threads. */
int topsync_rcl_server_stop(topsync_rcl_server_t *server);
int topsync_rcl_server_core(const topsync_rcl_server_t *server);

typedef struct topsync_rcl_server_stats {
    unsigned long takeovers; /* times a standby took over from a long section */
    unsigned threads;        /* servicing threads started (active + standbys) */
} topsync_rcl_server_stats_t;
int topsync_rcl_server_stats(const topsync_rcl_server_t *server, topsync_rcl_server_stats_t *out);

int topsync_rcl_lock_create(topsync_rcl_server_t *server, topsync_rcl_lock_t **out);
/* -EBUSY while a request of this lock is pending; -EINVAL if destroyed. */
int topsync_rcl_lock_destroy(topsync_rcl_lock_t *lock);

/*
 * Run fn(arg) on the lock's server, under the lock; returns fn's result.
 * Any number of threads may call it concurrently, on any locks. A thread's
 * first call on a server takes a slot there (released when the thread
 * exits). Aborts with a message on misuse; see topsync_rcl_execute_checked.
 */
void *topsync_rcl_execute(topsync_rcl_lock_t *lock, topsync_rcl_fn_t fn, void *arg);
/* Same, but misuse returns -EINVAL (NULL or destroyed lock, NULL fn),
 * -ENOSPC (more client threads than max_clients) or -EDEADLK (called from
 * inside a critical section of the same lock), with a message. */
int topsync_rcl_execute_checked(topsync_rcl_lock_t *lock, topsync_rcl_fn_t fn, void *arg,
                                void **result);

/* ---- RCLAwareMalloc (design.md section 5.1) ------------------------------------------ */
/*
 * Before any server runs, blocks come from the default allocator and are
 * recorded; the first server migrates them (their whole pages) to its node.
 * While every server runs on one NUMA node, blocks of a page or more are
 * allocated bound to that node; otherwise (servers on several nodes, or a
 * small block) the default allocator is used. Thread-safe. Blocks are
 * aligned to 64 bytes. topsync_rcl_free() takes only blocks of these
 * functions, from the same runtime (any other pointer aborts with a
 * message). On failure the allocators return NULL, set errno (EINVAL: NULL
 * or destroyed runtime; ENOMEM) and record a message.
 */
void *topsync_rcl_malloc(topsync_rcl_runtime_t *runtime, size_t size);
void *topsync_rcl_calloc(topsync_rcl_runtime_t *runtime, size_t count, size_t size);
void *topsync_rcl_realloc(topsync_rcl_runtime_t *runtime, void *block, size_t size);
void topsync_rcl_free(topsync_rcl_runtime_t *runtime, void *block);

typedef struct topsync_rcl_alloc_stats {
    size_t recorded_blocks; /* live blocks waiting for the first server */
    size_t migrated_blocks; /* moved to the server's node at its start */
    size_t migrated_bytes;  /* pages of those blocks */
    size_t bound_blocks;    /* allocated on the servers' node */
    size_t default_blocks;  /* default allocator while servers run */
    int memory_node;        /* node allocations are bound to, or -1 */
} topsync_rcl_alloc_stats_t;

int topsync_rcl_alloc_stats(topsync_rcl_runtime_t *runtime, topsync_rcl_alloc_stats_t *out);

/* ---- RCLHierarchicalAffinity (design.md section 5.3) ---------------------------------- */

/* Pin the calling thread to topsync_rcl_place_worker()'s core and record it;
 * *core receives it. -EAGAIN when no server runs. */
int topsync_rcl_worker_pin(topsync_rcl_runtime_t *runtime, unsigned *core);
/* Forget a worker pinned on `core` (its binding is left as it is). */
int topsync_rcl_worker_unpin(topsync_rcl_runtime_t *runtime, unsigned core);
/* pthread_create, with the new thread pinned as by topsync_rcl_worker_pin()
 * before start_routine runs, and unpinned when it returns. attr may be NULL. */
int topsync_rcl_thread_create(topsync_rcl_runtime_t *runtime, pthread_t *thread,
                              const pthread_attr_t *attr, void *(*start_routine)(void *),
                              void *arg);

#ifdef __cplusplus
}
#endif

#endif
