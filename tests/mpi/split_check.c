/*
 * Concurrent MPI_Barrier on split communicators, checked every episode: an
 * ordinary MPI program (no topsync call) that splits MPI_COMM_WORLD into
 * pairs (rank / 2) and into two halves (rank < size / 2) and loops on
 * MPI_Barrier over its part, every part at the same time as the others,
 * once per algorithm listed in SPLIT_CHECK_ALGORITHMS (space separated,
 * set into TOPSYNC_BARRIER before each split: read at set-up; default
 * "auto"). Through a node-shared window each part keeps an arrival counter
 * and its members' last episode; after each barrier every rank checks that
 * its part's counter reached k * part size and every member stored k.
 * Run natively and with libtopsync-mpi preloaded. Rank 0 prints
 * "N passed, N failed" over all ranks.
 *
 *   usage: split_check [EPISODES]
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define MAX_RANKS 64

struct shared {
    _Atomic uint64_t arrivals[MAX_RANKS]; /* per part (indexed by the part's color) */
    _Atomic uint64_t episode[MAX_RANKS];  /* per world rank */
};

static int rank, size, failures, checks;

/* The part of rank r: its pair (kind 0) or its half (kind 1). */
static int part_of(int kind, int r)
{
    return kind == 0 ? r / 2 : r < size / 2;
}

static void run(MPI_Comm part, int kind, int part_size, struct shared *sh, int episodes,
                const char *label)
{
    int color = part_of(kind, rank), reported = 0;
    for (uint64_t k = 1; k <= (uint64_t)episodes; k++) {
        atomic_store_explicit(&sh->episode[rank], k, memory_order_relaxed);
        atomic_fetch_add_explicit(&sh->arrivals[color], 1, memory_order_relaxed);
        if ((k * 2654435761u + (uint64_t)rank) % 89 == 0)
            usleep(30); /* shake the interleavings */
        MPI_Barrier(part);
        uint64_t seen = atomic_load_explicit(&sh->arrivals[color], memory_order_relaxed);
        int bad = seen < k * (uint64_t)part_size;
        int members[MAX_RANKS], n = 0;
        for (int r = 0; r < size; r++)
            if (part_of(kind, r) == color)
                members[n++] = r;
        for (int i = 0; i < n && !bad; i++)
            bad = atomic_load_explicit(&sh->episode[members[i]], memory_order_relaxed) < k;
        checks++;
        if (bad && !reported) /* report once, and go on: the others keep waiting on us */
            fprintf(stderr, "rank %d: %s: episode %llu left early (%llu arrivals of %llu)\n", rank,
                    label, (unsigned long long)k, (unsigned long long)seen,
                    (unsigned long long)(k * (uint64_t)part_size));
        reported |= bad;
        failures += bad;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int episodes = argc > 1 ? atoi(argv[1]) : 3000;
    if (size > MAX_RANKS || size % 2) {
        if (rank == 0)
            fprintf(stderr, "split_check: an even number of ranks up to %d\n", MAX_RANKS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size, node_rank;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_rank(node, &node_rank);
    if (node_size != size) {
        if (rank == 0)
            fprintf(stderr, "split_check: all ranks on one machine\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct shared *sh;
    MPI_Win win;
    MPI_Win_allocate_shared(node_rank == 0 ? (MPI_Aint)sizeof *sh : 0, 1, MPI_INFO_NULL, node, &sh,
                            &win);
    MPI_Aint qsize;
    int disp;
    MPI_Win_shared_query(win, 0, &qsize, &disp, &sh);

    char list[512];
    snprintf(list, sizeof list, "%s",
             getenv("SPLIT_CHECK_ALGORITHMS") ? getenv("SPLIT_CHECK_ALGORITHMS") : "auto");
    for (char *save, *alg = strtok_r(list, " ", &save); alg; alg = strtok_r(NULL, " ", &save)) {
        setenv("TOPSYNC_BARRIER", alg, 1);
        for (int kind = 0; kind < 2; kind++) {
            const char *label = kind == 0 ? "pairs" : "halves";
            int color = part_of(kind, rank);
            if (node_rank == 0)
                memset(sh, 0, sizeof *sh);
            MPI_Barrier(MPI_COMM_WORLD); /* the reset before anyone counts */
            MPI_Comm part;
            MPI_Comm_split(MPI_COMM_WORLD, color, rank, &part);
            int part_size;
            MPI_Comm_size(part, &part_size);
            char what[128];
            snprintf(what, sizeof what, "%s/%s", label, alg);
            run(part, kind, part_size, sh, episodes, what);
            MPI_Comm_free(&part);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    int totals[2] = {checks - failures, failures}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return failures ? 1 : 0;
}
