/*
 * A communicator's barrier, set up on its first MPI_Barrier (collective, so
 * every rank takes part), with collectives on that communicator only, in
 * the same order on every rank: it never creates a communicator (see
 * node_map.c for why), so it is as safe under MPI_THREAD_MULTIPLE as the
 * MPI_Barrier it sits in.
 * The why: docs/design.md section 8.18.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barrier/barrier_private.h"
#include "barrier/setup.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/hash.h"
#include "collectives/coll_private.h"
#include "front/environment.h"
#include "binding/mpi_identity.h"
#include "node/node.h"
#include "node/segment.h"

static pthread_mutex_t machine_lock = PTHREAD_MUTEX_INITIALIZER;
static topsync_topology_t *machine; /* loaded once, under machine_lock */

/* Validate every TOPSYNC_* variable; a sentence in `why` when one is wrong.
 * The library's own variables are checked by the library itself. */
static int check_config(char *why, size_t len)
{
    /* TOPSYNC_RCL_PLACEMENT is no business of MPI's: said once per job,
     * by MPI_COMM_WORLD's rank 0, and not fatal (issue 56 item 6) */
    static atomic_bool rcl_said;
    int world_rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (world_rank == 0 && ts_environment_check(true, TS_ENV_RCL) < 0 &&
        !atomic_exchange_explicit(&rcl_said, true, memory_order_relaxed)) /* once, nothing else */
        fprintf(stderr, "topsync-mpi: warning: %s (not used by MPI)\n", topsync_error_message());
    if (ts_environment_check(true, TS_ENV_BARRIER | TS_ENV_COLL) < 0) {
        const char *msg = topsync_error_message();
        snprintf(why, len, "%s%s", msg,
                 strncmp(msg, "TOPSYNC_BARRIER", 15) == 0 ? " (or mpi)" : "");
        return 1;
    }
    if (ts_env_verbose() < 0) {
        snprintf(why, len,
                 "TOPSYNC_VERBOSE='%s' is not valid; valid: 0 (silent), 1 (a start line and "
                 "the end-of-job summary), 2 (every detail)",
                 getenv("TOPSYNC_VERBOSE"));
        return 1;
    }
    if (ts_mpi_ops_of(getenv("TOPSYNC_MPI_OPS")) < 0) {
        snprintf(why, len,
                 "TOPSYNC_MPI_OPS='%s' is not valid; valid: a comma-separated list of barrier, "
                 "allreduce, reduce, bcast (each once); all; none",
                 getenv("TOPSYNC_MPI_OPS"));
        return 1;
    }
    if (ts_mpi_setup_at() == 0) {
        snprintf(why, len,
                 "TOPSYNC_MPI_SETUP_AT='%s' is not valid; valid: a whole number from 1 to "
                 "1000000, in decimal digits",
                 getenv("TOPSYNC_MPI_SETUP_AT"));
        return 1;
    }
    if (ts_mpi_node_split() == 0) {
        snprintf(why, len,
                 "TOPSYNC_NODE_SPLIT='%s' is not valid; valid: a whole number from 1 to "
                 "1048576, in decimal digits",
                 getenv("TOPSYNC_NODE_SPLIT"));
        return 1;
    }
    return 0;
}

/* A TOPSYNC_* variable that decides which collectives a rank calls, and
 * so must be alike on every rank of a communicator: its value here, and
 * how to print it (yes and no for a yes/no one, else the number). */
struct shape_variable {
    const char *name;
    int value;
    const char *yes, *no;
};

/* Whether every shape variable is alike on every rank of comm, from the
 * MPI_MAX of each value and of its negation (`maxima`: two per variable,
 * alike iff the maximum is minus the maximum of the negations). When one
 * differs, every rank says what it has, then all meet, so that the
 * messages are out before anyone aborts. Collective when they differ. */
static bool shapes_alike(MPI_Comm comm, int rank, const struct shape_variable *shape, size_t n,
                         const int *maxima)
{
    bool alike = true;
    for (size_t v = 0; v < n; v++)
        alike &= maxima[2 * v] == -maxima[2 * v + 1];
    if (alike)
        return true;
    int world_rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    for (size_t v = 0; v < n; v++) {
        if (maxima[2 * v] == -maxima[2 * v + 1])
            continue;
        if (shape[v].yes)
            fprintf(stderr,
                    "topsync-mpi (rank %d): %s: %s on this rank (rank %d of the "
                    "communicator), not on every rank: set it alike on every rank\n",
                    world_rank, shape[v].name, shape[v].value ? shape[v].yes : shape[v].no, rank);
        else
            fprintf(stderr,
                    "topsync-mpi (rank %d): %s: %d on this rank (rank %d of the "
                    "communicator), between %d and %d across ranks: set it alike on every "
                    "rank\n",
                    world_rank, shape[v].name, shape[v].value, rank, -maxima[2 * v + 1],
                    maxima[2 * v]);
    }
    fflush(stderr);
    TS_MPI_OWN(Barrier)(comm);
    return false;
}

/*
 * The TOPSYNC_* variables last found valid, as ts_mpi_env_scan
 * hashes them (UINT64_MAX: none yet; no variables at all hash as 0, a
 * valid set): a set-up under the same variables does not parse them
 * again. Parsing them is a getenv per variable, each a walk through an
 * MPI launcher's long environment: 0.5-0.8 us of the 3-4 us a set-up that
 * takes a freed communicator's barrier back cost (issue 35 item 4). Only
 * a valid set is remembered, so a variable changed to a wrong value is
 * still reported. relaxed: the value is the whole message, it publishes
 * nothing else.
 */
static _Atomic uint64_t valid_env = UINT64_MAX;

static bool config_checked(uint64_t env_hash)
{
    return atomic_load_explicit(&valid_env, memory_order_relaxed) == env_hash;
}

static void config_valid(uint64_t env_hash)
{
    atomic_store_explicit(&valid_env, env_hash, memory_order_relaxed);
}

/* The machine, loaded by the first set-up of any thread. */
static topsync_topology_t *load_machine(char *why, size_t len)
{
    pthread_mutex_lock(&machine_lock);
    if (!machine && topsync_topology_load(&machine) < 0) {
        snprintf(why, len, "hwloc: %s", topsync_error_message());
        machine = NULL;
    }
    topsync_topology_t *m = machine;
    pthread_mutex_unlock(&machine_lock);
    return m;
}

/* calloc or abort the job: set-up allocations are small, and a rank that
 * cannot allocate them cannot take part in the collectives either. */
static void *xcalloc(MPI_Comm comm, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        ts_mpi_fatal(comm, "out of memory during the barrier's set-up");
    return p;
}

/* The bindings of my node's ranks (node_members order), from every rank's
 * binding gathered over comm; NULL when one cannot be read. m may be NULL
 * (hwloc failed here): this rank then sends an empty binding. */
static hwloc_bitmap_t *gather_bindings(MPI_Comm comm, int size, const struct ts_layout *s,
                                       topsync_topology_t *m, uint32_t *digest)
{
    char *text = NULL;
    if (m) {
        hwloc_topology_t topo = topsync_topology_hwloc(m);
        hwloc_bitmap_t mine = hwloc_bitmap_alloc();
        if (mine) {
            if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) < 0)
                hwloc_bitmap_copy(mine, hwloc_topology_get_topology_cpuset(topo));
            if (hwloc_bitmap_asprintf(&text, mine) < 0)
                text = NULL;
            hwloc_bitmap_free(mine);
        }
    }
    int len = text ? (int)strlen(text) + 1 : 1;
    int *lens = xcalloc(comm, (size_t)size, sizeof *lens);
    int *displs = xcalloc(comm, (size_t)size, sizeof *displs);
    PMPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm);
    long total = 0;
    for (int i = 0; i < size; i++) {
        displs[i] = (int)total;
        total += lens[i];
        if (total > 0x7fffffff)
            ts_mpi_fatal(comm, "the ranks' bindings exceed 2 GB");
    }
    char *all = xcalloc(comm, (size_t)total, 1);
    PMPI_Allgatherv(text ? text : "", len, MPI_CHAR, all, lens, displs, MPI_CHAR, comm);
    free(text);
    *digest = ts_fnv1a32(*digest, all, (size_t)total);
    hwloc_bitmap_t *sets = xcalloc(comm, (size_t)s->node_size, sizeof *sets);
    int bad = 0;
    for (int i = 0; i < s->node_size; i++) {
        sets[i] = hwloc_bitmap_alloc();
        bad |= !sets[i] || hwloc_bitmap_sscanf(sets[i], all + displs[s->node_members[i]]) < 0 ||
               hwloc_bitmap_iszero(sets[i]);
    }
    free(all);
    free(lens);
    free(displs);
    if (bad) {
        for (int i = 0; i < s->node_size; i++)
            hwloc_bitmap_free(sets[i]);
        free(sets);
        return NULL;
    }
    return sets;
}

/* ---- the nodes, from every rank's record -------------------------------- */

static int by_node_then_rank(const void *a, const void *b, void *records)
{
    int x = *(const int *)a, y = *(const int *)b;
    const struct ts_node_record *p = (const struct ts_node_record *)records + x,
                                *q = (const struct ts_node_record *)records + y;
    if (p->host_hash != q->host_hash)
        return p->host_hash < q->host_hash ? -1 : 1;
    if (p->node_id != q->node_id)
        return p->node_id < q->node_id ? -1 : 1;
    return (x > y) - (x < y);
}

/*
 * leader[r] := the comm rank leading r's (pseudo-)node, the node's ranks cut
 * into `split` pieces by index * split / count in rank order (node_map.c
 * cuts the world the same way). Returns the number of (pseudo-)nodes and
 * fills my node's members (ascending) into s. Identical on every rank.
 */
static int find_nodes(MPI_Comm comm, const struct ts_node_record *all, int size, int me, int split,
                      int *leader, struct ts_layout *s)
{
    int *order = xcalloc(comm, (size_t)size, sizeof *order);
    for (int i = 0; i < size; i++)
        order[i] = i;
    qsort_r(order, (size_t)size, sizeof *order, by_node_then_rank, (void *)all);
    int nodes = 0;
    for (int lo = 0; lo < size;) {
        int hi = lo + 1;
        while (hi < size && all[order[hi]].host_hash == all[order[lo]].host_hash &&
               all[order[hi]].node_id == all[order[lo]].node_id)
            hi++;
        int count = hi - lo;
        for (int j = 0; j < count;) {
            int color = (int)((long)j * split / count), k = j;
            while (k < count && (int)((long)k * split / count) == color)
                k++;
            nodes++;
            for (int i = j; i < k; i++) {
                leader[order[lo + i]] = order[lo + j];
                if (order[lo + i] == me) {
                    s->node_rank = i - j;
                    s->node_size = k - j;
                    s->node_members = xcalloc(comm, (size_t)(k - j), sizeof *s->node_members);
                    for (int t = j; t < k; t++)
                        s->node_members[t - j] = order[lo + t];
                }
            }
            j = k;
        }
        lo = hi;
    }
    free(order);
    return nodes;
}

/* The idle hook: drive MPI's progress engine while waiting in the node
 * barrier, for the messages and one-sided operations other ranks wait on
 * and so that an MPI_Abort elsewhere reaches us as it would natively. The
 * wait calls it as soon as its spin is over, then at intervals that double
 * from a microsecond; TOPSYNC_IDLE_AGAIN keeps them at a microsecond, as
 * the MPI's own barrier polls all along, when the program needs it
 * (progress.c: an RMA window, nonblocking operations in flight; issue 35:
 * NWChem 30x slower when polled every 0.1 s). A probe receives nothing, so
 * the application's messages stay where they are; on the barrier's own
 * communicator, because MPICH answers a probe on MPI_COMM_SELF without
 * polling anything. */
static int mpi_progress(void *arg)
{
    const MPI_Comm *comm = arg; /* the communicator now using this barrier (parked.c) */
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, *comm, &flag, MPI_STATUS_IGNORE);
    return ts_mpi_progress_eager() ? TOPSYNC_IDLE_AGAIN : 0;
}

/*
 * The calls topsync serves per collective (topsync_coll_choose: given,
 * tuning file, rules), into s->coll_choice; every rank of comm takes only
 * what every rank chose, since all must decide each call alike (a node of
 * another placement, or reading another tuning file, may choose less).
 * Collective over comm, failed or not. Returns the largest of them (at
 * least 1: the collectives object's size), for the segment.
 */
static size_t choose_coll_limits(MPI_Comm comm, struct comm_state *s, topsync_topology_t *m,
                                 hwloc_bitmap_t *sets, bool oversubscribed, int *failed, char *why,
                                 size_t why_len)
{
    topsync_coll_choice_t choice;
    memset(&choice, 0, sizeof choice);
    char placement[48] = "", mpi[TOPSYNC_TUNING_MPI_LEN];
    ts_mpi_identity(mpi, sizeof mpi);
    if (!*failed &&
        (topsync_tuning_placement(m, (unsigned)s->node_size, (const hwloc_const_bitmap_t *)sets,
                                  placement, sizeof placement) < 0 ||
         topsync_coll_choose(m, (unsigned)s->node_size, oversubscribed, placement, mpi, &choice) <
             0)) {
        *failed = 1;
        snprintf(why, why_len, "%s", topsync_error_message());
    }
    /* the smallest limit and the classes every rank serves: MPI_MAX of
     * the negated (Open MPI's MPI_MIN and MPI_BAND are not among the
     * handles libtopsync-mpi reads, binding.h) */
    enum { PER_KIND = 1 + TOPSYNC_COLL_CLASSES };
    int negated[TOPSYNC_COLL_KINDS * PER_KIND];
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        negated[k * PER_KIND] = -(int)choice.max_bytes[k];
        for (unsigned c = 0; c < TOPSYNC_COLL_CLASSES; c++)
            negated[k * PER_KIND + 1 + c] = -(int)((choice.classes[k] >> c) & 1u);
    }
    int nvalues = TOPSYNC_COLL_KINDS * PER_KIND;
    TS_MPI_OWN(Allreduce)(MPI_IN_PLACE, negated, nvalues, MPI_INT, MPI_MAX, comm);
    size_t most = 1;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        s->coll_choice.max_bytes[k] = (size_t)-negated[k * PER_KIND];
        s->coll_choice.classes[k] = 0;
        for (unsigned c = 0; c < TOPSYNC_COLL_CLASSES; c++)
            s->coll_choice.classes[k] |= (unsigned)-negated[k * PER_KIND + 1 + c] << c;
        if (s->coll_choice.max_bytes[k] > most)
            most = s->coll_choice.max_bytes[k];
        bool less = s->coll_choice.max_bytes[k] != choice.max_bytes[k] ||
                    s->coll_choice.classes[k] != choice.classes[k];
        if (ts_mpi_verbose() >= 2 && rank == 0 && !*failed)
            fprintf(stderr, "topsync-mpi: %s up to %zu B%s: %s\n",
                    ts_mpi_coll_name((topsync_coll_kind_t)k), s->coll_choice.max_bytes[k],
                    less ? " (another rank chose less)" : "", choice.explain[k]);
    }
    return most;
}

/* how a set-up found what it did not build (describe's last line) */
enum kept_from { KEPT_NOTHING, KEPT_LAYOUT, KEPT_NODE_BARRIER };

static void describe(const struct comm_state *s, MPI_Comm comm, const char *pmpi_reason,
                     enum kept_from kept)
{
    int size;
    PMPI_Comm_size(comm, &size);
    char line[1024];
    int off =
        snprintf(line, sizeof line, "topsync-mpi: comm of %d ranks, %s: ", size,
                 s->mode == MODE_NODES ? "several nodes (node barrier + PMPI_Barrier among leaders)"
                 : pmpi_reason         ? "several nodes"
                                       : "one node");
    if (s->mode == MODE_PMPI) {
        snprintf(line + off, sizeof line - (size_t)off, "PMPI_Barrier%s%s%s",
                 pmpi_reason ? " (" : "", pmpi_reason ? pmpi_reason : "", pmpi_reason ? ")" : "");
    } else {
        off += snprintf(line + off, sizeof line - (size_t)off,
                        "%d ranks on this node, algorithm %s, wait %s", s->node_size,
                        topsync_barrier_algorithm(s->node.barrier),
                        topsync_barrier_wait_policy_name(s->node.barrier));
        const topsync_groups_t *g = topsync_barrier_groups(s->node.barrier);
        if (g) {
            if (!topsync_groups_hierarchical(g))
                off += snprintf(line + off, sizeof line - (size_t)off,
                                ", ranks not bound: no hierarchy");
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
    if (s->mode != MODE_PMPI) /* which step of auto chose, and on what */
        fprintf(stderr, "topsync-mpi:   %s\n", topsync_barrier_explain(s->node.barrier));
    if (kept == KEPT_LAYOUT)
        fprintf(stderr, "topsync-mpi:   nodes, bindings and collectives kept from an earlier "
                        "communicator of the same ranks: none gathered\n");
    else if (kept == KEPT_NODE_BARRIER)
        fprintf(stderr, "topsync-mpi:   nodes, bindings and collectives kept from an earlier "
                        "communicator of the same ranks: none gathered; node barrier and "
                        "segment of a freed one: none made\n");
}

/*
 * TOPSYNC_VERBOSE=1's one line per job, by MPI_COMM_WORLD's rank 0 when
 * its set-up ends: topsync's version and the MPI's, what topsync serves,
 * and how on MPI_COMM_WORLD (`nodes`: how many; `pmpi_reason`: why the
 * MPI's own barrier serves it). The end of the job has its summary
 * (summary.c); TOPSYNC_VERBOSE=2 adds every communicator's details.
 */
static void start_line(const struct comm_state *s, MPI_Comm comm, int rank, int size, int nodes,
                       const char *pmpi_reason)
{
    if (comm != MPI_COMM_WORLD || rank != 0 || ts_mpi_verbose() < 1)
        return;
    char mpi[TOPSYNC_TUNING_MPI_LEN], ops[96] = "", how[512];
    ts_mpi_identity(mpi, sizeof mpi);
    size_t used = 0;
    for (unsigned k = TS_MPI_CALL_BARRIER; k <= TS_MPI_CALL_BCAST; k++)
        if (s->ops & 1u << k)
            used += (size_t)snprintf(ops + used, sizeof ops - used, "%s%s", used ? ", " : "",
                                     ts_mpi_call_name((enum ts_mpi_call)k));
    if (s->mode == MODE_PMPI) {
        snprintf(how, sizeof how, "the MPI's own barrier and collectives (%s)",
                 pmpi_reason ? pmpi_reason : "not served");
    } else {
        size_t most = 0;
        for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++)
            if (s->ops & 1u << (1 + k) && s->coll_choice.max_bytes[k] > most)
                most = s->coll_choice.max_bytes[k];
        char coll[64] = "";
        if (most)
            snprintf(coll, sizeof coll, ", collectives on the node up to %zu B", most);
        snprintf(how, sizeof how, "%d %s, barrier %s (wait %s)%s%s", nodes,
                 nodes == 1 ? "node" : "nodes", topsync_barrier_algorithm(s->node.barrier),
                 topsync_barrier_wait_policy_name(s->node.barrier),
                 s->mode == MODE_NODES ? " + the MPI's among the node leaders" : "", coll);
    }
    fprintf(stderr,
            "topsync-mpi %s on %s: serving %s; MPI_COMM_WORLD of %d ranks: %s (a summary at "
            "MPI_Finalize; TOPSYNC_VERBOSE=2 for details)\n",
            topsync_version(), mpi, used ? ops : "none (TOPSYNC_MPI_OPS=none)", size, how);
}

void ts_mpi_state_free(struct comm_state *s)
{
    if (!s)
        return;
    /* comm is freed (or the process finalizes): its node barrier waits in
     * the pool for the next communicator of the same ranks, when it has a
     * segment to save */
    ts_mpi_park(&s->node);
    ts_mpi_node_sync_free(&s->node);
    free(s->node_members);
    free(s->leader_rank_of);
    free(s->scratch);
    free(s);
}

/* Which segments a set-up made: every node's name (pid and 128 random
 * bits) hashed, the same on every rank; 0 when no node made one. 62 bits,
 * for the agreement's two halves. */
static uint64_t segments_token(const char *names, int size)
{
    bool any = false;
    for (int r = 0; r < size && !any; r++)
        any = names[(size_t)r * TS_SEGMENT_NAME_LEN] != '\0';
    if (!any)
        return 0;
    uint64_t h = ts_fnv1a64(TS_FNV1A64_OFFSET, names, (size_t)size * TS_SEGMENT_NAME_LEN) &
                 ((UINT64_C(1) << 62) - 1);
    return h ? h : 1;
}

/* Map my node's segment (created by its first rank, named in names[]). */
static int map_segment(struct comm_state *s, const char *name, size_t size, int fd, char *why,
                       size_t len)
{
    if (fd < 0)
        fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(why, len, "shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, len, "mmap: %s", strerror(errno));
        return -1;
    }
    s->node.segment = p;
    s->node.segment_size = size;
    return 0;
}

/*
 * The set-up's first collective, the agreement: with TOPSYNC_TIMEOUT set,
 * nonblocking and polled, so that a set-up another rank never joins (it is
 * in a different collective on comm, reached through a call topsync does
 * not serve) ends in an abort that names this rank's call, not a silent
 * hang (issue 56 item 1). Without the variable, blocking as any
 * collective. Set-up path only.
 */
static void agree_within_timeout(int *agree, int n, MPI_Comm comm, const char *call)
{
    double timeout = 0;
    if (ts_barrier_timeout_from_env(&timeout) < 0 || timeout <= 0) {
        TS_MPI_OWN(Allreduce)(MPI_IN_PLACE, agree, n, MPI_INT, MPI_MAX, comm);
        return;
    }
    MPI_Request request;
    TS_MPI_OWN(Iallreduce)(MPI_IN_PLACE, agree, n, MPI_INT, MPI_MAX, comm, &request);
    uint64_t deadline = ts_monotonic_ns() + (uint64_t)(timeout * 1e9);
    for (unsigned polls = 0;; polls++) {
        int done = 0;
        TS_MPI_OWN(Test)(&request, &done, MPI_STATUS_IGNORE); /* ours would note it */
        if (done)
            return;
        if (ts_monotonic_ns() > deadline) {
            int size = 0;
            PMPI_Comm_size(comm, &size);
            ts_mpi_fatal(comm,
                         "%s timed out (TOPSYNC_TIMEOUT, %g s) in the set-up of a communicator "
                         "of %d ranks, which this call started: another rank has not joined "
                         "it. Either that rank is in another collective on this communicator, "
                         "reached through a call topsync does not serve (every rank must "
                         "reach it through MPI_Barrier, MPI_Allreduce, MPI_Reduce, MPI_Bcast "
                         "or their _c forms alike), or it has not reached its call yet",
                         call, timeout, size);
        }
        if (polls > 1000) /* after the first millisecond or so: poll, don't burn */
            usleep(polls > 100000 ? 1000 : 50);
    }
}

struct comm_state *ts_mpi_setup(MPI_Comm comm, const char *call)
{
    struct comm_state *s = xcalloc(comm, 1, sizeof *s);
    s->comm = comm;
    s->leaders = MPI_COMM_NULL;
    s->mode = MODE_PMPI;
    s->ops = TS_MPI_OPS_ALL;

    int inter = 0, size = 1, rank = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (!inter)
        PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank); /* in the local group for an intercommunicator */
    if (inter || size == 1) {
        if (rank == 0 && ts_mpi_verbose() >= 2) {
            if (inter) { /* both groups' sizes: the comm's size is the local group's */
                int local = 0, remote = 0;
                PMPI_Comm_size(comm, &local);
                PMPI_Comm_remote_size(comm, &remote);
                fprintf(stderr, "topsync-mpi: intercommunicator of %d + %d ranks: PMPI_Barrier\n",
                        local, remote);
            } else {
                fprintf(stderr, "topsync-mpi: comm of 1 rank: PMPI_Barrier (one rank)\n");
            }
        }
        return s;
    }

    /* Validate the configuration on every rank, check that the variables
     * that decide which collectives a rank calls are alike on every rank,
     * and find whether every rank keeps this group's layout from the same
     * earlier set-up: one MPI_Allreduce agrees on all three before anything
     * depends on them. Print before aborting, and meet first, so that the
     * launcher does not tear the job down before the messages are out. */
    char config_error[512] = "";
    struct ts_mpi_env env;
    ts_mpi_env_scan(&env);
    uint64_t env_hash = env.hash;
    int bad = 0;
    if (!config_checked(env_hash)) {
        bad = check_config(config_error, sizeof config_error);
        if (!bad)
            config_valid(env_hash);
    }
    /* Each alike on every rank, or ranks would call different collectives
     * (a hang, or the MPI's "message truncated"): TOPSYNC_BARRIER=mpi
     * skips what follows; TOPSYNC_NODE_SPLIT cuts the nodes; and
     * TOPSYNC_MPI_SETUP_AT, MPI_COMM_WORLD's agreed here, counts the
     * barriers before every later set-up. */
    int agreed_at = ts_mpi_agreed_setup_at(); /* once agreed, the one used */
    const struct shape_variable shape[] = {
        {"TOPSYNC_BARRIER=mpi", env.barrier && !strcasecmp(env.barrier, "mpi"), "yes", "no"},
        {"TOPSYNC_NODE_SPLIT", ts_mpi_node_split_of(env.node_split), NULL, NULL},
        {"TOPSYNC_MPI_SETUP_AT", agreed_at ? agreed_at : ts_mpi_setup_at_of(env.setup_at), NULL,
         NULL},
        {"TOPSYNC_MPI_OPS (as bits: barrier 1, allreduce 2, reduce 4, bcast 8)",
         ts_mpi_ops_of(env.ops), NULL, NULL},
    };
    bool pmpi = shape[0].value;
    s->ops = shape[3].value < 0 ? TS_MPI_OPS_ALL : (unsigned)shape[3].value; /* invalid: aborts */
    int *world_ranks = NULL;
    struct ts_layout kept, fresh;
    memset(&kept, 0, sizeof kept);
    memset(&fresh, 0, sizeof fresh);
    bool have = !bad && !pmpi && ts_mpi_layout_world_ranks(comm, size, &world_ranks) == 0 &&
                ts_mpi_layout_find(world_ranks, size, env_hash, &kept);
    /* And whether every rank holds the node barrier of the same freed
     * communicator of this layout (parked.c): taken out of the pool now,
     * so that a set-up on another thread cannot take it too, and put back
     * unless all took the same (token: 62 bits, in two halves). */
    uint64_t parked = have ? ts_mpi_unpark(world_ranks, size, kept.digest, &s->node) : 0;
    int parked_hi = (int)(parked >> 31), parked_lo = (int)(parked & 0x7fffffffu);
    /* MPI_MAX of each and of the negated digest and token: equal ones
     * everywhere when the two meet */
    /* ... and, last, the lowest rank with a bad variable, which alone
     * says so (one line, not one per rank) */
    enum { SHAPES = sizeof shape / sizeof shape[0], AGREE = 9 + 2 * SHAPES };
    int agree[AGREE] = {bad,
                        !have,
                        have ? (int)kept.digest : 0,
                        have ? -(int)kept.digest : 0,
                        parked_hi,
                        -parked_hi,
                        parked_lo,
                        -parked_lo};
    for (size_t v = 0; v < SHAPES; v++) {
        agree[8 + 2 * v] = shape[v].value;
        agree[9 + 2 * v] = -shape[v].value;
    }
    agree[AGREE - 1] = bad ? -rank : INT_MIN;
    /* For a set-up that takes a parked barrier, this is the last
     * collective: topsync_mpi_barrier counts on it as the barrier */
    agree_within_timeout(agree, AGREE, comm, call);
    if (agree[0]) {
        if (bad && -agree[AGREE - 1] == rank) {
            fprintf(stderr, "topsync-mpi (rank %d, the first of those it applies to): %s\n", rank,
                    config_error);
            fflush(stderr);
        }
        TS_MPI_OWN(Barrier)(comm);
        ts_mpi_fatal(comm, "invalid configuration, aborting");
    }
    if (!shapes_alike(comm, rank, shape, SHAPES, agree + 8))
        ts_mpi_fatal(comm, "TOPSYNC_* variables differ between ranks (above), aborting");
    if (comm == MPI_COMM_WORLD && !agreed_at)
        ts_mpi_agree_setup_at(shape[2].value);
    if (pmpi) {
        if (rank == 0 && ts_mpi_verbose() >= 2)
            fprintf(stderr, "topsync-mpi: comm of %d ranks: PMPI_Barrier (TOPSYNC_BARRIER=mpi)\n",
                    size);
        start_line(s, comm, rank, size, 0, "TOPSYNC_BARRIER=mpi");
        return s;
    }
    bool reused = !agree[1] && agree[2] == -agree[3];
    bool unparked = reused && parked && agree[4] == -agree[5] && agree[6] == -agree[7];
    if (parked && !unparked)
        ts_mpi_park(&s->node);
    struct ts_layout *l = reused ? &kept : &fresh;
    int want_verbose = ts_mpi_verbose() >= 2;

    /* Who is on which node, and the mode: the same answer on every rank. */
    if (!reused) {
        struct ts_node_record mine, *all = xcalloc(comm, (size_t)size, sizeof *all);
        ts_mpi_node_record(&mine);
        PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, comm);
        l->size = size;
        l->leader = xcalloc(comm, (size_t)size, sizeof *l->leader);
        l->nodes = find_nodes(comm, all, size, rank, shape[1].value, l->leader, l);
        l->min_level = MPI_THREAD_MULTIPLE;
        l->roles_match = 1;
        for (int r = 0; r < size; r++) {
            if (all[r].thread_level < l->min_level)
                l->min_level = all[r].thread_level;
            l->roles_match &= all[r].world_leader == (l->leader[r] == r);
        }
        l->world_leader = all[rank].world_leader;
        l->digest = ts_fnv1a32(TS_FNV1A32_OFFSET ^ (uint32_t)(env_hash ^ env_hash >> 32), all,
                               (size_t)size * sizeof *all);
        free(all);
        if (l->nodes == 1) {
            free(l->leader);
            l->leader = NULL;
        }
    }
    s->node_rank = l->node_rank;
    s->node_size = l->node_size;
    s->node_members = xcalloc(comm, (size_t)l->node_size, sizeof *s->node_members);
    memcpy(s->node_members, l->node_members, (size_t)l->node_size * sizeof *s->node_members);
    const char *pmpi_reason = NULL;
    if (l->nodes > 1) {
        int same = MPI_UNEQUAL;
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
        if (!(same == MPI_IDENT || (same == MPI_CONGRUENT && l->min_level < MPI_THREAD_MULTIPLE)))
            pmpi_reason = same == MPI_CONGRUENT
                              ? "congruent to MPI_COMM_WORLD under MPI_THREAD_MULTIPLE"
                              : "joining its nodes would create a communicator inside MPI_Barrier";
        else if (!l->roles_match)
            pmpi_reason = "its nodes differ from those seen at MPI_Init";
        else
            s->leaders = l->world_leader ? ts_mpi_world_leaders() : MPI_COMM_NULL;
        if (!pmpi_reason) {
            /* the leaders' communicator is split by world rank (node_map.c)
             * and comm is the world: a node's leader ranks there among
             * the leaders by its own rank */
            s->leader_rank_of = xcalloc(comm, (size_t)size, sizeof *s->leader_rank_of);
            for (int r = 0, leaders = 0; r < size; r++)
                if (l->leader[r] == r)
                    s->leader_rank_of[r] = leaders++;
            for (int r = 0; r < size; r++)
                s->leader_rank_of[r] = s->leader_rank_of[l->leader[r]];
        }
    }
    if (pmpi_reason) {
        if (unparked) /* not where it was parked from: kept for another */
            ts_mpi_park(&s->node);
        if (want_verbose && rank == 0)
            describe(s, comm, pmpi_reason, KEPT_NOTHING);
        start_line(s, comm, rank, size, l->nodes, pmpi_reason);
        free(s->node_members);
        s->node_members = NULL;
        ts_mpi_layout_clear(&kept);
        ts_mpi_layout_clear(&fresh);
        free(world_ranks);
        return s;
    }

    if (unparked) {
        /* Every rank of comm took the node barrier the same freed
         * communicator left (its token): every rank ended its operations
         * on that one before freeing it, and freed it before its part of
         * the reduction above, so the barrier goes on from where it was. */
        *s->node.idle_comm = comm;
        ts_mpi_call_log_restart(&s->node.call_log);
        s->coll_choice = l->coll_choice;
        s->mode = l->nodes > 1 ? MODE_NODES : MODE_NODE;
        if (want_verbose && rank == 0)
            describe(s, comm, NULL, KEPT_NODE_BARRIER);
        ts_mpi_layout_clear(&kept);
        free(world_ranks);
        return s;
    }

    /* The node barrier's options; `failed` and `why` collect this rank's
     * errors, agreed on at the end. */
    int failed = 0;
    char why[256] = "";
    topsync_topology_t *m = load_machine(why, sizeof why);
    failed |= !m;
    if (!reused) {
        l->sets = gather_bindings(comm, size, l, m, &l->digest);
        if (!l->sets && !failed) {
            failed = 1;
            snprintf(why, sizeof why, "cannot read the ranks' bindings");
        }
    }
    topsync_barrier_options_t opts;
    topsync_barrier_options_init(&opts);
    opts.topology = m;
    opts.cpusets = (const hwloc_const_bitmap_t *)l->sets;
    opts.process_shared = s->node_size > 1;
    /* Oversubscription is the node's, not the communicator's: when the job
     * has more processes on this node than it has CPUs, a pair of ranks
     * that would each have a CPU on their own shares them with the others
     * (issue 11: pairs of an unbound np 4 job on 2 CPUs spun for whole time
     * slices). Only then: on a node with a CPU per process, a small
     * communicator's ranks do have their own. */
    if (m) {
        int procs = ts_mpi_node_processes();
        int cpus =
            hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(topsync_topology_hwloc(m)));
        if (procs > 0 && cpus > 0 && procs > cpus)
            opts.cpu_sharers = (unsigned)procs;
    }
    s->node.idle_comm = xcalloc(comm, 1, sizeof *s->node.idle_comm);
    *s->node.idle_comm = comm;
    opts.idle = mpi_progress;
    opts.idle_arg = s->node.idle_comm;
    /* The collectives ride on the same node's segment, after the barrier,
     * each served up to the size auto chose for it. */
    topsync_coll_options_t copts;
    topsync_coll_options_init(&copts);
    copts.barrier = opts;
    copts.barrier.algorithm = NULL; /* topo: what the collectives run on */
    if (reused) {
        s->coll_choice = l->coll_choice;
        copts.max_bytes = l->coll_most;
    } else {
        copts.max_bytes = choose_coll_limits(comm, s, m, l->sets, opts.cpu_sharers != 0, &failed,
                                             why, sizeof why);
        l->coll_choice = s->coll_choice;
        l->coll_most = copts.max_bytes;
        l->digest =
            ts_fnv1a32(l->digest, l->coll_choice.max_bytes, sizeof l->coll_choice.max_bytes);
        l->digest = ts_fnv1a32(l->digest, l->coll_choice.classes, sizeof l->coll_choice.classes) &
                    0x7fffffffu;
    }
    size_t seg_size = 0, barrier_bytes = 0, coll_bytes = 0;
    if (!failed && s->node_size > 1 &&
        (topsync_barrier_segment_size((unsigned)s->node_size, &opts, &barrier_bytes) < 0 ||
         topsync_coll_segment_size((unsigned)s->node_size, &copts, &coll_bytes) < 0)) {
        failed = 1;
        snprintf(why, sizeof why, "%s", topsync_error_message());
    }
    /* and each rank's latest call, for a timeout to name (call_log.c) */
    size_t log_at = ts_mpi_call_log_offset(barrier_bytes + coll_bytes);
    seg_size = s->node_size > 1 ? log_at + ts_mpi_call_log_bytes(s->node_size) : 0;

    /* The segments: each node's first rank creates one (unless it failed
     * already: an empty name tells its node's ranks), names go round. Dead
     * jobs' leftovers are swept at the process's first creation. */
    static atomic_flag swept = ATOMIC_FLAG_INIT;
    char name[TS_SEGMENT_NAME_LEN] = "";
    int fd = -1;
    if (!failed && s->node_size > 1 && s->node_rank == 0) {
        /* relaxed: orders nothing, one sweep per process is all it decides */
        if (!atomic_flag_test_and_set_explicit(&swept, memory_order_relaxed))
            ts_segment_sweep("/dev/shm", NULL, 0);
        fd = ts_segment_create(name, sizeof name, seg_size);
        if (fd < 0) {
            snprintf(why, sizeof why, "shm_open/ftruncate: %s", strerror(-fd));
            name[0] = '\0';
            failed = 1;
        }
    }
    char *names = xcalloc(comm, (size_t)size, sizeof name);
    PMPI_Allgather(name, sizeof name, MPI_CHAR, names, sizeof name, MPI_CHAR, comm);
    const char *ours = names + (size_t)s->node_members[0] * sizeof name;
    if (s->node_size > 1 && !failed) {
        if (!ours[0])
            failed = 1; /* the node's first rank says why */
        else if (map_segment(s, ours, seg_size, fd, why, sizeof why) < 0)
            failed = 1;
    } else if (fd >= 0) {
        close(fd);
    }
    uint64_t token = segments_token(names, size);
    free(names);
    if (!failed) {
        int rc = s->node_size > 1
                     /* mapped read-write above: no /proc/self/maps check */
                     ? ts_barrier_attach_mapped(&s->node.barrier, (unsigned)s->node_size, &opts,
                                                s->node.segment, s->node.segment_size,
                                                (unsigned)s->node_rank)
                     : topsync_barrier_create(&s->node.barrier, 1, &opts);
        if (rc == 0)
            rc = s->node_size > 1
                     ? ts_coll_attach_mapped(&s->node.coll, (unsigned)s->node_size, &copts,
                                             (char *)s->node.segment + barrier_bytes, coll_bytes,
                                             (unsigned)s->node_rank)
                     : topsync_coll_create(&s->node.coll, 1, &copts);
        if (rc < 0) {
            failed = 1;
            snprintf(why, sizeof why, "%s", topsync_error_message());
        } else if (s->node_rank == 0) {
            ts_mpi_summary_track(s->node.barrier);
            /* the collectives' barrier reacts too (docs/design.md 10.5) */
            ts_mpi_summary_track(topsync_coll_barrier(s->node.coll));
        }
        ts_mpi_call_log_attach(&s->node.call_log,
                               s->node_size > 1 ? (char *)s->node.segment + log_at : NULL,
                               s->node_rank);
    }

    int nodes = l->nodes; /* l is kept (moved) below */
    /* All ranks of comm agree: topsync everywhere, or PMPI everywhere. This
     * reduction also orders every rank's attach before anyone's first wait
     * (attach's contract): nobody has its result before all contributed;
     * and every rank has mapped its node's segment (or failed to), which
     * is then unlinked: from then on nothing of it is in /dev/shm. The
     * set-up's last collective: topsync_mpi_barrier counts on it as the
     * barrier of the call that set comm up. */
    /* with who says why: the lowest rank that failed with a reason, so
     * that a failure every rank met is one line, not one per rank */
    int any[2] = {failed, failed && why[0] ? -rank : INT_MIN};
    TS_MPI_OWN(Allreduce)(MPI_IN_PLACE, any, 2, MPI_INT, MPI_MAX, comm);
    if (name[0])
        shm_unlink(name);
    if (any[0]) {
        if (failed && why[0] && -any[1] == rank)
            fprintf(stderr,
                    "topsync-mpi: warning: %s (rank %d of a communicator of %d; said once); "
                    "this communicator uses PMPI_Barrier\n",
                    why, rank, size);
        ts_mpi_node_sync_free(&s->node);
        s->leaders = MPI_COMM_NULL;
        s->mode = MODE_PMPI;
        if (world_ranks) /* on every rank: none keeps a layout that failed */
            ts_mpi_layout_forget(world_ranks, size);
    } else {
        s->mode = l->nodes > 1 ? MODE_NODES : MODE_NODE;
        if (world_ranks && token) { /* parked when comm is freed */
            s->node.world_ranks = xcalloc(comm, (size_t)size, sizeof *s->node.world_ranks);
            memcpy(s->node.world_ranks, world_ranks, (size_t)size * sizeof *s->node.world_ranks);
            s->node.size = size;
            s->node.layout_digest = l->digest;
            s->node.token = token;
        }
        if (!reused && world_ranks) { /* every rank keeps this set-up's */
            l->world_ranks = world_ranks;
            l->env_hash = env_hash;
            world_ranks = NULL;
            ts_mpi_layout_keep(l);
        }
    }
    if (want_verbose && rank == 0)
        describe(s, comm, NULL, reused ? KEPT_LAYOUT : KEPT_NOTHING);
    start_line(s, comm, rank, size, nodes, NULL);
    ts_mpi_layout_clear(&kept);
    ts_mpi_layout_clear(&fresh);
    free(world_ranks);
    return s;
}
