/*
 * MPI_Barrier across nodes, checked every episode: an ordinary MPI program
 * (no topsync call) for a job that its MPI runs on several hosts
 * (tests/machine-vm/two_nodes.sh), run preloaded.
 *
 * Communicators, each looped on at the same time as its siblings:
 *   world      all ranks (spans the nodes);
 *   halves     rank % 2 (each half spans the nodes when ranks fill a node
 *              before the next);
 *   node       MPI_COMM_TYPE_SHARED (inside one node);
 *   pairs      rank / 2 (inside one node under the same placement).
 * The check crosses nodes without help from the barrier: each rank notes
 * CLOCK_MONOTONIC as it enters episode k and as it leaves it, and every
 * 100 episodes an MPI_Allreduce (MAX of arrivals and of negated leavings)
 * checks that nobody left episode k before the last rank entered it.
 * Valid where the "nodes" share one clock (namespaces of one machine:
 * two_nodes.sh), not across real hosts or guests. Rank 0 prints
 * "N passed, N failed" over all ranks.
 *
 *   usage: nodes_check [EPISODES]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

enum { WORLD, HALVES, NODE, PAIRS, KINDS };
static const char *const kind_names[KINDS] = {"world", "halves", "node", "pairs"};
enum { BATCH = 100 };

static int passed, failed, world_rank;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void episodes(MPI_Comm comm, int kind, long count)
{
    int64_t mine[2 * BATCH], all[2 * BATCH]; /* arrivals, then negated leavings */
    int bad = 0;
    for (long k = 1; k <= count && !bad; k++) {
        long i = (k - 1) % BATCH;
        mine[i] = now_ns();
        MPI_Barrier(comm);
        mine[BATCH + i] = -now_ns();
        if (i == BATCH - 1 || k == count) {
            MPI_Allreduce(mine, all, 2 * BATCH, MPI_INT64_T, MPI_MAX, comm);
            for (long j = 0; j <= i && !bad; j++) {
                if (all[j] > -all[BATCH + j]) {
                    fprintf(stderr,
                            "nodes_check: rank %d, %s: a rank left episode %ld %lld ns "
                            "before the last one arrived\n",
                            world_rank, kind_names[kind], k - i + j,
                            (long long)(all[j] + all[BATCH + j]));
                    bad = 1;
                }
            }
        }
    }
    if (bad)
        failed++;
    else
        passed++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    long count = argc > 1 ? atol(argv[1]) : 300;

    MPI_Comm comms[KINDS];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[WORLD]);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &comms[HALVES]);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comms[NODE]);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank / 2, world_rank, &comms[PAIRS]);
    for (int kind = 0; kind < KINDS; kind++)
        episodes(comms[kind], kind, count);

    int totals[2] = {passed, failed}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("%d passed, %d failed\n", sums[0], sums[1]);
    for (int kind = 0; kind < KINDS; kind++)
        MPI_Comm_free(&comms[kind]);
    MPI_Finalize();
    return failed ? 1 : 0;
}
