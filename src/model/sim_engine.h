/*
 * Private: the discrete-event engine under the simulated atomics
 * (sim_atomic.h). It runs n virtual participants as coroutines on the
 * calling thread, one memory event at a time in virtual-time order, and
 * charges each event by the coherence cost model of docs/model.md.
 */
#ifndef TOPSYNC_SRC_MODEL_SIM_ENGINE_H
#define TOPSYNC_SRC_MODEL_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model_private.h"
#include "model/sim_sched.h"

struct ts_sim_config {
    const topsync_model_t *model;
    unsigned n;
    const unsigned *pu;  /* [n]: the PU (OS index) each participant runs on */
    unsigned char *base; /* the simulated segment: words here are events */
    size_t size, line;   /* its bytes, and the coherence unit */
    /* who first touched line `index` (its initial holder): a participant */
    unsigned (*first_touch)(size_t index, void *arg);
    uint64_t seed;
    topsync_sim_fault_t fault;
    unsigned fault_rank;
    unsigned mlp; /* outstanding misses per participant, >= 1 */
    /* the OS scheduler (sim_sched.h; cpu[] there: where each starts); NULL:
     * none, every participant always running on its PU (the idle model) */
    const struct ts_sched_config *sched;
    bool no_spin; /* with a scheduler: every wait sleeps at once (glibc's) */
    /* each participant runs body(rank, arg) */
    void (*body)(unsigned rank, void *arg);
    void *arg;
};

enum ts_sim_outcome {
    TS_SIM_DONE,     /* every body returned */
    TS_SIM_DEADLOCK, /* every participant left waits on a word nobody will write */
    TS_SIM_STOPPED,  /* a body called ts_sim_stop() */
};

struct ts_sim_stats {
    enum ts_sim_outcome outcome;
    uint64_t events;
    unsigned nparked;            /* participants left waiting (DEADLOCK) */
    struct ts_sched_stats sched; /* zero without a scheduler */
};

/* Run the simulation to its end. 0, or -ENOMEM / -EINVAL with a message. */
int ts_sim_run(const struct ts_sim_config *config, struct ts_sim_stats *stats);

/* From inside a body: the calling participant's virtual time, and stop the
 * whole simulation now (never returns). */
ts_ps ts_sim_now(void);
_Noreturn void ts_sim_stop(void);

#endif
