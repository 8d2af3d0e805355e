/*
 * The one-way collectives: broadcast and reduce, where only one
 * participant needs anything from the others, so nobody waits for
 * everybody (as the barrier-carried allreduce must). A broadcast's root
 * publishes its data and leaves; the others wait for it alone. A reduce's
 * non-roots publish their contributions and leave; the root waits for
 * them and combines them in ascending rank order. Flow control replaces
 * the barrier: each participant publishes the count of calls it has
 * finished (its done word), and before it overwrites a slot of parity p
 * it waits until everybody is done with the call that last used p, two
 * calls ago; in a steady stream of calls that wait is already over.
 * tests/genmc/coll.c runs this file as it is. The why: docs/design.md
 * section 9.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topsync/collectives.h>

#include "barrier/barrier_private.h"
#include "base/error.h"
#include "collectives/coll_private.h"

#ifndef TS_COLL_PARITIES /* tests/genmc/coll.c: its mutant has 1 */
#define TS_COLL_PARITIES 2u
#endif

/* A rank's ready word: the count of the last call it published data for
 * (a broadcast's root, a reduce's non-root), data after it when small. */
static inline ts_word *ready_word(const topsync_coll_t *c, unsigned rank)
{
    return (ts_word *)(c->data + (size_t)rank * c->rank_stride);
}

/* A rank's done word: the count of the last call it finished (what it
 * read of others' slots, it has read). */
static inline ts_word *done_word(const topsync_coll_t *c, unsigned rank)
{
    return (ts_word *)(c->data + (size_t)rank * c->rank_stride + c->line);
}

/* Small calls ride on the ready line, two of them by parity: the reader
 * polls that line, one miss brings the data. Others, and every call when
 * participants share CPUs (c->deep), take the ring of TS_COLL_RING slots:
 * a root may then run that many calls ahead of a reader that is not
 * running (8 B broadcasts at np 8 on 2 CPUs, Open MPI: 11 us a call with
 * two slots, as a root waited for every reader every other call). */
static inline bool on_the_line(const topsync_coll_t *c, size_t bytes)
{
    return bytes <= c->inline_bytes && !c->deep;
}

static inline unsigned char *one_way_slot(const topsync_coll_t *c, unsigned rank, uint32_t seq,
                                          size_t bytes)
{
    if (on_the_line(c, bytes))
        return (unsigned char *)ready_word(c, rank) + sizeof(ts_word) +
               (size_t)(seq % TS_COLL_PARITIES) * c->inline_bytes;
    return c->data + (size_t)rank * c->rank_stride + 2 * c->line +
           (size_t)(2 + seq % TS_COLL_RING) * c->slot_bytes;
}

/* How many calls back the slot this call writes was last used: its
 * readers must be done with that call first. */
static inline uint32_t reuse_distance(const topsync_coll_t *c, size_t bytes)
{
    /* the line's two parities, the ring's eight slots: literals, not
     * TS_COLL_PARITIES / TS_COLL_RING, so that GenMC's mutants (which
     * shrink those) keep the distance the real layout needs */
    return on_the_line(c, bytes) ? 2 : 8;
}

/* The participants among `who` (-1: all others; else one rank) whose
 * word (ready or done) has not reached seq: up to max of them into out,
 * listed in `list`; returns how many. relaxed: a report, racy by nature. */
static unsigned behind(const topsync_coll_t *c, unsigned rank, int who, bool done, uint32_t seq,
                       unsigned *out, unsigned max, char *list, size_t size)
{
    unsigned count = 0;
    size_t len = 0;
    for (unsigned q = 0; q < c->n; q++) {
        if (q == rank || (who >= 0 && q != (unsigned)who))
            continue;
        ts_word *w = done ? done_word(c, q) : ready_word(c, q);
        if (ts_reached(atomic_load_explicit(&w->value, memory_order_relaxed), seq))
            continue;
        if (count < max) {
            out[count] = q;
            len += (size_t)snprintf(list + len, size - len, "%s%u", count ? ", " : "", q);
        }
        count++;
    }
    return count;
}

/* Who had not arrived when a wait of this call unwound: first among those
 * whose data it waits for (ready_of: -1 all others, -2 none, else that
 * rank), else among those not done with the call two earlier, whose slots
 * this one reuses. */
static unsigned not_arrived(const topsync_coll_t *c, unsigned rank, uint32_t seq, uint32_t back,
                            int ready_of, unsigned *out, unsigned max, char *list, size_t size)
{
    unsigned count = 0;
    list[0] = '\0';
    if (ready_of != -2)
        count = behind(c, rank, ready_of, false, seq, out, max, list, size);
    if (!count && seq > back)
        count = behind(c, rank, -1, true, seq - back, out, max, list, size);
    return count;
}

/* The last one-way call of this thread that unwound, for ts_coll_missing
 * (scalars: GenMC's interpreter cannot start thread-local arrays). */
static _Thread_local const topsync_coll_t *failed_coll;
static _Thread_local unsigned failed_rank;
static _Thread_local uint32_t failed_seq, failed_back;
static _Thread_local int failed_ready_of;

int ts_coll_missing(unsigned *out, unsigned max)
{
    char list[160];
    if (!failed_coll)
        return 0;
    return (int)not_arrived(failed_coll, failed_rank, failed_seq, failed_back, failed_ready_of, out,
                            max, list, sizeof list);
}

/* After a wait unwound (timeout, idle hook): the message. */
static int report(const topsync_coll_t *c, const char *fn, unsigned rank, int why, uint32_t seq,
                  size_t bytes, int ready_of)
{
    char list[160];
    unsigned shown[16];
    failed_coll = c;
    failed_rank = rank;
    failed_seq = seq;
    failed_back = reuse_distance(c, bytes);
    failed_ready_of = ready_of;
    unsigned count = not_arrived(c, rank, seq, failed_back, ready_of, shown, 16, list, sizeof list);
    if (why == TS_UNWIND_IDLE)
        return ts_fail(ECANCELED, "%s: participant %u abandoned its wait (the idle hook asked to)",
                       fn, rank);
    return ts_fail(ETIMEDOUT,
                   "%s: participant %u waited more than %g s (TOPSYNC_TIMEOUT or "
                   "options.timeout_seconds) in call %u; participant(s) not arrived: %s%s",
                   fn, rank, c->barrier->timeout_seconds, seq, count ? list : "none",
                   count > 16 ? ", ..." : "");
}

/* Wait until every other participant is done with the last call that
 * used this call's slot (reuse_distance back). */
static void wait_slots_free(const topsync_coll_t *c, unsigned rank, uint32_t seq, size_t bytes,
                            ts_word **words)
{
    uint32_t back = reuse_distance(c, bytes);
    if (seq <= back)
        return;
    unsigned k = 0;
    for (unsigned q = 0; q < c->n; q++)
        if (q != rank)
            words[k++] = done_word(c, q);
    /* acquire: pairs with each one's done publish, after its reads */
    ts_wait_all(words, k, seq - back, &c->barrier->wait);
}

/* One call: who, which, what (bcast: recv is the buffer; reduce: send,
 * recv, count, type, op), and the words of its scans. */
struct one_way {
    const topsync_coll_t *c;
    unsigned rank, root;
    uint32_t seq;
    size_t bytes;
    ts_word **words; /* n - 1 of them, for the scans */
    const void *send;
    void *recv;
    size_t count;
    topsync_datatype_t type;
    topsync_op_t op;
};

static void bcast_body(const struct one_way *w)
{
    void *buf = w->recv;
    const topsync_coll_t *c = w->c;
    const ts_wait *policy = &c->barrier->wait;
    if (w->rank == w->root) {
        wait_slots_free(c, w->rank, w->seq, w->bytes, w->words);
        memcpy(one_way_slot(c, w->rank, w->seq, w->bytes), buf, w->bytes);
        ts_publish(ready_word(c, w->rank), w->seq, policy); /* pairs with the readers' wait */
    } else {
        /* acquire: pairs with the root's ready publish */
        ts_wait_reach(ready_word(c, w->root), w->seq, policy);
        memcpy(buf, one_way_slot(c, w->root, w->seq, w->bytes), w->bytes);
    }
    /* pairs with wait_slots_free of the call two later */
    ts_publish(done_word(c, w->rank), w->seq, policy);
}

static void reduce_body(const struct one_way *w)
{
    const void *send = w->send;
    void *recv = w->recv;
    size_t count = w->count;
    topsync_datatype_t type = w->type;
    topsync_op_t op = w->op;
    const topsync_coll_t *c = w->c;
    const ts_wait *policy = &c->barrier->wait;
    wait_slots_free(c, w->rank, w->seq, w->bytes, w->words);
    memcpy(one_way_slot(c, w->rank, w->seq, w->bytes), send, w->bytes);
    if (w->rank != w->root) {
        ts_publish(ready_word(c, w->rank), w->seq, policy); /* pairs with the root's scan */
    } else {
        unsigned k = 0;
        for (unsigned q = 0; q < c->n; q++)
            if (q != w->rank)
                w->words[k++] = ready_word(c, q);
        /* acquire: pairs with every contributor's ready publish */
        ts_wait_all(w->words, k, w->seq, policy);
        /* ascending ranks: the same combination on every run */
        memmove(recv, one_way_slot(c, 0, w->seq, w->bytes), w->bytes);
        for (unsigned q = 1; q < c->n; q++)
            ts_reduce_apply(type, op, recv, one_way_slot(c, q, w->seq, w->bytes), count);
    }
    /* pairs with wait_slots_free of the call two later */
    ts_publish(done_word(c, w->rank), w->seq, policy);
}

/* The call's count (the same on every participant: calls are collective),
 * and the words of its scans (on the stack for up to 64 participants). */
static inline uint32_t next_seq(const topsync_coll_t *c, unsigned rank)
{
    uint32_t *mine = &c->seq[(size_t)rank * (c->line / sizeof *c->seq)];
    *mine = (*mine + 1) & TS_EPISODE_MASK;
    return *mine ? *mine : (*mine = 1); /* 0 is every word's first value */
}

#define ONE_WAY_STACK_WORDS 64

/* Run one call's body as participant w->rank (its count and scan words
 * filled in here), unwinding to a -ETIMEDOUT / -ECANCELED report when a
 * timeout or an idle hook is armed (wait.c). ready_of: whose data the
 * call waits for, for the report (-1 all others, -2 none, else a rank). */
static int run_one_way(const char *fn, struct one_way *w, void (*body)(const struct one_way *),
                       int ready_of)
{
    const topsync_coll_t *c = w->c;
    ts_word *stack[ONE_WAY_STACK_WORDS];
    w->words = c->n <= ONE_WAY_STACK_WORDS ? stack : malloc(c->n * sizeof *w->words);
    if (!w->words)
        return ts_fail(ENOMEM, "out of memory");
    w->seq = next_seq(c, w->rank);
    ts_barrier_wait_as(c->barrier, w->rank);
    int rc = 0;
    if (!c->barrier->armed) {
        body(w);
    } else {
        jmp_buf env, *outer = ts_timeout_target;
        int why = setjmp(env);
        if (!why) {
            ts_timeout_target = &env;
            body(w);
        } else {
            rc = report(c, fn, w->rank, why, w->seq, w->bytes, ready_of);
        }
        ts_timeout_target = outer;
    }
    if (w->words != stack)
        free(w->words);
    return rc;
}

int topsync_bcast(topsync_coll_t *c, unsigned rank, void *buf, size_t bytes, unsigned root)
{
    size_t checked;
    int rc = ts_coll_check_call("topsync_bcast", c, rank, bytes, 1, root, &checked);
    if (rc < 0)
        return rc;
    if (!bytes)
        return 0;
    if (!buf)
        return ts_fail(EINVAL, "topsync_bcast: NULL buffer");
    struct one_way w = {.c = c, .rank = rank, .root = root, .bytes = bytes, .recv = buf};
    return run_one_way("topsync_bcast", &w, bcast_body, rank == root ? -2 : (int)root);
}

int topsync_reduce(topsync_coll_t *c, unsigned rank, const void *send, void *recv, size_t count,
                   topsync_datatype_t type, topsync_op_t op, unsigned root)
{
    size_t bytes;
    int rc = topsync_op_check(op, type);
    if (rc < 0 || (rc = ts_coll_check_call("topsync_reduce", c, rank, count,
                                           topsync_datatype_size(type), root, &bytes)) < 0)
        return rc;
    if (!count)
        return 0;
    if (!send || (rank == root && !recv))
        return ts_fail(EINVAL, "topsync_reduce: NULL buffer");
    struct one_way w = {.c = c,
                        .rank = rank,
                        .root = root,
                        .bytes = bytes,
                        .send = send,
                        .recv = recv,
                        .count = count,
                        .type = type,
                        .op = op};
    return run_one_way("topsync_reduce", &w, reduce_body, rank == root ? -1 : -2);
}
