/*
 * Private to libtopsync-mpi, its lowest layer (docs/design.md, "Layers"):
 * which MPI library the process loaded and how to call it: the MPI's own
 * PMPI functions, the PMPI tools loaded after us, Open MPI's predefined
 * handles read at run time, MPI datatypes and ops as topsync's, and the
 * two ways out (refuse before MPI_Init, abort after). Uses nothing of the
 * layers above (node/, calls/).
 */
#ifndef TOPSYNC_MPI_BINDING_H
#define TOPSYNC_MPI_BINDING_H

#include <stdbool.h>
#include <stdint.h>

#include <hwloc.h>
#include <mpi.h>

#include <topsync.h>

/* The MPI library of the process (binding/mpi_binding.c): found, checked against
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

/* Print to stderr and MPI_Abort(comm) (binding/report.c). */
void ts_mpi_fatal(MPI_Comm comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* ---- PMPI tools (binding/tool_chain.c) ----
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
 * library, loaded from `path`) and the tools' MPI_X loaded after
 * libtopsync-mpi. */
void ts_mpi_chain_resolve(void *mpi, const char *path);
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

/* MPI datatypes and ops as topsync's (binding/coll_types.c): a predefined
 * datatype's topsync type (-1: one broadcast moves but no op applies to)
 * and element size, false for any other datatype; a predefined op's
 * topsync op. */
bool ts_mpi_coll_type(MPI_Datatype dt, int *type, size_t *size);
bool ts_mpi_coll_op(MPI_Op op, topsync_op_t *out);
/* "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast". */
const char *ts_mpi_coll_name(topsync_coll_kind_t kind);

#endif
