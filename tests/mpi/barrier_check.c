/*
 * MPI_Barrier through libtopsync-mpi, checked every episode.
 *
 * For every algorithm (TOPSYNC_BARRIER is read when a communicator sets
 * itself up, on its first barrier, so each MPI_Comm_dup gets the algorithm
 * set just before), K episodes on a duplicate of MPI_COMM_WORLD, each
 * checking through a node-shared window (MPI_Win_allocate_shared) that
 *   - nobody left before everyone arrived: an arrival counter incremented
 *     before the barrier is >= k * size after it;
 *   - a value every rank stored before the barrier is seen by all after it.
 * Then: hundreds of MPI_Comm_dup / split / free cycles, an intercommunicator
 * (passes through to PMPI_Barrier), MPI_COMM_SELF (size 1, passes through).
 *
 * usage: barrier_check [EPISODES [CHURN_CYCLES]]; BARRIER_CHECK_ONLY=NAME runs one
 * algorithm only.
 *
 * Works linked (-ltopsync-mpi-IMPL) and preloaded: topsync_mpi_describe is
 * looked up at run time, and the run fails when it is missing unless
 * TOPSYNC_EXPECT_PMPI=1 says no topsync library is there at all.
 * Rank 0 prints "N passed, N failed" over all ranks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static int passed, failed, world_rank, world_size;
static const char *(*describe)(MPI_Comm);

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "rank %d: CHECK failed: %s: ", world_rank, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
        }                                                                      \
    } while (0)

struct shared {
    _Atomic uint64_t arrivals;
    _Atomic uint64_t slot[2][1024];
};

static struct shared *sh;
static int node_size;

/* K episodes on comm (a dup of MPI_COMM_WORLD); ranks are world ranks. */
static void episodes(MPI_Comm comm, const char *label, int k_max)
{
    int bad = 0;
    for (uint64_t k = 1; k <= (uint64_t)k_max && !bad; k++) {
        atomic_store_explicit(&sh->slot[k % 2][world_rank], k, memory_order_relaxed);
        atomic_fetch_add_explicit(&sh->arrivals, 1, memory_order_relaxed);
        /* shake the interleavings now and then */
        if ((k * 2654435761u + (uint64_t)world_rank) % 97 == 0)
            usleep(50);
        MPI_Barrier(comm);
        uint64_t seen = atomic_load_explicit(&sh->arrivals, memory_order_relaxed);
        if (seen < k * (uint64_t)world_size) {
            CHECK(0, "%s: episode %llu left with %llu arrivals", label, (unsigned long long)k,
                  (unsigned long long)seen);
            bad = 1;
        }
        for (int r = 0; r < world_size && !bad; r++) {
            uint64_t v = atomic_load_explicit(&sh->slot[k % 2][r], memory_order_relaxed);
            if (v != k) {
                CHECK(0, "%s: episode %llu saw rank %d's value %llu", label, (unsigned long long)k,
                      r, (unsigned long long)v);
                bad = 1;
            }
        }
    }
    if (!bad)
        passed++;
    /* reset the counter for the next communicator (everyone is past it) */
    MPI_Barrier(comm);
    if (world_rank == 0)
        atomic_store(&sh->arrivals, 0);
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int episodes_per_algorithm = argc > 1 ? atoi(argv[1]) : 2000;
    int churn = argc > 2 ? atoi(argv[2]) : 150;
    int expect_pmpi = getenv("TOPSYNC_EXPECT_PMPI") != NULL;
    *(void **)&describe = dlsym(RTLD_DEFAULT, "topsync_mpi_describe");
    CHECK(expect_pmpi || describe != NULL, "topsync_mpi_describe not found: library not loaded");

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    if (node_size != world_size) {
        if (world_rank == 0)
            fprintf(stderr, "barrier_check needs all ranks on one machine\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int node_rank;
    MPI_Comm_rank(node, &node_rank);
    MPI_Win win;
    MPI_Aint size = node_rank == 0 ? (MPI_Aint)sizeof(struct shared) : 0;
    MPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, node, &sh, &win);
    MPI_Aint qsize;
    int disp;
    MPI_Win_shared_query(win, 0, &qsize, &disp, &sh);
    if (node_rank == 0)
        memset(sh, 0, sizeof *sh);
    MPI_Barrier(MPI_COMM_WORLD);

    static const char *algorithms[] = {"auto",
                                       "sense-reversing",
                                       "sense-reversing-counter",
                                       "sense-reversing-gr",
                                       "combining-tree",
                                       "mcs",
                                       "tournament",
                                       "dissemination",
                                       "topo",
                                       "topo/tree",
                                       "topo:numa,socket/tree",
                                       "mpi"};
    /* BARRIER_CHECK_ONLY=NAME restricts the loop to one algorithm. */
    const char *only = getenv("BARRIER_CHECK_ONLY");
    if (only && !*only)
        only = NULL; /* set but empty: every algorithm */
    const char *saved = getenv("TOPSYNC_BARRIER");
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
        if (only && strcmp(only, algorithms[a]) != 0)
            continue;
        setenv("TOPSYNC_BARRIER", algorithms[a], 1);
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        episodes(c, algorithms[a], episodes_per_algorithm);
        if (describe) {
            const char *got = describe(c);
            if (!strcmp(algorithms[a], "mpi"))
                CHECK(!strcmp(got, "mpi"), "TOPSYNC_BARRIER=mpi runs %s", got);
            else if (!strcmp(algorithms[a], "auto"))
                CHECK(strcmp(got, "mpi") != 0, "auto fell back to %s", got);
            else
                CHECK(!strncmp(got, algorithms[a], strcspn(algorithms[a], ":/")),
                      "asked %s, runs %s", algorithms[a], got);
        }
        MPI_Comm_free(&c);
    }
    if (saved)
        setenv("TOPSYNC_BARRIER", saved, 1);
    else
        unsetenv("TOPSYNC_BARRIER");

    /* Communicator churn: every dup/split sets up (a segment each) and frees. */
    for (int i = 0; i < churn; i++) {
        MPI_Comm d, half;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Barrier(d);
        MPI_Comm_split(d, world_rank % 2, world_rank, &half);
        MPI_Barrier(half);
        MPI_Barrier(half);
        MPI_Comm_free(&half);
        MPI_Barrier(d);
        MPI_Comm_free(&d);
    }
    passed++;

    /* An intercommunicator between even and odd ranks: PMPI_Barrier. */
    if (world_size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
        int remote_leader = world_rank % 2 == 0 ? 1 : 0;
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
        for (int i = 0; i < 50; i++)
            CHECK(MPI_Barrier(inter) == MPI_SUCCESS, "intercomm barrier");
        if (describe)
            CHECK(!strcmp(describe(inter), "mpi"), "intercomm runs %s", describe(inter));
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    /* MPI_COMM_SELF: one rank, nothing to wait for. */
    CHECK(MPI_Barrier(MPI_COMM_SELF) == MPI_SUCCESS, "self barrier");
    if (describe)
        CHECK(!strcmp(describe(MPI_COMM_SELF), "mpi"), "self runs %s", describe(MPI_COMM_SELF));

    /* describe's strings stay valid while their communicators live: the
     * next call does not overwrite them (issue 37.6) */
    if (describe) {
        const char *world = describe(MPI_COMM_WORLD);
        char before[160];
        snprintf(before, sizeof before, "%s", world);
        const char *self = describe(MPI_COMM_SELF);
        CHECK(!strcmp(world, before), "describe(MPI_COMM_SELF) turned world's \"%s\" into \"%s\"",
              before, world);
        CHECK(!strcmp(self, "mpi"), "self runs %s", self);
    }

    int totals[2] = {passed, failed}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return failed ? 1 : 0;
}
