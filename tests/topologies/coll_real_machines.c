/*
 * The collectives on the groups of the real machines of machines/ (hwloc
 * XML of 46 machines: sub-NUMA clusters, KNL, offline CPUs, hybrid cores,
 * NUMA nodes holding packages...): for each, up to 24 threads placed by
 * map-by core and by numa (irregular groups: members spread over units),
 * running allreduce, reduce and bcast on those groups (the threads
 * themselves run unbound on this machine's CPUs, waiting by futex).
 *
 * Checked after every call: integer results exact; a double sum whose
 * value depends on the order of combination equal, bit for bit, to the
 * order the README documents, recomputed here from the groups alone
 * (each leader folds its members into its own value in ascending rank
 * order, lowest level first); the same bits on every thread.
 * Usage: coll_real_machines DIR (the XML files).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <topsync.h>

#include "../unit/check.h"

#define MAX_NP 24u
#define ROUNDS 3u      /* both slot parities, and the one-way ring moving */
#define SLOT_COUNT 40u /* int64: 320 bytes, past the barrier's lines */

struct run {
    topsync_coll_t *coll;
    unsigned np;
    double expected_sum; /* the documented order's double sum */
    unsigned failures;   /* written by each thread under lock */
    pthread_mutex_t lock;
    const char *machine;
};

/* A value whose sum with the others depends on the order: huge ones that
 * cancel, and ones that the huge ones absorb. */
static double order_value(unsigned r)
{
    switch (r % 4) {
    case 0: return 1e16;
    case 1: return 1.0;
    case 2: return -1e16;
    default: return 3.0 + r;
    }
}

/* The documented order (README, "Small collectives"): groups, lowest level
 * first (topsync_groups_get orders them by level, then leader); in each,
 * the leader's value op each other member's, ascending. */
static double documented_sum(const topsync_groups_t *g, unsigned np)
{
    double acc[MAX_NP] = {0};
    for (unsigned r = 0; r < np; r++)
        acc[r] = order_value(r);
    for (unsigned k = 0; g && k < topsync_groups_count(g); k++) {
        topsync_group_info_t info;
        topsync_groups_get(g, k, &info);
        for (unsigned m = 1; m < info.nmembers; m++)
            acc[info.leader] += acc[info.members[m]];
    }
    return acc[0];
}

static void fail(struct run *run, unsigned rank, const char *what)
{
    pthread_mutex_lock(&run->lock);
    if (run->failures++ < 5)
        fprintf(stderr, "%s, np %u, rank %u: %s\n", run->machine, run->np, rank, what);
    pthread_mutex_unlock(&run->lock);
}

struct thread_arg {
    struct run *run;
    unsigned rank;
};

static void *participant(void *p)
{
    struct thread_arg *a = p;
    struct run *run = a->run;
    unsigned me = a->rank, n = run->np;
    for (unsigned round = 0; round < ROUNDS; round++) {
        int64_t one = (int64_t)me + 1 + round, all = 0;
        if (topsync_allreduce(run->coll, me, &one, &all, 1, TOPSYNC_TYPE_INT64, TOPSYNC_OP_SUM) ||
            all != (int64_t)n * (n + 1) / 2 + (int64_t)n * round)
            fail(run, me, "allreduce of one int64 (on the lines)");
        int64_t many[SLOT_COUNT], sums[SLOT_COUNT];
        for (unsigned i = 0; i < SLOT_COUNT; i++)
            many[i] = (int64_t)(me + 1) * (i + 1 + round);
        int bad = topsync_allreduce(run->coll, me, many, sums, SLOT_COUNT, TOPSYNC_TYPE_INT64,
                                    TOPSYNC_OP_SUM) != 0;
        for (unsigned i = 0; i < SLOT_COUNT; i++)
            bad |= sums[i] != (int64_t)n * (n + 1) / 2 * (i + 1 + round);
        if (bad)
            fail(run, me, "allreduce of 40 int64 (in the slots)");
        double mine = order_value(me), sum = 0;
        if (topsync_allreduce(run->coll, me, &mine, &sum, 1, TOPSYNC_TYPE_DOUBLE, TOPSYNC_OP_SUM) ||
            memcmp(&sum, &run->expected_sum, sizeof sum))
            fail(run, me, "double sum not in the documented order");
        unsigned root = (n - 1 + round) % n;
        int64_t ones[3] = {1, (int64_t)me, -1};
        int64_t reduced[3] = {0, 0, 0};
        if (topsync_reduce(run->coll, me, ones, me == root ? reduced : NULL, 3, TOPSYNC_TYPE_INT64,
                           TOPSYNC_OP_SUM, root))
            fail(run, me, "reduce refused");
        if (me == root && (reduced[0] != (int64_t)n || reduced[1] != (int64_t)n * (n - 1) / 2 ||
                           reduced[2] != -(int64_t)n))
            fail(run, me, "reduce to a root");
        unsigned char word[100];
        unsigned from = (n / 2 + round) % n;
        for (unsigned i = 0; i < sizeof word; i++)
            word[i] = me == from ? (unsigned char)(i * 7 + round) : 0xee;
        bad = topsync_bcast(run->coll, me, word, sizeof word, from) != 0;
        for (unsigned i = 0; i < sizeof word; i++)
            bad |= word[i] != (unsigned char)(i * 7 + round);
        if (bad)
            fail(run, me, "bcast of 100 bytes");
    }
    return NULL;
}

static void run_case(const char *machine, topsync_topology_t *t, unsigned np, topsync_map_by_t map)
{
    hwloc_bitmap_t sets[MAX_NP]; /* allocated by topsync_placement_compute */
    CHECK_EQ(topsync_placement_compute(t, np, map, TOPSYNC_BIND_TO_CORE, sets), 0);
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    o.barrier.topology = t;
    o.barrier.cpusets = (const hwloc_const_bitmap_t *)sets;
    o.barrier.wait = TOPSYNC_WAIT_BLOCK; /* np threads on this machine's few CPUs */
    struct run run = {.np = np, .machine = machine, .lock = PTHREAD_MUTEX_INITIALIZER};
    int rc = topsync_coll_create(&run.coll, np, &o);
    CHECK_EQ(rc, 0);
    if (rc == 0) {
        run.expected_sum =
            documented_sum(topsync_barrier_groups(topsync_coll_barrier(run.coll)), np);
        pthread_t threads[MAX_NP];
        struct thread_arg args[MAX_NP];
        for (unsigned r = 0; r < np; r++) {
            args[r] = (struct thread_arg){&run, r};
            pthread_create(&threads[r], NULL, participant, &args[r]);
        }
        for (unsigned r = 0; r < np; r++)
            pthread_join(threads[r], NULL);
        CHECK_EQ(run.failures, 0);
        topsync_coll_destroy(run.coll);
    }
    for (unsigned i = 0; i < np; i++)
        hwloc_bitmap_free(sets[i]);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: coll_real_machines DIR\n");
        return 2;
    }
    struct dirent **entries;
    int n = scandir(argv[1], &entries, NULL, by_name);
    unsigned machines = 0, hierarchical = 0;
    for (int e = 0; e < n; e++) {
        const char *f = entries[e]->d_name;
        size_t len = strlen(f);
        if (len > 4 && !strcmp(f + len - 4, ".xml")) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[1], f);
            topsync_topology_t *t = NULL;
            CHECK_EQ(topsync_topology_load_xml(&t, path), 0);
            if (t) {
                machines++;
                unsigned cores = topsync_topology_ncores(t);
                unsigned np = cores < MAX_NP ? cores : MAX_NP;
                hierarchical += np > 2;
                run_case(f, t, np, TOPSYNC_MAP_BY_CORE);
                run_case(f, t, np, TOPSYNC_MAP_BY_NUMA);
                if (np > 7)
                    run_case(f, t, 7, TOPSYNC_MAP_BY_NUMA);
                topsync_topology_destroy(t);
            }
        }
        free(entries[e]);
    }
    free(entries);
    CHECK(machines >= 46);
    printf("%u machines (%u with more than 2 participants)\n", machines, hierarchical);
    return check_summary();
}
