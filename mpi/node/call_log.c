/*
 * Each rank's latest collective call on a communicator, where the other
 * ranks of its node can read it: one word per rank in the node's segment,
 * on its own cache line, written by that rank at each call's entry (its
 * number since the set-up, its kind, and whether topsync served it or the
 * MPI's own did, and why). TOPSYNC_TIMEOUT's abort (node/timeout.c) reads
 * the words of the ranks that have not arrived and compares them with this
 * rank's own recent calls, to name the call where the ranks diverged
 * rather than the one that timed out (issue 56 item 3: a broadcast whose
 * root returned at once, then a reduce that timed out). Error-path reads
 * only: the hot path pays one relaxed store to a line no other rank
 * writes. docs/design.md section 8.21.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "barrier/setup.h"
#include "node/node.h"

static const char *const own_why_words[] = {
    "an op that is not predefined (user-defined or MPI_REPLACE/MPI_NO_OP)",
    "a datatype topsync does not serve (derived, or predefined but not in its list)",
    "an op MPI does not define on this datatype (the MPI reports it)",
    "a size topsync does not serve (the set-up's TOPSYNC_VERBOSE lines say why)",
    "a negative count (the MPI reports it)",
    "a large count (MPI_X_c) beyond what an int holds",
    "a root outside the communicator (the MPI reports it)",
    "TOPSYNC_MPI_OPS, which leaves this call to the MPI",
};
_Static_assert(sizeof own_why_words / sizeof own_why_words[0] == TS_MPI_OWN_WHY_COUNT,
               "a sentence per reason");

const char *ts_mpi_own_why_words(enum ts_mpi_own_why why)
{
    return (unsigned)why < TS_MPI_OWN_WHY_COUNT ? own_why_words[why] : "";
}

const char *ts_mpi_call_name(enum ts_mpi_call kind)
{
    if (kind == TS_MPI_CALL_BARRIER)
        return "MPI_Barrier";
    /* the collectives: enum ts_mpi_call is topsync_coll_kind_t + 1 */
    const char *coll = ts_mpi_coll_name((topsync_coll_kind_t)(kind - 1));
    return *coll ? coll : "a collective";
}

size_t ts_mpi_call_log_bytes(int node_size)
{
    return node_size > 1 ? (size_t)node_size * ts_barrier_machine_line_size() : 0;
}

size_t ts_mpi_call_log_offset(size_t used)
{
    size_t line = ts_barrier_machine_line_size();
    return (used + line - 1) / line * line;
}

void ts_mpi_call_log_attach(struct ts_call_log *log, void *region, int node_rank)
{
    memset(log, 0, sizeof *log);
    if (!region)
        return;
    log->slots = region;
    log->stride = ts_barrier_machine_line_size() / sizeof *log->slots;
    /* relaxed: the set-up's last collective orders it before any reader */
    atomic_store_explicit(&log->slots[(size_t)node_rank * log->stride], 0, memory_order_relaxed);
}

void ts_mpi_call_log_restart(struct ts_call_log *log)
{
    log->base = log->calls;
}

/* "rank R ..." of one missing rank into out; false when its word says
 * nothing beyond "has not arrived" (it is in this very call). */
static bool describe_rank(const struct comm_state *s, unsigned index, char *out, size_t len)
{
    const struct ts_call_log *log = &s->node.call_log;
    /* relaxed: a diagnostic; a stale word names an earlier call */
    uint64_t word =
        atomic_load_explicit(&log->slots[(size_t)index * log->stride], memory_order_relaxed);
    uint64_t theirs = word >> 16, mine = log->calls - log->base;
    unsigned kind = (unsigned)(word >> 8) & 0xffu, how = (unsigned)word & 0xffu;
    int rank = s->node_members[index];
    if (theirs == 0) {
        snprintf(out, len,
                 "rank %d has made no collective call on this communicator since its "
                 "set-up (this rank is in its call %llu)",
                 rank, (unsigned long long)mine);
        return true;
    }
    if (theirs > mine) {
        snprintf(out, len, "rank %d is in a later call, its %llu (%s; this rank is in its %llu)",
                 rank, (unsigned long long)theirs, ts_mpi_call_name((enum ts_mpi_call)kind),
                 (unsigned long long)mine);
        return true;
    }
    if (mine - theirs >= TS_CALL_LOG_KEPT) {
        snprintf(out, len,
                 "rank %d's last call on this communicator is its %llu (%s), %llu "
                 "calls before this rank's",
                 rank, (unsigned long long)theirs, ts_mpi_call_name((enum ts_mpi_call)kind),
                 (unsigned long long)(mine - theirs));
        return true;
    }
    uint16_t at_mine = log->recent[(theirs + log->base) % TS_CALL_LOG_KEPT];
    unsigned my_kind = at_mine >> 8, my_how = at_mine & 0xffu;
    if (kind != my_kind) {
        snprintf(out, len,
                 "the ranks diverged at call %llu on this communicator since its "
                 "set-up: rank %d called %s there, this rank %s",
                 (unsigned long long)theirs, rank, ts_mpi_call_name((enum ts_mpi_call)kind),
                 ts_mpi_call_name((enum ts_mpi_call)my_kind));
        return true;
    }
    if ((how == TS_MPI_HOW_NODE) != (my_how == TS_MPI_HOW_NODE)) {
        char own_rank[32], node_rank[32];
        snprintf(own_rank, sizeof own_rank, how == TS_MPI_HOW_NODE ? "this rank" : "rank %d", rank);
        snprintf(node_rank, sizeof node_rank, how == TS_MPI_HOW_NODE ? "rank %d" : "this rank",
                 rank);
        unsigned own = how == TS_MPI_HOW_NODE ? my_how : how;
        snprintf(out, len,
                 "the ranks diverged at %s, call %llu on this communicator since its set-up: "
                 "%s gave it to the MPI's own (%s) where %s served it on the node (equal type "
                 "signatures spelled with different datatypes, which topsync does not support)",
                 ts_mpi_call_name((enum ts_mpi_call)kind), (unsigned long long)theirs, own_rank,
                 ts_mpi_own_why_words((enum ts_mpi_own_why)(own - 1)), node_rank);
        return true;
    }
    if (theirs == mine)
        return false;
    snprintf(out, len,
             "rank %d's last call on this communicator is its %llu (%s, as this "
             "rank's): it has not made call %llu yet",
             rank, (unsigned long long)theirs, ts_mpi_call_name((enum ts_mpi_call)kind),
             (unsigned long long)mine);
    return true;
}

void ts_mpi_call_divergence(const struct comm_state *s, const unsigned *missing, int n, char *out,
                            size_t len)
{
    out[0] = '\0';
    if (!s->node.call_log.slots || len == 0)
        return;
    size_t used = 0;
    for (int i = 0; i < n && i < 3 && used + 1 < len; i++) {
        char one[512];
        if (!describe_rank(s, missing[i], one, sizeof one))
            continue;
        used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "; " : "", one);
    }
}
