/*
 * Private: a reactive barrier, one that runs each episode on one of a few
 * configurations (an algorithm and a wait policy, each a whole barrier with
 * state of its own) and moves all participants to another one at an agreed
 * episode. reactive.c is the switch (the plan word), reactive_policy.c
 * decides when. The why, and the ordering argument: docs/design.md
 * section 10.
 */
#ifndef TOPSYNC_SRC_BARRIER_REACTIVE_H
#define TOPSYNC_SRC_BARRIER_REACTIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <topsync/barrier.h>

/* Configuration 0 is the barrier the choice made (the handle itself);
 * configuration 1 the robust one for a busy node (one arrival counter,
 * one futex broadcast); configuration 2, when auto's rules chose (no
 * tuning entry, no model verdict), the candidate they leave untried
 * (online tuning, docs/design.md section 10.4). */
#define TS_REACTIVE_MAX_CONFIGS 3
#define TS_REACTIVE_ROBUST 1

/* TOPSYNC_REACTIVE: off, on (auto's barriers switch when it pays), or
 * every:N (tests: every barrier switches every N episodes). */
enum ts_reactive_mode { TS_REACTIVE_OFF = 0, TS_REACTIVE_ON = 1, TS_REACTIVE_EVERY = 2 };

/*
 * The plan, one 64-bit word that every participant reads as it enters an
 * episode: from episode `from` on (bits 0-31, compared modulo 2^32),
 * configuration `next` (bits 40-47); before it, `before` (bits 32-39).
 * Only participant 0 writes it, before its own entry into an episode.
 */
static inline uint64_t ts_reactive_plan_make(uint32_t from, unsigned before, unsigned next)
{
    return (uint64_t)from | (uint64_t)(before & 0xffu) << 32 | (uint64_t)(next & 0xffu) << 40;
}

static inline unsigned ts_reactive_plan_config(uint64_t plan, uint32_t episode)
{
    uint32_t from = (uint32_t)plan;
    return (int32_t)(episode - from) >= 0 ? (unsigned)(plan >> 40) & 0xffu
                                          : (unsigned)(plan >> 32) & 0xffu;
}

/* What every participant shares (in a MAP_SHARED page for processes). */
typedef struct ts_reactive_shared {
    _Atomic uint64_t plan;
    /* for topsync_barrier_switches(), written by the decider only */
    _Atomic uint64_t switches, probes;
} ts_reactive_shared;

/* The windows of a configuration the policy remembers (reactive_policy.c
 * says why five). */
#define TS_REACTIVE_HISTORY 5

/* What participant 0 alone keeps to decide (reactive_policy.c). */
typedef struct ts_reactive_policy {
    uint64_t window_min_ns;  /* a window lasts at least this (set at creation) */
    uint64_t window_ns;      /* when the current window started; 0: none yet */
    uint32_t window_episode; /* the episode it started at */
    double last_ns;          /* the last window's cost per episode; 0: none yet */
    bool measured_once;      /* the first window (cold start) was dropped */
    unsigned home;           /* the configuration kept between probes */
    unsigned probing;        /* windows the current probe has run; 0: none */
    unsigned gap, since;     /* windows between probes, and since the last */
    unsigned first_gap;      /* the gap from the first window on (0: GAP_MIN) */
    unsigned jumps;          /* consecutive windows far above the home's cost */
    unsigned probe_next;     /* the next probe tries this one, or the one after */
    bool settling;           /* a change was published: no window until settle_episode */
    uint32_t settle_episode; /* the first episode a window may start at after it */
    /* per configuration, its last windows' costs per episode (ns), newest
     * at [0]; 0: none */
    double cost_ns[TS_REACTIVE_MAX_CONFIGS][TS_REACTIVE_HISTORY];
} ts_reactive_policy;

typedef struct ts_reactive {
    enum ts_reactive_mode mode;
    unsigned nconfigs;
    topsync_barrier_t *config[TS_REACTIVE_MAX_CONFIGS]; /* [0] is the handle itself */
    uint32_t check_mask; /* participant 0 decides when episode & mask == 0 (and
                          * alone reads and sets it: the drop-in's next holder
                          * of its rank is ordered after this one by its gate) */
    uint32_t start;      /* every configuration's first episode */
    int verbose;         /* TOPSYNC_VERBOSE: say switches (1), and probes (2) */
    ts_reactive_shared *shared;
    enum {
        TS_REACTIVE_SHARED_ALLOCATED, /* threads: aligned_alloc */
        TS_REACTIVE_SHARED_MAPPED,    /* processes of a create: a MAP_SHARED page */
        TS_REACTIVE_SHARED_IN_SEGMENT /* attach: in the caller's segment */
    } shared_memory;
    /* Per participant, the episodes run on each configuration: a
     * configuration's algorithm sees its own episodes 1, 2, 3, ... as if
     * it were alone. Written by the participant only (one line each). */
    unsigned char *ran;
    size_t ran_stride;
    /* Written by participant 0 at every decision: on lines of its own, so
     * that the fields above, which every participant reads at every
     * episode, stay in their caches. */
    ts_reactive_policy *policy;
} ts_reactive;

/*
 * Participant 0, entering outer episode `episode` (one in check_mask + 1):
 * decides, and publishes a new plan when it changes (reactive.c). Called
 * by ts_reactive_enter (reactive_enter.h), out of its fast path.
 */
void ts_reactive_plan(topsync_barrier_t *b, uint32_t episode);

/*
 * A new barrier's first configuration (docs/design.md 10.6): the plan that
 * runs `config` from rx->start on. Set-up only, before any participant's
 * first wait, by participant 0's process (the one that decides). Relaxed:
 * a created barrier is published to its participants by whatever starts
 * them; an attached one by attach's contract (barrier.h: every rank returns
 * from attach before any rank waits), whose caller's synchronization
 * orders this store before every rank's first read of the plan in
 * ts_reactive_enter. GenMC: tests/genmc/reactive.c, -DATTACH_START.
 */
void ts_reactive_start_on(ts_reactive *rx, unsigned config);

/* What one step of the policy did, for TOPSYNC_VERBOSE and the counts:
 * from_ns, to_ns are the costs per episode it compared (a probe: the
 * window before and the last one). */
typedef struct ts_reactive_event {
    enum {
        TS_REACTIVE_NONE,
        TS_REACTIVE_SWITCH,
        TS_REACTIVE_PROBE,
        TS_REACTIVE_PROBE_JUMP,
        TS_REACTIVE_PROBE_LOST
    } kind;
    unsigned from, to;
    double from_ns, to_ns;
} ts_reactive_event;

/* The policy alone, on a clock reading t (ns) at participant 0's entry
 * into `episode`, `now` running it: the configuration from the next
 * episode on. No clock, no output: tests/unit/test_reactive.c drives it. */
unsigned ts_reactive_policy_step(ts_reactive_policy *p, unsigned nconfigs, unsigned now, uint64_t t,
                                 uint32_t episode, ts_reactive_event *event);

/* How often participant 0 decides, episodes of per_ns each: a mask for
 * episode numbers (reactive_policy.c says why); before the first window
 * has ended, every 8 episodes: a clock read per 8 episodes of 100 ns, for
 * one window, against 16 ms to see that episodes last 2 ms. */
#define TS_REACTIVE_FIRST_MASK 7u
uint32_t ts_reactive_check_mask(double per_ns);

/* The least length of a window on a machine of online_cpus CPUs. */
uint64_t ts_reactive_window_ns(unsigned online_cpus);

/* reactive_policy.c: the configuration for the episodes after `episode`,
 * given that `now` runs `episode`. Called by participant 0 only. */
unsigned ts_reactive_decide(topsync_barrier_t *b, uint32_t episode, unsigned now);

/* reactive_memory.c: the configuration a new barrier of rx's shape (its
 * participants, its configurations, `shared` between processes) starts
 * on: the home the last such barrier of this process kept (its policy then
 * starts with that home and that barrier's gap between probes), else 0.
 * And, as a barrier whose policy measured goes, its home and gap, for the
 * next. Both take a process-wide mutex: set-up paths only. */
unsigned ts_reactive_memory_recall(ts_reactive *rx, bool shared);
void ts_reactive_memory_keep(const ts_reactive *rx, bool shared);

/* TOPSYNC_REACTIVE: 0 and *mode, *every; or -EINVAL with a message. */
int ts_reactive_from_env(enum ts_reactive_mode *mode, uint32_t *every);

#endif
