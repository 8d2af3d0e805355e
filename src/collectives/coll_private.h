/*
 * Private: the collectives object and what its files share.
 * The why: docs/design.md section 9.
 */
#ifndef TOPSYNC_SRC_COLLECTIVES_PRIVATE_H
#define TOPSYNC_SRC_COLLECTIVES_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <topsync/collectives.h>

/* One-way calls (one_way.c): slots per rank, so that a root may run this
 * many calls ahead of its slowest reader. tests/genmc/coll.c builds a
 * mutant with 1. */
#ifndef TS_COLL_RING
#define TS_COLL_RING 8u
#endif

#define TS_COLL_LIVE 0x54534f4cu /* "TSOL" */
#define TS_COLL_DEAD 0xdead0003u

struct topsync_coll {
    uint32_t magic;
    unsigned n;
    topsync_barrier_t *barrier; /* topo: carries the data (its gathered hook) */
    size_t max_bytes;           /* the limit of one call */
    size_t inline_bytes;        /* calls up to this size ride on the barrier's own lines */
    bool global_result;         /* the result is published on the global release line */
    bool deep;                  /* one-way calls: the ring even for small calls (one_way.c) */
    size_t line;                /* the barrier's line size */
    size_t slot_bytes;          /* max_bytes rounded up to a line */
    /* A rank's block in the data area: its one-way ready line (a word,
     * then inline data) and done line (one_way.c), then its two slots of
     * the barrier-carried calls (coll_ops.c), then its TS_COLL_RING
     * one-way slots; rounded up to the placement granule. */
    size_t rank_stride;
    unsigned char *data;    /* rank r's block at data + r * rank_stride */
    uint32_t *seq;          /* rank r's count of one-way calls at seq[r * line / 4] (private) */
    unsigned char *mapping; /* what create mapped (NULL when attached) */
    size_t mapping_size;
};

/* The checks every operation makes (coll_ops.c); *bytes the buffer's size. */
int ts_coll_check_call(const char *fn, const topsync_coll_t *c, unsigned rank, size_t count,
                       size_t elem, unsigned root, size_t *bytes);

static inline bool ts_coll_live(const topsync_coll_t *c)
{
    return c && c->magic == TS_COLL_LIVE;
}

/* The barrier's gathered hook (coll_ops.c): a leader combines its
 * members' slots of the call in progress on this thread. */
void ts_coll_gathered(const topsync_barrier_t *b, unsigned leader, const unsigned *members,
                      unsigned nmembers, bool last);

/* The robust configuration's last arriver (sense-reversing's completed
 * hook, coll_ops.c), when a reactive collectives' barrier runs the call in
 * progress on this thread there: every combination topo's leaders would
 * make, in topo's order (docs/design.md section 10.5). */
void ts_coll_completed(const topsync_barrier_t *b, unsigned rank);

/* acc[i] = acc[i] op in[i], i < count; type and op checked before
 * (topsync_op_check). */
void ts_reduce_apply(topsync_datatype_t type, topsync_op_t op, void *acc, const void *in,
                     size_t count);

/* topsync_op_check without the message: for a caller that tests many
 * calls (the MPI library decides per call whether it serves it). */
bool ts_coll_op_applies(topsync_op_t op, topsync_datatype_t type);

/* After a one-way call (bcast, reduce) of this thread timed out: the
 * participants it waited for, up to max of them in out; returns how many
 * there were. */
int ts_coll_missing(unsigned *out, unsigned max);

/* topsync_coll_attach without the check that the segment is mapped
 * read-write (the MPI library mapped it so itself). */
int ts_coll_attach_mapped(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *opts,
                          void *segment, size_t size, unsigned rank);

#endif
