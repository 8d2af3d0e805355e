/*
 * The collectives' operations: allreduce, reduce and broadcast on the
 * hierarchical barrier's groups. Each call is one episode of a topo
 * barrier whose leaders combine their members' slots (the barrier's
 * gathered hook) on the way up; participant 0 then holds the result, and
 * the release hands it to everybody; when a reactive barrier runs a call
 * on its robust configuration, that barrier's last arriver makes the same
 * combinations. tests/genmc/coll.c runs this file as it is. The why: docs/design.md section 9.
 */
#include <errno.h>
#include <string.h>

#include <topsync/collectives.h>

#include "barrier/barrier_private.h"
#include "base/error.h"
#include "collectives/coll_private.h"

/* Slots per rank: 2, by episode parity (below). tests/genmc/coll.c builds
 * a mutant with 1, which it must catch. */
#ifndef TS_COLL_PARITIES
#define TS_COLL_PARITIES 2u
#endif

/*
 * Slots: rank r's contribution to an episode of parity p is at
 * slot(r, p, bytes). Two per rank, because participant 0's slot is read by
 * everybody after the release of episode k while participant 0 may
 * already be writing its slot for episode k + 1; it writes the same
 * parity again only in episode k + 2, after every participant arrived in
 * k + 1, i.e. after each finished reading episode k's result (each
 * arrival is a release that the leaders' acquires chain up to participant
 * 0). A member's own slot needs no second copy for its leader (read
 * before the leader arrives, so before the member is released), but one
 * layout keeps the arithmetic one.
 *
 * Small calls (up to inline_bytes) ride on the barrier's own lines: a
 * member's slot follows the word of its arrival line, and with the global
 * release participant 0 copies the result after the word of the release
 * line, so that the line a waiter polls brings the data with it (one
 * miss per direction, as the barrier's; issue 34: "the data rides on the
 * same cache lines").
 */
static inline unsigned char *slot(const topsync_coll_t *c, unsigned rank, unsigned parity,
                                  size_t bytes)
{
    if (bytes <= c->inline_bytes)
        return (unsigned char *)ts_rank_line(c->barrier, rank, TS_TOPO_LINE_ARRIVAL) +
               sizeof(ts_word) + (size_t)parity * c->inline_bytes;
    return c->data + (size_t)rank * c->rank_stride + 2 * c->line + (size_t)parity * c->slot_bytes;
}

/* Where every participant reads an allreduce's or a reduce's result. */
static inline unsigned char *result(const topsync_coll_t *c, unsigned parity, size_t bytes)
{
    if (bytes <= c->inline_bytes && c->global_result)
        return (unsigned char *)ts_global_line(c->barrier, TS_TOPO_GLOBAL_LINE_RELEASE) +
               sizeof(ts_word) + (size_t)parity * c->inline_bytes;
    return slot(c, 0, parity, bytes);
}

/* A call: what the leaders combine, and in which slots. count 0: a
 * broadcast, nothing to combine. */
struct coll_call {
    topsync_datatype_t type;
    topsync_op_t op;
    size_t count, bytes;
    unsigned parity;
};

/* The call in progress on this thread, for the gathered hook (which runs
 * on the same thread, inside the barrier's wait): it lives on the
 * caller's stack for the call's duration. */
static _Thread_local __attribute__((tls_model("initial-exec"))) const struct coll_call *current;

/* Runs in a leader after the acquire of its group's arrivals (topo.c):
 * every member's slot of this episode is complete and visible. Ascending
 * member order: the same combination on every run. */
void ts_coll_gathered(const topsync_barrier_t *b, unsigned leader, const unsigned *members,
                      unsigned nmembers, bool last)
{
    const topsync_coll_t *c = b->gathered_arg;
    const struct coll_call *call = current;
    if (!call || !call->count)
        return;
    unsigned char *acc = slot(c, leader, call->parity, call->bytes);
    for (unsigned i = 0; i < nmembers; i++)
        ts_reduce_apply(call->type, call->op, acc, slot(c, members[i], call->parity, call->bytes),
                        call->count);
    unsigned char *to = result(c, call->parity, call->bytes);
    if (last && to != acc) /* published by the release that follows */
        memcpy(to, acc, call->bytes);
}

/* After the acquire of every arrival (sense_reversing.c): every slot of
 * this episode is complete and visible, and the release that follows
 * publishes what this writes, as topo's release would. Topo's own order
 * and operands, so a switch between the two never changes a result's
 * bits. */
void ts_coll_completed(const topsync_barrier_t *b, unsigned rank)
{
    (void)rank;
    const topsync_coll_t *c = b->gathered_arg;
    if (current && current->count)
        ts_topo_combine_all(c->barrier);
}

int ts_coll_check_call(const char *fn, const topsync_coll_t *c, unsigned rank, size_t count,
                       size_t elem, unsigned root, size_t *bytes)
{
    if (!ts_coll_live(c))
        return ts_fail(EINVAL, "%s: %p is not a live collectives object", fn, (const void *)c);
    if (rank >= c->n)
        return ts_fail(EINVAL, "%s: rank %u out of range (%u participants)", fn, rank, c->n);
    if (root >= c->n)
        return ts_fail(EINVAL, "%s: root %u out of range (%u participants)", fn, root, c->n);
    if (count > c->max_bytes / elem)
        return ts_fail(EMSGSIZE, "%s: %zu elements of %zu bytes exceed the limit of %zu bytes", fn,
                       count, elem, c->max_bytes);
    *bytes = count * elem;
    return 0;
}

/* The episode the next wait of `rank` enters, as topsync_barrier_wait
 * will count it (barrier.c, enter_episode). relaxed: the word is the
 * rank's own, written by this thread only. */
static inline unsigned next_parity(const topsync_coll_t *c, unsigned rank)
{
    uint32_t done =
        atomic_load_explicit(&ts_rank_line(c->barrier, rank, 0)->value, memory_order_relaxed);
    return (done + 1) % TS_COLL_PARITIES;
}

/* The episode: my slot written before (the arrival's release publishes
 * it), the leaders' combine inside, the result readable after (the
 * release's acquire). from: where the result is read (NULL: nowhere). */
static int run(const topsync_coll_t *c, const struct coll_call *call, unsigned rank,
               const void *send, void *recv, const unsigned char *from)
{
    size_t bytes = call->bytes;
    if (send)
        memcpy(slot(c, rank, call->parity, bytes), send, bytes);
    current = call;
    int rc = topsync_barrier_wait_checked(c->barrier, rank);
    current = NULL;
    if (rc < 0)
        return rc;
    if (from && recv != from)
        memmove(recv, from, bytes);
    return 0;
}

int topsync_allreduce(topsync_coll_t *c, unsigned rank, const void *send, void *recv, size_t count,
                      topsync_datatype_t type, topsync_op_t op)
{
    size_t bytes;
    int rc = topsync_op_check(op, type);
    if (rc < 0 || (rc = ts_coll_check_call("topsync_allreduce", c, rank, count,
                                           topsync_datatype_size(type), 0, &bytes)) < 0)
        return rc;
    if (!count)
        return 0;
    if (!send || !recv)
        return ts_fail(EINVAL, "topsync_allreduce: NULL buffer");
    struct coll_call call = {type, op, count, bytes, next_parity(c, rank)};
    return run(c, &call, rank, send, recv, result(c, call.parity, bytes));
}
