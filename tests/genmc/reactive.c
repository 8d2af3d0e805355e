/*
 * GenMC harness: the switch of a reactive barrier (src/barrier/reactive.c,
 * included as it is; docs/design.md section 10) between two configurations
 * with states of their own: sense-reversing (the robust configuration's
 * algorithm, src/barrier/algorithms/sense_reversing.c) under spin as
 * configuration 0 and under POLICY1 as 1: block (the futex protocol of
 * wait.c) with N = 2, yield with N = 3 (3 participants sleeping on futexes
 * for 3 episodes are more executions than GenMC explores in minutes).
 * Episode 1 runs on configuration 0 and 2 on 1 (a plan set before the
 * participants start, as one stored at participant 0's entry into episode
 * 1 would be), and participant 0, deciding at episode 2 (check_mask 1, as
 * TOPSYNC_REACTIVE=every:2), stores the plan that moves episode 3 back to
 * 0 while the others enter 2 and 3: the switch goes both ways, and any
 * participant may come late across it (GenMC explores every interleaving;
 * a store at every episode makes 3 x 3 take over 5 minutes). The switch's
 * argument does not depend on the algorithm (each configuration need only
 * be a barrier, which barrier.c checks for all eight); the stress tests
 * run every algorithm against the robust one (tests/stress,
 * reactive-every*).
 *
 * Each participant writes its cell of episode e (plain) before entering
 * and reads all cells of e after leaving. Under every RC11 execution: each
 * read sees the value written, no data race on the cells, nobody waits
 * forever (--check-liveness).
 *
 * The plan word is relaxed on both sides by design (reactive.c says why),
 * so there is no ordering to weaken; the mutants break the protocol:
 *  -DMUTANT_NO_BEFORE: a plan's `before` names the new configuration, so
 *   a participant entering the episode of the switch while participant 0
 *   stores the plan takes the new one where the others take the old;
 *  -DMUTANT_SAME_EPISODE: the plan takes effect at the episode participant
 *   0 is entering instead of the next one (the others may be in it on the
 *   old configuration already);
 *  -DMUTANT_SHARED_STATE: both configurations on one state (each with its
 *   own episode numbers, as the switch keeps them): the state that one
 *   configuration left is not what the other's next episode expects.
 * Each must be caught.
 *
 * -DATTACH_START: the start of an attached barrier (docs/design.md 10.6).
 * The plan word begins zero, as in a fresh segment; rank 0 names
 * configuration 1 from the first episode with ts_reactive_start_on during
 * its attach (lifecycle.c), and the caller's synchronization after attach
 * (barrier.h: every rank returns from attach before any waits; here a
 * release/acquire counter, as an MPI barrier or the parent's wait give)
 * comes before the first wait. Every episode must still run on one
 * configuration for all. Its mutant:
 *  -DMUTANT_START_AFTER_SYNC: rank 0 stores that plan after the caller's
 *   synchronization (at its first wait, say): a rank reading the plan
 *   before it runs episode 1 on configuration 0 while rank 0 runs it on 1.
 */
#include "genmc_shim.h"

#include <assert.h>
#include <stddef.h>

#include "../../src/barrier/reactive.h"
#include "../../src/wait/wait.c"
#include "../../src/barrier/algorithms/sense_reversing.c"

#if defined(MUTANT_NO_BEFORE)
static inline uint64_t mutant_plan(uint32_t from, unsigned before, unsigned next)
{
    (void)before;
    return ts_reactive_plan_make(from, next, next);
}
#define ts_reactive_plan_make mutant_plan
#elif defined(MUTANT_SAME_EPISODE)
static inline uint64_t mutant_plan(uint32_t from, unsigned before, unsigned next)
{
    return ts_reactive_plan_make(from - 1, before, next);
}
#define ts_reactive_plan_make mutant_plan
#endif

#include "../../src/barrier/reactive.c"

#ifndef N
#define N 3
#endif
/* two configurations switching at every episode: each state is reused */
#define HARNESS_CONFIGS 2
#ifndef EPISODES
#define EPISODES 3
#endif
#ifndef POLICY1
#define POLICY1 TS_WAIT_BLOCK
#endif
#define LINE 64u

/* every:1 (reactive_policy.c's TS_REACTIVE_EVERY): the other configuration */
unsigned ts_reactive_decide(topsync_barrier_t *b, uint32_t episode, unsigned now)
{
    (void)b;
    (void)episode;
    return (now + 1) % HARNESS_CONFIGS;
}

static topsync_barrier_t configs[HARNESS_CONFIGS];
static unsigned char segments[HARNESS_CONFIGS][(N + 1) * 4 * LINE] __attribute__((aligned(64)));
static ts_reactive reactive;
static ts_reactive_shared shared;
static unsigned char ran[N][LINE] __attribute__((aligned(64)));
static int cell[EPISODES][N];

#ifdef ATTACH_START
/* the caller's synchronization after every rank's attach */
static _Atomic unsigned attached;
static void caller_sync(void)
{
    atomic_fetch_add_explicit(&attached, 1, memory_order_release); /* pairs with the load below */
    while (atomic_load_explicit(&attached, memory_order_acquire) < N) /* with the add above */
        ;
}
#endif

/* barrier.c's topsync_barrier_wait, without its checks: the outer episode
 * (rank line 0 of configuration 0, as enter_episode counts it), then the
 * configuration's own wait */
static void *participant(void *arg)
{
    unsigned rank = (unsigned)(uintptr_t)arg;
    topsync_barrier_t *b = &configs[0];
#ifdef ATTACH_START
#ifndef MUTANT_START_AFTER_SYNC
    if (rank == 0)
        ts_reactive_start_on(&reactive, 1);
#endif
    caller_sync();
#ifdef MUTANT_START_AFTER_SYNC
    if (rank == 0)
        ts_reactive_start_on(&reactive, 1);
#endif
#endif
    for (uint32_t e = 1; e <= EPISODES; e++) {
        cell[e - 1][rank] = (int)e;
        uint32_t config_episode;
        topsync_barrier_t *config = ts_reactive_enter(b, rank, e, &config_episode);
        config->algo->wait(config, rank, config_episode);
        for (unsigned r = 0; r < N; r++)
            assert(cell[e - 1][r] == (int)e);
    }
    return NULL;
}

int main(void)
{
    for (unsigned c = 0; c < HARNESS_CONFIGS; c++) {
        topsync_barrier_t *b = &configs[c];
        b->algo = &ts_algo_sense_reversing;
        b->n = N;
        b->wait.kind = c == 0 ? TS_WAIT_SPIN : POLICY1;
        b->wait.spin_iterations = 0; /* block: straight to the futex */
        b->wait.yield_iterations = 0;
        b->line = LINE;
#ifdef MUTANT_SHARED_STATE
        b->base = segments[0];
#else
        b->base = segments[c];
#endif
        b->block_bytes = 4 * LINE;
        reactive.config[c] = b;
    }
    reactive.mode = TS_REACTIVE_EVERY;
    reactive.nconfigs = HARNESS_CONFIGS;
    reactive.check_mask = 1;
#ifdef ATTACH_START
    reactive.start = 0; /* every configuration's episodes counted from 0 */
    atomic_init(&shared.plan, 0);
#else
    atomic_init(&shared.plan, ts_reactive_plan_make(2, 0, 1));
#endif
    reactive.shared = &shared;
    reactive.ran = &ran[0][0];
    reactive.ran_stride = LINE;
    configs[0].reactive = &reactive;
    genmc_run_participants(participant, N);
    return 0;
}
