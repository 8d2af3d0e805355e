/*
 * The collectives' objects: create, attach and destroy, their options
 * and the layout of their slots (the operations: coll_ops.c).
 * The why: docs/design.md section 9.
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
    c->line = line;
    c->slot_bytes = (c->max_bytes + line - 1) / line * line;
    /* the one-way words' two lines, then the slots (coll_private.h) */
    c->rank_stride =
        (2 * line + (2 + TS_COLL_RING) * c->slot_bytes + granule - 1) / granule * granule;
    size_t bytes = page /* header: the recorded limit */ + (size_t)n * c->rank_stride;
    return (bytes + page - 1) / page * page;
}

/* Refuse, before anything is allocated, a data area larger than this
 * machine's memory: n is only bounded by unsigned, and the barrier under it
 * takes seconds and gigabytes to build for 2^24 participants before the
 * data area's mmap would fail (issue 56 item 5). The line is the one the
 * barrier will take (topsync_coll_segment_size computes it alike). */
static int check_size(topsync_coll_t *c, unsigned n, const topsync_barrier_options_t *bopts)
{
    if (!n)
        return 0; /* the barrier refuses it */
    size_t line = bopts->line_size ? bopts->line_size : ts_barrier_machine_line_size();
    size_t need = layout(c, n, line, true);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0; /* unknown: the mmap decides */
    size_t memory = (size_t)pages * (size_t)page;
    if (need / n < c->rank_stride || need > memory)
        return ts_fail(ENOMEM,
                       "collectives: %u participants with max_bytes %zu need %zu bytes "
                       "(%.1f GiB) of slots, more than this machine's memory (%.1f GiB)",
                       n, c->max_bytes, need, (double)need / (1u << 30),
                       (double)memory / (1u << 30));
    return 0;
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

static int attach_hook(topsync_coll_t *c)
{
    /* each rank's count of one-way calls, on a line of its own */
    c->seq = aligned_alloc(c->line, (size_t)c->n * c->line);
    if (!c->seq)
        return ts_fail(ENOMEM, "out of memory");
    memset(c->seq, 0, (size_t)c->n * c->line);
    /* two parities after the line's first word, whole 8-byte elements */
    c->inline_bytes = ((c->barrier->line - sizeof(ts_word)) / 2) & ~(size_t)7;
    c->global_result = !c->barrier->tree_release && c->n > 1;
    /* Participants that share CPUs (the barrier yields only then,
     * settings.c) gain more from a one-way root running ahead several
     * calls than from data on the polled line: see one_way.c. */
    c->deep = c->barrier->wait.yield_iterations > 0;
    /* topo's leaders combine; when the barrier reacts, the robust
     * configuration's last arriver makes the same combinations */
    ts_barrier_carry(c->barrier, ts_coll_gathered, ts_coll_completed, c);
    c->magic = TS_COLL_LIVE;
    return 0;
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
    if ((rc = check_size(c, n, &bopts)) < 0 ||
        (rc = ts_barrier_create_carrier(&c->barrier, n, &bopts)) < 0) {
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
    if ((rc = attach_hook(c)) < 0) {
        topsync_coll_destroy(c);
        return rc;
    }
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
    if ((rc = check_size(c, n, &bopts)) == 0)
        rc = ts_barrier_segment_size_carrier(n, &bopts, &barrier_bytes);
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
    if ((rc = ts_barrier_segment_size_carrier(n, &bopts, &barrier_bytes)) < 0) {
        free(c);
        return rc;
    }
    size_t line = bopts.line_size ? bopts.line_size : ts_barrier_machine_line_size();
    size_t need = barrier_bytes + layout(c, n, line, true);
    if (segment && size < need) {
        free(c);
        return ts_fail(EINVAL, "collectives: segment of %zu bytes, %zu needed", size, need);
    }
    rc = ts_barrier_attach_carrier(&c->barrier, n, &bopts, segment, size, rank, check_mapping);
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
    /* First touch of my one-way lines, which the others poll before I
     * write them: on my NUMA node. My slots (the rest of my block, 10 pages
     * at the default 4 KiB limit) are written by me before anyone reads
     * them (coll_ops.c, one_way.c), so they land on my node at their first
     * use, and a communicator that never runs a collective never pays for
     * them (touching them here was a third of an MPI communicator's
     * set-up: 94 us against 63 us at np 2, docs/results.md). */
    memset(c->data + (size_t)rank * c->rank_stride, 0, 2 * c->line);
    if ((rc = attach_hook(c)) < 0) {
        topsync_coll_destroy(c);
        return rc;
    }
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

int topsync_coll_destroy(topsync_coll_t *c)
{
    if (!c)
        return 0;
    if (!ts_coll_live(c) && !(c->magic == 0 && c->barrier)) /* 0: attach_hook failed */
        return ts_fail(EINVAL, "topsync_coll_destroy: %p is not a live collectives object",
                       (void *)c);
    c->magic = TS_COLL_DEAD;
    free(c->seq);
    topsync_barrier_destroy(c->barrier);
    if (c->mapping)
        munmap(c->mapping, c->mapping_size);
    free(c);
    return 0;
}

size_t topsync_coll_max_bytes(const topsync_coll_t *c)
{
    return ts_coll_live(c) ? c->max_bytes : 0;
}

topsync_barrier_t *topsync_coll_barrier(const topsync_coll_t *c)
{
    return ts_coll_live(c) ? c->barrier : NULL;
}
