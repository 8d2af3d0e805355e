/* Private to libtopsync-mpi: what the entry points, the node map and the
 * per-communicator set-up share. */
#ifndef TOPSYNC_MPI_PRIVATE_H
#define TOPSYNC_MPI_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <hwloc.h>
#include <mpi.h>

#include <topsync.h>

/* The MPI library of the process (mpi_binding.c): found, checked against
 * the ABI this build serves and made global at the first MPI_Init,
 * MPI_Init_thread or MPI_Barrier (whichever comes first; Open MPI's Fortran
 * MPI_INIT calls PMPI_Init). Refuses (stderr, exit 1) a wrong or second
 * MPI. Thread-safe, idempotent; nothing here may use an MPI handle before. */
void ts_mpi_bind(void);
/* The MPI library's path as loaded ("" before ts_mpi_bind). */
const char *ts_mpi_library(void);

/* Refuse to run (before MPI_Init there is no MPI_Abort): the message on
 * stderr, then exit status 1. */
void ts_mpi_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- PMPI tools (tool_chain.c) ----
 * Served: libtopsync-mpi defines PMPI_X as well as MPI_X and does its work
 * in PMPI_X, calling the MPI's own through TS_MPI_OWN(X). Passed: only
 * MPI_X is defined; it runs the tool's MPI_X, if any, instead of PMPI_X.
 * MPI_X of both asks ts_mpi_tool_enter(TS_MPI_FN_X) for a tool loaded after
 * libtopsync-mpi, calls it and then ts_mpi_tool_leave(TS_MPI_FN_X). */
/* clang-format off */
#define TS_MPI_SERVED(X)                                                                    \
    X(Barrier) X(Allreduce) X(Reduce) X(Bcast)                                              \
    X(Win_create) X(Win_allocate) X(Win_allocate_shared) X(Win_create_dynamic) X(Win_free)  \
    X(Isend) X(Issend) X(Ibsend) X(Irsend) X(Irecv) X(Imrecv) X(Start) X(Startall)          \
    X(Ibarrier) X(Ibcast) X(Ireduce) X(Iallreduce)                                         \
    X(Wait) X(Test) X(Waitall) X(Testall) X(Waitany) X(Testany) X(Waitsome) X(Testsome)     \
    X(Request_free)                                                                         \
    TS_MPI_SERVED_BIG(X)
/* The MPI-4 large-count forms (MPI_X_c), served like MPI_X: a rank may
 * reach a collective through MPI_Allreduce_c where another calls
 * MPI_Allreduce (mpi4py does under MPICH), and a form that bypassed topsync
 * would leave the communicator's set-up one-sided (issue 56 item 1). Last
 * in the list: an MPI without them (Open MPI 4 and 5) has no PMPI_X_c,
 * which only these may lack (ts_mpi_fn_optional). */
#define TS_MPI_SERVED_BIG(X) X(Allreduce_c) X(Reduce_c) X(Bcast_c)
/* clang-format on */
#define TS_MPI_PASSED(X) X(Init) X(Init_thread)
/* The Fortran barrier's manglings: served (pmpi_X defined too) and passed
 * like the C one, told apart from an MPI's by its pmpi_ name. */
#define TS_MPI_FORTRAN(X) \
    X(mpi_barrier) X(mpi_barrier_) X(mpi_barrier__) X(MPI_BARRIER) X(mpi_barrier_f08_)
#define TS_MPI_FN_ENUM(name) TS_MPI_FN_##name,
#define TS_MPI_FN_PLUS_ONE(name) +1
enum ts_mpi_fn {
    TS_MPI_SERVED(TS_MPI_FN_ENUM) TS_MPI_PASSED(TS_MPI_FN_ENUM) TS_MPI_FORTRAN(TS_MPI_FN_ENUM)
        TS_MPI_FN_COUNT
};
enum { TS_MPI_FN_SERVED_COUNT = 0 TS_MPI_SERVED(TS_MPI_FN_PLUS_ONE) };
static inline bool ts_mpi_fn_optional(int fn)
{
    return fn >= TS_MPI_FN_Allreduce_c && fn <= TS_MPI_FN_Bcast_c;
}
#if !defined(MPI_VERSION) || MPI_VERSION < 4
/* An MPI-3 header (Open MPI's) declares no large-count forms; defined here
 * all the same, so that one build serves an MPI of that ABI that has them. */
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm);
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                  int root, MPI_Comm comm);
int PMPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm);
int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm);
int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                 int root, MPI_Comm comm);
int MPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm);
#endif
typedef void (*ts_mpi_fnptr)(void);
/* The MPI's own PMPI_X of each served X (set by ts_mpi_bind). */
extern ts_mpi_fnptr ts_mpi_own_fn[TS_MPI_FN_COUNT];
#define TS_MPI_OWN(name) ((__typeof__(&PMPI_##name))ts_mpi_own_fn[TS_MPI_FN_##name])
/* At ts_mpi_bind: the MPI's own PMPI_X in `mpi` (a handle on the MPI
 * library) and the tools' MPI_X loaded after libtopsync-mpi. */
void ts_mpi_chain_resolve(void *mpi);
/* TOPSYNC_VERBOSE: one line per function passed through a tool. */
void ts_mpi_chain_report(void);
/* A served PMPI_X calls ts_mpi_bind before TS_MPI_OWN: with a tool loaded
 * first, it may be the process's first call into libtopsync-mpi. The
 * tables are written inside ts_mpi_bind's pthread_once, which orders them
 * before every return from it (POSIX's guarantee for pthread_once). */
extern ts_mpi_fnptr ts_mpi_tool_fn[TS_MPI_FN_COUNT];
ts_mpi_fnptr ts_mpi_tool_claim(enum ts_mpi_fn fn);
void ts_mpi_tool_leave(enum ts_mpi_fn fn);
/* The tool's MPI_X for this call (NULL: no tool, or this thread is inside
 * that tool's MPI_X already); binds first. Non-NULL: call it, then leave. */
static inline ts_mpi_fnptr ts_mpi_tool_enter(enum ts_mpi_fn fn)
{
    ts_mpi_bind();
    if (__builtin_expect(!ts_mpi_tool_fn[fn], 1))
        return NULL;
    return ts_mpi_tool_claim(fn);
}
/* rc = MPI_X's call: the tool's MPI_X loaded after us, else PMPI_X (ours
 * for a served X, the MPI's for a passed one). */
#define TS_MPI_CALL(rc, name, args)                               \
    do {                                                          \
        ts_mpi_fnptr tool_ = ts_mpi_tool_enter(TS_MPI_FN_##name); \
        if (!tool_) {                                             \
            (rc) = PMPI_##name args;                              \
        } else {                                                  \
            (rc) = ((__typeof__(&PMPI_##name))tool_)args;         \
            ts_mpi_tool_leave(TS_MPI_FN_##name);                  \
        }                                                         \
    } while (0)

/* MPI_X of a served X: passed through a tool loaded after us, else our
 * PMPI_X (which each file defines beside it). */
#define TS_MPI_PASS_THROUGH(name, params, args) \
    int MPI_##name params                       \
    {                                           \
        int rc;                                 \
        TS_MPI_CALL(rc, name, args);            \
        return rc;                              \
    }

#ifdef OMPI_MAJOR_VERSION
/* Open MPI's predefined handles are addresses of objects in libmpi: read at
 * ts_mpi_bind from the library itself, so that libtopsync-mpi needs no
 * load-time relocation against an MPI (and no DT_NEEDED on one). Only the
 * handles libtopsync-mpi uses; each is NULL before ts_mpi_bind. */
struct ts_ompi_handles {
    MPI_Comm comm_world, comm_null, comm_self;
    MPI_Datatype type_int, type_char, type_byte, type_long_long;
    MPI_Op op_max, op_sum;
    MPI_Info info_null;
    MPI_Request request_null;
};
extern struct ts_ompi_handles ts_ompi;
#undef MPI_COMM_WORLD
#undef MPI_COMM_NULL
#undef MPI_COMM_SELF
#undef MPI_INT
#undef MPI_CHAR
#undef MPI_BYTE
#undef MPI_LONG_LONG
#undef MPI_MAX
#undef MPI_SUM
#undef MPI_INFO_NULL
#undef MPI_REQUEST_NULL
#define MPI_COMM_WORLD (ts_ompi.comm_world)
#define MPI_COMM_NULL (ts_ompi.comm_null)
#define MPI_COMM_SELF (ts_ompi.comm_self)
#define MPI_INT (ts_ompi.type_int)
#define MPI_CHAR (ts_ompi.type_char)
#define MPI_BYTE (ts_ompi.type_byte)
#define MPI_LONG_LONG (ts_ompi.type_long_long)
#define MPI_MAX (ts_ompi.op_max)
#define MPI_SUM (ts_ompi.op_sum)
#define MPI_INFO_NULL (ts_ompi.info_null)
#define MPI_REQUEST_NULL (ts_ompi.request_null)
#endif

/* MODE_DEFERRED: not set up yet; PMPI_Barrier until the communicator's
 * TOPSYNC_MPI_SETUP_AT-th barrier (topsync_mpi.c) */
enum comm_mode { MODE_PMPI, MODE_NODE, MODE_NODES, MODE_DEFERRED };

/* One communicator's barrier, cached on it with an attribute. */
/* A communicator's node barrier and what it stands on, with what parking
 * it needs: moved as one into the pool of freed communicators' when comm
 * is freed, and back into a later communicator of the same ranks
 * (parked.c). */
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
};

/* Moved by value when a deferred state is set up (topsync_mpi.c): nothing
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

/* TOPSYNC_NODE_SPLIT (1 when unset; 0 when invalid) and TOPSYNC_VERBOSE;
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

/* comm's state for one served collective call (`call`: MPI_Barrier,
 * MPI_Allreduce, ..., named if it sets comm up and that times out): NULL when the MPI's own serves this call (MPI not initialized or
 * finalized, MPI_COMM_NULL, TOPSYNC_BARRIER=mpi, one of the calls before a
 * deferred set-up, which this call counts). Hot path: a per-thread cache. */
struct comm_state *ts_mpi_state_for(MPI_Comm comm, const char *call);
/* At MPI_Finalize (finalize.c), first thing: from now on every call is the
 * MPI's own (ts_mpi_state_for returns NULL); MPI_COMM_WORLD's state is
 * deleted and the attribute key freed. */
void ts_mpi_states_release(void);

/* An attribute copy callback that copies nothing (topsync_mpi.c). */
int ts_mpi_attr_no_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag);

/* Register, once, what runs first thing in MPI_Finalize: the calls above
 * (finalize.c). Local; called where the attribute key is made. */
void ts_mpi_finalize_hook(void);
/* The node barrier of comm timed out (TOPSYNC_TIMEOUT) or was abandoned:
 * name the ranks of this node that have not arrived, and MPI_Abort. */
void ts_mpi_timeout_abort(MPI_Comm comm, struct comm_state *s, topsync_barrier_t *b,
                          bool after_leaders, const char *what) __attribute__((noreturn));

/* Collectives (coll_types.c): a predefined datatype's topsync type (-1:
 * one broadcast moves but no op applies to) and element size, false for
 * any other datatype; a predefined op's topsync op. */
bool ts_mpi_coll_type(MPI_Datatype dt, int *type, size_t *size);
bool ts_mpi_coll_op(MPI_Op op, topsync_op_t *out);

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
    const char *barrier, *node_split, *setup_at;
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

/* Eager progress (progress.c): at each MPI_Barrier's entry, note whether
 * this thread's wait must poll the MPI without backing off (the program
 * has an RMA window, or a nonblocking operation it started is pending);
 * the idle hook asks ts_mpi_progress_eager(). */
void ts_mpi_progress_enter(void);
bool ts_mpi_progress_eager(void);

/* Print to stderr and MPI_Abort(comm). */
void ts_mpi_fatal(MPI_Comm comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

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
void ts_mpi_summary(void);
/* Whether MPI_Init or MPI_Init_thread was ours (node_map.c). */
bool ts_mpi_init_seen(void);

/* "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast" (collectives.c). */
const char *ts_mpi_coll_name(topsync_coll_kind_t kind);

#endif
