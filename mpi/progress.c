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
 * `overflow` keeps every wait eager until all that were noted completed.
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
    int MPI_##name params                      \
    {                                          \
        int rc;                                \
        TS_MPI_CALL(rc, name, args);           \
        return rc;                             \
    }
/* A start that returned MPI_SUCCESS: its request noted; rc returned. */
static inline int started(int rc, const MPI_Request *request)
{
    if (rc == MPI_SUCCESS)
        note_started(request, 1);
    return rc;
}
#define COUNTED_START(name, params, args)               \
    int PMPI_##name params                              \
    {                                                   \
        ts_mpi_bind();                                  \
        return started(TS_MPI_OWN(name) args, request); \
    }                                                   \
    int MPI_##name params                               \
    {                                                   \
        int rc;                                         \
        TS_MPI_CALL(rc, name, args);                    \
        return rc;                                      \
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
#define COUNTED_SEND(name)                                                           \
    COUNTED_START(name,                                                              \
                  (const void *buf, int count, MPI_Datatype type, int dest, int tag, \
                   MPI_Comm comm, MPI_Request *request),                             \
                  (buf, count, type, dest, tag, comm, request))
COUNTED_SEND(Isend)
COUNTED_SEND(Issend)
COUNTED_SEND(Ibsend)
COUNTED_SEND(Irsend)
COUNTED_START(Irecv,
              (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *request),
              (buf, count, type, source, tag, comm, request))
COUNTED_START(Imrecv,
              (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request),
              (buf, count, type, message, request))
COUNTED_START(Start, (MPI_Request * request), (request))
int PMPI_Startall(int count, MPI_Request requests[])
{
    ts_mpi_bind();
    int rc = TS_MPI_OWN(Startall)(count, requests);
    if (rc == MPI_SUCCESS && count > 0)
        note_started(requests, count);
    return rc;
}
int MPI_Startall(int count, MPI_Request requests[])
{
    int rc;
    TS_MPI_CALL(rc, Startall, (count, requests));
    return rc;
}

/* ---- nonblocking collectives (the ones a barrier is likely to overlap) ------- */

COUNTED_START(Ibarrier, (MPI_Comm comm, MPI_Request *request), (comm, request))
COUNTED_START(Ibcast,
              (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *request),
              (buf, count, type, root, comm, request))
COUNTED_START(Ireduce,
              (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm, MPI_Request *request),
              (sendbuf, recvbuf, count, type, op, root, comm, request))
COUNTED_START(Iallreduce,
              (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, MPI_Request *request),
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

#define PASSED_ON(name, params, args) \
    int MPI_##name params             \
    {                                 \
        int rc;                       \
        TS_MPI_CALL(rc, name, args);  \
        return rc;                    \
    }

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    ts_mpi_bind();
    if (!any_pending())
        return TS_MPI_OWN(Wait)(request, status);
    MPI_Request old = *request;
    int rc = TS_MPI_OWN(Wait)(request, status);
    note_completed(&old, 1, NULL, 0);
    return rc;
}
PASSED_ON(Wait, (MPI_Request * request, MPI_Status *status), (request, status))

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    ts_mpi_bind();
    if (!any_pending())
        return TS_MPI_OWN(Test)(request, flag, status);
    MPI_Request old = *request;
    int rc = TS_MPI_OWN(Test)(request, flag, status);
    if (rc == MPI_SUCCESS && *flag)
        note_completed(&old, 1, NULL, 0);
    return rc;
}
PASSED_ON(Test, (MPI_Request * request, int *flag, MPI_Status *status), (request, flag, status))

int PMPI_Request_free(MPI_Request *request)
{
    ts_mpi_bind();
    if (!any_pending())
        return TS_MPI_OWN(Request_free)(request);
    MPI_Request old = *request;
    int rc = TS_MPI_OWN(Request_free)(request);
    if (rc == MPI_SUCCESS)
        note_completed(&old, 1, NULL, 0);
    return rc;
}
PASSED_ON(Request_free, (MPI_Request * request), (request))

int PMPI_Waitall(int n, MPI_Request requests[], MPI_Status statuses[])
{
    ts_mpi_bind();
    MPI_Request small[16], *old;
    if (!any_pending() || !(old = copy_requests(requests, n, small, 16)))
        return TS_MPI_OWN(Waitall)(n, requests, statuses);
    int rc = TS_MPI_OWN(Waitall)(n, requests, statuses);
    note_completed(old, n, NULL, 0); /* an error leaves them to a later call: noted anyway */
    release_copy(old, small);
    return rc;
}
PASSED_ON(Waitall, (int n, MPI_Request requests[], MPI_Status statuses[]), (n, requests, statuses))

int PMPI_Testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    ts_mpi_bind();
    MPI_Request small[16], *old;
    if (!any_pending() || !(old = copy_requests(requests, n, small, 16)))
        return TS_MPI_OWN(Testall)(n, requests, flag, statuses);
    int rc = TS_MPI_OWN(Testall)(n, requests, flag, statuses);
    if (rc == MPI_SUCCESS && *flag)
        note_completed(old, n, NULL, 0);
    release_copy(old, small);
    return rc;
}
PASSED_ON(Testall, (int n, MPI_Request requests[], int *flag, MPI_Status statuses[]),
          (n, requests, flag, statuses))

int PMPI_Waitany(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    ts_mpi_bind();
    MPI_Request small[16], *old;
    if (!any_pending() || !(old = copy_requests(requests, n, small, 16)))
        return TS_MPI_OWN(Waitany)(n, requests, index, status);
    int rc = TS_MPI_OWN(Waitany)(n, requests, index, status);
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        note_completed(old, n, index, 1);
    release_copy(old, small);
    return rc;
}
PASSED_ON(Waitany, (int n, MPI_Request requests[], int *index, MPI_Status *status),
          (n, requests, index, status))

int PMPI_Testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    ts_mpi_bind();
    MPI_Request small[16], *old;
    if (!any_pending() || !(old = copy_requests(requests, n, small, 16)))
        return TS_MPI_OWN(Testany)(n, requests, index, flag, status);
    int rc = TS_MPI_OWN(Testany)(n, requests, index, flag, status);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
        note_completed(old, n, index, 1);
    release_copy(old, small);
    return rc;
}
PASSED_ON(Testany, (int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status),
          (n, requests, index, flag, status))

/* Waitsome and Testsome: the completed ones are indices[0..*outcount) */
#define SOME(name)                                                                            \
    int PMPI_##name(int n, MPI_Request requests[], int *outcount, int indices[],              \
                    MPI_Status statuses[])                                                    \
    {                                                                                         \
        ts_mpi_bind();                                                                        \
        MPI_Request small[16], *old;                                                          \
        if (!any_pending() || !(old = copy_requests(requests, n, small, 16)))                 \
            return TS_MPI_OWN(name)(n, requests, outcount, indices, statuses);                \
        int rc = TS_MPI_OWN(name)(n, requests, outcount, indices, statuses);                  \
        if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0)                 \
            note_completed(old, n, indices, *outcount);                                       \
        release_copy(old, small);                                                             \
        return rc;                                                                            \
    }                                                                                         \
    PASSED_ON(                                                                                \
        name,                                                                                 \
        (int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]), \
        (n, requests, outcount, indices, statuses))
SOME(Waitsome)
SOME(Testsome)
