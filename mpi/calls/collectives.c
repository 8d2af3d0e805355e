/*
 * libtopsync-mpi's MPI_Allreduce, MPI_Reduce and MPI_Bcast: small
 * contiguous buffers of predefined types and ops on a node's ranks go
 * through topsync's collectives (src/collectives/), on the node's segment
 * beside the barrier; across nodes, node-local reduce, the MPI's own
 * collective among node leaders, node-local broadcast, as MPI_Barrier
 * composes. Everything else goes to the MPI's own (PMPI), and
 * TOPSYNC_VERBOSE says which and why, once. The why: docs/design.md
 * section 9.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <topsync.h>

#include "collectives/coll_private.h"
#include "node/node.h"

/* the same order as topsync_coll_kind_t: s->coll_limit[fn] */
enum coll_fn {
    FN_ALLREDUCE = TOPSYNC_COLL_ALLREDUCE,
    FN_REDUCE = TOPSYNC_COLL_REDUCE,
    FN_BCAST = TOPSYNC_COLL_BCAST
};
static inline const char *fn_name(enum coll_fn fn)
{
    return ts_mpi_coll_name((topsync_coll_kind_t)fn);
}

_Static_assert(TOPSYNC_COLL_KINDS *TS_MPI_OWN_WHY_COUNT <= 32, "one bit of `said` per reason");
/* the call kinds of the job's summary and the call log, in this order */
_Static_assert(TS_MPI_CALL_ALLREDUCE == 1 + FN_ALLREDUCE && TS_MPI_CALL_REDUCE == 1 + FN_REDUCE &&
                   TS_MPI_CALL_BCAST == 1 + FN_BCAST,
               "enum ts_mpi_call is enum coll_fn + 1");

/* TOPSYNC_VERBOSE: each (function, reason) said once per process. */
static _Atomic unsigned said;

/* The MPI's own serves this call on a served communicator, for `why`:
 * noted in the call log and, with TOPSYNC_VERBOSE, said once. */
static bool own_because(struct comm_state *s, enum coll_fn fn, enum ts_mpi_own_why why,
                        MPI_Count count, MPI_Datatype dt)
{
    ts_mpi_call_note(s, (enum ts_mpi_call)(1 + fn), 1 + (unsigned)why);
    unsigned bit = 1u << (fn * TS_MPI_OWN_WHY_COUNT + why);
    /* relaxed: a once-only report, nothing depends on it */
    if (ts_mpi_verbose() < 2 || (atomic_fetch_or_explicit(&said, bit, memory_order_relaxed) & bit))
        return false;
    /* the size as the MPI knows it: derived and Fortran types too */
    int size = 0;
    char bytes[64] = "";
    if (count >= 0 && PMPI_Type_size(dt, &size) == MPI_SUCCESS && size != MPI_UNDEFINED)
        snprintf(bytes, sizeof bytes, " (%lld bytes)", (long long)count * size);
    fprintf(stderr, "topsync-mpi: %s of %lld elements%s: the MPI's own, for %s\n", fn_name(fn),
            (long long)count, bytes, ts_mpi_own_why_words(why));
    return false;
}

/*
 * Whether topsync serves this call on comm, served (s); every rank decides
 * alike, from what MPI requires to be the same on every rank (count,
 * datatype, op, root), though a type signature spelled with other
 * datatypes on another rank may decide otherwise there (not supported:
 * the call log lets a timeout name it). *type and *bytes describe the
 * buffer. The call is noted either way.
 */
static bool served(enum coll_fn fn, struct comm_state *s, bool root_ok, MPI_Count count,
                   MPI_Datatype dt, const MPI_Op *op, topsync_datatype_t *type, topsync_op_t *top,
                   size_t *bytes)
{
    int t = 0;
    size_t size = 0;
    *bytes = 0;
    if (!(s->ops & 1u << (1 + fn)))
        return own_because(s, fn, TS_MPI_OWN_OFF, count, dt);
    if (!root_ok)
        return own_because(s, fn, TS_MPI_OWN_ROOT, count, dt);
    if (count < 0)
        return own_because(s, fn, TS_MPI_OWN_COUNT, count, dt);
    if (count > INT_MAX)
        return own_because(s, fn, TS_MPI_OWN_BIG, count, dt);
    if (!ts_mpi_coll_type(dt, &t, &size))
        return own_because(s, fn, TS_MPI_OWN_TYPE, count, dt);
    *bytes = (size_t)count * size;
    if (op) {
        if (!ts_mpi_coll_op(*op, top))
            return own_because(s, fn, TS_MPI_OWN_OP, count, dt);
        /* MPI defines the bitwise ops on MPI_BYTE: its bytes as uint8 */
        if (t < 0 && size == 1 && dt == MPI_BYTE &&
            (*top == TOPSYNC_OP_BAND || *top == TOPSYNC_OP_BOR || *top == TOPSYNC_OP_BXOR))
            t = TOPSYNC_TYPE_UINT8;
        if (t < 0 || !ts_coll_op_applies(*top, (topsync_datatype_t)t))
            return own_because(s, fn, TS_MPI_OWN_OP_TYPE, count, dt);
    }
    if (!topsync_coll_choice_serves(&s->coll_choice, (topsync_coll_kind_t)fn, *bytes))
        return own_because(s, fn, TS_MPI_OWN_SIZE, count, dt);
    *type = (topsync_datatype_t)t;
    ts_mpi_call_note(s, (enum ts_mpi_call)(1 + fn), TS_MPI_HOW_NODE);
    return true;
}

/* A node step failed: the timeout (or an MPI_Abort seen by the idle
 * hook). The barrier-carried allreduce names who is missing as
 * MPI_Barrier does; a one-way step (bcast, reduce) names whom it waited
 * for (node/timeout.c). */
static void node_failed(MPI_Comm comm, struct comm_state *s, bool after_leaders, enum coll_fn fn,
                        bool one_way)
{
    if (!one_way)
        ts_mpi_timeout_abort(comm, s, topsync_coll_barrier(s->node.coll), after_leaders,
                             fn_name(fn));
    ts_mpi_one_way_abort(comm, s, fn_name(fn));
}

/* comm rank -> index on my node, or -1 when it is on another node */
static int node_index(const struct comm_state *s, int rank)
{
    int lo = 0, hi = s->node_size - 1;
    while (lo <= hi) { /* node_members is ascending */
        int mid = (lo + hi) / 2;
        if (s->node_members[mid] == rank)
            return mid;
        if (s->node_members[mid] < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Two buffers of the limit's size for what this rank does not keep (MPI
 * forbids concurrent collectives on one communicator: one pair per
 * communicator suffices); which: 0 or 1. */
static void *scratch(struct comm_state *s, int which)
{
    size_t most = topsync_coll_max_bytes(s->node.coll);
    if (!s->scratch && !(s->scratch = malloc(2 * most)))
        ts_mpi_fatal(s->comm, "topsync-mpi: out of memory");
    return (char *)s->scratch + (size_t)which * most;
}

/*
 * Whether a large-count call may go to the MPI's own plain form: its count
 * fits an int, or the MPI has no X_c of its own (Open MPI 5: a program
 * built against its mpi.h cannot call ours, but mpi4py looks X_c up at run
 * time and finds topsync's). A count that fits nothing is the MPI's to
 * refuse: given to the plain form as an int it would be wrong, so such a
 * count without X_c aborts the job, as MPI_ERRORS_ARE_FATAL would.
 */
static bool small_enough(MPI_Count count, enum ts_mpi_fn big_fn)
{
    if (count <= INT_MAX) /* a negative one too: the MPI reports it */
        return true;
    if (ts_mpi_own_fn[big_fn])
        return false;
    ts_mpi_fatal(MPI_COMM_WORLD, "a count of %lld: this MPI has no large-count collectives",
                 (long long)count);
}

static int allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm, bool big)
{
    struct comm_state *s = ts_mpi_state_for(comm, big ? "MPI_Allreduce_c" : "MPI_Allreduce", NULL);
    topsync_datatype_t type;
    topsync_op_t top;
    size_t bytes;
    if (!s || !served(FN_ALLREDUCE, s, true, count, dt, &op, &type, &top, &bytes)) {
        ts_mpi_count(TS_MPI_CALL_OWN);
        if (big && !small_enough(count, TS_MPI_FN_Allreduce_c))
            return TS_MPI_OWN(Allreduce_c)(sendbuf, recvbuf, count, dt, op, comm);
        return TS_MPI_OWN(Allreduce)(sendbuf, recvbuf, (int)count, dt, op, comm);
    }
    ts_mpi_count(TS_MPI_CALL_ALLREDUCE);
    if (!count)
        return MPI_SUCCESS;
    const void *send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    unsigned me = (unsigned)s->node_rank;
    uint64_t start = ts_mpi_time_start();
    ts_mpi_progress_enter();
    int rc = MPI_SUCCESS;
    if (s->mode == MODE_NODE) {
        if (topsync_allreduce(s->node.coll, me, send, recvbuf, (size_t)count, type, top) < 0)
            node_failed(comm, s, false, FN_ALLREDUCE, false);
    } else {
        if (topsync_reduce(s->node.coll, me, send, recvbuf, (size_t)count, type, top, 0) < 0)
            node_failed(comm, s, false, FN_ALLREDUCE, true);
        if (me == 0)
            rc = TS_MPI_OWN(Allreduce)(MPI_IN_PLACE, recvbuf, (int)count, dt, op, s->leaders);
        if (topsync_bcast(s->node.coll, me, recvbuf, bytes, 0) < 0)
            node_failed(comm, s, true, FN_ALLREDUCE, true);
    }
    ts_mpi_time_add(TS_MPI_CALL_ALLREDUCE, start);
    return rc;
}

static int reduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                  int root, MPI_Comm comm, bool big)
{
    struct comm_state *s = ts_mpi_state_for(comm, big ? "MPI_Reduce_c" : "MPI_Reduce", NULL);
    topsync_datatype_t type;
    topsync_op_t top;
    size_t bytes;
    int size = 0;
    if (s)
        PMPI_Comm_size(comm, &size);
    if (!s ||
        !served(FN_REDUCE, s, root >= 0 && root < size, count, dt, &op, &type, &top, &bytes)) {
        ts_mpi_count(TS_MPI_CALL_OWN);
        if (big && !small_enough(count, TS_MPI_FN_Reduce_c))
            return TS_MPI_OWN(Reduce_c)(sendbuf, recvbuf, count, dt, op, root, comm);
        return TS_MPI_OWN(Reduce)(sendbuf, recvbuf, (int)count, dt, op, root, comm);
    }
    ts_mpi_count(TS_MPI_CALL_REDUCE);
    if (!count)
        return MPI_SUCCESS;
    int rank = s->node_members[s->node_rank];
    const void *send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    unsigned me = (unsigned)s->node_rank;
    int root_here = node_index(s, root);
    uint64_t start = ts_mpi_time_start();
    ts_mpi_progress_enter();
    int rc = MPI_SUCCESS;
    if (s->mode == MODE_NODE) {
        if (topsync_reduce(s->node.coll, me, send, recvbuf, (size_t)count, type, top,
                           (unsigned)root_here) < 0)
            node_failed(comm, s, false, FN_REDUCE, true);
    } else {
        /* my node's part to its leader; the leaders' reduce to the root's
         * node's leader; that leader's result to the root, if it is
         * another rank of that node */
        void *mine = rank == root ? recvbuf : scratch(s, 0);
        if (topsync_reduce(s->node.coll, me, send, mine, (size_t)count, type, top, 0) < 0)
            node_failed(comm, s, false, FN_REDUCE, true);
        if (me == 0) {
            /* not MPI_IN_PLACE at the target: MPICH 4.0.2's own MPI_Reduce
             * crashes in place with 1500 MPI_LONG (natively too, coll_check.c) */
            void *part = scratch(s, 1);
            memcpy(part, mine, bytes);
            rc = TS_MPI_OWN(Reduce)(part, mine, (int)count, dt, op, s->leader_rank_of[root],
                                    s->leaders);
        }
        if (root_here > 0 && topsync_bcast(s->node.coll, me, mine, bytes, 0) < 0)
            node_failed(comm, s, true, FN_REDUCE, true);
    }
    ts_mpi_time_add(TS_MPI_CALL_REDUCE, start);
    return rc;
}

static int bcast(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm, bool big)
{
    struct comm_state *s = ts_mpi_state_for(comm, big ? "MPI_Bcast_c" : "MPI_Bcast", NULL);
    topsync_datatype_t type;
    size_t bytes;
    int size = 0;
    if (s)
        PMPI_Comm_size(comm, &size);
    if (!s ||
        !served(FN_BCAST, s, root >= 0 && root < size, count, dt, NULL, &type, NULL, &bytes)) {
        ts_mpi_count(TS_MPI_CALL_OWN);
        if (big && !small_enough(count, TS_MPI_FN_Bcast_c))
            return TS_MPI_OWN(Bcast_c)(buf, count, dt, root, comm);
        return TS_MPI_OWN(Bcast)(buf, (int)count, dt, root, comm);
    }
    ts_mpi_count(TS_MPI_CALL_BCAST);
    if (!count)
        return MPI_SUCCESS;
    unsigned me = (unsigned)s->node_rank;
    int root_here = node_index(s, root);
    uint64_t start = ts_mpi_time_start();
    ts_mpi_progress_enter();
    int rc = MPI_SUCCESS;
    if (s->mode == MODE_NODE) {
        if (topsync_bcast(s->node.coll, me, buf, bytes, (unsigned)root_here) < 0)
            node_failed(comm, s, false, FN_BCAST, true);
    } else {
        /* the root's node first, then the leaders, then the other nodes:
         * one node step on every node */
        if (root_here >= 0 && topsync_bcast(s->node.coll, me, buf, bytes, (unsigned)root_here) < 0)
            node_failed(comm, s, false, FN_BCAST, true);
        if (me == 0)
            rc = TS_MPI_OWN(Bcast)(buf, (int)count, dt, s->leader_rank_of[root], s->leaders);
        if (root_here < 0 && topsync_bcast(s->node.coll, me, buf, bytes, 0) < 0)
            node_failed(comm, s, true, FN_BCAST, true);
    }
    ts_mpi_time_add(TS_MPI_CALL_BCAST, start);
    return rc;
}

/* ---- the entry points: PMPI_X serves, MPI_X passes through a tool loaded
 * after us (binding/tool_chain.c), as MPI_Barrier ---------------------------------- */

/* PMPI_X serves (`serve`: the call that does); MPI_X passes through a
 * tool. The large-count forms run the same code with big set. */
#define TS_MPI_COLL_ENTRY(name, serve, params, args) \
    int PMPI_##name params                           \
    {                                                \
        return serve;                                \
    }                                                \
    TS_MPI_PASS_THROUGH(name, params, args)
#define ALLREDUCE_PARAMS(count_type)                                                   \
    (const void *sendbuf, void *recvbuf, count_type count, MPI_Datatype dt, MPI_Op op, \
     MPI_Comm comm)
#define REDUCE_PARAMS(count_type)                                                                \
    (const void *sendbuf, void *recvbuf, count_type count, MPI_Datatype dt, MPI_Op op, int root, \
     MPI_Comm comm)
#define BCAST_PARAMS(count_type) \
    (void *buf, count_type count, MPI_Datatype dt, int root, MPI_Comm comm)

/* clang-format off */
TS_MPI_COLL_ENTRY(Allreduce, allreduce(sendbuf, recvbuf, count, dt, op, comm, false),
                  ALLREDUCE_PARAMS(int), (sendbuf, recvbuf, count, dt, op, comm))
TS_MPI_COLL_ENTRY(Allreduce_c, allreduce(sendbuf, recvbuf, count, dt, op, comm, true),
                  ALLREDUCE_PARAMS(MPI_Count), (sendbuf, recvbuf, count, dt, op, comm))
TS_MPI_COLL_ENTRY(Reduce, reduce(sendbuf, recvbuf, count, dt, op, root, comm, false),
                  REDUCE_PARAMS(int), (sendbuf, recvbuf, count, dt, op, root, comm))
TS_MPI_COLL_ENTRY(Reduce_c, reduce(sendbuf, recvbuf, count, dt, op, root, comm, true),
                  REDUCE_PARAMS(MPI_Count), (sendbuf, recvbuf, count, dt, op, root, comm))
TS_MPI_COLL_ENTRY(Bcast, bcast(buf, count, dt, root, comm, false), BCAST_PARAMS(int),
                  (buf, count, dt, root, comm))
TS_MPI_COLL_ENTRY(Bcast_c, bcast(buf, count, dt, root, comm, true), BCAST_PARAMS(MPI_Count),
                  (buf, count, dt, root, comm))
/* clang-format on */
