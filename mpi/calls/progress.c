/*
 * The MPI calls that start and complete requests, and those that open and
 * free RMA windows: each noted (node/pending.c, which says why) and passed
 * on to the MPI (PMPI). docs/design.md section 8.27.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "node/node.h"

static inline int count_window(int rc, long delta)
{
    if (rc == MPI_SUCCESS)
        ts_mpi_windows_add(delta);
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
    TS_MPI_PASS_THROUGH(name, params, args)
/* Starts that returned MPI_SUCCESS: their requests noted; rc returned. */
static inline int started(int rc, const MPI_Request *requests, int n)
{
    if (rc == MPI_SUCCESS && n > 0)
        ts_mpi_pending_started(requests, n);
    return rc;
}
/* counted() of a start: expanded inside PMPI_X, where `request` (one) or
 * `count` and `requests` (Startall) are its parameters */
#define STARTED_ONE(rc) started(rc, request, 1)
#define STARTED_ALL(rc) started(rc, requests, count)
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
    COUNTED(name, STARTED_ONE,                                                                \
            (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
             MPI_Request *request),                                                           \
            (buf, count, type, dest, tag, comm, request))
COUNTED_SEND(Isend)
COUNTED_SEND(Issend)
COUNTED_SEND(Ibsend)
COUNTED_SEND(Irsend)
COUNTED(Irecv, STARTED_ONE,
        (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, type, source, tag, comm, request))
COUNTED(Imrecv, STARTED_ONE,
        (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request),
        (buf, count, type, message, request))
COUNTED(Start, STARTED_ONE, (MPI_Request * request), (request))
COUNTED(Startall, STARTED_ALL, (int count, MPI_Request requests[]), (count, requests))

/* ---- nonblocking collectives (the ones a barrier is likely to overlap) ------- */

COUNTED(Ibarrier, STARTED_ONE, (MPI_Comm comm, MPI_Request *request), (comm, request))
COUNTED(Ibcast, STARTED_ONE,
        (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request),
        (buf, count, type, root, comm, request))
COUNTED(Ireduce, STARTED_ONE,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, recvbuf, count, type, op, root, comm, request))
COUNTED(Iallreduce, STARTED_ONE,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, recvbuf, count, type, op, comm, request))

/* ---- completions: a noted request leaves the set ---------------------------
 * Nothing noted (the common case: a program without nonblocking calls, or
 * all completed): straight to the MPI, no copy. Else the handles are copied
 * before the call, which sets completed ones to MPI_REQUEST_NULL. */

/* requests[0..n) copied into small[] or the heap; NULL when out of memory
 * (then nothing is noted: the waits stay eager, never less) */
static MPI_Request *copy_requests(const MPI_Request *requests, int n, MPI_Request *small,
                                  int small_n)
{
    if (n <= 0)
        return NULL;
    MPI_Request *copy = n <= small_n ? small : malloc((size_t)n * sizeof *copy);
    if (copy)
        memcpy(copy, requests, (size_t)n * sizeof *copy);
    return copy;
}

static void release_copy(MPI_Request *copy, MPI_Request *small)
{
    if (copy != small)
        free(copy);
}

/*
 * COMPLETES(name, params, args, n, requests, noted, indices, count): PMPI_X
 * calls the MPI's own on requests[0..n); when `noted` holds after it (rc is
 * the MPI's return), the copies of requests[indices[0..count)] (NULL
 * indices: all n) leave the set. MPI_Wait and MPI_Waitall note theirs
 * whatever rc: an error leaves them to a later call, noted anyway.
 */
#define COMPLETES(name, params, args, n, requests, noted, indices, count)            \
    int PMPI_##name params                                                           \
    {                                                                                \
        ts_mpi_bind();                                                               \
        MPI_Request small[16], *old;                                                 \
        if (!ts_mpi_pending_any() || !(old = copy_requests(requests, n, small, 16))) \
            return TS_MPI_OWN(name) args;                                            \
        int rc = TS_MPI_OWN(name) args;                                              \
        if (noted)                                                                   \
            ts_mpi_pending_completed(old, n, indices, count);                        \
        release_copy(old, small);                                                    \
        return rc;                                                                   \
    }                                                                                \
    TS_MPI_PASS_THROUGH(name, params, args)

/* clang-format off */
COMPLETES(Wait, (MPI_Request * request, MPI_Status *status), (request, status),
          1, request, true, NULL, 0)
COMPLETES(Test, (MPI_Request * request, int *flag, MPI_Status *status), (request, flag, status),
          1, request, rc == MPI_SUCCESS && *flag, NULL, 0)
COMPLETES(Request_free, (MPI_Request * request), (request),
          1, request, rc == MPI_SUCCESS, NULL, 0)
COMPLETES(Waitall, (int n, MPI_Request requests[], MPI_Status statuses[]),
          (n, requests, statuses), n, requests, true, NULL, 0)
COMPLETES(Testall, (int n, MPI_Request requests[], int *flag, MPI_Status statuses[]),
          (n, requests, flag, statuses), n, requests, rc == MPI_SUCCESS && *flag, NULL, 0)
COMPLETES(Waitany, (int n, MPI_Request requests[], int *index, MPI_Status *status),
          (n, requests, index, status), n, requests,
          rc == MPI_SUCCESS && *index != MPI_UNDEFINED, index, 1)
COMPLETES(Testany, (int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status),
          (n, requests, index, flag, status), n, requests,
          rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED, index, 1)
COMPLETES(Waitsome,
          (int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]),
          (n, requests, outcount, indices, statuses), n, requests,
          rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0, indices, *outcount)
COMPLETES(Testsome,
          (int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]),
          (n, requests, outcount, indices, statuses), n, requests,
          rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0, indices, *outcount)
/* clang-format on */
