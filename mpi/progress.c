/*
 * When a rank waiting in the node barrier must keep the MPI progressing
 * eagerly: the program has an RMA window (passive-target one-sided
 * operations of other ranks complete only while this rank's MPI runs), or
 * a nonblocking operation it started is still pending (a rendezvous Irecv
 * whose sender waits for it), whatever collectives come between the start
 * and the completion (issue 56 item 2: counting starts since the thread's
 * previous barrier lost the Irecv at the second collective after it). The
 * entry points here note those requests and their completions and pass the
 * calls on to the MPI (PMPI); the node barrier's idle hook (comm_setup.c)
 * then asks to be called again at once instead of backing off.
 * docs/design.md section 8.27.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi_private.h"

/* relaxed everywhere: hints that only choose how often the hook polls; a
 * stale value costs one barrier's polling rate, never correctness */
static _Atomic long windows;
/* initial-exec, as topsync_mpi.c's cache: read on every MPI_Barrier, which
 * must not pay a __tls_get_addr call for it */
static _Thread_local __attribute__((tls_model("initial-exec"))) bool eager;

/*
 * The requests started through the calls below and not yet seen complete,
 * by handle (an int in MPICH, a pointer in Open MPI and the standard ABI:
 * kept as its bytes). `pending` mirrors their number for the barrier's
 * entry, which reads only it. A request completed where topsync does not
 * see it (an MPI's internal Fortran 2008 path) stays: the waits then poll
 * eagerly more often than needed, never less. Past PENDING_MOST requests,
 * `overflow` counts those not kept and keeps every wait eager until as many
 * completions of requests outside the set were seen (any such completion
 * counts, a request never noted among them: there a wait may stop polling
 * eagerly before the last of those not kept completed).
 */
enum { PENDING_MOST = 256 };
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Request pending_requests[PENDING_MOST]; /* under pending_lock */
static int pending_count, overflow;                /* under pending_lock */
static _Atomic int pending;                        /* pending_count + overflow */

void ts_mpi_progress_enter(void)
{
    eager = atomic_load_explicit(&pending, memory_order_relaxed) > 0 ||
            atomic_load_explicit(&windows, memory_order_relaxed) > 0;
}

bool ts_mpi_progress_eager(void)
{
    return eager;
}

static bool same_request(MPI_Request a, MPI_Request b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void note_started(const MPI_Request *requests, int n)
{
    pthread_mutex_lock(&pending_lock);
    for (int i = 0; i < n; i++) {
        if (same_request(requests[i], MPI_REQUEST_NULL))
            continue;
        bool known = false; /* a persistent request started again */
        for (int k = 0; k < pending_count && !known; k++)
            known = same_request(pending_requests[k], requests[i]);
        if (known)
            continue;
        if (pending_count < PENDING_MOST)
            pending_requests[pending_count++] = requests[i];
        else
            overflow++;
    }
    atomic_store_explicit(&pending, pending_count + overflow, memory_order_relaxed);
    pthread_mutex_unlock(&pending_lock);
}

/* requests[i] completed (or freed) for each i with done(i) */
static void note_completed(const MPI_Request *requests, int n, const int *indices, int count)
{
    pthread_mutex_lock(&pending_lock);
    for (int j = 0; j < (indices ? count : n); j++) {
        MPI_Request r = requests[indices ? indices[j] : j];
        bool found = false;
        for (int k = 0; k < pending_count && !found; k++) {
            if (same_request(pending_requests[k], r)) {
                pending_requests[k] = pending_requests[--pending_count];
                found = true;
            }
        }
        if (!found && overflow > 0 && !same_request(r, MPI_REQUEST_NULL))
            overflow--; /* perhaps one of those not kept */
    }
    atomic_store_explicit(&pending, pending_count + overflow, memory_order_relaxed);
    pthread_mutex_unlock(&pending_lock);
}

static inline bool any_pending(void)
{
    return atomic_load_explicit(&pending, memory_order_relaxed) > 0;
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
    TS_MPI_PASS_THROUGH(name, params, args)
/* Starts that returned MPI_SUCCESS: their requests noted; rc returned. */
static inline int started(int rc, const MPI_Request *requests, int n)
{
    if (rc == MPI_SUCCESS && n > 0)
        note_started(requests, n);
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
#define COMPLETES(name, params, args, n, requests, noted, indices, count)     \
    int PMPI_##name params                                                    \
    {                                                                         \
        ts_mpi_bind();                                                        \
        MPI_Request small[16], *old;                                          \
        if (!any_pending() || !(old = copy_requests(requests, n, small, 16))) \
            return TS_MPI_OWN(name) args;                                     \
        int rc = TS_MPI_OWN(name) args;                                       \
        if (noted)                                                            \
            note_completed(old, n, indices, count);                           \
        release_copy(old, small);                                             \
        return rc;                                                            \
    }                                                                         \
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
