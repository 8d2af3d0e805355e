/*
 * topsync collectives: allreduce, reduce and broadcast of a small
 * contiguous buffer among n participants (threads or processes), on the
 * groups of the hierarchical barrier (groups.h, docs/design.md section 9).
 *
 * Each participant writes its contribution into a slot of its own; the
 * leader of each group, lowest level first, combines its members' slots
 * into its own in ascending rank order, leaders go up, and participant 0
 * ends with the result, which the barrier's release hands to everybody.
 * The order of combination depends only on the groups, so every
 * participant gets bit-identical results, and the same ones from run to
 * run for the same placement (floating point included). It is not the
 * order of a sequential loop over the ranks: with groups {0,1} {2,3} a sum
 * is (a0 + a1) + (a2 + a3).
 *
 * Every participant calls the same operation with the same count, type,
 * op and root, in the same order (as MPI requires); a call refused for its
 * arguments is refused on every participant that passed the same ones.
 *
 * Memory ordering (every operation): what a participant did before its
 * call happens before (C11 sense) everything any participant does after
 * its own call returns, as for topsync_barrier_wait: each call is a
 * barrier episode that also carries data.
 *
 * Errors: unlike topsync_barrier_wait, the operations return 0 or a
 * negative errno, since a call can be refused for its arguments
 * (-EINVAL, -EMSGSIZE above the size limit) and the caller must then take
 * another way; with a timeout or an idle hook, -ETIMEDOUT, -ECANCELED and
 * -EPIPE as topsync_barrier_wait_checked.
 */
#ifndef TOPSYNC_COLLECTIVES_H
#define TOPSYNC_COLLECTIVES_H

#include <stddef.h>
#include <topsync/barrier.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topsync_coll topsync_coll_t;

/* The element types (MPI's predefined C types that reductions take). */
typedef enum topsync_datatype {
    TOPSYNC_TYPE_INT8,
    TOPSYNC_TYPE_INT16,
    TOPSYNC_TYPE_INT32,
    TOPSYNC_TYPE_INT64,
    TOPSYNC_TYPE_UINT8,
    TOPSYNC_TYPE_UINT16,
    TOPSYNC_TYPE_UINT32,
    TOPSYNC_TYPE_UINT64,
    TOPSYNC_TYPE_FLOAT,
    TOPSYNC_TYPE_DOUBLE,
    TOPSYNC_TYPE_LONG_DOUBLE,
    TOPSYNC_TYPE_BOOL,           /* C _Bool */
    TOPSYNC_TYPE_FLOAT_COMPLEX,  /* float _Complex */
    TOPSYNC_TYPE_DOUBLE_COMPLEX, /* double _Complex */
    /* (value, int index) pairs of MINLOC and MAXLOC, laid out as the C
     * struct { T value; int index; } */
    TOPSYNC_TYPE_FLOAT_INT,
    TOPSYNC_TYPE_DOUBLE_INT,
    TOPSYNC_TYPE_LONG_INT,
    TOPSYNC_TYPE_2INT,
    TOPSYNC_TYPE_SHORT_INT,
    TOPSYNC_TYPE_LONG_DOUBLE_INT,
    TOPSYNC_TYPE_COUNT
} topsync_datatype_t;

/* The operations (MPI's predefined ones), with MPI's rules of which types
 * each takes: SUM and PROD integers, floating point and complex; MIN and
 * MAX integers and floating point; LAND, LOR and LXOR integers and BOOL;
 * BAND, BOR and BXOR integers; MINLOC and MAXLOC the pair types (on a tie
 * the lower index wins). */
typedef enum topsync_op {
    TOPSYNC_OP_SUM,
    TOPSYNC_OP_PROD,
    TOPSYNC_OP_MIN,
    TOPSYNC_OP_MAX,
    TOPSYNC_OP_LAND,
    TOPSYNC_OP_LOR,
    TOPSYNC_OP_LXOR,
    TOPSYNC_OP_BAND,
    TOPSYNC_OP_BOR,
    TOPSYNC_OP_BXOR,
    TOPSYNC_OP_MINLOC,
    TOPSYNC_OP_MAXLOC,
    TOPSYNC_OP_COUNT
} topsync_op_t;

/* The default size limit of one call in bytes (docs/results.md, "Small
 * collectives", says how it was chosen). */
#define TOPSYNC_COLL_MAX_BYTES_DEFAULT 4096u
/* The largest limit a collectives object accepts. */
#define TOPSYNC_COLL_MAX_BYTES_LIMIT (1u << 20)

typedef struct topsync_coll_options {
    /*
     * Everything of a barrier's options (barrier.h): topology and cpusets
     * (or groups) give the groups, wait, timeout, idle hook, cpu_sharers,
     * process_shared and line_size as there. algorithm: NULL for "topo"
     * over every level, or any "topo" variant ("topo:numa,socket/tree");
     * another algorithm is refused (the data rides on topo's groups).
     * TOPSYNC_BARRIER does not apply.
     */
    topsync_barrier_options_t barrier;
    /* The largest buffer of one call, in bytes; 0: $TOPSYNC_COLL_MAX_BYTES,
     * else TOPSYNC_COLL_MAX_BYTES_DEFAULT. Memory: two slots of it per
     * participant. */
    size_t max_bytes;
} topsync_coll_options_t;

/* Fill `options` with defaults. */
void topsync_coll_options_init(topsync_coll_options_t *options);

/* Create a collectives object for n participants (threads, or processes
 * after fork() with barrier.process_shared). options may be NULL. 0 or
 * -EINVAL (with a message), -ENOMEM. */
int topsync_coll_create(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *options);

/* Bytes of shared state for n participants, for a segment of your own. */
int topsync_coll_segment_size(unsigned n, const topsync_coll_options_t *options, size_t *size);

/* Attach participant `rank` of a process to a segment of at least
 * topsync_coll_segment_size() bytes, page aligned and zero-filled, under
 * the contract of topsync_barrier_attach (every process passes the same n
 * and options, all have attached before the first call). */
int topsync_coll_attach(topsync_coll_t **out, unsigned n, const topsync_coll_options_t *options,
                        void *segment, size_t size, unsigned rank);

/* Destroy (no participant inside a call). NULL is accepted; returns 0. */
int topsync_coll_destroy(topsync_coll_t *coll);

/* The size limit of one call, in bytes. */
size_t topsync_coll_max_bytes(const topsync_coll_t *coll);
/* The barrier that carries the data (its algorithm, groups, wait policy,
 * and topsync_barrier_missing after a timeout). Owned by coll. */
topsync_barrier_t *topsync_coll_barrier(const topsync_coll_t *coll);

/* Size of one element of `type` in bytes; 0 for an unknown type. */
size_t topsync_datatype_size(topsync_datatype_t type);
/* 0 when op applies to type (MPI's rules, above), else -EINVAL with a
 * message naming the types op takes. */
int topsync_op_check(topsync_op_t op, topsync_datatype_t type);
/* Names ("sum", "int32", ...), "" when unknown. */
const char *topsync_op_name(topsync_op_t op);
const char *topsync_datatype_name(topsync_datatype_t type);

/*
 * recv = send[0] op send[1] op ... op send[n-1], element-wise over count
 * elements, on every participant. send == recv: in place. count 0 returns
 * at once (no synchronization). -EMSGSIZE when count elements exceed
 * topsync_coll_max_bytes.
 */
int topsync_allreduce(topsync_coll_t *coll, unsigned rank, const void *send, void *recv,
                      size_t count, topsync_datatype_t type, topsync_op_t op);

/* The same, with the result in `root`'s recv only (recv is not touched on
 * the others and may be NULL there). */
int topsync_reduce(topsync_coll_t *coll, unsigned rank, const void *send, void *recv, size_t count,
                   topsync_datatype_t type, topsync_op_t op, unsigned root);

/* root's `bytes` bytes at buf are copied to buf on every participant. */
int topsync_bcast(topsync_coll_t *coll, unsigned rank, void *buf, size_t bytes, unsigned root);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_COLLECTIVES_H */
