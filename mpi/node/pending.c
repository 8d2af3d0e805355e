/*
 * What makes a rank waiting in the node barrier keep the MPI progressing
 * eagerly: the program has an RMA window (passive-target one-sided
 * operations of other ranks complete only while this rank's MPI runs), or
 * a nonblocking operation it started is still pending (a rendezvous Irecv
 * whose sender waits for it), whatever collectives come between the start
 * and the completion (issue 56 item 2: counting starts since the thread's
 * previous barrier lost the Irecv at the second collective after it).
 * calls/progress.c notes the starts and completions; the node barrier's
 * idle hook (node/setup.c) asks to be called again at once instead of
 * backing off. docs/design.md section 8.27.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include <mpi.h>

#include "node/node.h"

/* relaxed everywhere: hints that only choose how often the hook polls; a
 * stale value costs one barrier's polling rate, never correctness */
static _Atomic long windows;
/* initial-exec, as the states' cache (node.h): read on every MPI_Barrier, which
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

void ts_mpi_pending_started(const MPI_Request *requests, int n)
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

/* requests[indices[j]] (NULL indices: requests[j]) completed or freed */
void ts_mpi_pending_completed(const MPI_Request *requests, int n, const int *indices, int count)
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

bool ts_mpi_pending_any(void)
{
    return atomic_load_explicit(&pending, memory_order_relaxed) > 0;
}

void ts_mpi_windows_add(long delta)
{
    atomic_fetch_add_explicit(&windows, delta, memory_order_relaxed);
}
