/*
 * The collectives: allreduce, reduce and broadcast on the hierarchical
 * barrier's groups. Each call is one episode of a topo barrier whose
 * leaders combine their members' slots (the barrier's gathered hook) on
 * the way up; participant 0's slot then holds the result, and the
 * release hands it to everybody. The why: docs/design.md section 9.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <topsync/collectives.h>

#include "barrier/barrier_private.h"
#include "barrier/setup.h"
#include "base/env.h"
#include "base/error.h"
#include "collectives/coll_private.h"

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
    return c->data + (size_t)rank * c->rank_stride + (size_t)parity * c->slot_bytes;
}

/* Where every participant reads an allreduce's or a reduce's result. */
static inline unsigned char *result(const topsync_coll_t *c, unsigned parity, size_t bytes)
{
    if (bytes <= c->inline_bytes && c->global_result)
        return (unsigned char *)ts_global_line(c->barrier, TS_TOPO_GLOBAL_LINE_RELEASE) +
               sizeof(ts_word) + (size_t)parity * c->inline_bytes;
    return slot(c, 0, parity, bytes);
}

/* The call in progress on this thread, for the gathered hook (which runs
 * on the same thread, inside the barrier's wait). count 0: a broadcast,
 * nothing to combine. */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    topsync_datatype_t type;
    topsync_op_t op;
    size_t count, bytes;
    unsigned parity;
} current;

/* Runs in a leader after the acquire of its group's arrivals (topo.c):
 * every member's slot of this episode is complete and visible. Ascending
 * member order: the same combination on every run. */
static void gathered(const topsync_barrier_t *b, unsigned leader, const unsigned *members,
                     unsigned nmembers, bool last)
{
    const topsync_coll_t *c = b->gathered_arg;
    if (!current.count)
        return;
    unsigned char *acc = slot(c, leader, current.parity, current.bytes);
    for (unsigned i = 0; i < nmembers; i++)
        ts_reduce_apply(current.type, current.op, acc,
                        slot(c, members[i], current.parity, current.bytes), current.count);
    unsigned char *to = result(c, current.parity, current.bytes);
    if (last && to != acc) /* published by the release that follows */
        memcpy(to, acc, current.bytes);
}

void topsync_coll_options_init(topsync_coll_options_t *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    topsync_barrier_options_init(&o->barrier);
}

/* The barrier's options: topo unless a topo variant was given. */
static int barrier_options(const topsync_coll_options_t *o, topsync_barrier_options_t *out)
{
    *out = o->barrier;
    const char *a = out->algorithm;
    if (!a) {
        out->algorithm = "topo";
        return 0;
    }
    if (strncmp(a, "topo", 4) != 0 || (a[4] && a[4] != ':' && a[4] != '/'))
        return ts_fail(EINVAL,
                       "collectives: algorithm '%s' cannot carry data; valid: NULL or a "
                       "topo variant (topo, topo:LEVELS, topo/tree, ...)",
                       a);
    return 0;
}

static int max_bytes_of(const topsync_coll_options_t *o, size_t *out)
{
    if (o->max_bytes) {
        if (o->max_bytes > TOPSYNC_COLL_MAX_BYTES_LIMIT)
            return ts_fail(EINVAL, "collectives: max_bytes %zu is not valid; valid: 1 to %u",
                           o->max_bytes, TOPSYNC_COLL_MAX_BYTES_LIMIT);
        *out = o->max_bytes;
        return 0;
    }
    long v = TOPSYNC_COLL_MAX_BYTES_DEFAULT;
    int rc = ts_env_whole("TOPSYNC_COLL_MAX_BYTES", 1, TOPSYNC_COLL_MAX_BYTES_LIMIT, "bytes", &v);
    if (rc < 0)
        return rc;
    *out = (size_t)v;
    return 0;
}

/* The data area's layout for n participants on lines of `line` bytes;
 * `paged`: every rank's slots on pages of their own (placed by first
 * touch). Its size is a multiple of the page size. */
static size_t layout(topsync_coll_t *c, unsigned n, size_t line, bool paged)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t granule = paged ? page : line;
    c->slot_bytes = (c->max_bytes + line - 1) / line * line;
    c->rank_stride = (2 * c->slot_bytes + granule - 1) / granule * granule;
    size_t bytes = page /* header: the recorded limit */ + (size_t)n * c->rank_stride;
    return (bytes + page - 1) / page * page;
}

/* The object with its limit (c->barrier not yet made); *out set only on success. */
static int prepare(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *o,
                   topsync_coll_options_t *defaults, topsync_barrier_options_t *bopts)
{
    if (!o) {
        topsync_coll_options_init(defaults);
        o = defaults;
    }
    int rc = barrier_options(o, bopts);
    if (rc < 0)
        return rc;
    topsync_coll_t *c = calloc(1, sizeof *c);
    if (!c)
        return ts_fail(ENOMEM, "out of memory");
    c->n = n;
    if ((rc = max_bytes_of(o, &c->max_bytes)) < 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void attach_hook(topsync_coll_t *c)
{
    /* two parities after the line's first word, whole 8-byte elements */
    c->inline_bytes = ((c->barrier->line - sizeof(ts_word)) / 2) & ~(size_t)7;
    c->global_result = !c->barrier->tree_release && c->n > 1;
    c->barrier->gathered = gathered;
    c->barrier->gathered_arg = c;
    c->magic = TS_COLL_LIVE;
}

int topsync_coll_create(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *o)
{
    if (!out)
        return ts_fail(EINVAL, "collectives: out is NULL");
    *out = NULL;
    topsync_coll_options_t defaults;
    topsync_barrier_options_t bopts;
    topsync_coll_t *c;
    int rc = prepare(&c, n, o, &defaults, &bopts);
    if (rc < 0)
        return rc;
    if ((rc = topsync_barrier_create(&c->barrier, n, &bopts)) < 0) {
        free(c);
        return rc;
    }
    bool paged = bopts.process_shared || (bopts.topology && bopts.cpusets);
    c->mapping_size = layout(c, n, c->barrier->line, paged);
    void *p = mmap(NULL, c->mapping_size, PROT_READ | PROT_WRITE,
                   MAP_ANONYMOUS | (bopts.process_shared ? MAP_SHARED : MAP_PRIVATE), -1, 0);
    if (p == MAP_FAILED) {
        size_t want = c->mapping_size;
        topsync_barrier_destroy(c->barrier);
        free(c);
        return ts_fail(ENOMEM, "collectives: mmap of %zu bytes failed", want);
    }
    c->mapping = p;
    c->data = c->mapping + (size_t)sysconf(_SC_PAGESIZE);
    attach_hook(c);
    *out = c;
    return 0;
}

int topsync_coll_segment_size(unsigned n, const topsync_coll_options_t *o, size_t *size)
{
    topsync_coll_options_t defaults;
    topsync_barrier_options_t bopts;
    topsync_coll_t *c;
    if (!size)
        return ts_fail(EINVAL, "topsync_coll_segment_size: size is NULL");
    int rc = prepare(&c, n, o, &defaults, &bopts);
    if (rc < 0)
        return rc;
    size_t barrier_bytes = 0;
    rc = topsync_barrier_segment_size(n, &bopts, &barrier_bytes);
    if (rc == 0) {
        size_t line = bopts.line_size ? bopts.line_size : ts_barrier_machine_line_size();
        *size = barrier_bytes + layout(c, n, line, true);
    }
    free(c);
    return rc;
}

static int attach(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *o, void *segment,
                  size_t size, unsigned rank, bool check_mapping)
{
    if (!out)
        return ts_fail(EINVAL, "collectives: out is NULL");
    *out = NULL;
    topsync_coll_options_t defaults;
    topsync_barrier_options_t bopts;
    topsync_coll_t *c;
    int rc = prepare(&c, n, o, &defaults, &bopts);
    if (rc < 0)
        return rc;
    size_t barrier_bytes = 0;
    if ((rc = topsync_barrier_segment_size(n, &bopts, &barrier_bytes)) < 0) {
        free(c);
        return rc;
    }
    size_t line = bopts.line_size ? bopts.line_size : ts_barrier_machine_line_size();
    size_t need = barrier_bytes + layout(c, n, line, true);
    if (segment && size < need) {
        free(c);
        return ts_fail(EINVAL, "collectives: segment of %zu bytes, %zu needed", size, need);
    }
    rc = check_mapping ? topsync_barrier_attach(&c->barrier, n, &bopts, segment, size, rank)
                       : ts_barrier_attach_mapped(&c->barrier, n, &bopts, segment, size, rank);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->data = (unsigned char *)segment + barrier_bytes + (size_t)sysconf(_SC_PAGESIZE);
    /* Every process must run with the same limit: the first to attach
     * records it, the others compare. relaxed: the word orders nothing, it
     * takes one value once (a single CAS from 0). */
    _Atomic uint64_t *recorded = (_Atomic uint64_t *)((unsigned char *)segment + barrier_bytes);
    uint64_t seen = 0;
    if (!atomic_compare_exchange_strong_explicit(recorded, &seen, c->max_bytes,
                                                 memory_order_relaxed, memory_order_relaxed) &&
        seen != c->max_bytes) {
        size_t mine = c->max_bytes;
        topsync_barrier_destroy(c->barrier);
        free(c);
        return ts_fail(EINVAL,
                       "collectives: participant %u attaches with max_bytes %zu, but the "
                       "segment was set up with %llu (every process must pass the same)",
                       rank, mine, (unsigned long long)seen);
    }
    /* first touch: my slots on my NUMA node */
    memset(c->data + (size_t)rank * c->rank_stride, 0, c->rank_stride);
    attach_hook(c);
    *out = c;
    return 0;
}

int topsync_coll_attach(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *o,
                        void *segment, size_t size, unsigned rank)
{
    return attach(out, n, o, segment, size, rank, true);
}

int ts_coll_attach_mapped(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *o,
                          void *segment, size_t size, unsigned rank)
{
    return attach(out, n, o, segment, size, rank, false);
}

static inline bool live(const topsync_coll_t *c)
{
    return c && c->magic == TS_COLL_LIVE;
}

int topsync_coll_destroy(topsync_coll_t *c)
{
    if (!c)
        return 0;
    if (!live(c))
        return ts_fail(EINVAL, "topsync_coll_destroy: %p is not a live collectives object",
                       (void *)c);
    c->magic = TS_COLL_DEAD;
    topsync_barrier_destroy(c->barrier);
    if (c->mapping)
        munmap(c->mapping, c->mapping_size);
    free(c);
    return 0;
}

size_t topsync_coll_max_bytes(const topsync_coll_t *c)
{
    return live(c) ? c->max_bytes : 0;
}

topsync_barrier_t *topsync_coll_barrier(const topsync_coll_t *c)
{
    return live(c) ? c->barrier : NULL;
}

/* The checks every operation makes; *bytes the buffer's size. */
static int check_call(const char *fn, const topsync_coll_t *c, unsigned rank, size_t count,
                      size_t elem, unsigned root, size_t *bytes)
{
    if (!live(c))
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
    return (done + 1) & 1u;
}

/* The episode: my slot written before (the arrival's release publishes
 * it), the leaders' combine inside, the result readable after (the
 * release's acquire). from: where the result is read (NULL: nowhere). */
static int run(const topsync_coll_t *c, unsigned rank, const void *send, void *recv,
               const unsigned char *from)
{
    size_t bytes = current.bytes;
    if (send)
        memcpy(slot(c, rank, current.parity, bytes), send, bytes);
    int rc = topsync_barrier_wait_checked(c->barrier, rank);
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
    if (rc < 0 || (rc = check_call("topsync_allreduce", c, rank, count, topsync_datatype_size(type),
                                   0, &bytes)) < 0)
        return rc;
    if (!count)
        return 0;
    if (!send || !recv)
        return ts_fail(EINVAL, "topsync_allreduce: NULL buffer");
    current.type = type;
    current.op = op;
    current.count = count;
    current.bytes = bytes;
    current.parity = next_parity(c, rank);
    return run(c, rank, send, recv, result(c, current.parity, bytes));
}

int topsync_reduce(topsync_coll_t *c, unsigned rank, const void *send, void *recv, size_t count,
                   topsync_datatype_t type, topsync_op_t op, unsigned root)
{
    size_t bytes;
    int rc = topsync_op_check(op, type);
    if (rc < 0 || (rc = check_call("topsync_reduce", c, rank, count, topsync_datatype_size(type),
                                   root, &bytes)) < 0)
        return rc;
    if (!count)
        return 0;
    if (!send || (rank == root && !recv))
        return ts_fail(EINVAL, "topsync_reduce: NULL buffer");
    current.type = type;
    current.op = op;
    current.count = count;
    current.bytes = bytes;
    current.parity = next_parity(c, rank);
    return run(c, rank, send, recv, rank == root ? result(c, current.parity, bytes) : NULL);
}

int topsync_bcast(topsync_coll_t *c, unsigned rank, void *buf, size_t bytes, unsigned root)
{
    size_t checked;
    int rc = check_call("topsync_bcast", c, rank, bytes, 1, root, &checked);
    if (rc < 0)
        return rc;
    if (!bytes)
        return 0;
    if (!buf)
        return ts_fail(EINVAL, "topsync_bcast: NULL buffer");
    current.count = 0; /* nothing to combine */
    current.bytes = bytes;
    current.parity = next_parity(c, rank);
    return run(c, rank, rank == root ? buf : NULL, buf,
               rank == root ? NULL : slot(c, root, current.parity, bytes));
}
