/*
 * GenMC harness: the collectives (src/collectives/coll_ops.c and
 * reduce_ops.c) on the topo barrier (src/barrier/algorithms/topo.c) and
 * src/wait/wait.c, all included as they are. N threads (3: participant 0
 * leads one flat group and combines two members' contributions) call
 * topsync_allreduce (int32 sum), or the one-way calls of one_way.c:
 * topsync_bcast from participant 1 (-DOP_BCAST) or topsync_reduce to
 * participant 1 (-DOP_REDUCE), for EPISODES calls; each checks its
 * result. Under
 * every RC11 execution: every result is right, GenMC finds no data race
 * on the slots (the arrivals' releases publish the contributions to the
 * leader, the release publishes the result), and nobody waits forever.
 *
 * -DBIG_SLOTS: the slots of the data area rather than the barrier's own
 * lines (calls above inline_bytes). Mutants, each caught:
 *  -DWEAKEN_IN=ts_publish: the publication relaxed (a member's contribution
 *   or the result read before it is visible: a race);
 *  -DTS_COLL_PARITIES=1u with BIG_SLOTS: one slot per rank instead of two
 *   by episode parity (participant 0, or the root, writes its slot of the
 *   next call while another still reads this call's result: a race); with
 *   -DTS_COLL_RING=1u the one-way calls' ring of one slot, likewise;
 *  -DWEAKEN_IN=ts_wait_all -DWEAKEN_FENCES_ONLY with OP_REDUCE: the
 *   root's scan of the contributions without its acquire fence.
 *
 * -DREACTIVE: the barrier reacts (src/barrier/reactive.c, included as it
 * is; docs/design.md section 10.5): configuration 1 is sense-reversing
 * (src/barrier/algorithms/sense_reversing.c, included as it is) whose last
 * arriver combines as topo would (ts_coll_completed). Call 1 runs on topo,
 * call 2 on the counter, and participant 0, deciding at call 2, moves call
 * 3 back to topo while the others enter 2 and 3 (as in reactive.c's
 * harness): the switch both ways, anyone late across it. -DROBUST_FIRST:
 * the counter from call 1 on (its futex release, in a harness of one call
 * under block). Mutants, each caught:
 *  -DWEAKEN_IN=sr_wait: the counter's fetch_add relaxed (the last arriver
 *   combines slots it has not acquired: a race);
 *  -DWEAKEN_IN=ts_publish: the counter's release relaxed (the result read
 *   before it is visible);
 *  -DMUTANT_NO_COMBINE: the counter without the combine step (a wrong
 *   result at call 2).
 */
#include "genmc_shim.h"

#include <assert.h>
#include <stddef.h>

#include "../../src/wait/wait.c"
#include "../../src/barrier/algorithms/topo.c"
#ifdef REACTIVE
/* A second algorithm file in this unit: the names it shares with topo.c
 * renamed. Function-like, so that its object's `.wait = wait` keeps
 * naming topo's: that object (ts_algo_sense_reversing) is not used here,
 * robust_algo below is. */
#define wait(b, rank, episode) sr_wait(b, rank, episode)
#define LINE_COUNT SR_LINE_COUNT
#define LINE_RELEASE SR_LINE_RELEASE
#include "../../src/barrier/algorithms/sense_reversing.c"
#undef wait
#undef LINE_COUNT
#undef LINE_RELEASE
#include "../../src/barrier/reactive.h"
#include "../../src/barrier/reactive.c"
#endif
#include "../../src/collectives/reduce_ops.c"

/* GenMC runs no memcpy of a length it does not know: a copy of 4-byte
 * words (every buffer here is int32), as the accesses that read them */
static inline void *genmc_copy(void *to, const void *from, size_t n)
{
    for (size_t i = 0; i < n / 4; i++)
        ((uint32_t *)to)[i] = ((const uint32_t *)from)[i];
    return to;
}
#define memcpy(to, from, n) genmc_copy(to, from, n)
#define memmove(to, from, n) genmc_copy(to, from, n)
#include "../../src/collectives/coll_ops.c"
/* one_way.c's timeout report, never reached here (no timeout is armed),
 * uses what GenMC's libc lacks */
#ifndef ECANCELED
#define ECANCELED 125
#endif
static int genmc_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    (void)fmt;
    if (size)
        buf[0] = '\0';
    return 0;
}
#define snprintf genmc_snprintf
#include "../../src/collectives/one_way.c"

#ifndef N
#define N 3
#endif
#ifndef EPISODES
#define EPISODES 2
#endif
#ifndef POLICY
#define POLICY TS_WAIT_SPIN
#endif
#define LINE 64u

/* one flat group of all N, led by 0 */
#include "topo_flat_groups.h"

static topsync_barrier_t barrier;
static topsync_coll_t coll;
#ifdef REACTIVE
static topsync_barrier_t robust;
static unsigned char robust_segment[(N + 1) * 4 * LINE] __attribute__((aligned(64)));
static ts_reactive reactive;
static ts_reactive_shared shared;
static unsigned char ran[N][LINE] __attribute__((aligned(64)));

static const ts_algorithm robust_algo = {
    .name = "sense-reversing",
    .global_lines_fixed = 3,
    .rank_lines_fixed = 1,
    .reset_counters = reset_counters,
    .wait = sr_wait,
};

/* every:1 (reactive_policy.c's TS_REACTIVE_EVERY): the other configuration */
unsigned ts_reactive_decide(topsync_barrier_t *b, uint32_t episode, unsigned now)
{
    (void)b;
    (void)episode;
    return 1 - now;
}
#endif
static unsigned char segment[(N + 1) * 8 * LINE] __attribute__((aligned(64)));
static unsigned char data[N * (4 + TS_COLL_RING) * LINE] __attribute__((aligned(64)));
static uint32_t seqs[N * LINE / 4];

/* The barrier's entry (barrier.c) without its checks and timeout: the
 * episode counted in the rank's line 0, as enter_episode does. */
int topsync_barrier_wait_checked(topsync_barrier_t *b, unsigned rank)
{
    ts_word *local = ts_rank_line(b, rank, 0);
    uint32_t episode = atomic_load_explicit(&local->value, memory_order_relaxed) + 1;
    atomic_store_explicit(&local->value, episode, memory_order_relaxed);
#ifdef REACTIVE
    topsync_barrier_t *config = ts_reactive_enter(b, rank, episode, &episode);
    config->algo->wait(config, rank, episode);
#else
    b->algo->wait(b, rank, episode);
#endif
    return 0;
}

static void *participant(void *arg)
{
    unsigned rank = (unsigned)(uintptr_t)arg;
    for (int e = 1; e <= EPISODES; e++) {
#if defined(OP_BCAST)
        int32_t buf = rank == 1 ? 100 * e : -1;
        int rc = topsync_bcast(&coll, rank, &buf, sizeof buf, 1);
        assert(rc == 0 && buf == 100 * e);
#elif defined(OP_REDUCE)
        int32_t mine = (int32_t)(rank + 10 * e), sum = -1;
        int rc = topsync_reduce(&coll, rank, &mine, &sum, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM, 1);
        assert(rc == 0 && (rank != 1 || sum == (N * (N - 1)) / 2 + N * 10 * e));
#else
        int32_t mine = (int32_t)(rank + 10 * e), sum = -1;
        int rc = topsync_allreduce(&coll, rank, &mine, &sum, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM);
        assert(rc == 0 && sum == (N * (N - 1)) / 2 + N * 10 * e);
#endif
    }
    return NULL;
}

/* a configuration's fields, as lifecycle.c sets them (no spin, no yield:
 * block goes straight to the futex) */
static void configure(topsync_barrier_t *b, const ts_algorithm *algo, unsigned char *base,
                      size_t block_lines)
{
    b->algo = algo;
    b->n = N;
    b->wait.kind = POLICY;
    b->wait.spin_iterations = 0;
    b->wait.yield_iterations = 0;
    b->line = LINE;
    b->base = base;
    b->block_bytes = block_lines * LINE;
}

int main(void)
{
    configure(&barrier, &ts_algo_topo, segment, 8);
    if (ts_algo_topo.setup(&barrier) != 0)
        return 1;
    /* the object as coll.c's attach_hook makes it, field by field */
    coll.magic = TS_COLL_LIVE;
    coll.n = N;
    coll.barrier = &barrier;
    coll.max_bytes = LINE;
    coll.line = LINE;
    coll.slot_bytes = LINE;
    coll.rank_stride = (4 + TS_COLL_RING) * LINE; /* ready and done lines, the slots */
    coll.seq = seqs;
    coll.data = data;
#ifdef BIG_SLOTS
    coll.inline_bytes = 0;
#else
    coll.inline_bytes = ((LINE - sizeof(ts_word)) / 2) & ~(size_t)7;
#endif
    coll.global_result = true;
    barrier.gathered = ts_coll_gathered;
    barrier.gathered_arg = &coll;
#ifdef REACTIVE
    /* as lifecycle.c's make_reactive and ts_barrier_carry make them */
    configure(&robust, &robust_algo, robust_segment, 4);
#ifndef MUTANT_NO_COMBINE
    robust.completed = ts_coll_completed;
#endif
    robust.gathered_arg = &coll;
    reactive.config[0] = &barrier;
    reactive.config[1] = &robust;
    reactive.mode = TS_REACTIVE_EVERY;
    reactive.nconfigs = 2;
    reactive.check_mask = 1;
#ifdef ROBUST_FIRST /* the counter from call 1 on (a harness of one call) */
    atomic_init(&shared.plan, ts_reactive_plan_make(1, 0, 1));
#else
    atomic_init(&shared.plan, ts_reactive_plan_make(2, 0, 1));
#endif
    reactive.shared = &shared;
    reactive.ran = &ran[0][0];
    reactive.ran_stride = LINE;
    barrier.reactive = &reactive;
#endif
    genmc_run_participants(participant, N);
    return 0;
}
