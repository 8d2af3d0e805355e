/*
 * GenMC harness: one barrier algorithm (-DALGO_<name>), src/wait/wait.c and
 * the algorithm's src/barrier/algorithms/NAME.c included as they are, run by N threads
 * (2 or 3) for EPISODES episodes (2 or 3) under the wait policy POLICY
 * (TS_WAIT_SPIN or TS_WAIT_BLOCK, the futex path of wait.c).
 *
 * Each thread writes its cell of episode e (a plain, non-atomic write)
 * before entering the barrier and reads every thread's cell of episode e
 * after leaving it. Under every RC11 execution:
 *  - each read sees the value written (nobody left before everybody came);
 *  - GenMC finds no data race on the cells (the barrier's release/acquire
 *    chain orders every write before every read);
 *  - no thread waits forever (--check-liveness).
 * Weakened variant: -DWEAKEN_IN=<function> (genmc_shim.h) relaxes the
 * orderings of one function of the algorithm; GenMC must report a race or a
 * failed assertion (-DWEAKEN_IN=ts_wait_all -DWEAKEN_FENCES_ONLY: the
 * leader's scan without its acquire fence).
 */
#include "genmc_shim.h"

#include <assert.h>
#include <stddef.h>

#include "../../src/wait/wait.c"

/* -DALGO_<name>: which algorithm file (a macro cannot name an #include
 * here: GenMC passes -D values on without their quotes) */
#if defined(ALGO_sense_reversing)
#include "../../src/barrier/algorithms/sense_reversing.c"
#define ALGO ts_algo_sense_reversing
#elif defined(ALGO_sense_reversing_counter)
#include "../../src/barrier/algorithms/sense_reversing_counter.c"
#define ALGO ts_algo_sense_reversing_counter
#elif defined(ALGO_sense_reversing_gr)
#include "../../src/barrier/algorithms/sense_reversing_gr.c"
#define ALGO ts_algo_sense_reversing_gr
#elif defined(ALGO_combining_tree)
#include "../../src/barrier/algorithms/combining_tree.c"
#define ALGO ts_algo_combining_tree
#elif defined(ALGO_mcs)
#include "../../src/barrier/algorithms/mcs.c"
#define ALGO ts_algo_mcs
#elif defined(ALGO_tournament)
#include "../../src/barrier/algorithms/tournament.c"
#define ALGO ts_algo_tournament
#elif defined(ALGO_dissemination)
#include "../../src/barrier/algorithms/dissemination.c"
#define ALGO ts_algo_dissemination
#elif defined(ALGO_topo)
#include "../../src/barrier/algorithms/topo.c"
#define ALGO ts_algo_topo
#else
#error \
    "define ALGO_<name>: sense_reversing, sense_reversing_counter, sense_reversing_gr, combining_tree, mcs, tournament, dissemination or topo"
#endif

#ifndef N
#define N 3
#endif
#ifndef EPISODES
#define EPISODES 2
#endif
#ifndef POLICY
#define POLICY TS_WAIT_BLOCK
#endif
#define LINE 64u

/* The "topo" algorithm takes its groups from groups.c; this harness gives
 * it a fixed two-level hierarchy instead: {0, 1} led by 0, then {0, 2}
 * (TOP) led by 0 (with N == 2: {0, 1} only). -DTOPO_FLAT: one group of
 * all N led by 0, whose leader scans N - 1 members at once (ts_wait_all). */
#ifdef TOPO_FLAT
#include "topo_flat_groups.h"
#else
int topsync_groups_of_rank(const topsync_groups_t *g, unsigned rank, unsigned *idx, unsigned max)
{
    (void)g;
    (void)max;
    if (rank == 0) {
        idx[0] = 0;
        idx[1] = 1;
        return N == 3 ? 2 : 1;
    }
    idx[0] = rank == 1 ? 0 : 1;
    return 1;
}

int topsync_groups_get(const topsync_groups_t *g, unsigned index, topsync_group_info_t *info)
{
    static const unsigned first[] = {0, 1}, top[] = {0, 2};
    (void)g;
    info->leader = 0;
    info->nmembers = 2;
    info->members = index == 0 ? first : top;
    return 0;
}
#endif

static topsync_barrier_t barrier;
static unsigned char segment[(N + 1) * 8 * LINE] __attribute__((aligned(64)));
static int cell[EPISODES][N];

static void *participant(void *arg)
{
    unsigned rank = (unsigned)(uintptr_t)arg;
    for (unsigned e = 1; e <= EPISODES; e++) {
        cell[e - 1][rank] = (int)e;
        ALGO.wait(&barrier, rank, e);
        for (unsigned r = 0; r < N; r++)
            assert(cell[e - 1][r] == (int)e);
    }
    return NULL;
}

int main(void)
{
    barrier.algo = &ALGO;
    barrier.n = N;
    /* field by field: GenMC cannot run the memset a compound literal makes */
    barrier.wait.kind = POLICY;
    /* block: straight to the futex protocol (the bounded spin and yield
     * loops before it only multiply the executions) */
    barrier.wait.spin_iterations = 0;
    barrier.wait.yield_iterations = 0;
#ifdef ORDERED_POLL /* TOPSYNC_POLL=ordered: one acquire wait per member */
    barrier.wait.ordered_poll = true;
#endif
    barrier.line = LINE;
    barrier.base = segment;
    unsigned global = ts_algo_global_lines(&barrier), rank_lines = ts_algo_rank_lines(&barrier);
    assert(global <= 8 && rank_lines <= 8);
    barrier.block_bytes = 8 * LINE;
    if (ALGO.setup && ALGO.setup(&barrier) != 0)
        return 1;
    genmc_run_participants(participant, N);
    return 0;
}
