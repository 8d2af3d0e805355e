/*
 * Private: a reactive barrier's entry, inline in topsync_barrier_wait: which
 * configuration an episode runs on, read from the plan word, and the
 * participant's episode number there. Participant 0's decisions stay out of
 * line (ts_reactive_plan, reactive.c), so that the other episodes pay a few
 * loads and a store and no call. The ordering argument is reactive.c's;
 * docs/design.md section 10.
 */
#ifndef TOPSYNC_SRC_BARRIER_REACTIVE_ENTER_H
#define TOPSYNC_SRC_BARRIER_REACTIVE_ENTER_H

#include "barrier/barrier_private.h"
#include "barrier/reactive.h"

/*
 * As participant `rank` enters outer episode `episode`: the configuration
 * to wait on and, in *config_episode, its own episode number there.
 * Participant 0 first decides, every check_mask + 1 episodes, and
 * publishes a new plan (ts_reactive_plan). Every participant runs each
 * episode on the configuration the plan names for it (reactive.c).
 */
static inline topsync_barrier_t *ts_reactive_enter(topsync_barrier_t *b, unsigned rank,
                                                   uint32_t episode, uint32_t *config_episode)
{
    ts_reactive *rx = b->reactive;
    if (__builtin_expect(rank == 0 && (episode & rx->check_mask) == 0, 0))
        ts_reactive_plan(b, episode);
    /* relaxed: why it needs no acquire, reactive.c (its partner is the
     * relaxed store of ts_reactive_plan, ordered by the episode itself) */
    uint64_t plan = atomic_load_explicit(&rx->shared->plan, memory_order_relaxed);
    unsigned c = ts_reactive_plan_config(plan, episode);
    _Atomic uint32_t *ran = (_Atomic uint32_t *)(rx->ran + (size_t)rank * rx->ran_stride) + c;
    /* relaxed: the participant's own counter (the pthread drop-in's next
     * holder of this rank is ordered after this one by its gate) */
    uint32_t e = atomic_load_explicit(ran, memory_order_relaxed) + 1;
    atomic_store_explicit(ran, e, memory_order_relaxed);
    *config_episode = e;
    topsync_barrier_t *config = rx->config[c];
    if (config != b)
        ts_barrier_wait_as(config, rank);
    return config;
}

#endif
