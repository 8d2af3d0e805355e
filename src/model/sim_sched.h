/*
 * Private: the OS scheduler under the simulated participants (docs/model.md
 * section 9). CPUs (the model's PUs) run tasks, the participants and busy
 * neighbour tasks that never sleep, one at a time, in time slices chosen as
 * Linux's EEVDF chooses them (or its CFS, which kernels before 6.6 run); a waiting participant spins, yields or sleeps
 * as its wait policy says, and a write to the word a sleeper waits on costs
 * the writer a futex wake-up and the sleeper the time until it runs again.
 * The engine (sim_engine.c) asks it, before each event of a participant,
 * whether that participant holds its CPU then.
 */
#ifndef TOPSYNC_SRC_MODEL_SIM_SCHED_H
#define TOPSYNC_SRC_MODEL_SIM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model_private.h"
#include "topsync/model.h"

/* What a wait does once its spin is spent. */
enum ts_sched_then { TS_SCHED_SPIN_ON, TS_SCHED_YIELD, TS_SCHED_SLEEP };

struct ts_sched_config {
    unsigned ncpus;        /* CPUs 0..ncpus-1 */
    const unsigned *noise; /* [ncpus]: busy neighbour tasks on each */
    const unsigned *cpu;   /* [nprocs]: where each participant starts */
    unsigned nprocs;
    bool unbound;            /* a woken participant moves to an idle CPU */
    ts_ps slice;             /* a task's time slice */
    ts_ps switch_cost;       /* a CPU changing task */
    ts_ps wake_call;         /* the waker's FUTEX_WAKE, per sleeper woken */
    ts_ps wake_call_local;   /* the same, the sleeper woken onto the waker's CPU */
    ts_ps wake_latency;      /* from that call until the sleeper runs, its CPU idle */
    ts_ps wake_latency_busy; /* the same, its CPU running another task */
    ts_ps yield_cost;        /* a sched_yield that finds nothing else to run */
    ts_ps sleep_cpu;         /* the sleeper's own CPU time for one sleep */
    ts_ps tick;              /* the timer tick (bounds a sleeper's lag) */
    bool balance;            /* the periodic balancer moves tasks between CPUs */
    /* Choose as CFS does (Linux before 6.6) instead of EEVDF: `slice` is
     * then its minimum granularity, and its latency and wake-up
     * granularity follow from it (sim_sched.c, "CFS") */
    bool cfs;
    /* The program creates its participants one after another:
     * participant p exists from create_first + p x create_every, on
     * cpu[p] (both 0: all from the start). */
    ts_ps create_first, create_every;
    uint64_t seed; /* the CPUs' slices start at phases drawn from it */
    /* told when a runnable participant is given its CPU at `at` (it may be
     * waiting for it with a later time to ask again) */
    void (*chosen)(void *arg, unsigned p, ts_ps at);
    void *chosen_arg;
};

struct ts_sched;

int ts_sched_create(struct ts_sched **out, const struct ts_sched_config *config);
void ts_sched_destroy(struct ts_sched *s);

/* Participant p, runnable, wants to act at t (the earliest time of the
 * whole simulation, so every change before t is known): t when it holds
 * its CPU then, else a later time to ask again (the next point where its
 * CPU chooses). */
ts_ps ts_sched_created(const struct ts_sched *s, unsigned p);
ts_ps ts_sched_gate(struct ts_sched *s, unsigned p, ts_ps t);
/* Every periodic balancer turn due up to t, t being the earliest time of
 * the whole simulation (each CPU is brought to a turn's time, then the
 * CPUs whose turn it is balance, in order): whether there was any, so
 * that the caller asks its questions about t again. */
bool ts_sched_settle(struct ts_sched *s, ts_ps t);
/* p starts waiting at t: it spins for `spin` of its CPU time (holding the
 * CPU while it is chosen; negative: what its wait's spin has left, for a
 * wait that goes on after a write that did not end it), then does `then`. */
void ts_sched_wait_begin(struct ts_sched *s, unsigned p, ts_ps t, ts_ps spin,
                         enum ts_sched_then then);
/* The word p waits on was written at t by participant `waker` (-1: none
 * of them): p is runnable again from *ready (woken onto a CPU chosen as
 * Linux chooses for a wake-up, when unbound). Returns what the write
 * costs the writer (a FUTEX_WAKE when p slept). */
ts_ps ts_sched_wake(struct ts_sched *s, unsigned p, ts_ps t, int waker, ts_ps *ready);
/* When the spin of p's current wait (the latest ts_sched_wait_begin with
 * a spin of 0 or more) ran out, and it went on to sleep or yield; -1: it
 * has not (the wait ended within it, or goes on spinning). */
ts_ps ts_sched_spin_ran_out(const struct ts_sched *s, unsigned p);
/* The CPU (PU OS index) p runs on now. */
unsigned ts_sched_cpu(const struct ts_sched *s, unsigned p);
/* p sleeps in the kernel at t (a write to another word of its line leaves it
 * there: only its own word's writer wakes it). */
bool ts_sched_asleep(struct ts_sched *s, unsigned p, ts_ps t);
/* p's body returned at t: it leaves its CPU. */
void ts_sched_done(struct ts_sched *s, unsigned p, ts_ps t);

/* p's virtual time (the CPU time it received, as EEVDF counts it, placed
 * anew at each wake-up): for tests of the scheduler's rules. */
ts_ps ts_sched_vruntime(const struct ts_sched *s, unsigned p);

struct ts_sched_stats {
    uint64_t sleeps, wakeups, switches, migrations; /* migrations: participants' */
    uint64_t noise_moves, active_balances;          /* by the periodic balancer */
    uint64_t runs;                                  /* times a participant was given its CPU */
    ts_ps runqueue_wait; /* their waits on the run queue before, summed */
    /* the time during which the most participants on one CPU was i
     * (capped at TOPSYNC_SIM_CROWD_MAX), from the last one's creation to
     * the first one's return (ts_sched_done) */
    ts_ps crowd_time[TOPSYNC_SIM_CROWD_MAX + 1];
};
/* The busy neighbour tasks on CPU k now (the balancer moves them). */
unsigned ts_sched_noise_on(const struct ts_sched *s, unsigned k);
void ts_sched_stats(const struct ts_sched *s, struct ts_sched_stats *out);

#endif
