/*
 * topsync tuning files: what `topsync-tune` measured on a machine, for
 * "auto" to choose from (docs/guide/algorithms.md, "auto").
 *
 * A tuning file is JSON (format "topsync-tuning", version
 * TOPSYNC_TUNING_FORMAT_VERSION) for one machine, named by the fingerprint
 * of its topology. It holds entries, one per case: a participant count,
 * threads or processes, oversubscribed or not, and a placement signature;
 * each entry lists the candidates measured, fastest first. It may also hold
 * the machine's core-to-core latency table (topsync-bench c2c), which the
 * machine model then uses.
 *
 * "auto" looks for the file named by TOPSYNC_TUNING (a path, or "off"),
 * else for the per-user cache file of this machine
 * ($XDG_CACHE_HOME/topsync/tuning-FINGERPRINT.json, XDG_CACHE_HOME
 * defaulting to ~/.cache). A file for another machine, of another format
 * version, or that is not a tuning file is ignored with one warning line
 * on stderr, never trusted.
 *
 * Errors follow topsync's convention (common.h).
 */
#ifndef TOPSYNC_TUNE_H
#define TOPSYNC_TUNE_H

#include <stddef.h>
#include <topsync/barrier.h>
#include <topsync/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TOPSYNC_TUNING_FORMAT_VERSION 1
#define TOPSYNC_FINGERPRINT_LEN 17 /* 16 hex digits and the NUL */
#define TOPSYNC_TUNING_MAX_RESULTS 64
#define TOPSYNC_TUNING_MAX_ENTRIES 256

/*
 * The fingerprint of a topology: FNV-1a (64 bits) of hwloc's object tree,
 * depth first: each object's type, OS index and number of children, each
 * cache's size and line size, the CPU model hwloc reports, and the
 * machine's complete cpuset (offline CPUs included). Memory sizes and the
 * allowed CPUs are left out: they change with boots and jobs, not with the
 * machine. 16 lowercase hex digits, computed when the topology is loaded.
 */
int topsync_tuning_fingerprint(const topsync_topology_t *topology,
                               char out[TOPSYNC_FINGERPRINT_LEN]);

/*
 * The placement signature of n participants bound to cpusets[] (NULL:
 * nobody bound): "core", "numa" or "socket" when the bindings are exactly
 * what topsync_placement_compute gives for that mapping (bind-to core);
 * "unbound" when some participant may run on every allowed CPU (or
 * cpusets is NULL); else "custom-XXXXXXXX" (a hash of the bindings in rank
 * order), which only the same bindings match.
 */
int topsync_tuning_placement(const topsync_topology_t *topology, unsigned n,
                             const hwloc_const_bitmap_t *cpusets, char *out, size_t len);

typedef struct topsync_tuning_result {
    char algorithm[96];         /* as topsync_barrier_create accepts it */
    topsync_wait_policy_t wait; /* SPIN, YIELD or BLOCK */
    double latency_ns;          /* measured: the benchmark's protocol */
} topsync_tuning_result_t;

typedef struct topsync_tuning_entry {
    unsigned participants;
    int processes;      /* 0: threads; 1: processes */
    int oversubscribed; /* more runnable participants than CPUs */
    char placement[48]; /* topsync_tuning_placement() */
    unsigned nresults;  /* results[0] is the fastest */
    topsync_tuning_result_t results[TOPSYNC_TUNING_MAX_RESULTS];
} topsync_tuning_entry_t;

typedef struct topsync_tuning topsync_tuning_t;

/* An empty tuning of `topology`'s machine. */
int topsync_tuning_create(topsync_tuning_t **out, const topsync_topology_t *topology);

/*
 * Read a tuning file for `topology`'s machine. -ENOENT: no such file;
 * -EINVAL: not a tuning file at all (not JSON, or no "format":
 * "topsync-tuning"); -EBADMSG: a tuning file whose contents are damaged
 * (the message says where); -ESTALE: a tuning file of another format
 * version; -ENODEV: a tuning file of another machine (fingerprints differ).
 * topsync-tune replaces the last three and refuses to overwrite the first.
 */
int topsync_tuning_load(topsync_tuning_t **out, const char *path,
                        const topsync_topology_t *topology);

/* Add an entry (results sorted here, fastest first), replacing the entry of
 * the same case. -EINVAL for an entry without results or bad values,
 * -ENOSPC beyond TOPSYNC_TUNING_MAX_ENTRIES. */
int topsync_tuning_put(topsync_tuning_t *tuning, const topsync_tuning_entry_t *entry);

/* Keep the machine's core-to-core table (n x n, ns; the diagonal is
 * ignored) with the file. */
int topsync_tuning_set_c2c(topsync_tuning_t *tuning, unsigned n, const double *ns);
/* The kept table, or NULL (n in *n). */
const double *topsync_tuning_c2c(const topsync_tuning_t *tuning, unsigned *n);

/*
 * Keep the machine's measured miss overlap with the file (topsync-bench c2c
 * --mlp): mlp, how many misses on lines just written by another core one
 * core keeps in flight (dependent / independent ns per line, > 0 up to
 * TOPSYNC_MODEL_MAX_MLP), and interval_ns, the ns per line of independent
 * misses. auto's model of the machine then simulates K = mlp rounded, and
 * a home serving one request per interval_ns (docs/model.md, section 4).
 * -EINVAL for values out of range.
 */
int topsync_tuning_set_mlp(topsync_tuning_t *tuning, double mlp, double interval_ns);
/* The kept overlap: 0 and *interval_ns 0 when none was measured. */
double topsync_tuning_mlp(const topsync_tuning_t *tuning, double *interval_ns);

/*
 * The entry for n participants of this kind, oversubscription and
 * placement; with no entry of that count, the one of the nearest tuned
 * count (the smaller on a tie). -ENOENT when no entry has that kind,
 * oversubscription and placement.
 */
int topsync_tuning_lookup(const topsync_tuning_t *tuning, unsigned n, int processes,
                          int oversubscribed, const char *placement, topsync_tuning_entry_t *out);

/*
 * The candidates for n participants bound to cpusets (NULL: unbound): every
 * algorithm, and when their hierarchy has levels, topo on each subset of
 * them (every subset up to 3 levels; with 4, all of them and each alone)
 * in both release modes. What topsync-tune measures and what auto's model
 * step predicts. Writes up to max names, returns how many, or a negative
 * errno.
 */
#define TOPSYNC_TUNING_MAX_CANDIDATES 40
int topsync_tuning_candidates(const topsync_topology_t *topology, unsigned n,
                              const hwloc_const_bitmap_t *cpusets, char (*names)[96], unsigned max);

/*
 * The small collectives of libtopsync-mpi (docs/guide/collectives.md),
 * tuned per operation and size: `topsync-tune --mpi` times topsync's call
 * and the MPI's own in the same job at sizes 8 B, 16 B, ... 16 KiB, and
 * keeps both figures per size in an entry of the job's case and MPI
 * library. auto then serves each operation up to the largest size below
 * which topsync was never slower (topsync_coll_choose).
 */
typedef enum topsync_coll_kind {
    TOPSYNC_COLL_ALLREDUCE,
    TOPSYNC_COLL_REDUCE,
    TOPSYNC_COLL_BCAST,
    TOPSYNC_COLL_KINDS
} topsync_coll_kind_t;

/* "allreduce", "reduce", "bcast"; "" for another value. */
const char *topsync_coll_kind_name(topsync_coll_kind_t kind);

#define TOPSYNC_TUNING_COLL_POINTS 16
#define TOPSYNC_TUNING_MPI_LEN 64

typedef struct topsync_tuning_coll_point {
    size_t bytes;      /* the call's buffer */
    double topsync_ns; /* topsync's call, the benchmark's protocol */
    double own_ns;     /* the MPI's own, in the same job */
} topsync_tuning_coll_point_t;

typedef struct topsync_tuning_coll_entry {
    unsigned participants; /* processes on the node */
    int oversubscribed;    /* more processes than CPUs */
    char placement[48];    /* topsync_tuning_placement() */
    /* The MPI library whose own collectives were timed: the first line of
     * MPI_Get_library_version up to its first comma (topsync-mpi's
     * TOPSYNC_VERBOSE names it), e.g. "Open MPI v4.1.4". */
    char mpi[TOPSYNC_TUNING_MPI_LEN];
    /* per kind, ascending sizes, each once */
    unsigned npoints[TOPSYNC_COLL_KINDS];
    topsync_tuning_coll_point_t points[TOPSYNC_COLL_KINDS][TOPSYNC_TUNING_COLL_POINTS];
} topsync_tuning_coll_entry_t;

/* Add a collectives entry, replacing the one of the same case and MPI.
 * -EINVAL for bad values (no points, sizes not ascending, a latency that
 * is not one), -ENOSPC beyond TOPSYNC_TUNING_MAX_ENTRIES of them. */
int topsync_tuning_put_coll(topsync_tuning_t *tuning, const topsync_tuning_coll_entry_t *entry);

/* The collectives entry of this MPI, oversubscription and placement, for n
 * processes or, with no entry of that count, the nearest tuned count (the
 * smaller on a tie). -ENOENT when there is none. */
int topsync_tuning_lookup_coll(const topsync_tuning_t *tuning, unsigned n, int oversubscribed,
                               const char *placement, const char *mpi,
                               topsync_tuning_coll_entry_t *out);

unsigned topsync_tuning_coll_count(const topsync_tuning_t *tuning);
int topsync_tuning_get_coll(const topsync_tuning_t *tuning, unsigned index,
                            topsync_tuning_coll_entry_t *out);

/*
 * What auto chooses for libtopsync-mpi's collectives on a node of n
 * processes of this oversubscription and placement under `mpi` (as in an
 * entry; NULL or "" for none): per kind, which calls topsync serves (the
 * MPI's own serves the others) and why, in this order:
 *   given: TOPSYNC_COLL_MAX_BYTES, when set: every call up to it;
 *   tuning: the entry of the tuning file (topsync_tuning_path) for this
 *     case and MPI, when TOPSYNC_AUTO allows the step: per size class (the
 *     calls of 1-8 B, 9-16 B, 17-32 B, ...) the verdict of the measured
 *     size that ends it, topsync unless the MPI's own was more than
 *     TOPSYNC_COLL_OWN_MARGIN times faster there; calls above the largest
 *     measured size go to the MPI's own;
 *   rules: every call up to TOPSYNC_COLL_MAX_BYTES_DEFAULT.
 * 0, or -EINVAL for a bad argument or a bad TOPSYNC_COLL_MAX_BYTES or
 * TOPSYNC_AUTO (with the message).
 */
#define TOPSYNC_COLL_CLASSES 18 /* size classes up to 1 MiB */
/* The run-to-run spread of one size's ratio on the development VM
 * (docs/results.md, "auto for the collectives"): a smaller lead is noise. */
#define TOPSYNC_COLL_OWN_MARGIN 1.2

typedef struct topsync_coll_choice {
    size_t max_bytes[TOPSYNC_COLL_KINDS]; /* nothing larger is topsync's */
    /* bit c: topsync serves calls of size class c (topsync_coll_class) */
    unsigned classes[TOPSYNC_COLL_KINDS];
    char explain[TOPSYNC_COLL_KINDS][768];
} topsync_coll_choice_t;

int topsync_coll_choose(const topsync_topology_t *topology, unsigned n, int oversubscribed,
                        const char *placement, const char *mpi, topsync_coll_choice_t *out);

/* The size class of a call of `bytes` (>= 1): 0 for up to 8 bytes, then c
 * for 8 * 2^(c-1) < bytes <= 8 * 2^c. */
static inline unsigned topsync_coll_class(size_t bytes)
{
    unsigned c = 0;
    for (size_t top = 8; top < bytes && c < 31; top *= 2)
        c++;
    return c;
}

/* Whether topsync serves a call of `kind` and `bytes` under `choice`. */
static inline int topsync_coll_choice_serves(const topsync_coll_choice_t *choice,
                                             topsync_coll_kind_t kind, size_t bytes)
{
    return bytes <= choice->max_bytes[kind] &&
           (bytes == 0 || ((choice->classes[kind] >> topsync_coll_class(bytes)) & 1u));
}

unsigned topsync_tuning_count(const topsync_tuning_t *tuning);
int topsync_tuning_get(const topsync_tuning_t *tuning, unsigned index, topsync_tuning_entry_t *out);
const char *topsync_tuning_machine_fingerprint(const topsync_tuning_t *tuning);

/*
 * Write the file: to a temporary file beside `path`, then renamed over it,
 * so that readers and concurrent writers only ever see a whole file (the
 * last rename wins). Creates the directory when missing.
 */
int topsync_tuning_write(const topsync_tuning_t *tuning, const char *path);

void topsync_tuning_destroy(topsync_tuning_t *tuning);

/*
 * Where "auto" looks for this machine's tuning: TOPSYNC_TUNING when set (0,
 * the path in buf), the cache file otherwise (0). -ENOENT when
 * TOPSYNC_TUNING is "off", or no cache directory can be named (no HOME).
 */
int topsync_tuning_path(const topsync_topology_t *topology, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_TUNE_H */
