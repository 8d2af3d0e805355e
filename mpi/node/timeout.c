/*
 * TOPSYNC_TIMEOUT's abort: a wait on the node that timed out names the
 * ranks of the communicator on this node that have not arrived, and where
 * their calls and this rank's diverged (node/call_log.c), then MPI_Abort
 * (a rank that died or hangs would otherwise hang the job).
 * Error paths only. The why: docs/design.md section 8.21.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>

#include <mpi.h>

#include <topsync.h>

#include "collectives/coll_private.h"
#include "node/node.h"

/* The abort: the ranks of comm missing[0..n) (node indexes, `shown` of
 * them known), where their calls diverged from this rank's, the cause. */
__attribute__((noreturn)) static void missing_abort(MPI_Comm comm, const struct comm_state *s,
                                                    const char *what, const unsigned *missing,
                                                    int n, int shown, const char *why)
{
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; i < shown && len < sizeof list - 16; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i ? ", " : "",
                                s->node_members[missing[i]]);
    if (n > shown)
        snprintf(list + len, sizeof list - len, ", ... (%d in all)", n);
    char diverged[1024];
    ts_mpi_call_divergence(s, missing, shown, diverged, sizeof diverged);
    ts_mpi_fatal(comm,
                 "%s timed out (TOPSYNC_TIMEOUT): rank(s) %s of the communicator, on "
                 "this node, have not arrived%s%s [%s]",
                 what, n > 0 ? list : "(none left: they arrived late)", diverged[0] ? ": " : "",
                 diverged, why);
}

/*
 * A wait with TOPSYNC_TIMEOUT that timed out: name the ranks of `comm` on
 * this node that have not arrived, and MPI_Abort (a rank that died or hangs
 * would otherwise hang the job). After the barrier between nodes
 * (after_leaders), a node leader that has not come back is waiting there
 * for a rank of another node: say so rather than blame the leader. Error
 * path only.
 */
void ts_mpi_timeout_abort(MPI_Comm comm, struct comm_state *s, topsync_barrier_t *b,
                          bool after_leaders, const char *what)
{
    char why[256];
    snprintf(why, sizeof why, "%s", topsync_error_message());
    unsigned missing[64];
    int n = topsync_barrier_missing(b, (unsigned)s->node_rank, missing, 64);
    if (after_leaders && n == 1 && missing[0] == 0)
        ts_mpi_fatal(comm,
                     "%s timed out (TOPSYNC_TIMEOUT): rank %d of the communicator, this "
                     "node's leader, has not come back from the barrier between nodes: a rank "
                     "on another node has not arrived (that node's ranks name it) [%s]",
                     what, s->node_members[0], why);
    missing_abort(comm, s, what, missing, n, n < 64 ? n : 64, why);
}

/* A one-way step names whom it waited for (ts_coll_missing), in ranks of
 * comm. */
void ts_mpi_one_way_abort(MPI_Comm comm, struct comm_state *s, const char *what)
{
    char why[256];
    snprintf(why, sizeof why, "%s", topsync_error_message());
    unsigned missing[16];
    int n = ts_coll_missing(missing, 16);
    missing_abort(comm, s, what, missing, n, n < 16 ? n : 16, why);
}
