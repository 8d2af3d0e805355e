/*
 * libtopsync-mpi: an MPI_Barrier that runs topsync's shared-memory barriers
 * inside each node, for Open MPI and MPICH, through the PMPI profiling
 * interface: link it before the MPI library (-ltopsync-mpi-openmpi) or
 * preload it (LD_PRELOAD); the program and the MPI stay as they are.
 *
 * Per communicator, on its first MPI_Barrier (which is collective, so every
 * rank takes part in the set-up), and cached on the communicator with an
 * attribute keyval (freed with it):
 *
 *   1. intercommunicators, communicators of one rank and TOPSYNC_BARRIER=mpi
 *      pass through to PMPI_Barrier;
 *   2. the node communicator: PMPI_Comm_split_type(MPI_COMM_TYPE_SHARED),
 *      optionally cut into TOPSYNC_NODE_SPLIT pseudo-nodes (for tests); the
 *      node leaders (node rank 0) get a communicator of their own when the
 *      communicator spans several nodes;
 *   3. every rank's binding (hwloc_get_cpubind) is exchanged inside the
 *      node, and the topology layer builds the groups;
 *   4. node rank 0 creates one shared segment with shm_open(O_CREAT|O_EXCL,
 *      0600) under an unguessable name (16 random bytes), the others open
 *      and map it, and it is unlinked as soon as every rank has mapped it:
 *      from then on nothing of it is in /dev/shm, whatever happens to the
 *      job (exit, MPI_Abort, kill -9);
 *   5. every rank attaches (first-touching its own block), a PMPI_Barrier
 *      on the node communicator closes the set-up.
 *
 * MPI_Barrier is then: the node barrier when the communicator lives on one
 * node; otherwise node barrier (gather), PMPI_Barrier among node leaders,
 * node barrier (release). Nobody leaves the second node barrier before its
 * leader came back from the leaders' barrier, which no leader leaves before
 * every node gathered: the MPI_Barrier property holds across nodes.
 *
 * A set-up failure on any rank (shm_open, mmap, ...) is agreed on by all
 * ranks of the communicator (PMPI_Allreduce) and makes the communicator use
 * PMPI_Barrier, with a warning; it never hangs. An invalid TOPSYNC_*
 * variable is an error: the message lists the valid values and the job is
 * aborted (a typo must not silently measure something else).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include <topsync.h>

#include "segment.h"

#include <topsync/mpi.h>

enum comm_mode { MODE_PMPI, MODE_NODE, MODE_NODES };

struct comm_state {
    enum comm_mode mode;
    MPI_Comm node;    /* ranks of this communicator on my (pseudo-)node */
    MPI_Comm leaders; /* node rank 0 of every node (MODE_NODES), else MPI_COMM_NULL */
    int node_rank, node_size;
    topsync_barrier_t *barrier;
    void *segment;
    size_t segment_size;
};

static int keyval = MPI_KEYVAL_INVALID;
static topsync_topology_t *machine;

/*
 * The hot path must not pay an attribute lookup per barrier: each thread
 * remembers the last communicator it synchronized on and its state. A
 * freed communicator's handle may be reused by a new one, so every state
 * deletion bumps `generation` and a cached entry is only trusted while the
 * generation it was taken at is current. release (delete) pairs with
 * acquire (lookup): a thread that sees the old generation cannot have seen
 * the deletion either, i.e. its communicator is still alive.
 */
static _Atomic unsigned long generation;
static _Thread_local struct {
    MPI_Comm comm;
    struct comm_state *state;
    unsigned long generation;
} cache = {MPI_COMM_NULL, NULL, 0};

static void state_free(struct comm_state *s)
{
    if (!s)
        return;
    topsync_barrier_destroy(s->barrier);
    if (s->segment)
        munmap(s->segment, s->segment_size);
    if (s->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&s->leaders);
    if (s->node != MPI_COMM_NULL)
        PMPI_Comm_free(&s->node);
    free(s);
}

static int delete_state(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    /* release: pairs with the acquire in topsync_mpi_barrier's cache check */
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    state_free(value);
    return MPI_SUCCESS;
}

/* Attributes are not inherited by MPI_Comm_dup: the new communicator sets
 * itself up on its first barrier. */
static int copy_state(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)key;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

static void fatal(MPI_Comm comm, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fatal(MPI_Comm comm, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "topsync-mpi (rank %d): %s\n", rank, msg);
    fflush(stderr);
    /* Launchers forward output asynchronously and stop forwarding once a
     * rank aborts: give the messages time to get out (an error path only). */
    usleep(300 * 1000);
    PMPI_Abort(comm, 1);
    abort();
}

/* TOPSYNC_VERBOSE: 0 or 1 (anything else is reported by check_config). */
static int verbose(void)
{
    const char *v = getenv("TOPSYNC_VERBOSE");
    return v && !strcmp(v, "1");
}

/* TOPSYNC_NODE_SPLIT=k: cut every real node into k pseudo-nodes (testing);
 * 0 when invalid (reported by check_config). */
static int node_split(void)
{
    const char *v = getenv("TOPSYNC_NODE_SPLIT");
    if (!v || !*v)
        return 1;
    char *end;
    long k = strtol(v, &end, 10);
    if (*end || k < 1 || k > 1 << 20)
        return 0;
    return (int)k;
}

/* Validate every TOPSYNC_* variable; a sentence in `why` when one is wrong.
 * The library's own variables are checked by the library itself. */
static int check_config(char *why, size_t len)
{
    if (topsync_environment_check() < 0) {
        const char *msg = topsync_error_message();
        snprintf(why, len, "%s%s", msg,
                 strncmp(msg, "TOPSYNC_BARRIER", 15) == 0 ? " (or mpi)" : "");
        return 1;
    }
    const char *v = getenv("TOPSYNC_VERBOSE");
    if (v && *v && strcmp(v, "0") && strcmp(v, "1")) {
        snprintf(why, len, "TOPSYNC_VERBOSE='%s' is not valid; valid: 0, 1", v);
        return 1;
    }
    if (node_split() == 0) {
        snprintf(why, len, "TOPSYNC_NODE_SPLIT='%s' is not valid; valid: a whole number >= 1",
                 getenv("TOPSYNC_NODE_SPLIT"));
        return 1;
    }
    return 0;
}

static int pmpi_mode_requested(void)
{
    const char *v = getenv("TOPSYNC_BARRIER");
    return v && !strcasecmp(v, "mpi");
}

/* Every rank's binding, as hwloc cpusets, gathered inside the node. */
static hwloc_bitmap_t *gather_bindings(struct comm_state *s)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (!mine)
        return NULL;
    if (hwloc_get_cpubind(topsync_topology_hwloc(machine), mine, HWLOC_CPUBIND_PROCESS) < 0)
        hwloc_bitmap_copy(mine, hwloc_topology_get_topology_cpuset(topsync_topology_hwloc(machine)));
    char *text = NULL;
    int len = hwloc_bitmap_asprintf(&text, mine) + 1;
    hwloc_bitmap_free(mine);
    if (len <= 0)
        return NULL;
    int *lens = calloc((size_t)s->node_size, sizeof *lens);
    int *displs = calloc((size_t)s->node_size, sizeof *displs);
    PMPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, s->node);
    int total = 0;
    for (int i = 0; i < s->node_size; i++) {
        displs[i] = total;
        total += lens[i];
    }
    char *all = malloc((size_t)total);
    PMPI_Allgatherv(text, len, MPI_CHAR, all, lens, displs, MPI_CHAR, s->node);
    free(text);
    hwloc_bitmap_t *sets = calloc((size_t)s->node_size, sizeof *sets);
    for (int i = 0; sets && i < s->node_size; i++) {
        sets[i] = hwloc_bitmap_alloc();
        hwloc_bitmap_sscanf(sets[i], all + displs[i]);
    }
    free(all);
    free(lens);
    free(displs);
    return sets;
}

static void describe(const struct comm_state *s, MPI_Comm comm)
{
    int size;
    PMPI_Comm_size(comm, &size);
    char line[1024];
    int off = snprintf(line, sizeof line, "topsync-mpi: comm of %d ranks, %s: ", size,
                       s->mode == MODE_NODES ? "several nodes (node barrier + PMPI_Barrier among leaders)"
                                             : "one node");
    if (s->mode == MODE_PMPI) {
        snprintf(line + off, sizeof line - (size_t)off, "PMPI_Barrier");
    } else {
        off += snprintf(line + off, sizeof line - (size_t)off, "%d ranks on this node, algorithm %s, wait %s",
                        s->node_size, topsync_barrier_algorithm(s->barrier),
                        topsync_barrier_wait_policy_name(s->barrier));
        const topsync_groups_t *g = topsync_barrier_groups(s->barrier);
        if (g) {
            if (!topsync_groups_hierarchical(g))
                off += snprintf(line + off, sizeof line - (size_t)off, ", ranks not bound: no hierarchy");
            unsigned counts[8] = {0}, levels[8] = {0}, nlev = 0;
            for (unsigned i = 0; i < topsync_groups_count(g); i++) {
                topsync_group_info_t info;
                topsync_groups_get(g, i, &info);
                unsigned k = 0;
                while (k < nlev && levels[k] != info.level)
                    k++;
                if (k == nlev && nlev < 8)
                    levels[nlev++] = info.level;
                if (k < 8)
                    counts[k]++;
            }
            off += snprintf(line + off, sizeof line - (size_t)off, ", groups:");
            for (unsigned k = 0; k < nlev; k++)
                off += snprintf(line + off, sizeof line - (size_t)off, " %s=%u",
                                topsync_group_level_name(levels[k]), counts[k]);
        }
    }
    fprintf(stderr, "%s\n", line);
}

/* Collective over comm. Returns the state (never NULL: falls back to PMPI). */
static struct comm_state *setup(MPI_Comm comm)
{
    struct comm_state *s = calloc(1, sizeof *s);
    if (!s)
        fatal(comm, "out of memory");
    s->node = s->leaders = MPI_COMM_NULL;
    s->mode = MODE_PMPI;

    int inter = 0, size = 1, rank = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (!inter)
        PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank); /* in the local group for an intercommunicator */
    if (inter || size == 1 || pmpi_mode_requested()) {
        if (rank == 0 && verbose())
            fprintf(stderr, "topsync-mpi: comm of %d ranks: PMPI_Barrier (%s)\n", size,
                    inter ? "intercommunicator" : size == 1 ? "one rank" : "TOPSYNC_BARRIER=mpi");
        return s;
    }

    /* Validate the configuration on every rank and agree before anything
     * depends on it; print before aborting, and meet first, so that the
     * launcher does not tear the job down before the messages are out. */
    topsync_barrier_options_t opts;
    topsync_barrier_options_init(&opts);
    char config_error[512] = "";
    int bad = check_config(config_error, sizeof config_error), any_bad = bad;
    PMPI_Allreduce(MPI_IN_PLACE, &any_bad, 1, MPI_INT, MPI_MAX, comm);
    if (any_bad) {
        if (bad) {
            fprintf(stderr, "topsync-mpi (rank %d): %s\n", rank, config_error);
            fflush(stderr);
        }
        PMPI_Barrier(comm);
        fatal(comm, "invalid configuration, aborting");
    }
    int split = node_split();
    int want_verbose = verbose();

    MPI_Comm shared;
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    if (split > 1) {
        int srank, ssize;
        PMPI_Comm_rank(shared, &srank);
        PMPI_Comm_size(shared, &ssize);
        int color = (int)((long)srank * split / ssize);
        PMPI_Comm_split(shared, color, srank, &s->node);
        PMPI_Comm_free(&shared);
    } else {
        s->node = shared;
    }
    PMPI_Comm_rank(s->node, &s->node_rank);
    PMPI_Comm_size(s->node, &s->node_size);
    int nodes = s->node_rank == 0;
    PMPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT, MPI_SUM, comm);
    if (nodes > 1)
        PMPI_Comm_split(comm, s->node_rank == 0 ? 0 : MPI_UNDEFINED, rank, &s->leaders);

    /* Set up the node barrier; `failed` collects errors to agree on. */
    int failed = 0;
    char why[256] = "";
    if (!machine && topsync_topology_load(&machine) < 0) {
        failed = 1;
        snprintf(why, sizeof why, "hwloc: %s", topsync_error_message());
    }
    hwloc_bitmap_t *sets = NULL;
    if (s->node_size > 1) {
        int local_failed = failed;
        PMPI_Allreduce(MPI_IN_PLACE, &local_failed, 1, MPI_INT, MPI_MAX, s->node);
        if (!local_failed) {
            sets = gather_bindings(s);
            if (!sets) {
                failed = 1;
                snprintf(why, sizeof why, "cannot read the ranks' bindings");
            }
        } else {
            failed = 1;
        }
    }
    opts.topology = machine;
    opts.cpusets = (const hwloc_const_bitmap_t *)sets;
    opts.process_shared = 1;

    size_t seg_size = 0;
    if (!failed && s->node_size > 1 && topsync_barrier_segment_size((unsigned)s->node_size, &opts, &seg_size) < 0) {
        failed = 1;
        snprintf(why, sizeof why, "%s", topsync_error_message());
    }
    char name[64] = "";
    int fd = -1;
    if (s->node_size > 1) {
        /* Node rank 0 creates, and tells the name (or "" on failure). */
        int any_failed = failed;
        PMPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_MAX, s->node);
        if (s->node_rank == 0 && !any_failed) {
            fd = ts_segment_create(name, sizeof name, seg_size);
            if (fd < 0) {
                snprintf(why, sizeof why, "shm_open/ftruncate: %s", strerror(-fd));
                name[0] = '\0';
                failed = 1;
            }
        }
        PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, s->node);
        if (name[0] == '\0') {
            failed = 1;
        } else {
            if (s->node_rank != 0) {
                fd = shm_open(name, O_RDWR, 0);
                if (fd < 0) {
                    failed = 1;
                    snprintf(why, sizeof why, "shm_open(%s): %s", name, strerror(errno));
                }
            }
            if (fd >= 0) {
                void *p = mmap(NULL, seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
                if (p == MAP_FAILED) {
                    failed = 1;
                    snprintf(why, sizeof why, "mmap: %s", strerror(errno));
                } else {
                    s->segment = p;
                    s->segment_size = seg_size;
                }
            }
            /* Everyone has mapped it (or failed to): unlink right away. */
            PMPI_Barrier(s->node);
            if (s->node_rank == 0)
                shm_unlink(name);
        }
        if (!failed && topsync_barrier_attach(&s->barrier, (unsigned)s->node_size, &opts, s->segment,
                                              s->segment_size, (unsigned)s->node_rank) < 0) {
            failed = 1;
            snprintf(why, sizeof why, "%s", topsync_error_message());
        }
    } else if (!failed) {
        /* One rank on this node: a trivial barrier keeps the code uniform. */
        if (topsync_barrier_create(&s->barrier, 1, &opts) < 0) {
            failed = 1;
            snprintf(why, sizeof why, "%s", topsync_error_message());
        }
    }
    if (sets) {
        for (int i = 0; i < s->node_size; i++)
            hwloc_bitmap_free(sets[i]);
        free(sets);
    }

    /* All ranks of comm agree: topsync everywhere, or PMPI everywhere. */
    int any = failed;
    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
        if (failed)
            fprintf(stderr, "topsync-mpi: warning: %s; this communicator uses PMPI_Barrier\n",
                    why[0] ? why : "set-up failed");
        topsync_barrier_destroy(s->barrier);
        s->barrier = NULL;
        if (s->segment)
            munmap(s->segment, s->segment_size);
        s->segment = NULL;
        s->mode = MODE_PMPI;
    } else {
        s->mode = nodes > 1 ? MODE_NODES : MODE_NODE;
        /* Every rank attached before anyone waits (attach's contract). */
        PMPI_Barrier(s->node);
    }
    if (want_verbose && s->node_rank == 0)
        describe(s, comm);
    return s;
}

static struct comm_state *state_of(MPI_Comm comm)
{
    if (keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(copy_state, delete_state, &keyval, NULL);
    void *value = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &value, &found);
    if (found)
        return value;
    struct comm_state *s = setup(comm);
    PMPI_Comm_set_attr(comm, keyval, s);
    return s;
}

/*
 * A wait with TOPSYNC_TIMEOUT that timed out: name the ranks of `comm` on
 * this node that have not arrived, and MPI_Abort (a rank that died or hangs
 * would otherwise hang the job). Error path only.
 */
static void timeout_abort(MPI_Comm comm, struct comm_state *s)
{
    char why[256];
    snprintf(why, sizeof why, "%s", topsync_error_message());
    unsigned missing[64];
    int n = topsync_barrier_missing(s->barrier, (unsigned)s->node_rank, missing, 64);
    int shown = n < 64 ? n : 64;
    int local[64], ranks[64];
    MPI_Group node_group, comm_group;
    PMPI_Comm_group(s->node, &node_group);
    PMPI_Comm_group(comm, &comm_group);
    for (int i = 0; i < shown; i++)
        local[i] = (int)missing[i];
    if (shown > 0)
        PMPI_Group_translate_ranks(node_group, shown, local, comm_group, ranks);
    PMPI_Group_free(&node_group);
    PMPI_Group_free(&comm_group);
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; i < shown && len < sizeof list - 16; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i ? ", " : "", ranks[i]);
    if (n > shown)
        snprintf(list + len, sizeof list - len, ", ... (%d in all)", n);
    fatal(comm, "MPI_Barrier timed out (TOPSYNC_TIMEOUT): rank(s) %s of the communicator, on "
                "this node, have not arrived [%s]",
          n > 0 ? list : "(none left: they arrived late)", why);
}

/* The intra-node barrier; with TOPSYNC_TIMEOUT set, a hang becomes an abort. */
static inline void node_wait(MPI_Comm comm, struct comm_state *s)
{
    if (__builtin_expect(topsync_barrier_wait_checked(s->barrier, (unsigned)s->node_rank) < 0, 0))
        timeout_abort(comm, s);
}

int topsync_mpi_barrier(MPI_Comm comm)
{
    struct comm_state *s;
    /* acquire: pairs with the release in delete_state() */
    unsigned long gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (cache.comm == comm && cache.generation == gen && comm != MPI_COMM_NULL) {
        s = cache.state;
    } else {
        int initialized = 0, finalized = 0;
        PMPI_Initialized(&initialized);
        PMPI_Finalized(&finalized);
        if (!initialized || finalized || comm == MPI_COMM_NULL)
            return PMPI_Barrier(comm); /* let the MPI report the error */
        s = state_of(comm);
        cache.comm = comm;
        cache.state = s;
        cache.generation = gen;
    }
    switch (s->mode) {
    case MODE_PMPI:
        return PMPI_Barrier(comm);
    case MODE_NODE:
        node_wait(comm, s);
        return MPI_SUCCESS;
    case MODE_NODES: {
        int rc = MPI_SUCCESS;
        node_wait(comm, s);
        if (s->node_rank == 0)
            rc = PMPI_Barrier(s->leaders);
        node_wait(comm, s);
        return rc;
    }
    }
    return PMPI_Barrier(comm);
}

const char *topsync_mpi_describe(MPI_Comm comm)
{
    static _Thread_local char buf[160];
    struct comm_state *s = state_of(comm);
    if (s->mode == MODE_PMPI)
        snprintf(buf, sizeof buf, "mpi");
    else
        snprintf(buf, sizeof buf, "%s", topsync_barrier_algorithm(s->barrier));
    return buf;
}

/* ---- the entry points ---------------------------------------------------- */

int MPI_Barrier(MPI_Comm comm)
{
    return topsync_mpi_barrier(comm);
}

/* Fortran mpif.h / `use mpi` bindings (all the manglings both MPIs export). */
static void fortran_barrier(MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = topsync_mpi_barrier(MPI_Comm_f2c(*comm));
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

void mpi_barrier(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier__(MPI_Fint *comm, MPI_Fint *ierr);
void MPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier(MPI_Fint *comm, MPI_Fint *ierr) { fortran_barrier(comm, ierr); }
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr) { fortran_barrier(comm, ierr); }
void mpi_barrier__(MPI_Fint *comm, MPI_Fint *ierr) { fortran_barrier(comm, ierr); }
void MPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr) { fortran_barrier(comm, ierr); }

/* `use mpi_f08`: TYPE(MPI_Comm) is one INTEGER passed by reference, ierror
 * is OPTIONAL (NULL when absent). Both MPIs name it mpi_barrier_f08_. */
void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr) { fortran_barrier(comm, ierr); }
