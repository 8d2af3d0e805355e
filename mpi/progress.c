/*
 * When a rank waiting in the node barrier must keep the MPI progressing
 * eagerly: the program has an RMA window (passive-target one-sided
 * operations of other ranks complete only while this rank's MPI runs), or
 * started nonblocking operations since this thread's previous barrier
 * (a rendezvous Irecv whose sender waits for it). The entry points here
 * count those calls and pass them on to the MPI (PMPI); the node barrier's
 * idle hook (comm_setup.c) then asks to be called again at once instead
 * of backing off. docs/design.md section 8.27.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>

#include <mpi.h>

#include "mpi_private.h"

/* relaxed everywhere: hints that only choose how often the hook polls; a
 * stale value costs one barrier's polling rate, never correctness */
static _Atomic long windows;
static _Atomic unsigned long nonblocking_started;
/* initial-exec, as topsync_mpi.c's cache: read on every MPI_Barrier, which
 * must not pay a __tls_get_addr call for them */
static _Thread_local __attribute__((tls_model("initial-exec"))) unsigned long started_seen;
static _Thread_local __attribute__((tls_model("initial-exec"))) bool eager;

void ts_mpi_progress_enter(void)
{
    unsigned long started = atomic_load_explicit(&nonblocking_started, memory_order_relaxed);
    eager = started != started_seen || atomic_load_explicit(&windows, memory_order_relaxed) > 0;
    started_seen = started;
}

bool ts_mpi_progress_eager(void)
{
    return eager;
}

static inline int count_started(int rc)
{
    if (rc == MPI_SUCCESS)
        atomic_fetch_add_explicit(&nonblocking_started, 1, memory_order_relaxed);
    return rc;
}

static inline int count_window(int rc, long delta)
{
    if (rc == MPI_SUCCESS)
        atomic_fetch_add_explicit(&windows, delta, memory_order_relaxed);
    return rc;
}

/*
 * Each counted function twice (tool_chain.c): PMPI_X counts and calls the
 * MPI's own PMPI_X; MPI_X passes through a PMPI tool loaded after us, else
 * calls our PMPI_X. A tool before us calls our PMPI_X itself.
 * COUNTED(name, count_call, params, args): count_call wraps the MPI's return.
 */
#define COUNTED(name, counted, params, args)   \
    int PMPI_##name params                     \
    {                                          \
        ts_mpi_bind();                         \
        return counted(TS_MPI_OWN(name) args); \
    }                                          \
    int MPI_##name params                      \
    {                                          \
        int rc;                                \
        TS_MPI_CALL(rc, name, args);           \
        return rc;                             \
    }
#define OPENS_WINDOW(rc) count_window(rc, 1)
#define FREES_WINDOW(rc) count_window(rc, -1)

/* ---- windows --------------------------------------------------------------- */

COUNTED(Win_create, OPENS_WINDOW,
        (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
        (base, size, disp_unit, info, comm, win))
COUNTED(Win_allocate, OPENS_WINDOW,
        (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
        (size, disp_unit, info, comm, baseptr, win))
COUNTED(Win_allocate_shared, OPENS_WINDOW,
        (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
        (size, disp_unit, info, comm, baseptr, win))
COUNTED(Win_create_dynamic, OPENS_WINDOW, (MPI_Info info, MPI_Comm comm, MPI_Win *win),
        (info, comm, win))
COUNTED(Win_free, FREES_WINDOW, (MPI_Win * win), (win))

/* ---- nonblocking point-to-point and persistent requests ---------------------- */

/* The four send modes share one signature. */
#define COUNTED_SEND(name)                                                                    \
    COUNTED(name, count_started,                                                              \
            (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
             MPI_Request *request),                                                           \
            (buf, count, type, dest, tag, comm, request))
COUNTED_SEND(Isend)
COUNTED_SEND(Issend)
COUNTED_SEND(Ibsend)
COUNTED_SEND(Irsend)
COUNTED(Irecv, count_started,
        (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, type, source, tag, comm, request))
COUNTED(Imrecv, count_started,
        (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request),
        (buf, count, type, message, request))
COUNTED(Start, count_started, (MPI_Request * request), (request))
COUNTED(Startall, count_started, (int count, MPI_Request requests[]), (count, requests))

/* ---- nonblocking collectives (the ones a barrier is likely to overlap) ------- */

COUNTED(Ibarrier, count_started, (MPI_Comm comm, MPI_Request *request), (comm, request))
COUNTED(Ibcast, count_started,
        (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request),
        (buf, count, type, root, comm, request))
COUNTED(Ireduce, count_started,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, type, op, root, comm, request))
COUNTED(Iallreduce, count_started,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, recvbuf, count, type, op, comm, request))
