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

/* ---- windows --------------------------------------------------------------- */

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    return count_window(PMPI_Win_create(base, size, disp_unit, info, comm, win), 1);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    return count_window(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), 1);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    return count_window(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win), 1);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return count_window(PMPI_Win_create_dynamic(info, comm, win), 1);
}

int MPI_Win_free(MPI_Win *win)
{
    return count_window(PMPI_Win_free(win), -1);
}

/* ---- nonblocking point-to-point and persistent requests ---------------------- */

/* The four send modes share one signature: one macro defines their wrappers. */
#define COUNTED_SEND(name)                                                             \
    int MPI_##name(const void *buf, int count, MPI_Datatype type, int dest, int tag,   \
                   MPI_Comm comm, MPI_Request *request)                                \
    {                                                                                  \
        return count_started(PMPI_##name(buf, count, type, dest, tag, comm, request)); \
    }
COUNTED_SEND(Isend)
COUNTED_SEND(Issend)
COUNTED_SEND(Ibsend)
COUNTED_SEND(Irsend)

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    return count_started(PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    return count_started(PMPI_Imrecv(buf, count, type, message, request));
}

int MPI_Start(MPI_Request *request)
{
    return count_started(PMPI_Start(request));
}

int MPI_Startall(int count, MPI_Request requests[])
{
    return count_started(PMPI_Startall(count, requests));
}

/* ---- nonblocking collectives (the ones a barrier is likely to overlap) ------- */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return count_started(PMPI_Ibarrier(comm, request));
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *request)
{
    return count_started(PMPI_Ibcast(buf, count, type, root, comm, request));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    return count_started(PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    return count_started(PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request));
}
