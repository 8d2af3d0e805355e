/*
 * Private to libtopsync-mpi, its middle layer (docs/design.md, "Layers"):
 * a communicator's node state and what it is made of: the node map of the
 * job, the set-up (layouts kept per group, the node's shared segment, the
 * node barriers of freed communicators), the per-communicator states and
 * their cache, what each rank's calls left in the segment for a timeout to
 * name, the process's pending requests, the job's summary and what
 * MPI_Finalize gives back. Uses binding/ only; the intercepted calls
 * (calls/) stand on it.
 */
#ifndef TOPSYNC_MPI_NODE_H
#define TOPSYNC_MPI_NODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <hwloc.h>
#include <mpi.h>

#include <topsync.h>

#include "binding/binding.h"

/* MODE_DEFERRED: not set up yet; PMPI_Barrier until the communicator's
 * TOPSYNC_MPI_SETUP_AT-th barrier (node/states.c) */
enum comm_mode { MODE_PMPI, MODE_NODE, MODE_NODES, MODE_DEFERRED };

/* One communicator's barrier, cached on it with an attribute. */
/* A communicator's node barrier and what it stands on, with what parking
 * it needs: moved as one into the pool of freed communicators' when comm
 * is freed, and back into a later communicator of the same ranks
 * (parked.c). */
/* Why a collective went to the MPI's own (decided by calls/collectives.c,
 * named by TOPSYNC_VERBOSE and by TOPSYNC_TIMEOUT's abort). */
enum ts_mpi_own_why {
    TS_MPI_OWN_OP,
    TS_MPI_OWN_TYPE,
    TS_MPI_OWN_OP_TYPE,
    TS_MPI_OWN_SIZE,
    TS_MPI_OWN_COUNT,
    TS_MPI_OWN_BIG,
    TS_MPI_OWN_ROOT,
    TS_MPI_OWN_OFF,
    TS_MPI_OWN_WHY_COUNT
};
const char *ts_mpi_own_why_words(enum ts_mpi_own_why why);

/* Each rank's latest collective call on a communicator (node/call_log.c):
 * its slot in the node's segment, which the node's ranks read when a wait
 * times out, and this rank's own recent calls. */
#define TS_CALL_LOG_KEPT 64
struct ts_call_log {
    _Atomic uint64_t *slots; /* node_size words, `stride` words apart; NULL: no segment */
    size_t stride;
    uint64_t calls;                    /* this rank's calls on the node barrier's communicators */
    uint64_t base;                     /* calls when the present communicator was set up */
    uint16_t recent[TS_CALL_LOG_KEPT]; /* by call number: kind << 8 | how */
};

struct ts_node_sync {
    topsync_barrier_t *barrier;
    topsync_coll_t *coll; /* the node's collectives (MODE_NODE, MODE_NODES) */
    void *segment;
    size_t segment_size;
    MPI_Comm *idle_comm; /* the idle hook's communicator: comm, once set up */
    /* comm's ranks in MPI_COMM_WORLD, the layout it was set up under, and
     * the names of every node's segment hashed (0: nothing to park) */
    int *world_ranks;
    int size;
    uint32_t layout_digest;
    uint64_t token;
    struct ts_call_log call_log; /* in the segment, parked with it */
};

/* Moved by value when a deferred state is set up (node/states.c): nothing
 * may point into one. */
struct comm_state {
    enum comm_mode mode;
    MPI_Comm comm;    /* the communicator (for the idle hook's messages) */
    MPI_Comm leaders; /* MODE_NODES: the world's node leaders (not owned) */
    int node_rank, node_size;
    int *node_members; /* comm ranks of my (pseudo-)node, ascending */
    struct ts_node_sync node;
    topsync_coll_choice_t coll_choice; /* which calls topsync serves (explain left empty) */
    int *leader_rank_of; /* MODE_NODES: comm rank -> its node leader's rank among the leaders */
    void *scratch;       /* collectives: results this rank does not keep (collectives.c) */
    unsigned deferred_barriers; /* MODE_DEFERRED: PMPI_Barriers left before set-up */
    unsigned ops;               /* TOPSYNC_MPI_OPS as the set-up agreed it */
};

/* What a process tells the others about itself at set-up: which node it is
 * on (the host's name hashed, and the world rank of its node's first rank
 * as MPI_COMM_TYPE_SHARED made it at MPI_Init, -1 when MPI_Init was not
 * seen), whether it leads its node in the world's leaders' communicator,
 * and its thread level. Equal (host_hash, node_id): same node. */
struct ts_node_record {
    uint64_t host_hash;
    int32_t node_id;
    int32_t world_leader; /* 1: in the world leaders' communicator */
    int32_t thread_level;
    int32_t reserved;
};

/* At MPI_Init / MPI_Init_thread (collective over MPI_COMM_WORLD, one thread). */
void ts_mpi_node_map_init(int provided);
/* This process's record (local). */
void ts_mpi_node_record(struct ts_node_record *out);
/* The job's processes on this node (the real node, not a pseudo-node), as
 * MPI_Init saw them; 0 when MPI_Init was not seen. */
int ts_mpi_node_processes(void);
/* The node leaders of MPI_COMM_WORLD (MPI_COMM_NULL: one node, not a leader,
 * or MPI_Init not seen). */
MPI_Comm ts_mpi_world_leaders(void);
/* At MPI_Finalize (finalize.c): free the node leaders' communicator. */
void ts_mpi_node_map_release(void);

/* TOPSYNC_MPI_OPS: the calls topsync serves, as bits 1 << enum
 * ts_mpi_call (TS_MPI_OPS_ALL when unset; -1 when invalid). */
enum { TS_MPI_OPS_ALL = 0xf };
int ts_mpi_ops_of(const char *value);
/* TOPSYNC_NODE_SPLIT (1 when unset; 0 when invalid) and TOPSYNC_VERBOSE
 * (0, 1: a start line and the end-of-job summary, 2: every detail);
 * _of: of that value (NULL: unset), as read by ts_mpi_env_scan. */
int ts_mpi_node_split(void);
int ts_mpi_node_split_of(const char *value);
int ts_mpi_verbose(void);
/* TOPSYNC_MPI_SETUP_AT: at which of a communicator's barriers it is set up
 * (2 when unset; MPI_COMM_WORLD always at its first; 0 when invalid). */
int ts_mpi_setup_at(void);
int ts_mpi_setup_at_of(const char *value);
/* The value MPI_COMM_WORLD's set-up agreed on every rank (0: not set up
 * yet), which every later deferral uses; recorded by that set-up. */
int ts_mpi_agreed_setup_at(void);
void ts_mpi_agree_setup_at(int at);

/* ---- communicators' states (node/states.c) ---- */
/* The per-thread cache of the last communicator looked up. */
struct ts_state_cache {
    MPI_Comm comm;
    struct comm_state *state; /* NULL: nothing cached yet */
    unsigned long generation;
};
extern _Atomic unsigned long ts_mpi_state_generation;
/* initial-exec: a thread-local access without a __tls_get_addr call on
 * every barrier (the library is linked or preloaded, so its TLS is static;
 * glibc keeps room for a small block in a dlopen()ed one too) */
extern _Thread_local
    __attribute__((tls_model("initial-exec"))) struct ts_state_cache ts_mpi_state_cache;
struct comm_state *ts_mpi_state_lookup(MPI_Comm comm, const char *call, bool *set_up);
/* comm's state for one served collective call (`call`: MPI_Barrier,
 * MPI_Allreduce, ..., named if it sets comm up and that times out): NULL
 * when the MPI's own serves this call (MPI not initialized or finalized,
 * MPI_COMM_NULL, TOPSYNC_BARRIER=mpi, one of the calls before a deferred
 * set-up, which this call counts). *set_up (when set_up is not NULL): true
 * only when this call set comm up and topsync serves it. Hot path: the
 * per-thread cache, inline; anything else is ts_mpi_state_lookup's. */
static inline struct comm_state *ts_mpi_state_for(MPI_Comm comm, const char *call, bool *set_up)
{
    /* acquire: pairs with the release of a state's deletion (states.c) */
    unsigned long gen = atomic_load_explicit(&ts_mpi_state_generation, memory_order_acquire);
    struct comm_state *s = ts_mpi_state_cache.state;
    if (__builtin_expect(ts_mpi_state_cache.comm == comm && ts_mpi_state_cache.generation == gen &&
                             s && (s->mode == MODE_NODE || s->mode == MODE_NODES),
                         1))
        return s;
    return ts_mpi_state_lookup(comm, call, set_up);
}
/* MPI_COMM_WORLD's set-up, from MPI_Init (collective over it). */
void ts_mpi_world_setup(void);
/* At MPI_Finalize (finalize.c), first thing: from now on every call is the
 * MPI's own (ts_mpi_state_for returns NULL); MPI_COMM_WORLD's state is
 * deleted and the attribute key freed. */
void ts_mpi_states_release(void);

/* ---- MPI_Finalize (node/finalize.c) ---- */
/* An attribute copy callback that copies nothing. */
int ts_mpi_attr_no_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag);
/* Register what runs first thing in MPI_Finalize: `first` (what stops
 * serving: the communicators' states), then the job's summary and the
 * releases of the parked node barriers, the layouts and the node map.
 * Local; called once, where the states' attribute key is made. */
void ts_mpi_finalize_hook(void (*first)(void));

/* ---- who has not arrived, and where the ranks diverged (node/timeout.c) ---- */
/* The node barrier of comm timed out (TOPSYNC_TIMEOUT) or was abandoned:
 * name the ranks of this node that have not arrived, and MPI_Abort. */
void ts_mpi_timeout_abort(MPI_Comm comm, struct comm_state *s, topsync_barrier_t *b,
                          bool after_leaders, const char *what) __attribute__((noreturn));
/* A one-way node step (a broadcast's, a reduce's) failed: name whom it
 * waited for (ts_coll_missing), and MPI_Abort. */
void ts_mpi_one_way_abort(MPI_Comm comm, struct comm_state *s, const char *what)
    __attribute__((noreturn));

/* ---- layouts kept per group (layouts.c) ----
 * What a set-up learned with collectives over a communicator, for a later
 * one of the same ranks in the same order. Every rank of that set-up keeps
 * an identical copy (the digest says which set-up made it). */
struct ts_layout {
    int size;          /* the communicator's */
    int *world_ranks;  /* its ranks' ranks in MPI_COMM_WORLD, in its order */
    uint32_t digest;   /* of what the set-up gathered and agreed on; 31 bits */
    uint64_t env_hash; /* the TOPSYNC_* variables it ran under */
    int nodes, node_rank, node_size;
    int *node_members; /* node_size: comm ranks of my (pseudo-)node */
    int *leader;       /* size: each rank's node leader (nodes > 1), else NULL */
    int min_level, roles_match, world_leader;
    hwloc_bitmap_t *sets;              /* node_size: my node's ranks' bindings */
    topsync_coll_choice_t coll_choice; /* agreed (explain left empty) */
    size_t coll_most;
    unsigned long used; /* last use, for eviction */
};
/* The TOPSYNC_* variables of this process as a set-up reads them, in one
 * pass over the environment: all of them hashed (their order aside), and
 * the values (NULL: unset) of those that decide which collectives a rank
 * calls, as getenv would return them. */
struct ts_mpi_env {
    uint64_t hash;
    const char *barrier, *node_split, *setup_at, *ops;
};
void ts_mpi_env_scan(struct ts_mpi_env *out);
/* comm's ranks in MPI_COMM_WORLD, malloc()ed; -1 when one is not in it
 * (spawned, connected) or out of memory. Local. */
int ts_mpi_layout_world_ranks(MPI_Comm comm, int size, int **out);
/* A copy of the layout kept for these world ranks under this environment
 * (ts_mpi_layout_clear it); false when none. */
bool ts_mpi_layout_find(const int *world_ranks, int size, uint64_t env_hash, struct ts_layout *out);
/* Keep l (moved: l is cleared), replacing that group's, else the least
 * recently used. */
void ts_mpi_layout_keep(struct ts_layout *l);
void ts_mpi_layout_forget(const int *world_ranks, int size);
void ts_mpi_layout_clear(struct ts_layout *l);
/* At MPI_Finalize (finalize.c): free MPI_COMM_WORLD's group and every kept
 * layout. */
void ts_mpi_layouts_release(void);

/* ---- node barriers of freed communicators (parked.c) ----
 * ts_mpi_park: move *node to the pool when it has a token (node is then
 * cleared; else false, node untouched).
 * ts_mpi_unpark: move the most recently parked of these world ranks and
 * layout into *node (freeing node->world_ranks); its token, 0 when none.
 * Local; whether every rank took the same is the set-up's to agree on. */
bool ts_mpi_park(struct ts_node_sync *node);
uint64_t ts_mpi_unpark(const int *world_ranks, int size, uint32_t layout_digest,
                       struct ts_node_sync *node);
/* Destroy *node's pieces (each may be NULL) and clear it. */
void ts_mpi_node_sync_free(struct ts_node_sync *node);
/* At MPI_Finalize (finalize.c): destroy every parked node barrier. */
void ts_mpi_parked_release(void);

/* Set up comm's barrier: collective over comm, calls only collectives on
 * comm itself (never creates a communicator). Never NULL. `call`: the call
 * that set it up, which TOPSYNC_TIMEOUT's abort names when the set-up's
 * first collective does not complete (a rank in another collective). */
struct comm_state *ts_mpi_setup(MPI_Comm comm, const char *call);
void ts_mpi_state_free(struct comm_state *s);

/* ---- eager progress (node/pending.c) ----
 * At each MPI_Barrier's entry, note whether this thread's wait must poll
 * the MPI without backing off (the program has an RMA window, or a
 * nonblocking operation it started is pending); the idle hook asks
 * ts_mpi_progress_eager(). The intercepted starts and completions
 * (calls/progress.c) keep the set of pending requests. */
void ts_mpi_progress_enter(void);
bool ts_mpi_progress_eager(void);
void ts_mpi_pending_started(const MPI_Request *requests, int n);
/* requests[indices[0..count)] (NULL indices: requests[0..n)) completed */
void ts_mpi_pending_completed(const MPI_Request *requests, int n, const int *indices, int count);
/* Whether any request is pending (relaxed: a hint). */
bool ts_mpi_pending_any(void);
/* A window was opened (+1) or freed (-1). */
void ts_mpi_windows_add(long delta);

/* The job's summary (summary.c): each call counted where it is decided,
 * summed over MPI_COMM_WORLD and printed by rank 0 (TOPSYNC_VERBOSE) in
 * MPI_Finalize's hook. TS_MPI_CALL_OWN: one of the four the MPI's own
 * served (its set-up's deferred calls among them). */
enum ts_mpi_call {
    TS_MPI_CALL_BARRIER,
    TS_MPI_CALL_ALLREDUCE,
    TS_MPI_CALL_REDUCE,
    TS_MPI_CALL_BCAST,
    TS_MPI_CALL_OWN,
    TS_MPI_CALL_KINDS
};
void ts_mpi_count(enum ts_mpi_call kind);
/* With TOPSYNC_VERBOSE set, the time a served call took: start returns 0
 * (nothing timed) when it is not; add, after the call's ts_mpi_count,
 * adds the time since start to the kind's. */
uint64_t ts_mpi_time_start(void);
void ts_mpi_time_add(enum ts_mpi_call kind, uint64_t start);
/* A node barrier (the node's MPI_Barrier or its collectives' barrier)
 * whose switches this rank counts in the summary (its node's rank 0, at
 * set-up), until it is freed (untrack: before destroy). */
void ts_mpi_summary_track(const topsync_barrier_t *barrier);
void ts_mpi_summary_untrack(const topsync_barrier_t *barrier);

/* ---- each rank's latest call, for the timeout to name (node/call_log.c) ----
 * How a call went: TS_MPI_HOW_NODE (topsync, on the node), else 1 + the
 * enum ts_mpi_own_why of the MPI's own. */
enum { TS_MPI_HOW_NODE = 0 };
/* The slots' size in the node's segment for node_size ranks (a cache line
 * each), and where they start after `used` bytes (a line boundary). */
size_t ts_mpi_call_log_bytes(int node_size);
size_t ts_mpi_call_log_offset(size_t used);
/* At a set-up that made the segment: the slots at `region` (NULL: none,
 * one rank on the node), this rank's cleared. Local; the set-up's last
 * collective orders it before any rank's reading. */
void ts_mpi_call_log_attach(struct ts_call_log *log, void *region, int node_rank);
/* At a set-up that took a parked node barrier: numbering starts again
 * (every rank of the freed communicator made the same calls on it). */
void ts_mpi_call_log_restart(struct ts_call_log *log);
/* At each collective call on a served communicator, before it waits: its
 * kind and how it goes, in this rank's slot (relaxed: read only by a
 * timeout's message, where a stale word names an earlier call). */
static inline void ts_mpi_call_note(struct comm_state *s, enum ts_mpi_call kind, unsigned how)
{
    struct ts_call_log *log = &s->node.call_log;
    uint64_t n = ++log->calls;
    uint16_t entry = (uint16_t)((unsigned)kind << 8 | how);
    log->recent[n % TS_CALL_LOG_KEPT] = entry;
    if (log->slots)
        atomic_store_explicit(&log->slots[(size_t)s->node_rank * log->stride],
                              (n - log->base) << 16 | entry, memory_order_relaxed);
}
/* "MPI_Barrier", "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast"; else "a
 * collective". */
const char *ts_mpi_call_name(enum ts_mpi_call kind);
/* Where the ranks missing[0..n) (node indexes) and this one diverged, as
 * a sentence into out ("" when their calls say nothing more). */
void ts_mpi_call_divergence(const struct comm_state *s, const unsigned *missing, int n, char *out,
                            size_t len);

void ts_mpi_summary(void);
/* Whether MPI_Init or MPI_Init_thread was ours (node_map.c). */
bool ts_mpi_init_seen(void);

#endif
