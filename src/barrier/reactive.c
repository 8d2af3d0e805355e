/*
 * The switch of a reactive barrier: participant 0's new plans here, and
 * which configuration an episode runs on, read from the plan word, inline
 * in reactive_enter.h. GenMC runs both as they are (tests/genmc/reactive.c
 * includes this file). docs/design.md section 10.
 */
#include "barrier/reactive.h"
#include "barrier/barrier_private.h"
#include "barrier/reactive_enter.h" /* the reads' side, for the GenMC harnesses */

/*
 * Why the plan needs no release or acquire of its own. Participant 0
 * stores the plan "from episode j + 1 on" as it enters episode j, before
 * its arrival. Others entering j at the same time may read it or the one
 * before: the new one says "before j + 1, `before`", and `before` is what
 * the old one gave j, so both name the same configuration for j. Every
 * read for a later episode comes after its reader returned from j, and the
 * barrier's guarantee (barrier.h) makes everything participant 0 did before
 * its call for j happen before that return, whichever configuration ran j:
 * by coherence the read sees this plan or a later one, which again agree
 * on every episode before their own `from`. Reads for episodes before j
 * were sequenced before arrivals that happen before participant 0 returned
 * from j - 1: they cannot see the store. So all participants run each
 * episode on the same configuration; a configuration's episodes are
 * separated by whole episodes of another, which everybody left before
 * anybody entered it again, so its state is as its own last episode left
 * it (nothing to reset), and its episode numbers (`ran`) continue.
 */
void ts_reactive_plan(topsync_barrier_t *b, uint32_t episode)
{
    ts_reactive *rx = b->reactive;
    /* relaxed: participant 0 reads its own last store */
    uint64_t plan = atomic_load_explicit(&rx->shared->plan, memory_order_relaxed);
    unsigned now = ts_reactive_plan_config(plan, episode);
    unsigned next = ts_reactive_decide(b, episode, now);
    /* relaxed: ordered for the others by episode `episode` itself (above).
     * Stored only when it says something new: a plan whose `before` and
     * `next` are both `next` names that configuration on either side of its
     * `from`, so it may age past the modular comparison's window, and every
     * participant keeps reading a line nobody writes (a store at every
     * decision cost each of them a miss per decision) */
    if (ts_reactive_plan_make(0, next, next) != (plan & ~(uint64_t)UINT32_MAX))
        atomic_store_explicit(&rx->shared->plan, ts_reactive_plan_make(episode + 1, now, next),
                              memory_order_relaxed);
}

void ts_reactive_start_on(ts_reactive *rx, unsigned config)
{
    /* relaxed: ordered before every first read by the set-up's publication
     * (reactive.h) */
    atomic_store_explicit(&rx->shared->plan, ts_reactive_plan_make(rx->start, config, config),
                          memory_order_relaxed);
}
